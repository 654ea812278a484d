//! Accumulating scatters, `store y[idx, :] += t` (torch's `index_add_`): each row adds
//! into the row its index picks, in order, so repeated indices sum. One `scatter ...
//! add` (the DMA's atomic add), compiled and simulated against the reference
//! interpreter under auto and barrier sync on both presets.

mod run_support;

use run_support::check_on_presets;
use tilescope::compile::CompileOptions;
use tilescope::tensor::Tensor;
use tilescope::types::DType;

/// Rows 0 and 1 each receive four rows of ones and rows 2 .. 8 nothing: the sums show
/// that repeated indices add rather than the last write winning.
#[test]
fn repeated_indices_sum() {
    let source = r#"kernel k(ids: i32[8], upd: f32[8, 64], y: out f32[4, 64]) {
    store y[:, :] = zeros(f32[4, 64]);
    store y[load ids[:], :] += load upd[:, :];
}
"#;
    let mut ids = Tensor::zeros(DType::I32, vec![8]);
    (0..8).for_each(|k| ids.set_i32(k, (k % 2) as i32));
    let ones = Tensor::from_f32(DType::F32, vec![8, 64], &[1.0; 512]);
    for preset in ["a3", "teach"] {
        let options = CompileOptions {
            preset: Some(preset.into()),
            ..CompileOptions::default()
        };
        let inputs = vec![("ids".into(), ids.clone()), ("upd".into(), ones.clone())];
        let r = tilescope::run::run(source, &options, inputs, 1);
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        assert!(r.sim.errors.is_empty() && r.sim.races.is_empty());
        assert!(r.reference_match, "{preset}: {}", r.max_abs_err);
        let y = r.outputs.iter().find(|o| o.name == "y").expect("y");
        let y = y.tensor.as_ref().expect("a simulated y");
        let rows: Vec<f32> = (0..4).map(|row| y.get(row * 64)).collect();
        assert_eq!(rows, vec![4.0, 4.0, 0.0, 0.0], "{preset}");
    }
}

/// In a loop with a tail (the last tile's masked rows add nothing), over i32 (which
/// wraps) and f16 (each sum rounded) tensors, after a plain store to the same tensor.
#[test]
fn scatters_add_in_tails_and_in_every_dtype() {
    check_on_presets(
        r#"kernel k(ids: i32[20], upd: f32[20, 32], n: i32[20, 32], h: f16[20, 32], y: out f32[8, 32], z: out i32[8, 32], w: out f16[8, 32]) {
    store y[:, :] = zeros(f32[8, 32]);
    store z[:, :] = zeros(i32[8, 32]);
    store w[:, :] = zeros(f16[8, 32]);
    for r in 0 .. 20 step 8 {
        let idx = load ids[r .. r + 8] % 8;
        store y[idx, :] += exp(load upd[r .. r + 8, :]);
        store z[idx, :] += load n[r .. r + 8, :] * 1000;
        store w[idx, :] += load h[r .. r + 8, :];
    }
}
"#,
    );
}
