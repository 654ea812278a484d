//! Hand-computed results for every operation of the language, per dtype.

mod interp_support;

use interp_support::*;
use tilescope::front::hir::{BinaryOp, ReduceOp, UnaryOp};
use tilescope::tensor::Tensor;
use tilescope::types::DType::{self, BF16, F16, F32, I32};

fn unary_of(op: UnaryOp, dtype: DType, x: &[f32]) -> Vec<f32> {
    let shape = [x.len() as u64];
    run_map((dtype, &shape, x), (dtype, &shape), |_, e| unary(op, e))
}

fn assert_close(actual: &[f32], expected: &[f32], tol: f32) {
    assert_eq!(actual.len(), expected.len());
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a - e).abs() <= tol,
            "element {i}: got {a}, expected {e} (all: {actual:?})"
        );
    }
}

#[test]
fn unary_f32_values() {
    use UnaryOp::*;
    let cases: [(UnaryOp, &[f32], &[f32]); 12] = [
        (Neg, &[2.0, -0.5], &[-2.0, 0.5]),
        (Exp, &[0.0, 1.0], &[1.0, 2.7182817]),
        (Log, &[1.0, 2.0], &[0.0, std::f32::consts::LN_2]),
        (Sqrt, &[4.0, 2.0], &[2.0, std::f32::consts::SQRT_2]),
        (Rsqrt, &[4.0, 2.0], &[0.5, std::f32::consts::FRAC_1_SQRT_2]),
        (Abs, &[-3.0, 3.0], &[3.0, 3.0]),
        (Relu, &[-1.0, 2.0], &[0.0, 2.0]),
        (Sigmoid, &[0.0, 1.0], &[0.5, 0.7310586]),
        (Tanh, &[0.0, 0.5], &[0.0, 0.46211717]),
        (Gelu, &[0.0, 1.0, -2.0], &[0.0, 0.841192, -0.045402307]),
        (Silu, &[1.0, 2.0], &[0.7310586, 1.7615942]),
        (Recip, &[4.0, -0.5], &[0.25, -2.0]),
    ];
    for (op, x, want) in cases {
        let got = unary_of(op, F32, x);
        assert_close(&got, want, 2e-7);
    }
}

#[test]
fn unary_rounds_into_f16_and_bf16() {
    // e = 2.71828...: the nearest f16 (spacing 2^-9 in [2, 4)) and the nearest bf16
    // (spacing 2^-6) are both 2.71875.
    assert_eq!(unary_of(UnaryOp::Exp, F16, &[1.0]), [2.71875]);
    assert_eq!(unary_of(UnaryOp::Exp, BF16, &[1.0]), [2.71875]);
    // 1/3 in f16: 0x3555 = 0.333251953125; in bf16: 0x3EAB = 0.333984375.
    assert_eq!(unary_of(UnaryOp::Recip, F16, &[3.0]), [0.33325195]);
    assert_eq!(unary_of(UnaryOp::Recip, BF16, &[3.0]), [0.33398438]);
}

#[test]
fn unary_i32_is_exact() {
    assert_eq!(unary_of(UnaryOp::Neg, I32, &[5.0, -7.0]), [-5.0, 7.0]);
    assert_eq!(unary_of(UnaryOp::Abs, I32, &[-9.0, 4.0]), [9.0, 4.0]);
    assert_eq!(unary_of(UnaryOp::Relu, I32, &[-9.0, 4.0]), [0.0, 4.0]);
}

fn binary_of(op: BinaryOp, dtype: DType, x: &[f32], y: &[f32]) -> Vec<f32> {
    let shape = [x.len() as u64];
    run_zip(
        (dtype, &shape, x),
        (dtype, &shape, y),
        (dtype, &shape),
        |a, b| binary(op, a, b),
    )
}

#[test]
fn binary_f32_values() {
    use BinaryOp::*;
    let x = [1.5, -2.0, 3.0];
    let y = [0.5, 4.0, -3.0];
    assert_eq!(binary_of(Add, F32, &x, &y), [2.0, 2.0, 0.0]);
    assert_eq!(binary_of(Sub, F32, &x, &y), [1.0, -6.0, 6.0]);
    assert_eq!(binary_of(Mul, F32, &x, &y), [0.75, -8.0, -9.0]);
    assert_eq!(binary_of(Div, F32, &x, &y), [3.0, -0.5, -1.0]);
    assert_eq!(binary_of(Maximum, F32, &x, &y), [1.5, 4.0, 3.0]);
    assert_eq!(binary_of(Minimum, F32, &x, &y), [0.5, -2.0, -3.0]);
}

