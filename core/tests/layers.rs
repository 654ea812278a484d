//! Core's modules form layers, and no module imports a higher layer (ARCHITECTURE.md,
//! "Layers"). This reads every source file's `crate::` paths and checks them against
//! the table below: the structure check the crates to come will make physical.
//!
//! `KNOWN` lists the upward imports that remain, each to be removed; the test fails on
//! any other, and on an entry that no longer holds (so the list only shrinks).

use std::collections::BTreeSet;
use std::path::Path;

/// Each module of `core/src` and its layer: base 0, source 1, machine 2, compiler 3,
/// driver 4. Within a layer, the second number orders modules that build on each other.
const LAYERS: &[(&str, (u8, u8))] = &[
    // base: spans and diagnostics, types, limits, host tensors, index maths
    ("diag", (0, 0)),
    ("types", (0, 0)),
    ("limits", (0, 0)),
    ("dense", (0, 0)),
    ("tensor", (0, 1)),
    ("npy", (0, 2)),
    ("affine", (0, 3)),
    // source: lexer, parser, checker, hir; the reference interpreter
    ("front", (1, 0)),
    ("interp", (1, 1)),
    // machine: the ISA, the presets, the simulator
    ("isa", (2, 0)),
    ("machine", (2, 1)),
    ("sim", (2, 2)),
    // compiler: tile IR and its analyses, the lowered program, steps, the passes
    ("ir", (3, 0)),
    ("lowered", (3, 1)),
    ("steps", (3, 2)),
    ("passes", (3, 3)),
    // driver: compile, inputs, run, explain, the gallery and the lessons
    ("compile", (4, 0)),
    ("inputs", (4, 0)),
    ("examples", (4, 0)),
    ("run", (4, 1)),
    ("explain", (4, 1)),
    ("lesson", (4, 2)),
];

/// Upward imports still to remove: (file under `core/src`, module it imports).
const KNOWN: &[(&str, &str)] = &[];

fn layer(module: &str) -> Option<(u8, u8)> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

/// The modules a file's code (not its unit tests) names with `crate::`.
fn imports(text: &str) -> BTreeSet<String> {
    let code = text
        .find("#[cfg(test)]\nmod tests")
        .map_or(text, |at| &text[..at]);
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(|item| ident(item.trim())));
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|m| !m.is_empty());
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("core/src reads").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_imports_a_higher_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&root, &mut all);
    let mut found = BTreeSet::new();
    let mut unlisted = Vec::new();
    for path in all {
        let rel = path
            .strip_prefix(&root)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let top = rel.split('/').next().unwrap_or_default();
        // The command-line program and the crate root sit above every layer.
        if top == "bin" || top == "lib.rs" {
            continue;
        }
        let module = top.trim_end_matches(".rs");
        let Some(own) = layer(module) else {
            unlisted.push(module.to_string());
            continue;
        };
        let text = std::fs::read_to_string(&path).expect("source reads");
        for import in imports(&text) {
            if layer(&import).is_some_and(|l| l > own) {
                found.insert((rel.clone(), import));
            }
        }
    }
    assert!(unlisted.is_empty(), "modules with no layer: {unlisted:?}");
    let known: BTreeSet<(String, String)> = KNOWN
        .iter()
        .map(|(f, m)| (f.to_string(), m.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty(),
        "modules importing a higher layer (file -> module): {new:?}"
    );
    assert!(
        gone.is_empty(),
        "no longer imported upward, remove from KNOWN: {gone:?}"
    );
}

#[test]
fn the_check_sees_grouped_and_inline_paths() {
    let text = "use crate::{diag::Span, passes::Pass};\nfn f() { crate::run::run(); }\n\
                #[cfg(test)]\nmod tests { use crate::lesson; }";
    let found: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(found, ["diag", "passes", "run"]);
}
