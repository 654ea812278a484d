//! The 8-bit integer dtypes `i8` and `u8`: loaded, stored and converted with `as`
//! (integer to integer wraps as numpy's `astype`; float to integer truncates toward
//! zero and saturates), checked against values worked out by hand and against the
//! reference interpreter on both presets.

mod run_support;

use run_support::check_on_presets;
use tilescope::compile::CompileOptions;
use tilescope::tensor::Tensor;
use tilescope::types::DType;

const SOURCE: &str = r#"kernel k(q: i8[1, 4], u: u8[1, 4], x: f32[1, 4], n: i32[1, 4], a: out i8[1, 4], b: out u8[1, 4], d: out i32[1, 4]) {
    let qi = load q[:, :];
    let ui = load u[:, :];
    store a[:, :] = (load x[:, :] * 300.0) as i8;
    store b[:, :] = (load n[:, :] * 37 - 200) as u8;
    store d[:, :] = (qi as i32) * 3 + ((ui as i32) >> 4) + (ui as i8) as i32;
}
"#;

fn ints(dtype: DType, v: &[i32]) -> Tensor {
    let mut t = Tensor::zeros(dtype, vec![1, v.len() as u64]);
    v.iter().enumerate().for_each(|(i, &x)| t.set_i32(i, x));
    t
}

#[test]
fn conversions_wrap_integers_and_saturate_floats() {
    let inputs = vec![
        ("q".to_string(), ints(DType::I8, &[-128, 127, -1, 5])),
        ("u".to_string(), ints(DType::U8, &[255, 128, 16, 0])),
        (
            "x".to_string(),
            Tensor::from_f32(DType::F32, vec![1, 4], &[1.0, -1.0, 0.25, -0.999]),
        ),
        ("n".to_string(), ints(DType::I32, &[0, 1, 7, 100])),
    ];
    for preset in ["a3", "teach"] {
        let options = CompileOptions {
            preset: Some(preset.into()),
            ..CompileOptions::default()
        };
        let r = tilescope::run::run(SOURCE, &options, inputs.clone(), 1);
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        assert!(r.sim.errors.is_empty() && r.sim.races.is_empty());
        assert!(r.reference_match, "{preset}");
        let out = |name: &str| -> Vec<i32> {
            let t = r.outputs.iter().find(|o| o.name == name).expect(name);
            let t = t.tensor.as_ref().expect("simulated");
            (0..4).map(|i| t.get_i32(i)).collect()
        };
        // 300 and -300 saturate; 75 fits; -299.7 truncates to -299, then saturates.
        assert_eq!(out("a"), vec![127, -128, 75, -128], "{preset}");
        // -200, -163, 59 and 3500 wrap into 0 .. 256.
        assert_eq!(out("b"), vec![56, 93, 59, 172], "{preset}");
        // q * 3 + (u >> 4) + (u as i8): 255 as i8 is -1, 128 is -128.
        assert_eq!(out("d"), vec![-370, 261, 14, 15], "{preset}");
    }
    // On the default inputs (every byte value) under both sync strategies.
    check_on_presets(SOURCE);
}
