//! Gathers and scatters along any one axis, `load x[:, idx]`, `load c[:, idx, :]` and
//! `store y[:, idx] += t` (numpy's `x[:, idx]`): one instruction per position of the
//! axis before the indexed one, each picking blocks `stride` apart. Compiled and simulated against the reference
//! interpreter under auto and barrier sync on both presets.

mod run_support;

use run_support::check_on_presets;
use tilescope::compile::{compile, CompileOptions};
use tilescope::tensor::Tensor;
use tilescope::types::DType;

/// Columns picked by an index tile (blocks of 64 f32 lanes keep each gather's
/// destination on `a3`'s 256-byte alignment), a middle axis of a rank-3 tensor, and a
/// gather whose leading axis is a single position.
#[test]
fn gathers_pick_positions_along_later_axes() {
    check_on_presets(
        r#"kernel k(x: f32[16, 40, 64], ids: i32[8], c: f32[4, 32, 24], y: out f32[16, 8, 64], z: out f32[4, 8, 24], w: out f32[8, 24]) {
    let idx = load ids[:];
    store y[:, :, :] = load x[:, idx, :] * 2.0;
    store z[:, :, :] = load c[:, idx + 3, :];
    store w[:, :] = load c[2, idx, :];
}
"#,
    );
}

/// On `teach` (32-byte alignment) single columns gather too; on `a3` a gather whose
/// rows would land off UB's alignment is a located error that says how to fix it.
#[test]
fn a_column_gather_needs_aligned_rows() {
    let source = r#"kernel k(x: f32[16, 40], ids: i32[8], y: out f32[16, 8]) {
    store y[:, :] = load x[:, load ids[:]] * 2.0;
}
"#;
    let teach = CompileOptions {
        preset: Some("teach".into()),
        ..CompileOptions::default()
    };
    let r = tilescope::run::run(source, &teach, Vec::new(), 2);
    assert!(
        r.diagnostics.is_empty() && r.reference_match,
        "{:?}",
        r.diagnostics
    );
    let result = compile(source, &CompileOptions::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", source);
    assert!(
        rendered.contains("k.tile:2:21: error: this gather along axis 1 writes each of the tile's 16 rows 32 bytes after the last, off UB's 256-byte alignment"),
        "{rendered}"
    );
}

/// Scatters along a later axis, plain and accumulating: columns picked by an index
/// tile (blocks of 64 f32 lanes keep `a3`'s alignment), and the middle axis of a rank-3
/// tensor with repeated indices, which sum, and one matrix of it by integer index. One
/// scatter per position of the leading axis, as for gathers.
#[test]
fn scatters_pick_positions_along_later_axes() {
    check_on_presets(
        r#"kernel k(x: f32[4, 8, 64], ids: i32[8], y: out f32[4, 40, 64], z: out f32[4, 16, 64], w: out f32[2, 8, 64]) {
    let idx = load ids[:];
    store y[:, :, :] = zeros(f32[4, 40, 64]);
    store y[:, idx % 13 * 3 + 1, :] = load x[:, :, :] * 2.0;
    store z[:, :, :] = zeros(f32[4, 16, 64]);
    store z[:, idx % 4, :] += load x[:, :, :];
    store w[:, :, :] = zeros(f32[2, 8, 64]);
    store w[1, 7 - idx % 8, :] = load x[2, :, :];
}
"#,
    );
}

/// On `teach` single columns scatter and add (repeated columns sum, checked by hand);
/// on `a3` the rows would leave UB's alignment, a located error naming the scatter.
#[test]
fn a_column_scatter_adds_on_teach_and_needs_aligned_rows_on_a3() {
    let source = r#"kernel k(x: f32[16, 8], ids: i32[8], y: out f32[16, 40]) {
    store y[:, :] = zeros(f32[16, 40]);
    store y[:, load ids[:] % 2] += load x[:, :];
}
"#;
    let teach = CompileOptions {
        preset: Some("teach".into()),
        ..CompileOptions::default()
    };
    let mut ids = Tensor::zeros(DType::I32, vec![8]);
    (0..8).for_each(|k| ids.set_i32(k, k as i32));
    let ones = Tensor::from_f32(DType::F32, vec![16, 8], &[1.0; 128]);
    let inputs = vec![("ids".into(), ids), ("x".into(), ones)];
    let r = tilescope::run::run(source, &teach, inputs, 2);
    assert!(
        r.diagnostics.is_empty() && r.reference_match && r.sim.races.is_empty(),
        "{:?}",
        r.diagnostics
    );
    let y = r.outputs.iter().find(|o| o.name == "y").expect("y");
    let y = y.tensor.as_ref().expect("a simulated y");
    // Columns 0 and 1 of each row took four ones each; column 2 none.
    assert_eq!([y.get(40), y.get(41), y.get(42)], [4.0, 4.0, 0.0]);
    let result = compile(source, &CompileOptions::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", source);
    assert!(
        rendered.contains("error: this scatter along axis 1 reads each of the tile's 16 rows 32 bytes after the last, off UB's 256-byte alignment, which each scatter's source needs"),
        "{rendered}"
    );
}

