//! Middle-end passes on machines and properties a filetest cannot state: decompose-
//! transfer's peeling on a machine with one-dimensional DMA, and plan-memory's reuse of
//! dead tiles' space (with the kernels run). axis-split, multi-buffer and plan-memory's
//! slots are checked in `core/filetests/`.

mod pass_support;

use pass_support::ir_after_with as pass_ir;
use tilescope::compile::{compile, CompileOptions};
use tilescope::machine::Machine;

#[test]
fn one_dimensional_dma_peels_rows_into_loops() {
    let mut machine = Machine::a3();
    machine.dma_max_dims = 1;
    // Rows of 64 f32 are 256 bytes: peeled rows stay aligned in UB.
    let source = "kernel k(x: f32[64, 128], y: out f32[16, 64]) {
    let t = load x[8 .. 24, 64 .. 128];
    store y[:, :] = t;
}";
    let options = CompileOptions {
        machine: Some(machine),
        ..CompileOptions::default()
    };
    let ir = pass_ir(source, &options, "decompose-transfer");
    assert!(ir.contains("loop[16, 128, 64] dma[64, 1, 1]"), "{ir}");
    let r = tilescope::run::run(source, &options, Vec::new(), 5);
    assert!(
        r.reference_match && r.sim.errors.is_empty(),
        "{:?}",
        r.sim.errors
    );
    // Rows of 16 f32 would start at 64-byte steps: rejected, not misaligned at run time.
    let narrow = source
        .replace("64 .. 128", "64 .. 80")
        .replace("f32[16, 64]", "f32[16, 16]");
    let r = compile(&narrow, &options);
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.message.contains("256-byte alignment")),
        "{:?}",
        r.diagnostics
    );
}

#[test]
fn dead_tiles_share_space() {
    let source = "kernel k(x: f32[8, 64], y: out f32[8, 64]) {
    let t = load x[:, :];
    let a = exp(t);
    let b = a * 2.0;
    let c = b + 1.0;
    store y[:, :] = c + t;
}";
    let options = CompileOptions::default();
    let r = compile(source, &options);
    let ir = &r
        .passes
        .iter()
        .find(|p| p.name == "plan-memory")
        .expect("pass")
        .ir;
    // Five tiles of 2 KiB, at most three live at once (t, the operand, the result).
    let addrs: std::collections::BTreeSet<&str> = ir
        .lines()
        .filter(|l| l.contains(" = "))
        .filter_map(|l| l.split(" at [").nth(1))
        .collect();
    assert!(addrs.len() <= 3, "{ir}");
    let run = tilescope::run::run(source, &options, Vec::new(), 5);
    assert!(run.reference_match);
}
