//! Matmul accumulators kept in L0C (`acc += x @ w` becomes `mmad .. acc=`), the UB
//! fallback for other inits, and K loops with a tail feeding the matrix unit.

use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::isa::{Op, Val};
use tilescope::run::{run, RunResult};

fn simulate(source: &str, sync: SyncStrategy) -> RunResult {
    let options = CompileOptions {
        sync,
        ..CompileOptions::default()
    };
    run(source, &options, Vec::new(), 5)
}

fn assert_matches(r: &RunResult) {
    let diags: Vec<&String> = r.diagnostics.iter().map(|d| &d.message).collect();
    assert!(diags.is_empty(), "{diags:?}");
    let errors: Vec<&String> = r.sim.errors.iter().map(|e| &e.message).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(r.sim.races.is_empty(), "{:?}", r.sim.races);
    assert!(r.reference_match, "max abs err {}", r.max_abs_err);
}

fn count(r: &RunResult, pred: impl Fn(&Op) -> bool) -> usize {
    let program = r.compile.program.as_ref().expect("a program");
    program.instrs.iter().filter(|i| pred(&i.op)).count()
}

fn scope_ir(r: &RunResult) -> String {
    r.compile
        .passes
        .iter()
        .find(|p| p.name == "scope-inference")
        .map(|p| p.ir.clone())
        .expect("scope-inference ran")
}

const TILED: &str = include_str!("../../static/examples/matmul_tiled.tile");

#[test]
fn the_tiled_accumulator_stays_in_l0c_with_one_fix_after_the_loop() {
    for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
        let r = simulate(TILED, sync);
        assert_matches(&r);
        // Summing the product first and then adding it to C is the interpreter's
        // `acc + x @ w`, so the results are bit-identical.
        assert_eq!(r.max_abs_err, 0.0);
        let ir = scope_ir(&r);
        assert!(ir.contains("iter(%acc.1: l0c f32[64, 64] = %acc)"), "{ir}");
        assert!(ir.contains("matmul %0, %1, acc=%acc.1"), "{ir}");
        assert_eq!(count(&r, |op| matches!(op, Op::Fix { .. })), 1);
        assert_eq!(count(&r, |op| matches!(op, Op::VBinary { .. })), 0);
        // The accumulate flag is the loop counter: 0 (overwrite) on the first iteration.
        assert_eq!(
            count(&r, |op| matches!(
                op,
                Op::Mmad {
                    acc: Val::Reg(_),
                    ..
                }
            )),
            1
        );
    }
}

#[test]
fn a_non_zero_init_keeps_the_accumulator_in_ub() {
    let source = TILED.replace("zeros(f32[64, 64])", "full(f32[64, 64], 0.5)");
    let r = simulate(&source, SyncStrategy::Auto);
    assert_matches(&r);
    let ir = scope_ir(&r);
    assert!(ir.contains("iter(%acc.1: ub f32[64, 64]"), "{ir}");
    assert_eq!(count(&r, |op| matches!(op, Op::VBinary { .. })), 1);
}

#[test]
fn an_accumulator_read_inside_the_loop_keeps_the_ub_scheme() {
    let source =
        "kernel k(a: f32[16, 64], b: f32[64, 16], c: out f32[16, 16], d: out f32[16, 16]) {
    let acc = zeros(f32[16, 16]);
    for k in 0..64 step 16 {
        store d[:, :] = acc;
        acc += load a[:, k .. k + 16] @ load b[k .. k + 16, :];
    }
    store c[:, :] = acc;
}";
    let r = simulate(source, SyncStrategy::Auto);
    assert_matches(&r);
    assert!(scope_ir(&r).contains("iter(%acc.1: ub"), "{}", scope_ir(&r));
}

#[test]
fn accumulators_in_nested_loops_restart_on_each_outer_iteration() {
    let source = "kernel k(a: f32[32, 64], b: f32[64, 16], c: out f32[32, 16]) {
    for i in 0..32 step 16 {
        let acc = zeros(f32[16, 16]);
        for k in 0..64 step 16 {
            acc += load a[i .. i + 16, k .. k + 16] @ load b[k .. k + 16, :];
        }
        store c[i .. i + 16, :] = acc;
    }
}";
    let r = simulate(source, SyncStrategy::Auto);
    assert_matches(&r);
    assert_eq!(r.max_abs_err, 0.0);
    assert!(scope_ir(&r).contains(": l0c f32[16, 16] = %acc"));
}

