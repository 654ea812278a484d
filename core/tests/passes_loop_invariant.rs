//! canonicalize's loop-invariant code motion runs clean: each kernel whose hoisting
//! `core/filetests/canonicalize/licm-*.tir` checks matches the reference interpreter
//! with no race or simulator error.

use tilescope::compile::CompileOptions;
use tilescope::run::run;

const HOISTED: [&str; 4] = [
    "kernel k(a: f16[64, 64], b: f16[32, 64], y: out f32[64, 32]) {
    let bt = load b[:, :];
    for i in 0..64 step 16 {
        let x = load a[i .. i + 16, :];
        store y[i .. i + 16, :] = x @ bt.T;
    }
}",
    "kernel k(w: f32[8, 64], x: f32[32, 64], y: out f32[32, 64]) {
    let wt = load w[:, :];
    for i in 0..32 step 16 {
        for j in 0..16 step 8 {
            let s = exp(wt * 0.5) + 1.0;
            let t = load x[i + j .. i + j + 8, :];
            store y[i + j .. i + j + 8, :] = t * s;
        }
    }
}",
    "kernel k(x: f32[32, 64], b: f32[1, 64], y: out f32[32, 64]) {
    for i in 0..32 step 8 {
        let bv = load b[:, :];
        let t = load x[i .. i + 8, :];
        store y[i .. i + 8, :] = t + bv;
    }
}",
    "kernel k(w: f32[16, 16], y: out f32[16, 16]) {
    let wt = load w[:, :];
    let acc = zeros(f32[16, 16]);
    for i in 0..4 {
        acc += wt * 2.0;
    }
    store y[:, :] = acc;
}",
];

#[test]
fn every_hoisting_case_matches_the_reference() {
    for source in HOISTED {
        let r = run(source, &CompileOptions::default(), Vec::new(), 7);
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        assert!(
            r.sim.errors.is_empty() && r.sim.races.is_empty(),
            "{source}"
        );
        assert!(r.reference_match, "{source}\nerr {}", r.max_abs_err);
    }
}
