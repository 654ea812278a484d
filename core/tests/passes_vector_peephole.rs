//! vector-peephole: what the vector pipe runs once divisions become multiplies and pairs
//! become one rsqrt or silu, and that the results still match the reference
//! interpreter. What the pass does to the IR is in `core/filetests/vector-peephole/`.

mod run_support;

use tilescope::compile::{compile, CompileOptions};
use tilescope::ir::analysis::exact_reciprocal;
use tilescope::run::run;
use tilescope::types::Pipe;

fn asm(source: &str) -> String {
    let result = compile(source, &CompileOptions::default());
    assert!(result.diagnostics.is_empty(), "{:#?}", result.diagnostics);
    result.asm.unwrap_or_default()
}

/// Runs `source` on inputs from `seed` and asserts it matches the reference bit for bit
/// (the exact rules change no rounding), with no simulation error or race.
fn assert_bit_exact(source: &str, seed: u64, what: &str) {
    let r = run(source, &CompileOptions::default(), Vec::new(), seed);
    assert!(r.sim.errors.is_empty() && r.sim.races.is_empty(), "{what}");
    assert!(
        r.reference_match && r.max_abs_err == 0.0,
        "{what}: {}",
        r.max_abs_err
    );
}

fn v_busy(source: &str) -> u64 {
    let r = run(source, &CompileOptions::default(), Vec::new(), 7);
    assert!(r.reference_match, "max abs err {}", r.max_abs_err);
    r.sim
        .pipes
        .iter()
        .find(|p| p.pipe == Pipe::V)
        .map_or(0, |p| p.busy)
}

const ROW_NORMALIZE: &str = "kernel k(x: f32[16, 256], y: out f32[16, 256]) {
    for r in 0..16 step 8 {
        let t = load x[r .. r + 8, :];
        let e = exp(t);
        store y[r .. r + 8, :] = e / sum(e, axis=1);
    }
}
";

#[test]
fn exact_reciprocals_are_powers_of_two_only() {
    assert_eq!(exact_reciprocal(2.0), Some(0.5));
    assert_eq!(exact_reciprocal(-0.125), Some(-8.0));
    assert_eq!(exact_reciprocal(512.0), Some(1.0 / 512.0));
    for c in [
        0.0,
        3.0,
        0.1,
        1e-5,
        f64::INFINITY,
        f64::NAN,
        1e300,
        2f64.powi(-140),
    ] {
        assert_eq!(exact_reciprocal(c), None, "{c}");
    }
}

#[test]
fn a_division_by_a_reduction_becomes_a_multiply_by_its_reciprocal() {
    // The reciprocal runs on the [8, 1] column, the multiply on the whole tile.
    let a = asm(ROW_NORMALIZE);
    assert!(
        a.contains("vrecip.f32") && a.contains("{8, 1, 1}, ub["),
        "{a}"
    );
    assert!(!a.contains("vdiv"), "{a}");
    run_support::check_against_reference(ROW_NORMALIZE, 3);
}

#[test]
fn the_rewrite_cuts_vector_cycles() {
    // The same kernel with the division made unattractive to rewrite (the divisor as
    // wide as the quotient) is the baseline: it must cost more.
    let full = ROW_NORMALIZE.replace("e / sum(e, axis=1)", "e / (e + sum(e, axis=1))");
    let (rewritten, divided) = (v_busy(ROW_NORMALIZE), v_busy(&full));
    assert!(
        rewritten + 100 < divided,
        "reciprocal {rewritten} vs division {divided}"
    );
}

#[test]
fn a_power_of_two_divisor_becomes_an_exact_multiply_in_every_float_type() {
    for dt in ["f32", "f16", "bf16"] {
        let src = format!(
            "kernel k(a: {dt}[8, 64], y: out {dt}[8, 64]) {{
    store y[:, :] = load a[:, :] / 4.0;
}}
"
        );
        assert!(asm(&src).contains("vmul"), "{dt}");
        assert_bit_exact(&src, 11, dt);
    }
}

#[test]
fn a_fused_chain_rewrites_its_inner_division_and_matches_with_a_tail() {
    // 20 rows in steps of 8: the last iteration masks half its rows.
    let src = "kernel k(x: f32[20, 256], y: out f32[20, 256]) {
    for r in 0..20 step 8 {
        let t = load x[r .. r + 8, :];
        let s = sum(t * t, axis=1);
        store y[r .. r + 8, :] = relu(t / (s + 1.0) / 2.0);
    }
}
";
    for seed in [1, 2, 3] {
        run_support::check_against_reference(src, seed);
    }
}

#[test]
fn a_power_of_two_mean_multiplies() {
    let src = "kernel k(x: f32[8, 64], y: out f32[8, 1]) {
    store y[:, :] = mean(load x[:, :], axis=1);
}
";
    let a = asm(src);
    assert!(a.contains("0.015625") && !a.contains("vdiv"), "{a}");
    run_support::check_against_reference(src, 5);
}

#[test]
fn a_square_root_divisor_becomes_one_rsqrt() {
    let src = "kernel k(x: f32[8, 256], y: out f32[8, 256]) {
    let t = load x[:, :];
    store y[:, :] = t / sqrt(sum(t * t, axis=1));
}
";
    let a = asm(src);
    assert!(
        a.contains("vrsqrt.f32") && !a.contains("vsqrt") && !a.contains("vrecip"),
        "{a}"
    );
    run_support::check_against_reference(src, 4);
}

#[test]
fn sigmoid_times_its_argument_is_one_silu_in_f32_only() {
    let cases = [
        ("f32", "sigmoid(t) * t", true),
        ("f32", "t * sigmoid(t)", true),
        ("f16", "sigmoid(t) * t", false),
    ];
    for (dt, e, folded) in cases {
        let src = format!(
            "kernel k(x: {dt}[16, 128], y: out {dt}[16, 128]) {{
    let t = load x[:, :];
    store y[:, :] = {e};
}}
"
        );
        assert_eq!(asm(&src).contains("vsigmoid"), !folded, "{dt}");
        // Bit-exact: silu rounds the sigmoid where the two instructions did.
        assert_bit_exact(&src, 9, e);
    }
}

#[test]
fn a_scale_moves_past_the_reduction_that_is_its_only_reader() {
    let cases = [
        ("amax(t * 0.3, axis=1)", true),
        ("amin(t * 0.125, axis=1)", true),
        ("sum(t * 0.5, axis=1)", true),
        ("mean(t / 4.0, axis=1)", true),
        // Inexact or order-reversing scales stay on the tile.
        ("sum(t * 3.0, axis=1)", false),
        ("amax(t * -2.0, axis=1)", false),
    ];
    for (e, folded) in cases {
        let src = format!(
            "kernel k(x: f32[20, 256], y: out f32[20, 1]) {{
    for r in 0..20 step 8 {{
        let t = load x[r .. r + 8, :];
        store y[r .. r + 8, :] = {e};
    }}
}}
"
        );
        // Folded, the multiply runs on the [8, 1] column only.
        let a = asm(&src);
        let full_tile_mul = a
            .lines()
            .any(|l| (l.contains("vmul") || l.contains("vdiv")) && l.contains(", 256, 256}"));
        assert_eq!(full_tile_mul, !folded, "{e}\n{a}");
        for seed in [1, 2] {
            assert_bit_exact(&src, seed, e);
        }
    }
}