#[test]
fn maximum_and_minimum_propagate_nan() {
    let got = binary_of(BinaryOp::Maximum, F32, &[f32::NAN, 1.0], &[1.0, f32::NAN]);
    assert!(got.iter().all(|v| v.is_nan()), "{got:?}");
    let got = binary_of(BinaryOp::Minimum, F32, &[f32::NAN, 1.0], &[1.0, f32::NAN]);
    assert!(got.iter().all(|v| v.is_nan()), "{got:?}");
}

#[test]
fn f16_and_bf16_results_round_ties_to_even() {
    // f16 has 10 fraction bits: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 and goes
    // to the even 1; (1 + 2^-10) + 2^-11 is halfway to 1 + 2^-9, which is even.
    let h = 2f32.powi(-11);
    let got = binary_of(BinaryOp::Add, F16, &[1.0, 1.0 + 2.0 * h], &[h, h]);
    assert_eq!(got, [1.0, 1.0 + 4.0 * h]);
    // bf16 has 7 fraction bits: the same at 2^-8.
    let b = 2f32.powi(-8);
    let got = binary_of(BinaryOp::Add, BF16, &[1.0, 1.0 + 2.0 * b], &[b, b]);
    assert_eq!(got, [1.0, 1.0 + 4.0 * b]);
    // Products round too: 3 * (1 + 2^-10) = 3 + 3*2^-10, spacing 2^-9 at 3: halfway
    // between 3 + 2^-9 (odd) and 3 + 2^-8 (even).
    let got = binary_of(BinaryOp::Mul, F16, &[3.0], &[1.0 + 2.0 * h]);
    assert_eq!(got, [3.0 + 2f32.powi(-8)]);
}

#[test]
fn binary_i32_wraps_and_truncates() {
    let mut b = KernelBuilder::new("i32");
    let px = b.param("x", I32, &[4], false);
    let py = b.param("y", I32, &[4], false);
    let pz = b.param("z", I32, &[4], true);
    let pw = b.param("w", I32, &[4], true);
    let sum = binary(BinaryOp::Add, b.load_all(px), b.load_all(py));
    let quo = binary(BinaryOp::Div, b.load_all(px), b.load_all(py));
    b.k.body
        .push(store(pz, vec![tilescope::front::hir::Index::Full], sum));
    b.k.body
        .push(store(pw, vec![tilescope::front::hir::Index::Full], quo));
    let mut x = Tensor::zeros(I32, vec![4]);
    let mut y = Tensor::zeros(I32, vec![4]);
    for (i, (a, c)) in [(i32::MAX, 1), (7, 2), (-7, 2), (5, 0)]
        .into_iter()
        .enumerate()
    {
        x.set_i32(i, a);
        y.set_i32(i, c);
    }
    let out = run(
        &b.build(),
        vec![
            x,
            y,
            Tensor::zeros(I32, vec![4]),
            Tensor::zeros(I32, vec![4]),
        ],
    );
    let z: Vec<i32> = (0..4).map(|i| out[2].get_i32(i)).collect();
    let w: Vec<i32> = (0..4).map(|i| out[3].get_i32(i)).collect();
    assert_eq!(z, [i32::MIN, 9, -5, 5]);
    assert_eq!(w, [i32::MAX, 3, -3, 0]);
}

