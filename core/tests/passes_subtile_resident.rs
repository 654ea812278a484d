//! subtile-matmul keeps a product's operand tiles whole in L1 and moves K pieces of
//! them through L0A / L0B when the tiles do not fit L0 and cannot be loaded again in
//! pieces without reading GM once per use: a weight loaded once ahead of a loop over row
//! blocks (weight-stationary), read by every iteration's product. Each piece is a
//! `slice` (a `mov2d` from a strided view of the L1 tile); the pieces accumulate in one
//! L0C tile, inside the enclosing loop's accumulator when the product is `acc += ..`.
//! The pieces in the IR are checked in `core/filetests/scope-inference/`, f32 operands
//! taking blocks instead in `core/filetests/subtile-matmul/`, and the weight overflowing
//! L0B without the pass in `core/filetests/plan-memory/`.

mod pass_support;

use pass_support::options;
use tilescope::compile::{compile, SyncStrategy};
use tilescope::machine::Machine;
use tilescope::run::run;

/// The weight (128 x 256 bf16, 64 KiB) is loaded once; each 64-row block of `x`
/// (32 KiB, two slots) overflows teach's 32 KiB L0A.
const LINEAR: &str = "kernel linear(x: bf16[512, 256], w: bf16[128, 256], y: out f32[512, 128]) {
    let wt = load w[0 .. 128, 0 .. 256];
    for r in 0..512 step 64 {
        store y[r .. r + 64, :] = load x[r .. r + 64, :] @ wt.T;
    }
}";

/// On a3 the weight (256 x 256 bf16, 128 KiB) overflows the 64 KiB L0B; L1's 256-byte
/// alignment allows only pieces of 128 columns, which fit L0B single-buffered.
const LINEAR_A3: &str =
    "kernel linear(x: bf16[512, 256], w: bf16[256, 256], y: out f32[512, 256]) {
    let wt = load w[:, :];
    for r in 0..512 step 64 {
        store y[r .. r + 64, :] = load x[r .. r + 64, :] @ wt.T;
    }
}";

/// `xa` (64 KiB) is read by the product of every iteration, which accumulates: the
/// piece loop carries the K loop's accumulator, one L0C tile for the whole nest.
const ACCUMULATE: &str = "kernel acc(x: bf16[128, 256], w: bf16[512, 256], y: out f32[128, 128]) {
    let xa = load x[:, :];
    let acc = zeros(f32[128, 128]);
    for j in 0..512 step 128 {
        acc += xa @ (load w[j .. j + 128, :]).T;
    }
    store y[:, :] = acc;
}";

fn cases() -> [(&'static str, &'static str, Machine); 4] {
    [
        ("linear", LINEAR, Machine::teach()),
        ("linear_a3", LINEAR_A3, Machine::a3()),
        ("accumulate", ACCUMULATE, Machine::teach()),
        ("accumulate_a3", ACCUMULATE, Machine::a3()),
    ]
}

#[test]
fn the_pieces_match_the_reference_without_races_under_auto_and_barrier() {
    for (name, source, machine) in cases() {
        for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
            let r = run(source, &options(machine.clone(), sync), Vec::new(), 3);
            assert!(
                r.diagnostics.is_empty(),
                "{name} {sync:?}: {:?}",
                r.diagnostics
            );
            assert!(
                r.sim.errors.is_empty(),
                "{name} {sync:?}: {:?}",
                r.sim.errors
            );
            assert!(
                r.sim.races.is_empty(),
                "{name} {sync:?}: {} races",
                r.sim.races.len()
            );
            assert!(r.reference_match, "{name} {sync:?}: err {}", r.max_abs_err);
        }
    }
}

#[test]
fn without_sync_the_pieces_race() {
    for (name, source, machine) in cases() {
        pass_support::assert_races_without_sync(name, source, &machine);
    }
}

#[test]
fn each_piece_is_one_mov2d_from_a_strided_view_of_the_l1_tile() {
    let r = compile(LINEAR, &options(Machine::teach(), SyncStrategy::Auto));
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let asm = r.asm.unwrap_or_default();
    // 64 x 64 of a 64 x 256 tile (rows of 256), and 128 x 64 of the 128 x 256 weight,
    // transposed on the way.
    assert!(
        asm.contains("mov2d.bf16 l0a[") && asm.contains("{64, 64, 256}"),
        "{asm}"
    );
    assert!(asm.contains("{128, 64, 256}, trans"), "{asm}");
}
