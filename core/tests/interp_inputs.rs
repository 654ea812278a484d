//! Input preparation (provided, generated, zeroed) and result comparison.

mod interp_support;

use interp_support::*;
use tilescope::inputs::{self, INT_RANGE};
use tilescope::tensor::{compare, Tensor};
use tilescope::types::DType::{self, BF16, F16, F32, I32};

fn kernel() -> tilescope::front::hir::Kernel {
    let mut b = KernelBuilder::new("k");
    b.param("x", F32, &[4, 64], false);
    b.param("h", F16, &[64], false);
    b.param("w", BF16, &[2, 3], false);
    b.param("idx", I32, &[128], false);
    b.param("y", F32, &[4, 64], true);
    b.build()
}

#[test]
fn generated_inputs_are_deterministic_and_in_range() {
    let k = kernel();
    let a = inputs::prepare(&k, vec![], 7).expect("prepare");
    let b = inputs::prepare(&k, vec![], 7).expect("prepare");
    let other = inputs::prepare(&k, vec![], 8).expect("prepare");
    assert_eq!(a, b);
    assert_ne!(a[0], other[0]);
    for (t, p) in a.iter().zip(&k.params) {
        assert_eq!((t.dtype, &t.shape), (p.ty.dtype, &p.ty.shape), "{}", p.name);
    }
    for t in &a[..3] {
        let v = t.to_f32_vec();
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)), "{:?}", t.dtype);
        if v.len() >= 64 {
            assert!(
                v.iter().any(|&x| x < -0.9) && v.iter().any(|&x| x > 0.9),
                "spread"
            );
        }
    }
    let idx: Vec<i32> = (0..128).map(|i| a[3].get_i32(i)).collect();
    assert!(idx.iter().all(|v| (0..INT_RANGE).contains(v)));
    assert!(
        (0..INT_RANGE).all(|v| idx.contains(&v)),
        "every value occurs in 128 draws: {idx:?}"
    );
    assert!(
        a[4].to_f32_vec().iter().all(|&v| v == 0.0),
        "out starts zeroed"
    );
}

#[test]
fn generated_values_are_pinned() {
    // The generator is part of the CLI's observable behaviour: a change here changes
    // every seeded run, so it must be deliberate.
    let t = inputs::generate(F32, vec![4], 0, 0);
    let first: Vec<f32> = t.to_f32_vec();
    let again = inputs::generate(F32, vec![4], 0, 0).to_f32_vec();
    assert_eq!(first, again);
    insta::assert_debug_snapshot!("generated_f32_seed0", first);
    let ints: Vec<i32> = {
        let t = inputs::generate(I32, vec![8], 42, 3);
        (0..8).map(|i| t.get_i32(i)).collect()
    };
    insta::assert_debug_snapshot!("generated_i32_seed42", ints);
}

#[test]
fn provided_tensors_are_used_and_checked() {
    let k = kernel();
    let x = Tensor::from_f32(F32, vec![4, 64], &[0.25; 256]);
    let y = Tensor::from_f32(F32, vec![4, 64], &[9.0; 256]);
    let t = inputs::prepare(
        &k,
        vec![("x".into(), x.clone()), ("y".into(), y.clone())],
        1,
    )
    .expect("prepare");
    assert_eq!((&t[0], &t[4]), (&x, &y));

    let err = inputs::prepare(&k, vec![("z".into(), x.clone())], 1).expect_err("unknown");
    assert!(
        err.message.contains("`z`") && err.message.contains("x, h, w, idx, y"),
        "{}",
        err.message
    );

    let wrong = Tensor::zeros(F32, vec![64, 4]);
    let err = inputs::prepare(&k, vec![("x".into(), wrong)], 1).expect_err("shape");
    assert!(err.message.contains("`x`"), "{}", err.message);
    assert!(
        err.message.contains("expected f32[4, 64]") && err.message.contains("found f32[64, 4]"),
        "{}",
        err.message
    );

    let err = inputs::prepare(&k, vec![("idx".into(), Tensor::zeros(F32, vec![128]))], 1)
        .expect_err("dtype");
    assert!(
        err.message.contains("expected i32[128]") && err.message.contains("found f32[128]"),
        "{}",
        err.message
    );

    let err =
        inputs::prepare(&k, vec![("x".into(), x.clone()), ("x".into(), x)], 1).expect_err("twice");
    assert!(err.message.contains("more than once"), "{}", err.message);
}

