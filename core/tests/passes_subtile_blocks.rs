//! subtile-matmul splits a product that only a store reads into blocks of M and N
//! when K pieces cannot bring it into L0 (f32 operands, whose pieces along K would sum
//! in another order than one product, or a product tile larger than L0C): each block is
//! a product of its own, from slices of the operand tiles kept whole in L1, stored by
//! itself. Blocks of an accumulator carried across a loop are
//! `passes_subtile_accumulator.rs`'s. The IR of the blocks is checked in
//! `core/filetests/subtile-matmul/`, the capacity errors without the pass, or for a
//! product it leaves whole, in `core/filetests/plan-memory/`.

mod pass_support;

use tilescope::machine::Machine;

/// An f32 weight (64 KiB) read by every 64-row block: over L0B on both presets with
/// two slots, and the row block over teach's L0A.
const LINEAR_F32: &str = "kernel linear(x: f32[512, 128], w: f32[128, 128], y: out f32[512, 128]) {
    let wt = load w[:, :];
    for r in 0..512 step 64 {
        store y[r .. r + 64, :] = load x[r .. r + 64, :] @ wt.T;
    }
}";

/// A product outside every loop whose f32 operands (64 KiB each) overflow L0.
const TOP_F32: &str = "kernel mm(x: f32[128, 128], w: f32[128, 128], y: out f32[128, 128]) {
    store y[:, :] = load x[:, :] @ load w[:, :];
}";

/// A 16-bit product whose result (256 x 256 f32, 256 KiB) overflows L0C on both
/// presets, which no K split helps: blocks of the result, each stored by itself.
const WIDE: &str = "kernel wide(x: bf16[256, 64], w: bf16[64, 256], y: out f32[256, 256]) {
    store y[:, :] = load x[:, :] @ load w[:, :];
}";

fn cases() -> Vec<(&'static str, &'static str, Machine)> {
    let mut out = Vec::new();
    for (name, source) in [
        ("linear_f32", LINEAR_F32),
        ("top_f32", TOP_F32),
        ("wide", WIDE),
    ] {
        out.push((name, source, Machine::teach()));
        out.push((name, source, Machine::a3()));
    }
    out
}

#[test]
fn the_blocks_match_the_reference_without_races_under_auto_and_barrier() {
    // Each element sums the whole K in one product, in the reference's order.
    for (name, source, machine) in cases() {
        pass_support::assert_exact_without_races(name, source, &machine);
    }
}

#[test]
fn without_sync_the_blocks_race() {
    for (name, source, machine) in cases() {
        pass_support::assert_races_without_sync(name, source, &machine);
    }
}
