//! subtile-matmul splits the product of an accumulator carried across a loop
//! (`acc += x_k @ w_k`) into M x N blocks of that one accumulator when its operand tiles
//! overflow L0A or L0B and K pieces cannot help (f16 and f32 products would sum in
//! another order): each block's product adds into its block of the L0C tile
//! (`matmul .., acc=%acc[%mb .. , %nb .. ]`). An accumulator with N blocks is laid out
//! in column strips, moved out one FIX per strip. What no block split helps (an
//! accumulator larger than L0C) stays the located capacity error. The IR of the splits
//! is checked in `core/filetests/subtile-matmul/accumulator-blocks*.tir`, the capacity
//! errors with and without the pass in `core/filetests/plan-memory/`.

mod pass_support;

use pass_support::options;
use tilescope::compile::{compile, SyncStrategy};
use tilescope::machine::Machine;

/// f32 x_k and w_k of 64 KiB each: over teach's 32 KiB L0A and L0B. The 64 KiB
/// accumulator fits L0C: 2 x 2 blocks.
const ACC_F32: &str = "kernel acc(x: f32[128, 512], w: f32[512, 128], y: out f32[128, 128]) {
    let acc = zeros(f32[128, 128]);
    for k in 0..512 step 128 {
        acc += load x[:, k .. k + 128] @ load w[k .. k + 128, :];
    }
    store y[:, :] = acc;
}";

/// A transposed f16 weight of 64 KiB per K block, in a double-buffered loop: 2 x 4 blocks
/// on teach (two slots of the 32 KiB row block, as the loop asks, overflow L0A).
const ACC_F16_T: &str = "kernel acc(x: f16[64, 512], w: f16[128, 512], y: out f32[64, 128]) {
    let acc = zeros(f32[64, 128]);
    for k in 0..512 step 256 @buffers(2) {
        acc += load x[:, k .. k + 256] @ (load w[:, k .. k + 256]).T;
    }
    store y[:, :] = acc;
}";

/// As [`ACC_F16_T`], with a weight of 128 KiB per K block, for a3's larger L0B.
const ACC_F16_T_WIDE: &str = "kernel acc(x: f16[64, 512], w: f16[256, 512], y: out f32[64, 256]) {
    let acc = zeros(f32[64, 256]);
    for k in 0..512 step 256 @buffers(2) {
        acc += load x[:, k .. k + 256] @ (load w[:, k .. k + 256]).T;
    }
    store y[:, :] = acc;
}";

/// f32 rows of 128 KiB per K block on a3: over its 64 KiB L0A, so M blocks.
const ACC_F32_ROWS: &str = "kernel acc(x: f32[128, 512], w: f32[512, 64], y: out f32[128, 64]) {
    let acc = zeros(f32[128, 64]);
    for k in 0..512 step 256 {
        acc += load x[:, k .. k + 256] @ load w[k .. k + 256, :];
    }
    store y[:, :] = acc;
}";

fn cases() -> Vec<(&'static str, &'static str, Machine)> {
    vec![
        ("acc_f32", ACC_F32, Machine::teach()),
        ("acc_f16_t", ACC_F16_T, Machine::teach()),
        ("acc_f16_t_wide", ACC_F16_T_WIDE, Machine::a3()),
        ("acc_f32_rows", ACC_F32_ROWS, Machine::a3()),
    ]
}

#[test]
fn blocks_of_one_accumulator_match_the_reference_without_races() {
    // Each element sums one iteration's K in one product, in the reference's order,
    // and adds it to the accumulator as the reference does.
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

#[test]
fn the_accumulator_is_laid_out_in_column_strips_and_moved_out_strip_by_strip() {
    let r = compile(ACC_F32, &options(Machine::teach(), SyncStrategy::Auto));
    let asm = r.asm.unwrap_or_default();
    // The first write of each block is where the K loop's counter (r0) is 0, whichever
    // block: `acc` is that counter alone, not a sum with the block loops' counters.
    assert!(asm.contains("loop r0, 4 !at 3:5"), "{asm}");
    assert!(
        asm.contains("l0a[0], l0b[0], m=64, k=128, n=64, acc=r0 !step 3"),
        "{asm}"
    );
    // Strip 1 (columns 64 .. 128) starts after all 128 rows of strip 0.
    for line in [
        "fix.f32 y[0]{128, 64, 128}, l0c[0]{128, 64, 64}",
        "fix.f32 y[256]{128, 64, 128}, l0c[32768]{128, 64, 64}",
    ] {
        assert!(asm.contains(line), "missing `{line}` in\n{asm}");
    }
}
