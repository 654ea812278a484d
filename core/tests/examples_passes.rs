//! Golden per-pass IR dumps of every example kernel: the text users read in the
//! playground and in `tilescope compile --emit passes`. Reviewed when they change.

use tilescope::compile::{compile, CompileOptions};

mod examples_support;
use examples_support::examples;

/// The `--emit passes` text: each pass's IR under a header naming the pass.
fn dump(source: &str) -> String {
    let options = CompileOptions {
        verify: true,
        ..CompileOptions::default()
    };
    let result = compile(source, &options);
    assert!(
        result.diagnostics.is_empty(),
        "diagnostics: {:#?}",
        result.diagnostics
    );
    let mut out = String::new();
    for pass in &result.passes {
        out.push_str(&format!("=== after {} ===\n{}\n", pass.name, pass.ir));
    }
    out
}

#[test]
fn there_are_at_least_twelve_examples() {
    assert!(examples().len() >= 12, "{:?}", examples());
}

#[test]
fn every_example_compiles_through_every_pass() {
    for path in examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 name")
            .to_string();
        insta::assert_snapshot!(format!("passes_{name}"), dump(&source));
    }
}

#[test]
fn the_built_in_gallery_lists_every_example_file() {
    let mut built_in: Vec<&str> = tilescope::examples::ALL.iter().map(|e| e.name).collect();
    built_in.sort();
    let files: Vec<String> = examples()
        .iter()
        .map(|p| {
            p.file_stem()
                .and_then(|s| s.to_str())
                .expect("utf-8 name")
                .to_string()
        })
        .collect();
    assert_eq!(built_in, files);
    for e in tilescope::examples::ALL {
        assert!(
            !e.description().is_empty(),
            "{} has no teaching comment",
            e.name
        );
    }
}