#[test]
fn scalars_and_shapes_broadcast_like_numpy() {
    // [2, 1] + [1, 3] -> [2, 3]
    let got = run_zip(
        (F32, &[2, 1], &[10.0, 20.0]),
        (F32, &[1, 3], &[1.0, 2.0, 3.0]),
        (F32, &[2, 3]),
        |a, b| binary(BinaryOp::Add, a, b),
    );
    assert_eq!(got, [11.0, 12.0, 13.0, 21.0, 22.0, 23.0]);
    // [3] * [2, 3] -> [2, 3]
    let got = run_zip(
        (F32, &[3], &[1.0, 2.0, 3.0]),
        (F32, &[2, 3], &[1.0; 6]),
        (F32, &[2, 3]),
        |a, b| binary(BinaryOp::Mul, a, b),
    );
    assert_eq!(got, [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    // scalar on either side; f16 scalars take the tile's dtype (0.1 -> 0.0999755859375)
    let got = run_map((F32, &[2], &[1.0, 2.0]), (F32, &[2]), |_, e| {
        binary(BinaryOp::Sub, scalar(1.0, F32), e)
    });
    assert_eq!(got, [0.0, -1.0]);
    let got = run_map((F16, &[1], &[1.0]), (F16, &[1]), |_, e| {
        binary(BinaryOp::Mul, e, scalar(0.1, F16))
    });
    assert_eq!(got, [0.099975586]);
}

fn reduce_of(op: ReduceOp, dtype: DType, axis: usize) -> Vec<f32> {
    let x = [1.0, -2.0, 3.0, 4.0, 5.0, -6.0];
    let mut out_shape = [2u64, 3];
    out_shape[axis] = 1;
    run_map((dtype, &[2, 3], &x), (dtype, &out_shape), |_, e| {
        reduce(op, e, axis)
    })
}

#[test]
fn reductions_keep_the_axis() {
    // x = [[1, -2, 3], [4, 5, -6]]
    for dtype in [F32, F16, BF16] {
        assert_eq!(reduce_of(ReduceOp::Sum, dtype, 1), [2.0, 3.0]);
        assert_eq!(reduce_of(ReduceOp::Sum, dtype, 0), [5.0, 3.0, -3.0]);
        assert_eq!(reduce_of(ReduceOp::Amax, dtype, 1), [3.0, 5.0]);
        assert_eq!(reduce_of(ReduceOp::Amax, dtype, 0), [4.0, 5.0, 3.0]);
        assert_eq!(reduce_of(ReduceOp::Amin, dtype, 1), [-2.0, -6.0]);
        assert_eq!(reduce_of(ReduceOp::Amin, dtype, 0), [1.0, -2.0, -6.0]);
        assert_eq!(reduce_of(ReduceOp::Mean, dtype, 0), [2.5, 1.5, -1.5]);
    }
    assert_eq!(reduce_of(ReduceOp::Mean, F32, 1), [2.0 / 3.0, 1.0]);
    // 2/3 rounded to f16: 0x3955 = 0.66650390625.
    assert_eq!(reduce_of(ReduceOp::Mean, F16, 1), [0.6665039, 1.0]);
    assert_eq!(reduce_of(ReduceOp::Sum, I32, 1), [2.0, 3.0]);
    assert_eq!(reduce_of(ReduceOp::Amax, I32, 0), [4.0, 5.0, 3.0]);
    assert_eq!(reduce_of(ReduceOp::Amin, I32, 1), [-2.0, -6.0]);
    // i32 mean truncates toward zero: 2/3 -> 0.
    assert_eq!(reduce_of(ReduceOp::Mean, I32, 1), [0.0, 1.0]);
}

/// `argmax` / `argmin` give i32 positions as numpy does: the first of equal lanes, the
/// first NaN when there is one.
#[test]
fn arg_reductions_pick_the_first_position_as_numpy() {
    let arg = |op: ReduceOp, dtype: DType, x: &[f32], shape: &[u64], axis: usize| {
        let mut out = shape.to_vec();
        out[axis] = 1;
        run_map((dtype, shape, x), (I32, &out), |_, e| reduce(op, e, axis))
    };
    // x = [[1, -2, 3], [4, 5, -6]]
    let x = [1.0, -2.0, 3.0, 4.0, 5.0, -6.0];
    for dtype in [F32, F16, BF16, I32] {
        assert_eq!(arg(ReduceOp::Argmax, dtype, &x, &[2, 3], 1), [2.0, 1.0]);
        assert_eq!(
            arg(ReduceOp::Argmax, dtype, &x, &[2, 3], 0),
            [1.0, 1.0, 0.0]
        );
        assert_eq!(arg(ReduceOp::Argmin, dtype, &x, &[2, 3], 1), [1.0, 2.0]);
        assert_eq!(
            arg(ReduceOp::Argmin, dtype, &x, &[2, 3], 0),
            [0.0, 0.0, 1.0]
        );
    }
    // Ties: the first. NaN: the first NaN, for both (np.argmax([2, nan, 2, nan]) == 1).
    let ties = [7.0, 2.0, 7.0, 2.0];
    assert_eq!(arg(ReduceOp::Argmax, F32, &ties, &[1, 4], 1), [0.0]);
    assert_eq!(arg(ReduceOp::Argmin, F32, &ties, &[1, 4], 1), [1.0]);
    let nan = [2.0, f32::NAN, 2.0, f32::NAN];
    assert_eq!(arg(ReduceOp::Argmax, F32, &nan, &[1, 4], 1), [1.0]);
    assert_eq!(arg(ReduceOp::Argmin, F32, &nan, &[1, 4], 1), [1.0]);
}

#[test]
fn f16_reduction_accumulates_in_f32() {
    // In f16, 2048 + 1 rounds back to 2048 (spacing 2); accumulating in f32 gives 2050,
    // which f16 represents exactly.
    let got = run_map(
        (F16, &[1, 3], &[2048.0, 1.0, 1.0]),
        (F16, &[1, 1]),
        |_, e| reduce(ReduceOp::Sum, e, 1),
    );
    assert_eq!(got, [2050.0]);
}

#[test]
fn matmul_f32_and_f16() {
    // [[1, 2, 3], [4, 5, 6]] @ [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]]
    let got = run_zip(
        (F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        (F32, &[3, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
        (F32, &[2, 2]),
        matmul,
    );
    assert_eq!(got, [4.0, 5.0, 10.0, 11.0]);
    // f16 operands accumulate in f32 and the result is f32: 2048 + 1 + 1 = 2050 (and
    // 2048 + 1 + 0.5 = 2049.5, which no f16 could hold).
    for dtype in [F16, BF16] {
        let got = run_zip(
            (dtype, &[2, 3], &[2048.0, 1.0, 1.0, 2048.0, 1.0, 0.5]),
            (dtype, &[3, 1], &[1.0, 1.0, 1.0]),
            (F32, &[2, 1]),
            matmul,
        );
        assert_eq!(got, [2050.0, 2049.5]);
    }
}

#[test]
fn matmul_with_transposed_operand() {
    // a @ b.T with a = [[1, 2]], b = [[3, 4], [5, 6]] -> [[11, 17]]
    let got = run_zip(
        (F32, &[1, 2], &[1.0, 2.0]),
        (F32, &[2, 2], &[3.0, 4.0, 5.0, 6.0]),
        (F32, &[1, 2]),
        |a, b| matmul(a, transpose(b)),
    );
    assert_eq!(got, [11.0, 17.0]);
}

#[test]
fn transpose_swaps_axes() {
    for dtype in [F32, F16, I32] {
        let got = run_map(
            (dtype, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            (dtype, &[3, 2]),
            |_, e| transpose(e),
        );
        assert_eq!(got, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    }
}

#[test]
fn casts_truncate_saturate_and_round() {
    let got = run_map(
        (F32, &[5], &[2.7, -2.7, 3e9, -3e9, f32::NAN]),
        (I32, &[5]),
        |_, e| cast(e, I32),
    );
    assert_eq!(got, [2.0, -2.0, i32::MAX as f32, i32::MIN as f32, 0.0]);
    let h = 2f32.powi(-11);
    let got = run_map(
        (F32, &[2], &[1.0 + h, 1.0 + 3.0 * h]),
        (F16, &[2]),
        |_, e| cast(e, F16),
    );
    assert_eq!(got, [1.0, 1.0 + 4.0 * h]);
    let got = run_map((F32, &[1], &[1.0 + 2f32.powi(-8)]), (BF16, &[1]), |_, e| {
        cast(e, BF16)
    });
    assert_eq!(got, [1.0]);
    let got = run_map((I32, &[2], &[-3.0, 16777216.0]), (F32, &[2]), |_, e| {
        cast(e, F32)
    });
    assert_eq!(got, [-3.0, 16777216.0]);
    let got = run_map((F16, &[1], &[0.33325195]), (F32, &[1]), |_, e| cast(e, F32));
    assert_eq!(got, [0.33325195]);
}

#[test]
fn full_and_zeros() {
    let got = run_map((F32, &[1], &[0.0]), (F32, &[2, 2]), |_, _| {
        full(ty(F32, &[2, 2]), f64::NEG_INFINITY)
    });
    assert_eq!(got, [f32::NEG_INFINITY; 4]);
    let got = run_map((F32, &[1], &[0.0]), (I32, &[3]), |_, _| {
        full(ty(I32, &[3]), 0.0)
    });
    assert_eq!(got, [0.0; 3]);
    let got = run_map((F32, &[1], &[0.0]), (F16, &[2]), |_, _| {
        full(ty(F16, &[2]), 0.1)
    });
    assert_eq!(got, [0.099975586; 2]);
    let got = run_map((F32, &[1], &[0.0]), (BF16, &[1]), |_, _| {
        full(ty(BF16, &[1]), 1.0 / 3.0)
    });
    assert_eq!(got, [0.33398438]);
}
