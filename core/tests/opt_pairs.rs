//! `tilescope opt` against the compile: for every example and every pass after a
//! tile-IR pass, the pass run by `opt` on the pasted section of the one before prints
//! the section `--emit passes` printed for it.

use tilescope::compile::{compile, passes_text, CompileOptions};
use tilescope::opt::{header, opt};
use tilescope::passes::{self, Stage};

mod examples_support;
use examples_support::examples;

fn leaves_tile_ir(name: &str) -> bool {
    passes::pipeline()
        .iter()
        .any(|p| p.name() == name && matches!(p.makes(), Stage::Tile | Stage::Planned))
}

#[test]
fn opt_reproduces_every_next_section_from_the_one_before() {
    let mut pairs = 0;
    for path in examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let options = CompileOptions {
            verify: true,
            ..CompileOptions::default()
        };
        let result = compile(&source, &options);
        assert!(
            result.diagnostics.is_empty(),
            "{path:?}: {:?}",
            result.diagnostics
        );
        for w in result.passes.windows(2) {
            let (before, after) = (&w[0], &w[1]);
            if !leaves_tile_ir(&before.name) {
                continue;
            }
            let pasted = format!(
                "{}{}",
                header(&options),
                passes_text(std::slice::from_ref(before))
            );
            let got = opt(&pasted, std::slice::from_ref(&after.name), None, None);
            let at = format!("{} {} -> {}", path.display(), before.name, after.name);
            assert!(got.diagnostics.is_empty(), "{at}: {:?}", got.diagnostics);
            assert_eq!(
                passes_text(&got.passes),
                passes_text(std::slice::from_ref(after)),
                "{at}"
            );
            pairs += 1;
        }
    }
    assert!(pairs >= 24 * 15, "{pairs}");
}
