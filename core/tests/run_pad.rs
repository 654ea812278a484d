//! Loads that may leave their tensor, `load x[..., a .. b] pad v` (Triton's `other=`):
//! the lanes of the last axis outside the tensor hold `v`. Each kernel is compiled
//! (one `dmapad` per load) and simulated against the reference interpreter under auto
//! and barrier sync on both presets.

mod run_support;

use run_support::check_on_presets;
use tilescope::compile::{compile, CompileOptions};

/// A causal depthwise conv1d over time on the last axis: each tap reads the window
/// shifted left by `3 - k`, zero before the sequence starts, and the last tile runs
/// past the end (100 is no multiple of 32).
#[test]
fn a_causal_conv1d_reads_a_zero_filled_halo() {
    let source = r#"kernel conv(x: f32[64, 100], w: f32[64, 4], y: out f32[64, 100]) {
    for t in 0 .. 100 step 32 {
        let acc = zeros(f32[64, 32]);
        for k in 0 .. 4 {
            acc += load x[:, t - 3 + k .. t + 29 + k] pad 0.0 * load w[:, k .. k + 1];
        }
        store y[:, t .. t + 32] = acc;
    }
}
"#;
    check_on_presets(source);
    let asm = compile(source, &CompileOptions::default())
        .asm
        .expect("assembly");
    assert!(asm.contains("dmapad.f32"), "{asm}");
}

/// A 1-D window with `-inf` around it feeding a max (a sliding-window max), an i32
/// tensor padded with -1, and a window wholly outside the tensor.
#[test]
fn pads_fill_floats_integers_and_whole_windows() {
    check_on_presets(
        r#"kernel k(x: f32[64], n: i32[8, 40], y: out f32[1, 8], z: out i32[8, 48], u: out f32[16]) {
    for i in 0 .. 64 step 8 {
        store y[:, i // 8 .. i // 8 + 1] = amax(load x[i - 4 .. i + 12] pad -inf, axis=0);
    }
    store z[:, :] = load n[:, -4 .. 44] pad -1;
    store u[:] = load x[70 .. 86] pad 2.5;
}
"#,
    );
}

/// Rows in tiles with a tail and a padded column window: the rows' tail keeps its
/// masked rows, the columns take the fill.
#[test]
fn a_padded_window_in_a_row_tail() {
    check_on_presets(
        r#"kernel k(x: f32[100, 64], y: out f32[100, 64]) {
    for r in 0 .. 100 step 32 {
        for c in 0 .. 64 step 32 {
            store y[r .. r + 32, c .. c + 32] = exp(load x[r .. r + 32, c - 1 .. c + 31] pad 1.0);
        }
    }
}
"#,
    );
}

/// Rows that leave the tensor fill too: a conv1d with time in rows (channels last)
/// whose tap windows start before row 0 and, in the tail tile, run past the last row;
/// windows leaving on both axes at once; and an i32 fill. Three `dmapad`s where the
/// rows' window may leave, one where the compiler proves it inside.
#[test]
fn rows_outside_the_tensor_hold_the_fill() {
    let conv = r#"kernel k(x: f32[100, 64], w: f32[4, 64], y: out f32[100, 64]) {
    for t in 0 .. 100 step 16 {
        let acc = zeros(f32[16, 64]);
        for k in 0 .. 4 {
            acc += load x[t + k - 3 .. t + k + 13, :] pad 0.0 * load w[k, :];
        }
        store y[t .. t + 16, :] = acc;
    }
}
"#;
    check_on_presets(conv);
    check_on_presets(
        r#"kernel k(x: f32[40, 100], n: i32[2, 40, 64], y: out f32[48, 128], m: out i32[2, 24, 64]) {
    for r in 0 .. 48 step 16 {
        for c in 0 .. 128 step 64 {
            store y[r .. r + 16, c .. c + 64] = load x[r - 4 .. r + 12, c - 8 .. c + 56] pad 1.5;
        }
    }
    for b in 0 .. 2 {
        store m[b, :, :] = load n[b, 30 .. 54, :] pad -7;
    }
}
"#,
    );
    let dmapads = |source: &str| {
        let asm = run_support::asm(source);
        asm.lines().filter(|l| l.contains("dmapad")).count()
    };
    assert_eq!(dmapads(conv), 3);
    let inside = conv
        .replace("t + k - 3 .. t + k + 13", "t .. t + 16")
        .replace("100", "96");
    assert_eq!(dmapads(&inside), 1, "{inside}");
    // On `a3` a row of 32 f32 lanes (128 bytes) would start the inside rows off UB's
    // alignment: a located error that says how wide rows must be.
    let narrow = conv.replace("64", "32");
    let result = compile(&narrow, &CompileOptions::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", &narrow);
    assert!(
        rendered.contains("k.tile:5:20: error: rows of this padded load may leave `x`, so it fills them with a `dmapad` that starts a row in, 128 bytes per row, off UB's 256-byte alignment: pad rows of a multiple of 64 f32 lanes"),
        "{rendered}"
    );
}
