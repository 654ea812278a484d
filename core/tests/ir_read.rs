//! The tile-IR reader against the printer: every example's IR after every tile-IR
//! pass reads back into a kernel that prints the same text and holds the same values.

use tilescope::compile::CompileOptions;
use tilescope::ir::{self, read::read, Kernel};
use tilescope::passes::{self, Context, Stage};

mod examples_support;
use examples_support::examples;

/// Each value's printed name with its type, space and attributes, in print order.
fn values(k: &Kernel) -> Vec<(String, String)> {
    let names = ir::print::value_names(k);
    let mut out: Vec<(String, String)> = names
        .iter()
        .map(|(v, name)| {
            (
                name.clone(),
                format!(
                    "{:?}",
                    (&k.values[v].ty, k.values[v].space, &k.values[v].attrs)
                ),
            )
        })
        .collect();
    out.sort();
    out
}

/// Runs the pipeline on `source` and reads back every tile-IR dump; returns how many.
fn reads_back(name: &str, source: &str) -> usize {
    let mut checked = 0;
    let mut cx = Context::new(source.to_string(), None);
    cx.auto_multi_buffer = CompileOptions::default().auto_multi_buffer;
    for pass in passes::pipeline() {
        pass.run(&mut cx)
            .unwrap_or_else(|d| panic!("{name} {}: {d:?}", pass.name()));
        if !matches!(pass.makes(), Stage::Tile | Stage::Planned) {
            continue;
        }
        let at = format!("{name} after {}", pass.name());
        let kernel = cx.ir.as_ref().expect("tile IR");
        let text = ir::print_located(kernel, source).text;
        let read_back = read(&text, Some(source)).unwrap_or_else(|d| panic!("{at}: {d:?}\n{text}"));
        assert_eq!(
            ir::print_located(&read_back.kernel, source).text,
            text,
            "{at}"
        );
        // What the text does not spell out for every value (a loop result's type, the
        // range of a loop's end) comes back too.
        assert_eq!(values(&read_back.kernel), values(kernel), "{at}");
        assert_eq!(loop_ends(&read_back.kernel), loop_ends(kernel), "{at}");
        assert_eq!(
            read_back.kernel.memory.is_some(),
            kernel.memory.is_some(),
            "{at}"
        );
        // Without the source, positions stand in: the text is the same.
        let blind = read(&text, None).unwrap_or_else(|d| panic!("{at}: {d:?}"));
        assert_eq!(
            ir::print_located(&blind.kernel, &blind.source).text,
            text,
            "{at}"
        );
        checked += 1;
    }
    checked
}

/// Every loop's start, end and step, in walk order.
fn loop_ends(k: &Kernel) -> Vec<String> {
    let mut out = Vec::new();
    k.walk_ops(|_, op| {
        if let tilescope::ir::OpKind::For(l) = &op.kind {
            // The text spells out each end's expression and each condition; the range
            // of an affine end is what it leaves to the reader.
            let end = match &l.end {
                tilescope::ir::LoopEnd::Const(c) => c.to_string(),
                tilescope::ir::LoopEnd::Affine { min, max, .. } => format!("{min}..={max}"),
                tilescope::ir::LoopEnd::Guard(_) => "if".to_string(),
            };
            out.push(format!("{} {end} {}", l.start, l.step));
        }
    });
    out
}

#[test]
fn every_tile_ir_dump_of_every_example_reads_back_as_printed() {
    let mut checked = 0;
    for path in examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        checked += reads_back(&path.display().to_string(), &source);
    }
    assert!(checked >= 24 * 15, "{checked}");
}

/// Loops whose ends depend on an outer loop, one of them counted from a start that
/// does too (`0..((64 - (%i + 16)) // 16)`), read back with the range of their end.
#[test]
fn loops_whose_bounds_depend_on_an_outer_loop_read_back() {
    let source = include_str!("kernels/triangular.tile");
    assert!(reads_back("tri", source) >= 15);
}

/// The softmax example's IR after `pass`, as the pass dumps print it.
fn softmax_after(pass: &str) -> (String, String) {
    let source = tilescope::examples::ALL
        .iter()
        .find(|e| e.name == "softmax")
        .expect("the softmax example")
        .source
        .to_string();
    let result = tilescope::compile::compile(&source, &CompileOptions::default());
    let ir = result
        .passes
        .iter()
        .find(|p| p.name == pass)
        .expect("the pass ran")
        .ir
        .clone();
    (ir, source)
}

#[test]
fn a_slab_that_disagrees_with_its_tiles_is_an_error_at_the_text() {
    let (ir, source) = softmax_after("plan-memory");
    let slab = ir
        .lines()
        .find(|l| l.trim_start().starts_with("slab ") && !l.contains(", 0x"))
        .expect("a slab of one slot");
    let moved = slab.replacen("at [0x", "at [0x1", 1);
    let wrong = ir.replacen(slab, &moved, 1);
    let errors = read(&wrong, Some(&source)).expect_err("rejected");
    assert!(
        errors[0]
            .message
            .contains("the memory plan disagrees with the IR"),
        "{errors:?}"
    );
}

#[test]
fn bad_text_is_a_located_error_never_a_panic() {
    let (ir, source) = softmax_after("out-of-ssa");
    // Every prefix of every line cut short, and every line dropped, reads or fails with
    // a diagnostic inside the text.
    let lines: Vec<&str> = ir.lines().collect();
    for i in 0..lines.len() {
        let mut dropped = lines.clone();
        dropped.remove(i);
        let text = dropped.join("\n");
        if let Err(d) = read(&text, Some(&source)) {
            let span = d[0].span.expect("located");
            assert!(span.end as usize <= text.len(), "{d:?}");
        }
        for cut in (0..lines[i].len()).step_by(3) {
            let mut short = lines.clone();
            short[i] = &lines[i][..cut];
            let text = short.join("\n");
            if let Err(d) = read(&text, Some(&source)) {
                let span = d[0].span.expect("located");
                assert!(span.end as usize <= text.len(), "{d:?}");
            }
        }
    }
}