/// Index tiles on several adjacent axes pick elements, as numpy's `x[i, j]` does:
/// element `k` is `x[i[k], j[k]]` (one gather of the row-major combination), checked
/// by hand on a tensor that holds its own flat positions; with whole axes after them, a
/// block per element; and after a leading range, one gather per row of it.
#[test]
fn index_tiles_on_several_axes_pick_elements() {
    let source = r#"kernel g(x: f32[64, 128], r: i32[64], c: i32[64], y: out f32[64]) {
    store y[:] = load x[load r[:], load c[:]];
}
"#;
    let positions: Vec<f32> = (0..64 * 128).map(|v| v as f32).collect();
    let x = Tensor::from_f32(DType::F32, vec![64, 128], &positions);
    let mut r = Tensor::zeros(DType::I32, vec![64]);
    let mut c = Tensor::zeros(DType::I32, vec![64]);
    for k in 0..64 {
        r.set_i32(k, ((k * 7) % 64) as i32);
        c.set_i32(k, ((k * 5 + 3) % 128) as i32);
    }
    for preset in ["a3", "teach"] {
        let options = CompileOptions {
            preset: Some(preset.into()),
            ..CompileOptions::default()
        };
        let inputs = vec![
            ("x".into(), x.clone()),
            ("r".into(), r.clone()),
            ("c".into(), c.clone()),
        ];
        let run = tilescope::run::run(source, &options, inputs, 1);
        assert!(run.diagnostics.is_empty(), "{:?}", run.diagnostics);
        assert!(run.sim.errors.is_empty() && run.sim.races.is_empty());
        assert!(run.reference_match, "{preset}: {}", run.max_abs_err);
        let y = run.outputs.iter().find(|o| o.name == "y").expect("y");
        let y = y.tensor.as_ref().expect("a simulated y");
        for k in 0..64 {
            let want = ((k * 7) % 64) * 128 + (k * 5 + 3) % 128;
            assert_eq!(y.get(k), want as f32, "{preset}: element {k}");
        }
    }
    check_on_presets(
        r#"kernel g(x: f32[8, 16, 64], r: i32[64], c: i32[64], y: out f32[64, 64], z: out f32[2, 64]) {
    let i = load r[:] % 8;
    let j = load c[:];
    store y[:, :] = load x[i, j, :] * 2.0;
    store z[:, :] = load x[0 .. 2, j, i * 8];
}
"#,
    );
}

/// Index tiles on several axes scatter elements too: `store y[i, j] += v` adds `v[k]`
/// into `y[i[k], j[k]]`, so repeated pairs sum (numpy's `np.add.at(y, (i, j), v)`,
/// counted by hand here: 64 ones into 4 x 4 cells, four each), and a plain store writes
/// each pair's element.
#[test]
fn index_tiles_on_several_axes_scatter_elements() {
    let source = r#"kernel s(x: f32[64], r: i32[64], c: i32[64], y: out f32[16, 32], w: out f32[4, 4]) {
    let i = load r[:];
    let j = load c[:];
    store y[:, :] = zeros(f32[16, 32]);
    store y[i % 16, j % 16 * 2] = load x[:];
    store w[:, :] = zeros(f32[4, 4]);
    store w[i % 4, j % 4] += load x[:];
}
"#;
    check_on_presets(source);
    let mut r = Tensor::zeros(DType::I32, vec![64]);
    let mut c = Tensor::zeros(DType::I32, vec![64]);
    for k in 0..64 {
        r.set_i32(k, (k / 4) as i32);
        c.set_i32(k, (k % 4) as i32);
    }
    let ones = Tensor::from_f32(DType::F32, vec![64], &[1.0; 64]);
    let inputs = vec![("x".into(), ones), ("r".into(), r), ("c".into(), c)];
    let run = tilescope::run::run(source, &CompileOptions::default(), inputs, 1);
    assert!(
        run.diagnostics.is_empty() && run.reference_match,
        "{:?}",
        run.diagnostics
    );
    let w = run.outputs.iter().find(|o| o.name == "w").expect("w");
    let w = w.tensor.as_ref().expect("a simulated w");
    assert!((0..16).all(|k| w.get(k) == 4.0));
}
