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

/// Sections edited as a student would (a line dropped, a loop's step or buffers
/// changed): what still reads and verifies runs through the rest of the pipeline
/// without a panic (a pass may reject it, with a diagnostic).
#[test]
fn edited_sections_run_through_the_rest_of_the_pipeline_without_panicking() {
    let source = tilescope::examples::ALL
        .iter()
        .find(|e| e.name == "flash_attention")
        .expect("the flash_attention example")
        .source;
    let options = CompileOptions::default();
    let result = compile(source, &options);
    let mut ran = 0;
    for (name, rest_from) in [
        ("canonicalize", "vector-peephole"),
        ("form-steps", "decompose-transfer"),
        ("plan-memory", "lower-to-pipes"),
    ] {
        let record = result.passes.iter().find(|p| p.name == name).expect(name);
        let rest: Vec<String> = passes::pipeline()
            .iter()
            .map(|p| p.name().to_string())
            .skip_while(|p| p != rest_from)
            .collect();
        let lines: Vec<&str> = record.ir.lines().collect();
        let mut edits: Vec<String> = (0..lines.len())
            .map(|i| {
                let mut edited = lines.clone();
                edited.remove(i);
                edited.join("\n")
            })
            .collect();
        // A loop's step halved or doubled, and its `buffers(2)` dropped.
        for (from, to) in [
            ("step 16", "step 8"),
            ("step 16", "step 32"),
            (" buffers(2)", ""),
        ] {
            edits.push(record.ir.replacen(from, to, 1));
        }
        for edited in edits {
            let text = format!("{}{edited}\n", header(&options));
            let out = opt(&text, &rest, None, None);
            if !out.in_text {
                ran += 1;
            }
        }
    }
    assert!(ran >= 10, "{ran} edited sections read back");
}
