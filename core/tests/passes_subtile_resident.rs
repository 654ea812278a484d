//! subtile-matmul keeps a product's operand tiles whole in L1 and moves K pieces of
//! them through L0A / L0B when the tiles do not fit L0 and cannot be loaded again in
//! pieces without reading GM once per use: a weight loaded once ahead of a loop over row
//! blocks (weight-stationary), read by every iteration's product. Each piece is a
//! `slice` (a `mov2d` from a strided view of the L1 tile); the pieces accumulate in one
//! L0C tile, inside the enclosing loop's accumulator when the product is `acc += ..`.

mod pass_support;

use pass_support::options;
use tilescope::compile::{compile, SyncStrategy};
use tilescope::diag::render;
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
fn the_ir_shows_the_slices_of_the_l1_tiles_and_why() {
    let ir = pass_support::ir_after_with(
        LINEAR,
        &options(Machine::teach(), SyncStrategy::Auto),
        "scope-inference",
    );
    for line in [
        "%wt = load %w[0 .. 128, 0 .. 256] : l1 bf16[128, 256]",
        "for %kc in 0..256 step 64 iter(%2: l0c f32[64, 128] = %1) {  // subtile-matmul: K in 4 \
         pieces moved from L1, L0A capacity required it (the whole operand tile needs 65536 \
         bytes, L0A has 32768)",
        "%3 = slice %0[:, %kc .. %kc + 64] : l0a bf16[64, 64]",
        "%4 = slice %wt[:, %kc .. %kc + 64] transposed : l0b bf16[64, 128]",
        "%5 = matmul %3, %4, acc=%2 : l0c f32[64, 128]",
    ] {
        assert!(ir.contains(line), "missing `{line}` in\n{ir}");
    }
    // The weight is loaded once, ahead of the loop: GM is read once for it.
    assert_eq!(ir.matches("load %w").count(), 1, "{ir}");
    let nest = pass_support::ir_after_with(
        ACCUMULATE,
        &options(Machine::teach(), SyncStrategy::Auto),
        "scope-inference",
    );
    assert!(
        nest.contains("for %kc in 0..256 step 64 iter(%acc.2: l0c f32[128, 128] = %acc.1)"),
        "{nest}"
    );
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

#[test]
fn without_the_pass_the_weight_overflows_l0() {
    let mut o = options(Machine::a3(), SyncStrategy::Auto);
    o.disabled_passes = vec!["subtile-matmul".into()];
    let r = compile(LINEAR_A3, &o);
    let text = render(&r.diagnostics, "linear.tile", LINEAR_A3);
    assert!(
        text.contains("L0B overflows: the plan needs 131072 bytes but a3 has 65536 bytes"),
        "{text}"
    );
}

#[test]
fn f32_operands_are_not_split_along_k() {
    // Pieces along K sum in another order than one product: exact for 16-bit operands
    // in the f32 accumulator, not for f32 ones, which take blocks of M and N instead
    // (`passes_subtile_blocks.rs`).
    let source = LINEAR.replace("bf16", "f32");
    let ir = pass_support::ir_after_with(
        &source,
        &options(Machine::teach(), SyncStrategy::Auto),
        "subtile-matmul",
    );
    assert!(!ir.contains("K in"), "{ir}");
    assert!(ir.contains("M x N in"), "{ir}");
}
