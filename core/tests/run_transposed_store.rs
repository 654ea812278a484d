//! `store y[..] = t.T` of a UB tile becomes one transposing DMA (tile strides swapped),
//! with no vector work; tails and other readers of the transpose keep the UB transpose.

use tilescope::compile::CompileOptions;
use tilescope::isa::Op;
use tilescope::run::run;
use tilescope::types::Pipe;

fn check(source: &str) -> usize {
    let r = run(source, &CompileOptions::default(), Vec::new(), 9);
    let diags: Vec<&String> = r.diagnostics.iter().map(|d| &d.message).collect();
    assert!(diags.is_empty(), "{diags:?}");
    assert!(r.sim.errors.is_empty(), "{:?}", r.sim.errors);
    assert!(r.sim.races.is_empty());
    assert!(r.reference_match, "max abs err {}", r.max_abs_err);
    let program = r.compile.program.expect("a program");
    program
        .instrs
        .iter()
        .filter(|i| {
            i.op.pipe() == Pipe::V && !matches!(i.op, Op::SetFlag { .. } | Op::WaitFlag { .. })
        })
        .count()
}

#[test]
fn a_stored_transpose_needs_no_vector_work() {
    let source = "kernel k(x: f32[32, 64], y: out f32[64, 32]) {
    for i in 0..2 {
        let t = load x[i * 16 .. i * 16 + 16, :];
        store y[:, i * 16 .. i * 16 + 16] = t.T;
    }
}";
    assert_eq!(check(source), 0);
}

#[test]
fn a_transpose_with_another_reader_stays_on_the_vector_pipe() {
    let source = "kernel k(x: f32[16, 32], y: out f32[32, 16], z: out f32[32, 16]) {
    let t = (load x[:, :]).T;
    store y[:, :] = t;
    store z[:, :] = t + 1.0;
}";
    assert!(check(source) >= 2);
}

#[test]
fn a_tailed_transposed_store_matches_the_reference() {
    let source = "kernel k(x: f32[40, 16], y: out f32[16, 40]) {
    for i in 0..40 step 16 {
        store y[:, i .. i + 16] = (load x[i .. i + 16, :]).T;
    }
}";
    check(source);
}
