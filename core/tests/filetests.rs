//! The filetests: every `core/filetests/**/*.tir` is a kernel in tile IR, as
//! `tilescope compile --emit passes` prints it, with `; run: PASS` lines naming the
//! passes to run on it and filecheck directives (`; check:`, `; nextln:`, `; not:`, ...)
//! over what they print: each pass's IR under `=== after PASS ===`, then the rendered
//! diagnostics when a pass fails. Cranelift's filetests, for the tile IR; `tilescope opt`
//! runs the same thing by hand. In a pattern, `$$` is a literal `$` (fused operands).

use std::path::{Path, PathBuf};
use tilescope::compile::passes_text;
use tilescope::diag::render;
use tilescope::opt::opt;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|x| x == "tir") {
            out.push(path);
        }
    }
}

/// Runs one file; the error says what did not match and how the directives matched.
fn run(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let comments: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(';'))
        .collect();
    let passes: Vec<String> = comments
        .iter()
        .filter_map(|c| c.trim().strip_prefix("run:"))
        .flat_map(|names| names.split_whitespace().map(str::to_string))
        .collect();
    if passes.is_empty() {
        return Err("no `; run: PASS` line".into());
    }
    let mut builder = filecheck::CheckerBuilder::new();
    for c in &comments {
        builder
            .directive(c)
            .map_err(|e| format!("directive `{c}`: {e}"))?;
    }
    let checker = builder.finish();
    if checker.is_empty() {
        return Err("no `; check:` directive".into());
    }
    let result = opt(&text, &passes, None, None);
    let mut output = passes_text(&result.passes);
    if !result.diagnostics.is_empty() {
        let (file, source) = if result.in_text {
            (path.display().to_string(), text.as_str())
        } else {
            ("<kernel source>".to_string(), result.source.as_str())
        };
        output.push_str(&render(&result.diagnostics, &file, source));
    }
    match checker.explain(&output, filecheck::NO_VARIABLES) {
        Ok((true, _)) => Ok(()),
        Ok((false, explained)) => Err(format!("{explained}\n--- output ---\n{output}")),
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn every_filetest_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let mut all = Vec::new();
    files(&root, &mut all);
    all.sort();
    assert!(all.len() >= 93, "{} filetests", all.len());
    let failures: Vec<String> = all
        .iter()
        .filter_map(|p| {
            run(p)
                .err()
                .map(|e| format!("=== {} ===\n{e}", p.display()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn a_filetest_that_does_not_match_fails() {
    let dir = std::env::temp_dir().join(format!("tilescope-filetest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("wrong.tir");
    let text = "; run: canonicalize\nkernel k(%x: f32[4], %y: out f32[4]) {\n  %a = load %x[0 .. 4] : f32[4]\n  store %y[0 .. 4], %a\n}\n; check: exp %a\n";
    std::fs::write(&path, text).expect("written");
    let outcome = run(&path);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(outcome.is_err_and(|e| e.contains("exp %a")));
}
