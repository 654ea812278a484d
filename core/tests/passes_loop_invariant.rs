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

/// Hoisting keeps a value live across its whole loop: `exp(wt * 2.0)` hoisted out of
/// this loop stays live through the softmax-like work before its use, and on `teach`
/// the tiles then need 5 x 28 KiB of UB's 128 KiB. canonicalize keeps a hoist only where
/// the rest of the pipeline still places every tile, so this kernel compiles with the
/// work left in its loop, says so, and matches the reference; on `a3` (192 KiB) and for
/// smaller tiles the work is hoisted as before.
#[test]
fn hoisting_that_would_overflow_a_memory_is_left_undone() {
    let source = |rows: u64| {
        format!(
            "kernel h(w: f32[{rows}, 128], x: f32[4, {rows}, 128], v: f32[4, {rows}, 128], y: out f32[4, {rows}, 128], z: out f32[4, {rows}, 128]) {{
    let wt = load w[:, :];
    for i in 0..4 {{
        let t = load x[i, :, :];
        let a = exp(t) * t + sigmoid(t) * wt;
        store y[i, :, :] = a;
        store z[i, :, :] = exp(wt * 2.0) + load v[i, :, :];
    }}
}}"
        )
    };
    let note = "loop-invariant work is left in its loops";
    for (rows, preset, hoisted) in [(56, "teach", false), (56, "a3", true), (48, "teach", true)] {
        let options = CompileOptions {
            preset: Some(preset.into()),
            ..CompileOptions::default()
        };
        let r = run(&source(rows), &options, Vec::new(), 3);
        let what = format!("{rows} rows on {preset}");
        assert!(r.diagnostics.is_empty(), "{what}: {:?}", r.diagnostics);
        assert!(r.sim.errors.is_empty() && r.sim.races.is_empty(), "{what}");
        assert!(r.reference_match, "{what}: {}", r.max_abs_err);
        let canonicalize = r
            .compile
            .passes
            .iter()
            .find(|p| p.name == "canonicalize")
            .expect("canonicalize ran");
        let noted = canonicalize.notes.iter().any(|n| n.message.contains(note));
        assert_eq!(noted, !hoisted, "{what}: {:?}", canonicalize.notes);
        // Hoisted, the product's `exp` comes before the loop.
        let ir = &canonicalize.ir;
        let before_loop = ir
            .find("exp")
            .is_some_and(|e| ir.find("for %i").is_some_and(|f| e < f));
        assert_eq!(before_loop, hoisted, "{what}:\n{ir}");
    }
}
