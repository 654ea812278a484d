//! Host tensors: the values of kernel parameters, as the interpreter, the simulator's
//! global memory and `.npy` files see them. Elements are stored little-endian in the
//! tensor's own dtype (bf16 as its 16 bits), exactly as they sit in global memory.

use crate::types::DType;
use half::{bf16, f16};

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub dtype: DType,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

impl Tensor {
    pub fn zeros(dtype: DType, shape: Vec<u64>) -> Tensor {
        let bytes = shape.iter().product::<u64>() * dtype.bytes();
        Tensor {
            dtype,
            shape,
            data: vec![0; bytes as usize],
        }
    }

    /// Element count.
    pub fn len(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Builds a tensor from f32 values, rounding to nearest-even into f16/bf16 and
    /// truncating toward zero into i32 (`as` semantics, saturating).
    pub fn from_f32(dtype: DType, shape: Vec<u64>, values: &[f32]) -> Tensor {
        let mut t = Tensor::zeros(dtype, shape);
        for (i, &v) in values.iter().enumerate().take(t.len()) {
            t.set(i, v);
        }
        t
    }

    /// Element `i` (flat, row-major) as f32.
    pub fn get(&self, i: usize) -> f32 {
        let b = &self.data;
        match self.dtype {
            DType::F32 => f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]),
            DType::I32 => {
                i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]) as f32
            }
            DType::F16 => f16::from_le_bytes([b[2 * i], b[2 * i + 1]]).to_f32(),
            DType::BF16 => bf16::from_le_bytes([b[2 * i], b[2 * i + 1]]).to_f32(),
            DType::I8 => f32::from(b[i] as i8),
            DType::U8 => f32::from(b[i]),
            DType::Mask => f32::from(b[i] != 0),
        }
    }

    /// Element `i` of an i32 tensor, exactly.
    pub fn get_i32(&self, i: usize) -> i32 {
        let b = &self.data;
        match self.dtype {
            DType::I32 => i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]),
            DType::I8 => i32::from(b[i] as i8),
            DType::U8 => i32::from(b[i]),
            _ => self.get(i) as i32,
        }
    }

    /// Stores `v` into element `i`, rounding to the tensor's dtype.
    pub fn set(&mut self, i: usize, v: f32) {
        match self.dtype {
            DType::F32 => self.data[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes()),
            DType::I32 => self.data[4 * i..4 * i + 4].copy_from_slice(&(v as i32).to_le_bytes()),
            DType::F16 => {
                self.data[2 * i..2 * i + 2].copy_from_slice(&f16::from_f32(v).to_le_bytes())
            }
            DType::BF16 => {
                self.data[2 * i..2 * i + 2].copy_from_slice(&bf16::from_f32(v).to_le_bytes())
            }
            DType::Mask => self.data[i] = u8::from(v != 0.0),
            // Truncated toward zero and saturated, as a float-to-integer `as` is.
            DType::I8 => self.data[i] = v as i8 as u8,
            DType::U8 => self.data[i] = v as u8,
        }
    }

    pub fn set_i32(&mut self, i: usize, v: i32) {
        match self.dtype {
            DType::I32 => self.data[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes()),
            // Wrapped, as numpy's integer `astype` is.
            DType::I8 | DType::U8 => self.data[i] = v as u8,
            _ => self.set(i, v as f32),
        }
    }

    /// All elements as f32.
    pub fn to_f32_vec(&self) -> Vec<f32> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }
}

/// How closely an actual tensor matches an expected one.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub matches: bool,
    /// Largest `|actual - expected|` over elements where both are numbers.
    pub max_abs_err: f64,
    /// Largest `|actual - expected| / |expected|` (denominator at least the smallest
    /// normal f32, so an exact zero expected value gives a large but finite error).
    pub max_rel_err: f64,
    /// Elements outside tolerance (all of them when dtypes or shapes differ).
    pub mismatches: usize,
    /// Flat index of the first element outside tolerance.
    pub first_mismatch: Option<usize>,
}

/// Relative tolerance for f32 results.
pub const F32_RTOL: f64 = 1e-5;
/// Absolute floor for f32 results: below |expected| = 0.1 the relative bound would
/// demand more than f32 resolves after cancellation (e.g. `x - mean(x)`), so differences
/// up to 1e-6 pass regardless of magnitude.
pub const F32_ATOL: f64 = 1e-6;

/// One unit in the last place of `dtype` at the magnitude of `v`: the gap between `|v|`
/// rounded into that type and the next representable value away from zero.
fn ulp(dtype: DType, v: f32) -> f64 {
    let a = v.abs();
    match dtype {
        DType::F16 => {
            let h = f16::from_f32(a);
            let next = f16::from_bits(h.to_bits().saturating_add(1));
            if next.is_finite() {
                (next.to_f32() - h.to_f32()) as f64
            } else {
                32.0
            }
        }
        DType::BF16 => {
            let h = bf16::from_f32(a);
            let next = bf16::from_bits(h.to_bits().saturating_add(1));
            if next.is_finite() {
                (next.to_f32() - h.to_f32()) as f64
            } else {
                2f64.powi(120)
            }
        }
        DType::F32 | DType::I32 | DType::I8 | DType::U8 | DType::Mask => 0.0,
    }
}

/// Compares element by element with the dtype's tolerance: f32 within
/// `max(F32_RTOL * |e|, F32_ATOL)`, f16/bf16 within one ulp of the type at `|e|`, i32
/// exactly. NaN matches NaN; infinities match only themselves. Tensors whose dtype or
/// shape differ do not match at all.
pub fn compare(expected: &Tensor, actual: &Tensor) -> Comparison {
    let n = expected.len();
    let well_formed = |t: &Tensor| t.data.len() as u64 == t.len() as u64 * t.dtype.bytes();
    if expected.dtype != actual.dtype
        || expected.shape != actual.shape
        || !well_formed(expected)
        || !well_formed(actual)
    {
        let mismatches = n.max(actual.len());
        return Comparison {
            matches: false,
            max_abs_err: f64::INFINITY,
            max_rel_err: f64::INFINITY,
            mismatches,
            first_mismatch: (mismatches > 0).then_some(0),
        };
    }
    let mut c = Comparison {
        matches: true,
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        mismatches: 0,
        first_mismatch: None,
    };
    for i in 0..n {
        let ok = if expected.dtype == DType::I32 {
            let (e, a) = (expected.get_i32(i), actual.get_i32(i));
            let diff = (e as f64 - a as f64).abs();
            c.max_abs_err = c.max_abs_err.max(diff);
            c.max_rel_err = c.max_rel_err.max(diff / (e as f64).abs().max(1.0));
            e == a
        } else {
            let (e, a) = (expected.get(i), actual.get(i));
            if e.is_nan() || a.is_nan() {
                e.is_nan() && a.is_nan()
            } else if e.is_infinite() || a.is_infinite() {
                e == a
            } else {
                let (e64, a64) = (e as f64, a as f64);
                let diff = (a64 - e64).abs();
                c.max_abs_err = c.max_abs_err.max(diff);
                c.max_rel_err = c
                    .max_rel_err
                    .max(diff / e64.abs().max(f32::MIN_POSITIVE as f64));
                let tol = match expected.dtype {
                    DType::F32 => (F32_RTOL * e64.abs()).max(F32_ATOL),
                    dtype => ulp(dtype, e),
                };
                diff <= tol
            }
        };
        if !ok {
            c.matches = false;
            c.mismatches += 1;
            c.first_mismatch.get_or_insert(i);
        }
    }
    c
}
