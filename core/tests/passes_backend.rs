//! Middle-end passes from source text: axis-split, multi-buffer (explicit and automatic,
//! with its capacity fallback), plan-memory's reuse and slots, and decompose-transfer's
//! peeling on a machine with one-dimensional DMA.

mod pass_support;

use pass_support::ir_after_with as pass_ir;
use tilescope::compile::{compile, CompileOptions};
use tilescope::machine::Machine;

const STREAM: &str = "kernel k(x: f32[64, 256], y: out f32[64, 256]) {
    for r in 0..64 step 8 {
        let t = load x[r .. r + 8, :];
        store y[r .. r + 8, :] = exp(t);
    }
}";

#[test]
fn auto_multi_buffer_doubles_the_innermost_loop_when_it_fits() {
    let ir = pass_ir(STREAM, &CompileOptions::default(), "plan-memory");
    assert!(ir.contains("buffers(2) slot = iteration % 2"), "{ir}");
    assert!(ir.contains("slots(2) at [0x0, 0x2000]"), "{ir}");
}

#[test]
fn auto_multi_buffer_backs_off_when_two_slots_overflow() {
    // Two 64 KiB tiles fill teach's 128 KiB UB; doubling them would not fit.
    let big = "kernel k(x: f32[256, 256], y: out f32[256, 256]) {
    for r in 0..256 step 64 {
        let t = load x[r .. r + 64, :];
        store y[r .. r + 64, :] = exp(t);
    }
}";
    let options = CompileOptions {
        preset: Some("teach".into()),
        ..CompileOptions::default()
    };
    let ir = pass_ir(big, &options, "multi-buffer");
    assert!(!ir.contains("slots("), "{ir}");
    assert!(!ir.contains("buffers("), "{ir}");
}

#[test]
fn auto_multi_buffer_can_be_turned_off() {
    let options = CompileOptions {
        auto_multi_buffer: false,
        ..CompileOptions::default()
    };
    let ir = pass_ir(STREAM, &options, "plan-memory");
    assert!(!ir.contains("slots("), "{ir}");
}

#[test]
fn explicit_buffers_give_every_cross_pipe_tile_that_many_addresses() {
    let source = STREAM.replace("step 8 {", "step 8 @buffers(3) {");
    let ir = pass_ir(&source, &CompileOptions::default(), "plan-memory");
    assert!(ir.contains("slots(3) at [0x0, 0x2000, 0x4000]"), "{ir}");
}

#[test]
fn axis_split_nests_the_loop_and_makes_indices_affine() {
    let source = include_str!("../../static/examples/block_permute.tile");
    let ir = pass_ir(source, &CompileOptions::default(), "axis-split");
    assert!(ir.contains("for %b0 in 0..4 step 1 {"), "{ir}");
    assert!(ir.contains("for %b1 in 0..4 step 1 {"), "{ir}");
    assert!(!ir.contains("//") && !ir.contains(" mod "), "{ir}");
}

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
    let addrs: std::collections::BTreeSet<&str> =
        ir.lines().filter_map(|l| l.split(" at [").nth(1)).collect();
    assert!(addrs.len() <= 3, "{ir}");
    let run = tilescope::run::run(source, &options, Vec::new(), 5);
    assert!(run.reference_match);
}
