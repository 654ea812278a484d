//! `reshape`, `squeeze` and `unsqueeze` (numpy's): the same elements in another shape,
//! one `vcopy` reading the source with the new shape; and `.T` of a 1-D tile, the tile
//! itself. Compiled and simulated against the reference interpreter under auto and
//! barrier sync on both presets.

mod run_support;

use run_support::check_on_presets;
use tilescope::compile::{compile, CompileOptions};

/// A regrouping reshape, a squeeze that drops the axis a range of one position kept,
/// an unsqueeze that puts back the axis an integer index dropped (folded into the
/// load), a squeeze-unsqueeze round trip and a 1-D `.T`.
#[test]
fn reshapes_regroup_and_drop_unit_axes() {
    check_on_presets(
        r#"kernel k(x: f32[32, 64], c: f32[64, 4, 32], y: out f32[64, 32], z: out f32[32, 32], w: out f32[1, 64], u: out f32[64]) {
    let t = exp(load x[:, :]);
    store y[:, :] = reshape(t, [64, 32]);
    let g = load c[:, 2 .. 3, :];
    store z[:, :] = reshape(t, [32, 64]) @ squeeze(g, axis=1);
    store w[:, :] = unsqueeze(load x[3, :], axis=0) * 2.0;
    store u[:] = unsqueeze(squeeze(load x[5 .. 6, :], axis=0), axis=1).T + 1.0;
}
"#,
    );
}

/// A squeeze of a tile with a tail keeps its masked rows; regrouping such a tile is a
/// located error in the compiler (and a run-time error in the reference).
#[test]
fn a_squeeze_keeps_a_tail_and_a_regroup_of_one_says_why() {
    let source = r#"kernel k(c: f32[100, 4, 32], y: out f32[100, 32]) {
    for r in 0 .. 100 step 32 {
        store y[r .. r + 32, :] = squeeze(load c[r .. r + 32, 1 .. 2, :], axis=1) * 3.0;
    }
}
"#;
    check_on_presets(source);
    let regroup = source.replace(
        "squeeze(load c[r .. r + 32, 1 .. 2, :], axis=1)",
        "reshape(reshape(load c[r .. r + 32, 1 .. 2, :], [64, 16]), [32, 32])",
    );
    let result = compile(&regroup, &CompileOptions::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", &regroup);
    assert!(
        rendered.contains("k.tile:3:43: error: this reshape regroups a tile whose last loop iteration holds fewer lanes"),
        "{rendered}"
    );
}

/// numpy's matmul of a 1-D operand (a row vector on the left, a column on the right,
/// the axis dropped from the result; two vectors give one element), and numpy's
/// assignment of a value with extra leading unit axes (`c[:] = acc.T`).
#[test]
fn vectors_multiply_and_store_as_numpy() {
    check_on_presets(
        r#"kernel k(x: f16[64], w: f16[64, 32], a: f16[32, 64], t: f32[16, 64], y: out f32[32], z: out f32[32], d: out f32[1], c: out f32[64], r: out f32[16]) {
    let v = load x[:];
    store y[:] = v @ load w[:, :];
    store z[:] = load a[:, :] @ v;
    store d[:] = v @ v;
    store c[:] = sum(load t[:, :], axis=0);
    store r[:] = sum(load t[:, :], axis=1).T;
}
"#,
    );
}
