//! canonicalize's loop-invariant code motion: computations whose operands are all
//! defined outside a loop run once in front of it; loads, stores, index values and
//! anything reading the loop's own values stay. Each case also runs against the
//! reference interpreter.

mod pass_support;

use pass_support::ir_after;
use tilescope::compile::CompileOptions;
use tilescope::run::run;

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` not in\n{text}"))
}

fn assert_runs_clean(source: &str) {
    let r = run(source, &CompileOptions::default(), Vec::new(), 7);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(
        r.sim.errors.is_empty() && r.sim.races.is_empty(),
        "{source}"
    );
    assert!(r.reference_match, "{source}\nerr {}", r.max_abs_err);
}

#[test]
fn a_transposed_operand_read_by_every_iteration_is_built_once() {
    let source = "kernel k(a: f16[64, 64], b: f16[32, 64], y: out f32[64, 32]) {
    let bt = load b[:, :];
    for i in 0..64 step 16 {
        let x = load a[i .. i + 16, :];
        store y[i .. i + 16, :] = x @ bt.T;
    }
}";
    let ir = ir_after(source, "canonicalize");
    assert!(
        line_of(&ir, "transpose %bt") < line_of(&ir, "for %i"),
        "{ir}"
    );
    assert_eq!(ir.matches("transpose").count(), 1, "{ir}");
    assert_runs_clean(source);
}

#[test]
fn chains_leave_a_whole_nest_and_bring_their_constants() {
    let source = "kernel k(w: f32[8, 64], x: f32[32, 64], y: out f32[32, 64]) {
    let wt = load w[:, :];
    for i in 0..32 step 16 {
        for j in 0..16 step 8 {
            let s = exp(wt * 0.5) + 1.0;
            let t = load x[i + j .. i + j + 8, :];
            store y[i + j .. i + j + 8, :] = t * s;
        }
    }
}";
    let ir = ir_after(source, "canonicalize");
    let outer = line_of(&ir, "for %i");
    // The fused `exp(wt * 0.5) + 1.0` (its constants inlined) sits before both loops.
    let fused = line_of(&ir, "fused(%wt)");
    assert!(fused < outer, "{ir}");
    assert_runs_clean(source);
}

#[test]
fn loads_index_values_and_loop_dependent_ops_stay() {
    let source = "kernel k(x: f32[32, 64], b: f32[1, 64], y: out f32[32, 64]) {
    for i in 0..32 step 8 {
        let bv = load b[:, :];
        let t = load x[i .. i + 8, :];
        store y[i .. i + 8, :] = t + bv;
    }
}";
    let ir = ir_after(source, "canonicalize");
    let lp = line_of(&ir, "for %i");
    assert!(line_of(&ir, "load %b") > lp, "{ir}");
    assert!(line_of(&ir, "add %t, %bv") > lp, "{ir}");
    assert_runs_clean(source);
}

#[test]
fn a_loop_carried_update_stays_in_its_loop() {
    let source = "kernel k(w: f32[16, 16], y: out f32[16, 16]) {
    let wt = load w[:, :];
    let acc = zeros(f32[16, 16]);
    for i in 0..4 {
        acc += wt * 2.0;
    }
    store y[:, :] = acc;
}";
    let ir = ir_after(source, "canonicalize");
    let lp = line_of(&ir, "for %i");
    // The product moves out; the accumulation reads the loop's own value and stays.
    assert!(line_of(&ir, "mul %wt") < lp, "{ir}");
    assert!(line_of(&ir, "%acc.2 = add %acc.1") > lp, "{ir}");
    assert_runs_clean(source);
}
