//! subtile-matmul splits a product along K when its operand tiles do not fit L0A or
//! L0B whole, whatever the cost model says, and prints why on the loop; what no K split
//! helps (an accumulator larger than L0C) stays plan-memory's located capacity error.

mod pass_support;

use pass_support::options;
use tilescope::compile::{compile, SyncStrategy};
use tilescope::diag::render;
use tilescope::machine::Machine;
use tilescope::run::run;

const GEMM: &str = include_str!("../../static/examples/gemm_l0.tile");

const REASON: &str = "// subtile-matmul: K split into 2 sub-tiles, L0A capacity required it \
                      (the whole operand tile needs 65536 bytes, L0A has 32768)";

#[test]
fn the_gemm_compiles_on_teach_matches_and_has_no_race_under_auto_and_barrier() {
    for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
        let r = run(GEMM, &options(Machine::teach(), sync), Vec::new(), 5);
        assert!(r.diagnostics.is_empty(), "{sync:?}: {:?}", r.diagnostics);
        assert!(r.sim.errors.is_empty(), "{sync:?}: {:?}", r.sim.errors);
        assert!(
            r.sim.races.is_empty(),
            "{sync:?}: {} races",
            r.sim.races.len()
        );
        assert!(r.reference_match, "{sync:?}: err {}", r.max_abs_err);
    }
}

#[test]
fn the_split_shows_in_the_ir_with_the_memory_that_required_it() {
    let ir = pass_support::ir_after_with(
        GEMM,
        &options(Machine::teach(), SyncStrategy::Auto),
        "subtile-matmul",
    );
    assert!(
        ir.contains("for %k in 0..256 step 64 buffers(2) iter("),
        "{ir}"
    );
    assert!(ir.contains(REASON), "{ir}");
    assert!(
        ir.contains("load %x[%m .. %m + 128, %k .. %k + 64] : bf16[128, 64]")
            && ir.contains("load %w[%n .. %n + 128, %k .. %k + 64] : bf16[128, 64]")
            && ir.contains("transpose %1 : bf16[64, 128]"),
        "{ir}"
    );
    // On a3 L0A holds both slots of the whole tile: the loop stays as written.
    let a3 = pass_support::ir_after_with(
        GEMM,
        &options(Machine::a3(), SyncStrategy::Auto),
        "subtile-matmul",
    );
    assert!(
        a3.contains("for %k in 0..256 step 128 buffers(2) iter("),
        "{a3}"
    );
    assert!(!a3.contains("capacity required"), "{a3}");
}

#[test]
fn without_the_pass_the_gemm_overflows_l0a() {
    let mut o = options(Machine::teach(), SyncStrategy::Auto);
    o.disabled_passes = vec!["subtile-matmul".into()];
    let r = compile(GEMM, &o);
    let text = render(&r.diagnostics, "gemm.tile", GEMM);
    assert!(
        text.contains("L0A overflows: the plan needs 65536 bytes but teach has 32768 bytes"),
        "{text}"
    );
}

#[test]
fn a_top_level_product_too_large_for_l0a_is_split_until_it_fits() {
    // 128 x 256 bf16 is 64 KiB: neither operand fits teach's 32 KiB L0A / L0B whole.
    let source = "kernel k(x: bf16[128, 256], w: bf16[128, 256], y: out f32[128, 128]) {
    let a = load x[:, :];
    let b = load w[:, :];
    store y[:, :] = a @ b.T;
}";
    let ir = pass_support::ir_after_with(
        source,
        &options(Machine::teach(), SyncStrategy::Auto),
        "subtile-matmul",
    );
    assert!(ir.contains("L0A capacity required it"), "{ir}");
    for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
        let r = run(source, &options(Machine::teach(), sync), Vec::new(), 5);
        assert!(r.diagnostics.is_empty(), "{sync:?}: {:?}", r.diagnostics);
        assert!(
            r.sim.races.is_empty() && r.sim.errors.is_empty(),
            "{sync:?}"
        );
        assert!(r.reference_match, "{sync:?}: err {}", r.max_abs_err);
    }
}

#[test]
fn an_accumulator_larger_than_l0c_is_still_a_located_capacity_error() {
    // The f32 128 x 256 accumulator is 128 KiB; teach's L0C has 64 KiB, and splitting K
    // does not shrink it.
    let source = "kernel k(x: bf16[128, 256], w: bf16[256, 256], y: out f32[128, 256]) {
    let acc = zeros(f32[128, 256]);
    for k in 0..256 step 128 @buffers(2) {
        acc += load x[:, k .. k + 128] @ (load w[:, k .. k + 128]).T;
    }
    store y[:, :] = acc;
}
";
    let r = compile(source, &options(Machine::teach(), SyncStrategy::Auto));
    assert!(!r.ok() && r.program.is_none());
    let text = render(&r.diagnostics, "k.tile", source);
    assert!(
        text.contains("k.tile:2:15: error: L0C overflows: the plan needs 131072 bytes but teach has 65536 bytes"),
        "{text}"
    );
    assert!(
        text.contains("at the busiest point 131072 bytes of them are live: %acc (131072)"),
        "{text}"
    );
}
