//! Strided ranges of tensors, `a .. b step s` (numpy's `x[:, a:b:s]`), on loads and
//! stores: one DMA whose GM stride is the step, compiled and simulated against the
//! reference interpreter under auto and barrier sync on both presets.

mod run_support;

use run_support::check_on_presets;

/// Even and odd columns of a tensor (a de-interleave, as RoPE's paired halves or an
/// int4 GEMV's nibble planes read), written back interleaved the other way round.
#[test]
fn even_and_odd_columns_swap_places() {
    let source = r#"kernel k(x: f32[64, 128], y: out f32[64, 128]) {
    for r in 0 .. 64 step 16 {
        let even = load x[r .. r + 16, 0 .. 128 step 2];
        let odd = load x[r .. r + 16, 1 .. 128 step 2];
        store y[r .. r + 16, 0 .. 128 step 2] = odd * 2.0;
        store y[r .. r + 16, 1 .. 128 step 2] = even;
    }
}
"#;
    check_on_presets(source);
    let canonical = run_support::ir_after(source, "canonicalize");
    assert!(
        canonical.contains("load %x[%r .. %r + 16, 1 .. 128 step 2]"),
        "{canonical}"
    );
}

/// Steps on rows and columns at once, a step that does not divide the range (`0 .. 10
/// step 4` is positions 0, 4, 8), a window moving with a loop, and a row step in a
/// tensor of rank 3.
#[test]
fn steps_on_several_axes_and_ranks() {
    check_on_presets(
        r#"kernel k(x: f32[32, 64], c: f32[4, 16, 32], y: out f32[16, 3], z: out f32[4, 8, 32]) {
    for j in 0 .. 16 step 4 {
        store y[j .. j + 4, :] = load x[2 * j .. 2 * j + 8 step 2, 5 .. 15 step 4] + 1.0;
    }
    for b in 0 .. 4 {
        store z[b, :, :] = exp(load c[b, 1 .. 16 step 2, :]);
    }
}
"#,
    );
}

/// A step in a tile slice (numpy's `t[:, 1::2]`): on a loaded tile it is the load's own
/// step, so even and odd columns, every fourth row and a strided window of a tail tile
/// match numpy with no vector copy. A computed tile's instructions read runs of
/// consecutive lanes: a step there is a located error that says what to write instead.
#[test]
fn a_step_in_a_tile_slice_is_the_loads_step() {
    let source = r#"kernel s(x: f32[40, 128], y: out f32[40, 64], z: out f32[10, 128], w: out f32[40, 64]) {
    for r in 0..40 step 16 {
        let t = load x[r .. r + 16, :];
        store y[r .. r + 16, :] = t[:, 0 .. 128 step 2] - t[:, 1 .. 128 step 2];
    }
    let u = load x[:, :];
    store z[:, :] = u[3 .. 40 step 4, :];
    store w[:, :] = exp(u[:, 1 .. 128 step 2]);
}
"#;
    check_on_presets(source);
    assert!(!run_support::asm(source).contains("vcopy"));
    let computed = r#"kernel s(x: f32[32, 128], y: out f32[32, 64]) {
    let t = exp(load x[:, :]);
    store y[:, :] = t[:, 0 .. 128 step 2];
}
"#;
    let result = tilescope::compile::compile(computed, &Default::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", computed);
    assert!(
        rendered.contains("k.tile:3:21: error: this slice with a step reads a tile on chip, whose instructions read runs of consecutive lanes"),
        "{rendered}"
    );
}
