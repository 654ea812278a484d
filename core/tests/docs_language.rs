//! The language reference stays true: every ```tile block of `docs/language.md` is a
//! complete file that compiles, simulates without errors or races and matches the
//! reference interpreter; every ```tile-error block fails to compile, with the error a
//! ```text block right after it shows.

use tilescope::compile::{compile, CompileOptions};
use tilescope::diag::Severity;
use tilescope::run::run;

const DOC: &str = "docs/language.md";

/// One fenced block of the markdown.
struct Block {
    /// The info string after the opening fence (`tile`, `tile-error`, `text`, ...).
    info: String,
    /// 1-based line of the opening fence.
    line: usize,
    source: String,
    /// True when only blank lines separate this block from the previous one.
    follows_previous: bool,
}

fn doc() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(DOC);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Every fenced block, in order. Fences are lines starting with three backticks.
fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    // Whether any non-blank line came since the last closing fence.
    let mut text_since_close = true;
    for (i, line) in markdown.lines().enumerate() {
        match open.as_mut() {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some(Block {
                        info: info.trim().to_string(),
                        line: i + 1,
                        source: String::new(),
                        follows_previous: !text_since_close,
                    });
                } else if !line.trim().is_empty() {
                    text_since_close = true;
                }
            }
            Some(block) => {
                if line.trim_end() == "```" {
                    out.extend(open.take());
                    text_since_close = false;
                } else {
                    block.source.push_str(line);
                    block.source.push('\n');
                }
            }
        }
    }
    if let Some(b) = open {
        panic!("{DOC}:{}: the block opened here is never closed", b.line);
    }
    out
}

fn with_info<'b>(all: &'b [Block], info: &str) -> Vec<&'b Block> {
    all.iter().filter(|b| b.info == info).collect()
}

#[test]
fn every_tile_info_string_is_known() {
    let all = blocks(&doc());
    let unknown: Vec<String> = all
        .iter()
        .filter(|b| b.info.starts_with("tile") && b.info != "tile" && b.info != "tile-error")
        .map(|b| format!("{DOC}:{}: ```{}", b.line, b.info))
        .collect();
    assert!(
        unknown.is_empty(),
        "blocks neither run nor checked:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn every_tile_block_compiles_runs_and_matches_the_reference() {
    let all = blocks(&doc());
    let tiles = with_info(&all, "tile");
    assert!(
        tiles.len() >= 15,
        "only {} ```tile blocks found in {DOC}: is the extraction broken?",
        tiles.len()
    );
    let mut failures = Vec::new();
    for b in tiles {
        let r = run(&b.source, &CompileOptions::default(), Vec::new(), 7);
        let diags: Vec<&str> = r.diagnostics.iter().map(|d| d.message.as_str()).collect();
        let errors: Vec<&str> = r.sim.errors.iter().map(|e| e.message.as_str()).collect();
        let ok = diags.is_empty()
            && errors.is_empty()
            && r.sim.races.is_empty()
            && !r.outputs.is_empty()
            && r.reference_match;
        if !ok {
            failures.push(format!(
                "{DOC}:{}: diagnostics {diags:?}, simulation errors {errors:?}, {} races, \
                 outputs {:?}",
                b.line,
                r.sim.races.len(),
                r.outputs
                    .iter()
                    .map(|o| (&o.name, o.matches, o.max_abs_err))
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_tile_error_block_fails_to_compile_as_shown() {
    let all = blocks(&doc());
    let mut failures = Vec::new();
    let mut count = 0;
    for (i, b) in all.iter().enumerate() {
        if b.info != "tile-error" {
            continue;
        }
        count += 1;
        let result = compile(&b.source, &CompileOptions::default());
        let errors: Vec<&str> = result
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.message.as_str())
            .collect();
        if errors.is_empty() {
            failures.push(format!("{DOC}:{}: compiles without an error", b.line));
            continue;
        }
        // A ```text block right after shows the errors: each `error: ...` line of it
        // must be the message of one of them.
        let Some(shown) = all
            .get(i + 1)
            .filter(|next| next.info == "text" && next.follows_previous)
        else {
            continue;
        };
        for line in shown.source.lines() {
            if let Some(message) = line.strip_prefix("error: ") {
                if !errors.contains(&message) {
                    failures.push(format!(
                        "{DOC}:{}: the error {message:?} shown at line {} is not reported; \
                         the errors are {errors:?}",
                        b.line, shown.line
                    ));
                }
            }
        }
    }
    assert!(
        count >= 5,
        "only {count} ```tile-error blocks found in {DOC}"
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn the_machines_table_matches_the_presets() {
    use tilescope::machine::Machine;
    use tilescope::types::MemSpace;
    let doc = doc();
    let (a3, teach) = (Machine::a3(), Machine::teach());
    let kib = |m: &Machine, s: MemSpace| m.memories.get(s).size.unwrap_or(0) / 1024;
    let align = |m: &Machine, s: MemSpace| m.memories.get(s).alignment;
    let rows = [
        format!(
            "| UB (vector buffer) | {} KiB, {} B alignment | {} KiB, {} B alignment |",
            kib(&a3, MemSpace::UB),
            align(&a3, MemSpace::UB),
            kib(&teach, MemSpace::UB),
            align(&teach, MemSpace::UB)
        ),
        format!(
            "| L1 | {} KiB | {} KiB |",
            kib(&a3, MemSpace::L1),
            kib(&teach, MemSpace::L1)
        ),
        format!(
            "| L0A / L0B (matrix operands) | {} KiB each, {} B alignment | {} KiB each, {} B alignment |",
            kib(&a3, MemSpace::L0A),
            align(&a3, MemSpace::L0A),
            kib(&teach, MemSpace::L0A),
            align(&teach, MemSpace::L0A)
        ),
        format!(
            "| L0C (matrix accumulator) | {} KiB | {} KiB |",
            kib(&a3, MemSpace::L0C),
            kib(&teach, MemSpace::L0C)
        ),
        format!(
            "| scalar registers | {} | {} |",
            a3.scalar_regs, teach.scalar_regs
        ),
        format!(
            "| clock | {} GHz | {} GHz |",
            a3.clock_ghz, teach.clock_ghz
        ),
    ];
    for row in rows {
        assert!(doc.contains(&row), "{DOC} should hold the row\n{row}");
    }
}
