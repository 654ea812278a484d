//! The interpreter's tile value: flat row-major storage plus the per-axis valid extents
//! that carry tail masks through computation.
//!
//! f16 and bf16 elements are held as the f32 values they represent; every operation
//! whose result has one of those dtypes rounds its result (`Tile::finish`), so holding
//! them widened loses nothing and keeps one arithmetic path for all float types.

use crate::diag::{Diagnostic, Span};
use crate::types::{DType, TileType};
use half::{bf16, f16};

/// Element storage: floats (f32, f16, bf16) widened to f32, or exact i32.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    F(Vec<f32>),
    I(Vec<i32>),
}

impl Data {
    pub fn len(&self) -> usize {
        match self {
            Data::F(v) => v.len(),
            Data::I(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn zeros(dtype: DType, len: usize) -> Data {
        match dtype {
            DType::I32 | DType::I8 | DType::U8 | DType::Mask => Data::I(vec![0; len]),
            _ => Data::F(vec![0.0; len]),
        }
    }
}

/// A tile (or a whole tensor while the interpreter runs). Lanes at or past `valid[a]` on
/// any axis `a` are masked and hold 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Tile {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub valid: Vec<usize>,
    pub data: Data,
}

impl Tile {
    /// All lanes valid and zero.
    pub fn zeros(dtype: DType, shape: Vec<usize>) -> Tile {
        let len = shape.iter().product();
        Tile {
            dtype,
            valid: shape.clone(),
            shape,
            data: Data::zeros(dtype, len),
        }
    }

    /// Every lane set to `value`, rounded to `dtype` (i32: truncated, saturating).
    pub fn full(dtype: DType, shape: Vec<usize>, value: f64) -> Tile {
        let len = shape.iter().product();
        let data = match dtype {
            DType::I32 => Data::I(vec![value as i32; len]),
            DType::I8 | DType::U8 => Data::I(vec![dtype.wrap_int(value as i64) as i32; len]),
            DType::Mask => Data::I(vec![i32::from(value != 0.0); len]),
            _ => Data::F(vec![round_to(dtype, value as f32); len]),
        };
        Tile {
            dtype,
            valid: shape.clone(),
            shape,
            data,
        }
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn is_fully_valid(&self) -> bool {
        self.valid == self.shape
    }

    /// Rounds float results to the tile's dtype and zeroes masked lanes: the two
    /// invariants every operation's result must satisfy.
    pub fn finish(mut self) -> Tile {
        if let Data::F(v) = &mut self.data {
            round_slice(self.dtype, v);
        }
        self.zero_masked();
        self
    }

    pub fn zero_masked(&mut self) {
        if self.is_fully_valid() {
            return;
        }
        let (shape, valid) = (&self.shape, &self.valid);
        match &mut self.data {
            Data::F(v) => zero_outside(shape, valid, v),
            Data::I(v) => zero_outside(shape, valid, v),
        }
    }

    pub fn floats(&self, span: Span) -> Result<&[f32], Diagnostic> {
        match &self.data {
            Data::F(v) => Ok(v),
            Data::I(_) => Err(internal("expected a float tile, found i32", span)),
        }
    }

    pub fn ints(&self, span: Span) -> Result<&[i32], Diagnostic> {
        match &self.data {
            Data::I(v) => Ok(v),
            Data::F(_) => Err(internal(
                format!("expected an i32 tile, found {}", self.dtype),
                span,
            )),
        }
    }

    /// Checks that the tile has the type the checked kernel promised.
    pub fn expect_type(&self, ty: &TileType, span: Span) -> Result<(), Diagnostic> {
        let same_shape = self.shape.len() == ty.shape.len()
            && self
                .shape
                .iter()
                .zip(&ty.shape)
                .all(|(&a, &b)| a as u64 == b);
        if self.dtype != ty.dtype || !same_shape {
            return Err(internal(
                format!(
                    "value of type {} where {ty} was expected",
                    self.type_string()
                ),
                span,
            ));
        }
        Ok(())
    }

    pub fn type_string(&self) -> String {
        TileType::new(self.dtype, self.shape.iter().map(|&d| d as u64).collect()).to_string()
    }

    /// Materialises this tile broadcast (numpy rules) to `shape`. Valid extents follow
    /// the operand on axes it does not broadcast; broadcast axes are fully valid.
    pub fn broadcast_to(&self, shape: &[usize], span: Span) -> Result<Tile, Diagnostic> {
        if self.shape == shape {
            return Ok(self.clone());
        }
        let strides = broadcast_strides(&self.shape, shape, span)?;
        let mut valid = shape.to_vec();
        merge_valid(&mut valid, self, shape);
        let data = match &self.data {
            Data::F(a) => Data::F(gather_strided(shape, a, &strides)),
            Data::I(a) => Data::I(gather_strided(shape, a, &strides)),
        };
        Ok(Tile {
            dtype: self.dtype,
            shape: shape.to_vec(),
            valid,
            data,
        }
        .finish())
    }
}

/// An error that only a bug in the checker (or a hand-built kernel violating the
/// documented invariants) can cause.
pub fn internal(message: impl Into<String>, span: Span) -> Diagnostic {
    Diagnostic::error(
        format!(
            "internal error in the reference interpreter: {}",
            message.into()
        ),
        span,
    )
}

pub fn round_to(dtype: DType, v: f32) -> f32 {
    match dtype {
        DType::F16 => f16::from_f32(v).to_f32(),
        DType::BF16 => bf16::from_f32(v).to_f32(),
        DType::F32 | DType::I32 | DType::I8 | DType::U8 | DType::Mask => v,
    }
}

pub fn round_slice(dtype: DType, v: &mut [f32]) {
    match dtype {
        DType::F16 => v.iter_mut().for_each(|x| *x = f16::from_f32(*x).to_f32()),
        DType::BF16 => v.iter_mut().for_each(|x| *x = bf16::from_f32(*x).to_f32()),
        DType::F32 | DType::I32 | DType::I8 | DType::U8 | DType::Mask => {}
    }
}

/// Row-major strides of a contiguous array.
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * shape[a + 1];
    }
    strides
}

/// Strides that read an operand of shape `from` at each position of `to` under numpy
/// broadcasting (trailing axes aligned; extent-1 and missing axes repeat).
pub fn broadcast_strides(
    from: &[usize],
    to: &[usize],
    span: Span,
) -> Result<Vec<usize>, Diagnostic> {
    let incompatible = || internal(format!("cannot broadcast shape {from:?} to {to:?}"), span);
    if from.len() > to.len() {
        return Err(incompatible());
    }
    let own = contiguous_strides(from);
    let lead = to.len() - from.len();
    let mut strides = vec![0; to.len()];
    for (a, &extent) in from.iter().enumerate() {
        if extent == to[lead + a] {
            strides[lead + a] = if extent == 1 { 0 } else { own[a] };
        } else if extent != 1 {
            return Err(incompatible());
        }
    }
    Ok(strides)
}

/// Narrows `valid` (indexed like `shape`) by the valid extents of `operand` on every
/// axis it does not broadcast.
pub fn merge_valid(valid: &mut [usize], operand: &Tile, shape: &[usize]) {
    let lead = shape.len().saturating_sub(operand.shape.len());
    for (a, (&extent, &v)) in operand.shape.iter().zip(&operand.valid).enumerate() {
        if let (Some(out), Some(&to)) = (valid.get_mut(lead + a), shape.get(lead + a)) {
            if extent == to {
                *out = (*out).min(v);
            }
        }
    }
}

/// Calls `f(offset_a, offset_b)` for every position of `shape` in row-major order, with
/// the offsets of two operands read through the given strides. The innermost axis runs
/// as a plain loop so the closure inlines into it.
pub fn for_each_offset2(
    shape: &[usize],
    sa: &[usize],
    sb: &[usize],
    mut f: impl FnMut(usize, usize),
) {
    let rank = shape.len();
    if rank == 0 {
        f(0, 0);
        return;
    }
    if shape.contains(&0) {
        return;
    }
    let (inner, ia, ib) = (shape[rank - 1], sa[rank - 1], sb[rank - 1]);
    let outer: usize = shape[..rank - 1].iter().product();
    let mut idx = vec![0usize; rank - 1];
    let (mut oa, mut ob) = (0usize, 0usize);
    for _ in 0..outer {
        for j in 0..inner {
            f(oa + j * ia, ob + j * ib);
        }
        for ax in (0..rank - 1).rev() {
            idx[ax] += 1;
            oa += sa[ax];
            ob += sb[ax];
            if idx[ax] < shape[ax] {
                break;
            }
            oa -= sa[ax] * shape[ax];
            ob -= sb[ax] * shape[ax];
            idx[ax] = 0;
        }
    }
}

fn gather_strided<T: Copy>(shape: &[usize], a: &[T], strides: &[usize]) -> Vec<T> {
    let mut out = Vec::with_capacity(shape.iter().product());
    for_each_offset2(shape, strides, strides, |i, _| out.push(a[i]));
    out
}

/// Elementwise map of two operands broadcast to `shape`.
pub fn zip_broadcast<A: Copy, B: Copy, O>(
    shape: &[usize],
    (a, sa): (&[A], &[usize]),
    (b, sb): (&[B], &[usize]),
    f: impl Fn(A, B) -> O,
) -> Vec<O> {
    let mut out = Vec::with_capacity(shape.iter().product());
    let dense = contiguous_strides(shape);
    if sa == dense && sb == dense {
        out.extend(a.iter().zip(b).map(|(&x, &y)| f(x, y)));
    } else {
        for_each_offset2(shape, sa, sb, |i, j| out.push(f(a[i], b[j])));
    }
    out
}

/// Calls `f(offset, run_len)` for each contiguous run of valid lanes (the valid part of
/// the innermost axis in each valid row) of a row-major array.
pub fn for_each_valid_run(shape: &[usize], valid: &[usize], mut f: impl FnMut(usize, usize)) {
    let rank = shape.len();
    if rank == 0 {
        f(0, 1);
        return;
    }
    if valid.contains(&0) {
        return;
    }
    let strides = contiguous_strides(shape);
    let run = valid[rank - 1];
    for_each_offset2(
        &valid[..rank - 1],
        &strides[..rank - 1],
        &strides[..rank - 1],
        |off, _| f(off, run),
    );
}

fn zero_outside<T: Copy + Default>(shape: &[usize], valid: &[usize], v: &mut [T]) {
    let mut keep = vec![T::default(); v.len()];
    for_each_valid_run(shape, valid, |off, len| {
        keep[off..off + len].copy_from_slice(&v[off..off + len])
    });
    v.copy_from_slice(&keep);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_masked_keeps_only_the_valid_box() {
        let mut t = Tile {
            dtype: DType::F32,
            shape: vec![2, 3],
            valid: vec![1, 2],
            data: Data::F(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        };
        t.zero_masked();
        assert_eq!(t.data, Data::F(vec![1.0, 2.0, 0.0, 0.0, 0.0, 0.0]));
    }

    #[test]
    fn broadcast_strides_follow_numpy() {
        assert_eq!(
            broadcast_strides(&[3, 1], &[2, 3, 4], Span::DUMMY).ok(),
            Some(vec![0, 1, 0])
        );
        assert!(broadcast_strides(&[3], &[4], Span::DUMMY).is_err());
    }
}
