//! The interpreter on kernels written as source text, through the real front end.

use tilescope::tensor::Tensor;
use tilescope::types::DType::{self, F16, F32, I32};
use tilescope::{front, inputs, interp};

/// Runs `src` with the given inputs (others seeded) and returns every tensor afterwards.
fn run(src: &str, provided: Vec<(&str, Tensor)>) -> Vec<Tensor> {
    let k = front::frontend(src, None).unwrap_or_else(|d| panic!("front end: {d:?}"));
    let provided = provided
        .into_iter()
        .map(|(n, t)| (n.to_string(), t))
        .collect();
    let mut t = inputs::prepare(&k, provided, 0).unwrap_or_else(|d| panic!("inputs: {d:?}"));
    interp::run(&k, &mut t).unwrap_or_else(|d| panic!("run: {d:?}"));
    t
}

fn ramp(dtype: DType, shape: Vec<u64>, scale: f32) -> Tensor {
    let n: u64 = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| i as f32 * scale).collect();
    Tensor::from_f32(dtype, shape, &v)
}

#[test]
fn tail_columns_are_stored_and_nothing_past_them() {
    let src = "kernel k(x: f32[3, 100], y: out f32[3, 100]) {
        for c in 0..100 step 32 {
            let t = load x[:, c .. c + 32];
            store y[:, c .. c + 32] = exp(t) - 1.0;
        }
    }";
    let x = ramp(F32, vec![3, 100], 0.01);
    let t = run(src, vec![("x", x.clone())]);
    let want: Vec<f32> = x.to_f32_vec().iter().map(|v| v.exp() - 1.0).collect();
    assert_eq!(t[1].to_f32_vec(), want);
}

#[test]
fn tail_rows_normalise_only_valid_rows() {
    let src = "kernel k(x: f32[10, 4], y: out f32[10, 4]) {
        for r in 0..10 step 4 {
            let t = load x[r .. r + 4, :];
            store y[r .. r + 4, :] = t / sum(t, axis=1);
        }
    }";
    let x = Tensor::from_f32(
        F32,
        vec![10, 4],
        &(0..40).map(|i| (i % 4 + 1) as f32).collect::<Vec<_>>(),
    );
    let t = run(src, vec![("x", x)]);
    let want: Vec<f32> = (0..40).map(|i| (i % 4 + 1) as f32 / 10.0).collect();
    assert_eq!(t[1].to_f32_vec(), want);
}

#[test]
fn f16_arithmetic_rounds_each_result() {
    // 1 + 2^-11 ties to 1 in f16; (1 + 2^-11) computed twice and added stays 2.
    let src = "kernel k(a: f16[2], b: f16[2], c: out f16[2]) {
        let s = load a[:] + load b[:];
        store c[:] = s + s;
    }";
    let h = 2f32.powi(-11);
    let a = Tensor::from_f32(F16, vec![2], &[1.0, 1.0 + 2.0 * h]);
    let b = Tensor::from_f32(F16, vec![2], &[h, h]);
    let t = run(src, vec![("a", a), ("b", b)]);
    assert_eq!(t[2].to_f32_vec(), [2.0, 2.0 + 8.0 * h]);
}

#[test]
fn f16_matmul_accumulates_in_f32_and_casts() {
    let src = "kernel k(a: f16[1, 3], b: f16[3, 1], c: out f32[1, 1], d: out f16[1, 1]) {
        let p = load a[:, :] @ load b[:, :];
        store c[:, :] = p;
        store d[:, :] = p as f16;
    }";
    let a = Tensor::from_f32(F16, vec![1, 3], &[2048.0, 1.0, 0.5]);
    let b = Tensor::from_f32(F16, vec![3, 1], &[1.0, 1.0, 1.0]);
    let t = run(src, vec![("a", a), ("b", b)]);
    // 2049.5 in f32; in f16 (spacing 2 at 2048) it rounds to 2050.
    assert_eq!((t[2].get(0), t[3].get(0)), (2049.5, 2050.0));
}

#[test]
fn running_maximum_over_a_loop() {
    let src = "kernel k(x: f32[4, 64], y: out f32[4, 1]) {
        let m = full(f32[4, 1], -inf);
        for c in 0..64 step 16 {
            m = maximum(m, amax(load x[:, c .. c + 16], axis=1));
        }
        store y[:, :] = m;
    }";
    let x = ramp(F32, vec![4, 64], -1.0);
    let t = run(src, vec![("x", x)]);
    assert_eq!(t[1].to_f32_vec(), [0.0, -64.0, -128.0, -192.0]);
}

#[test]
fn integer_tiles_and_computed_indices() {
    let src = "kernel k(ids: i32[4], t: f32[8, 2], y: out f32[4, 2], z: out i32[4]) {
        let i = load ids[:];
        store z[:] = i * 2 + 1;
        store y[:, :] = load t[i * 2 + 1, :];
    }";
    let mut ids = Tensor::zeros(I32, vec![4]);
    for (k, v) in [3, 0, 1, 2].into_iter().enumerate() {
        ids.set_i32(k, v);
    }
    let t = run(src, vec![("ids", ids), ("t", ramp(F32, vec![8, 2], 1.0))]);
    assert_eq!(
        (0..4).map(|k| t[3].get_i32(k)).collect::<Vec<_>>(),
        [7, 1, 3, 5]
    );
    assert_eq!(
        t[2].to_f32_vec(),
        [14.0, 15.0, 2.0, 3.0, 6.0, 7.0, 10.0, 11.0]
    );
}