#[test]
fn bf16_parameters_take_uint16_npy_files() {
    let k = kernel();
    // numpy writes bf16 data as uint16 bits: 0x3F80 = 1.0 ... 0x4040 = 3.0
    let bits: Vec<u16> = vec![0x3F80, 0x4000, 0x4040, 0xBF80, 0, 0x3F00];
    let data: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
    // `npy::write` stores bf16 as `<u2`, exactly what numpy code writes for bf16 bits.
    let file = tilescope::npy::write(&Tensor {
        dtype: BF16,
        shape: vec![2, 3],
        data,
    });
    assert!(file.windows(3).any(|w| w == b"<u2"));
    let w = tilescope::npy::read(&file).expect("u2 file");
    let t = inputs::prepare(&k, vec![("w".into(), w)], 0).expect("prepare");
    assert_eq!(t[2].to_f32_vec(), [1.0, 2.0, 3.0, -1.0, 0.0, 0.5]);
}

fn f(dtype: DType, v: &[f32]) -> Tensor {
    Tensor::from_f32(dtype, vec![v.len() as u64], v)
}

#[test]
fn f32_comparison_is_relative_with_an_absolute_floor() {
    let c = compare(
        &f(F32, &[1000.0, 1e-9, 0.0]),
        &f(F32, &[1000.009, 5e-7, -9e-7]),
    );
    assert!(c.matches, "{c:?}");
    assert!((c.max_abs_err - 0.009).abs() < 1e-4, "{c:?}");
    let c = compare(&f(F32, &[1000.0, 1.0, 0.0]), &f(F32, &[1000.02, 1.0, 2e-6]));
    assert!(!c.matches);
    assert_eq!((c.mismatches, c.first_mismatch), (2, Some(0)));
    assert!(c.max_rel_err >= 2e-5, "{c:?}");
}

#[test]
fn nan_equals_nan_and_infinities_match_only_themselves() {
    let c = compare(
        &f(F32, &[f32::NAN, f32::INFINITY]),
        &f(F32, &[f32::NAN, f32::INFINITY]),
    );
    assert!(c.matches);
    let c = compare(
        &f(F32, &[f32::NAN, f32::INFINITY, 1.0]),
        &f(F32, &[1.0, f32::NEG_INFINITY, f32::NAN]),
    );
    assert_eq!((c.matches, c.mismatches), (false, 3));
}

#[test]
fn half_precision_is_compared_within_one_ulp() {
    // f16 at 1.0 has ulp 2^-10; at 1000 (in [512, 1024)) ulp 0.5.
    let u = 2f32.powi(-10);
    assert!(compare(&f(F16, &[1.0, 1000.0]), &f(F16, &[1.0 + u, 1000.5])).matches);
    let c = compare(&f(F16, &[1.0, 1000.0]), &f(F16, &[1.0 + 2.0 * u, 1001.0]));
    assert_eq!((c.matches, c.mismatches), (false, 2));
    // bf16 at 1.0 has ulp 2^-7.
    let b = 2f32.powi(-7);
    assert!(compare(&f(BF16, &[-1.0]), &f(BF16, &[-1.0 - b])).matches);
    assert!(!compare(&f(BF16, &[-1.0]), &f(BF16, &[-1.0 - 2.0 * b])).matches);
}

#[test]
fn i32_is_exact_and_shapes_must_agree() {
    assert!(compare(&f(I32, &[3.0, -4.0]), &f(I32, &[3.0, -4.0])).matches);
    let c = compare(&f(I32, &[3.0, -4.0]), &f(I32, &[3.0, -3.0]));
    assert_eq!(
        (c.matches, c.mismatches, c.first_mismatch, c.max_abs_err),
        (false, 1, Some(1), 1.0)
    );
    let c = compare(
        &f(F32, &[1.0, 2.0]),
        &Tensor::from_f32(F32, vec![2, 1], &[1.0, 2.0]),
    );
    assert!(!c.matches);
    assert!(!compare(&f(F32, &[1.0]), &f(F16, &[1.0])).matches);
}