#[test]
fn f16_operands_accumulate_in_l0c() {
    let source = "kernel k(a: f16[16, 64], b: f16[64, 32], c: out f32[16, 32]) {
    let acc = zeros(f32[16, 32]);
    for k in 0..64 step 32 {
        acc += load a[:, k .. k + 32] @ load b[k .. k + 32, :];
    }
    store c[:, :] = acc;
}";
    let r = simulate(source, SyncStrategy::Auto);
    assert_matches(&r);
    assert!(scope_ir(&r).contains("l0c f32[16, 32] = %acc"));
}

const K_TAIL: &str = "kernel k(a: f32[32, 100], b: f32[100, 48], c: out f32[32, 48]) {
    let acc = zeros(f32[32, 48]);
    for k in 0..100 step 32 {
        acc += load a[:, k .. k + 32] @ load b[k .. k + 32, :];
    }
    store c[:, :] = acc;
}";

#[test]
fn a_k_loop_tail_zeroes_the_unused_lanes_of_both_operands() {
    for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
        let r = simulate(K_TAIL, sync);
        assert_matches(&r);
        // Every lane of the product is valid, so the accumulator still lives in L0C.
        assert!(
            scope_ir(&r).contains("l0c f32[32, 48] = %acc"),
            "{}",
            scope_ir(&r)
        );
    }
}

#[test]
fn a_transposed_operand_with_a_k_tail_matches_the_reference() {
    let source = "kernel k(a: f32[16, 72], bt: f32[24, 72], c: out f32[16, 24]) {
    let acc = zeros(f32[16, 24]);
    for k in 0..72 step 32 {
        acc += load a[:, k .. k + 32] @ (load bt[:, k .. k + 32]).T;
    }
    store c[:, :] = acc;
}";
    let r = simulate(source, SyncStrategy::Auto);
    assert_matches(&r);
}

#[test]
fn a_row_tail_on_the_product_keeps_the_masked_update_in_ub() {
    let source = "kernel k(a: f32[40, 64], b: f32[64, 16], c: out f32[40, 16]) {
    for i in 0..40 step 16 {
        let acc = zeros(f32[16, 16]);
        for k in 0..64 step 32 {
            acc += load a[i .. i + 16, k .. k + 32] @ load b[k .. k + 32, :];
        }
        store c[i .. i + 16, :] = acc;
    }
}";
    let r = simulate(source, SyncStrategy::Auto);
    assert_matches(&r);
    assert!(
        scope_ir(&r).contains("= %acc) !at 4:9 {"),
        "{}",
        scope_ir(&r)
    );
    assert!(
        scope_ir(&r).contains("ub f32[16, 16] = %acc"),
        "{}",
        scope_ir(&r)
    );
}

/// Two accumulators of one shape (a gate and an up projection of the same rows): CSE
/// merges their `zeros(..)` into one `full 0.0`; each must still get its own zero and
/// stay in L0C, rather than both falling back to UB.
const GATE_UP: &str = "kernel gate_up(x: bf16[64, 256], wg: bf16[256, 64], wu: bf16[256, 64], g: out f32[64, 64], u: out f32[64, 64]) {
    let gacc = zeros(f32[64, 64]);
    let uacc = zeros(f32[64, 64]);
    for k in 0..256 step 64 {
        let xk = load x[:, k .. k + 64];
        gacc += xk @ load wg[k .. k + 64, :];
        uacc += xk @ load wu[k .. k + 64, :];
    }
    store g[:, :] = gacc;
    store u[:, :] = uacc;
}";

#[test]
fn accumulators_whose_zeros_cse_merged_each_stay_in_l0c() {
    for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
        let r = simulate(GATE_UP, sync);
        assert_matches(&r);
        assert_eq!(r.max_abs_err, 0.0);
        let ir = scope_ir(&r);
        for line in [
            "%gacc = full 0.0 : l0c f32[64, 64]",
            "%uacc = full 0.0 : l0c f32[64, 64]",
            "iter(%gacc.1: l0c f32[64, 64] = %gacc, %uacc.1: l0c f32[64, 64] = %uacc)",
        ] {
            assert!(ir.contains(line), "missing `{line}` in\n{ir}");
        }
        // Both products add in L0C: no vector add, one FIX per accumulator.
        assert_eq!(count(&r, |op| matches!(op, Op::VBinary { .. })), 0);
        assert_eq!(count(&r, |op| matches!(op, Op::Fix { .. })), 2);
    }
}
