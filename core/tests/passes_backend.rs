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
fn tiles_sharing_the_space_of_dead_ones_match_the_reference() {
    // The plan: core/filetests/plan-memory/dead-tiles-share-space.tir (two slabs hold
    // eleven tiles on teach's UB).
    let source = include_str!("kernels/dead_tiles.tile");
    let options = CompileOptions {
        preset: Some("teach".into()),
        ..CompileOptions::default()
    };
    let run = tilescope::run::run(source, &options, Vec::new(), 5);
    assert!(run.diagnostics.is_empty(), "{:?}", run.diagnostics);
    assert!(run.reference_match && run.sim.races.is_empty());
}
