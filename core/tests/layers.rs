//! Core is crates that depend only downward (ARCHITECTURE.md, "Layers"): base, source,
//! machine, compiler, then the driver (this crate) with the CLI. This test is the
//! structure check: each crate's manifest names only lower crates, and within a crate
//! no module imports a later one (it reads every source file's `crate::` paths).

use std::collections::BTreeSet;
use std::path::Path;

/// The crates, lowest first: directory under `core/`, package name, and each module
/// with its rank in the crate (a module may import modules of the same or a lower rank,
/// and any module of a lower crate, which each crate root brings in under its path).
struct Crate {
    dir: &'static str,
    package: &'static str,
    modules: &'static [(&'static str, u8)],
}

const CRATES: &[Crate] = &[
    Crate {
        dir: "base",
        package: "tilescope-base",
        modules: &[
            ("diag", 0),
            ("types", 0),
            ("limits", 0),
            ("dense", 0),
            ("tensor", 1),
            ("npy", 2),
            ("affine", 3),
        ],
    },
    Crate {
        dir: "source",
        package: "tilescope-source",
        modules: &[("front", 0), ("interp", 1)],
    },
    Crate {
        dir: "machine",
        package: "tilescope-machine",
        modules: &[("isa", 0), ("machine", 1), ("sim", 2)],
    },
    Crate {
        dir: "compiler",
        package: "tilescope-compiler",
        modules: &[("ir", 0), ("lowered", 1), ("steps", 2), ("passes", 3)],
    },
    Crate {
        dir: ".",
        package: "tilescope",
        modules: &[
            ("compile", 0),
            ("inputs", 0),
            ("examples", 0),
            ("run", 1),
            ("explain", 1),
            ("opt", 1),
            ("lesson", 2),
        ],
    },
];

/// Which crate (index into `CRATES`) holds a module, and its rank there.
fn layer(module: &str) -> Option<(usize, u8)> {
    CRATES.iter().enumerate().find_map(|(c, krate)| {
        krate
            .modules
            .iter()
            .find(|(m, _)| *m == module)
            .map(|(_, rank)| (c, *rank))
    })
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

/// Every `.rs` file under `root`, each with its path relative to `root` (`/`-separated).
fn files(root: &Path) -> Vec<(std::path::PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("sources read").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let mut all = Vec::new();
    walk(root, &mut all);
    all.into_iter()
        .map(|path| {
            let rel = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            (path, rel)
        })
        .collect()
}

#[test]
fn each_crate_depends_only_on_lower_crates() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut driver_deps: Vec<usize> = Vec::new();
    for (index, Crate { dir, package, .. }) in CRATES.iter().enumerate() {
        let manifest =
            std::fs::read_to_string(core.join(dir).join("Cargo.toml")).expect("manifest reads");
        let dependencies = manifest
            .split("\n[")
            .find(|section| section.starts_with("dependencies]"))
            .unwrap_or_default();
        for line in dependencies.lines() {
            let Some(dep) = line.split(['.', ' ', '=']).next() else {
                continue;
            };
            let Some(at) = CRATES.iter().position(|c| c.package == dep) else {
                continue;
            };
            assert!(
                at < index,
                "{package} depends on {dep}, which is not below it"
            );
            if *dir == "." {
                driver_deps.push(at);
            }
        }
    }
    // The manifests were read: the driver sits on every other crate.
    driver_deps.sort();
    assert_eq!(driver_deps, [0, 1, 2, 3]);
}

#[test]
fn no_module_imports_a_later_one() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut unlisted = Vec::new();
    for (index, Crate { dir, .. }) in CRATES.iter().enumerate() {
        let root = core.join(dir).join("src");
        for (path, rel) in files(&root) {
            let top = rel.split('/').next().unwrap_or_default();
            // The command-line program and the crate roots sit above every module.
            if top == "bin" || top == "lib.rs" {
                continue;
            }
            let module = top.trim_end_matches(".rs");
            let Some(own) = layer(module).filter(|(c, _)| *c == index) else {
                unlisted.push(format!("{dir}/src/{rel}"));
                continue;
            };
            let text = std::fs::read_to_string(&path).expect("source reads");
            for import in imports(&text) {
                if layer(&import).is_some_and(|l| l > own) {
                    found.push(format!("{dir}/src/{rel} -> {import}"));
                }
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "files outside their crate's module table: {unlisted:?}"
    );
    assert!(found.is_empty(), "modules importing a later one: {found:?}");
}

#[test]
fn the_check_sees_grouped_and_inline_paths() {
    let text = "use crate::{diag::Span, passes::Pass};\nfn f() { crate::run::run(); }\n\
                #[cfg(test)]\nmod tests { use crate::lesson; }";
    let found: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(found, ["diag", "passes", "run"]);
}

/// The modules of `passes/` that are not passes: the manager's parts and the helpers
/// several passes share (the cost model, L0C accumulators, buffer depth).
const PASS_HELPERS: &[&str] = &["accumulate", "buffer_depth", "cost", "provenance", "stage"];

/// The pass modules a file of pass `own` names (`crate::passes::X::`, or `super::X::`
/// from the pass's top file, `super::super::X::` from a file inside its folder).
fn passes_named(text: &str, own: &str, nested: bool) -> BTreeSet<String> {
    let code = text
        .find("#[cfg(test)]\nmod tests")
        .map_or(text, |at| &text[..at]);
    let prefixes: &[&str] = if nested {
        &["crate::passes::", "super::super::"]
    } else {
        &["crate::passes::", "super::"]
    };
    let mut out = BTreeSet::new();
    for prefix in prefixes {
        for (at, _) in code.match_indices(prefix) {
            // `super::super::x` also contains `super::x`: count it once, as written.
            if !nested && *prefix == "super::" && code[..at].ends_with("super::") {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // Modules are snake_case; `super::Context` names the manager's types.
            let module = name.starts_with(|c: char| c.is_ascii_lowercase());
            if module && rest[name.len()..].starts_with("::") && name != own && name != "super" {
                out.insert(name);
            }
        }
    }
    out
}

/// Passes do not borrow from each other: what several use lives in the IR's modules
/// (`ir::analysis`, `ir::liveness`, `ir::rewrite`) or in the helpers above, and a pass
/// that tries the rest of the pipeline on a copy asks the manager (`passes::between`).
#[test]
fn no_pass_imports_another() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("compiler/src/passes");
    let mut found = BTreeSet::new();
    for (path, rel) in files(&root) {
        let own = rel
            .split('/')
            .next()
            .unwrap_or_default()
            .trim_end_matches(".rs");
        if own == "mod" || PASS_HELPERS.contains(&own) {
            continue;
        }
        let nested = rel.contains('/') && !rel.ends_with("/mod.rs");
        let text = std::fs::read_to_string(&path).expect("source reads");
        for name in passes_named(&text, own, nested) {
            if !PASS_HELPERS.contains(&name.as_str()) {
                found.insert((rel.clone(), name));
            }
        }
    }
    assert!(found.is_empty(), "passes importing another pass: {found:?}");
}

#[test]
fn the_pass_check_sees_every_way_to_name_a_pass() {
    let top =
        "use super::peel::Cloner;\nfn f() { crate::passes::cost::op(); super::Context::x(); }";
    let found: Vec<String> = passes_named(top, "sink", false).into_iter().collect();
    assert_eq!(found, ["cost", "peel"]);
    let nested = "use super::super::plan_memory::plan;\nuse super::walk::Inst;";
    let found: Vec<String> = passes_named(nested, "sync", true).into_iter().collect();
    assert_eq!(found, ["plan_memory"]);
}
