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
        let mut all = Vec::new();
        files(&root, &mut all);
        for path in all {
            let rel = path
                .strip_prefix(&root)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
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
