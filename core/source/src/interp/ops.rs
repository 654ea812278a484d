//! Tile operations with the language's exact numeric semantics (`docs/language.md`).
//!
//! Floats compute in IEEE f32 and round to the result dtype afterwards (`Tile::finish`);
//! i32 tiles compute exactly with wrapping. Each function selects the scalar kernel once
//! and runs it over the whole tile, so inner loops carry no dispatch.
//!
//! NaN follows numpy: `maximum`, `minimum`, `amax`, `amin` and `relu` propagate it.

use super::value::{broadcast_strides, internal, merge_valid, round_to, zip_broadcast, Data, Tile};
use crate::diag::{Diagnostic, Span};
use crate::front::hir::{BinaryOp, ReduceOp, UnaryOp};
use crate::types::{DType, TileType};

fn shape_of(ty: &TileType) -> Vec<usize> {
    ty.shape.iter().map(|&d| d as usize).collect()
}

pub fn unary_f32(op: UnaryOp) -> fn(f32) -> f32 {
    fn sigmoid(x: f32) -> f32 {
        1.0 / (1.0 + (-x).exp())
    }
    match op {
        UnaryOp::Neg => |x| -x,
        UnaryOp::Exp => f32::exp,
        UnaryOp::Log => f32::ln,
        UnaryOp::Exp2 => f32::exp2,
        UnaryOp::Log2 => f32::log2,
        UnaryOp::Sqrt => f32::sqrt,
        UnaryOp::Rsqrt => |x| 1.0 / x.sqrt(),
        UnaryOp::Abs => f32::abs,
        UnaryOp::Relu => |x| if x < 0.0 { 0.0 } else { x },
        UnaryOp::Sigmoid => sigmoid,
        UnaryOp::Tanh => f32::tanh,
        UnaryOp::Gelu => |x| {
            // sqrt(2/pi), rounded to f32.
            const K: f32 = 0.797_884_6;
            0.5 * x * (1.0 + (K * (x + 0.044715 * x * x * x)).tanh())
        },
        UnaryOp::Silu => |x| x * sigmoid(x),
        UnaryOp::Recip => |x| 1.0 / x,
    }
}

/// i32 tiles: `neg`, `abs` and `relu` are exact (wrapping); the others compute in f32
/// and truncate back, as `as i32` would.
fn unary_i32(op: UnaryOp) -> Option<fn(i32) -> i32> {
    match op {
        UnaryOp::Neg => Some(i32::wrapping_neg),
        UnaryOp::Abs => Some(i32::wrapping_abs),
        UnaryOp::Relu => Some(|x| x.max(0)),
        _ => None,
    }
}

pub fn unary(op: UnaryOp, arg: Tile, ty: &TileType, span: Span) -> Result<Tile, Diagnostic> {
    let data = match &arg.data {
        Data::F(v) => {
            let f = unary_f32(op);
            Data::F(v.iter().map(|&x| f(x)).collect())
        }
        Data::I(v) => match unary_i32(op) {
            Some(f) => Data::I(v.iter().map(|&x| f(x)).collect()),
            None => {
                let f = unary_f32(op);
                Data::I(v.iter().map(|&x| f(x as f32) as i32).collect())
            }
        },
    };
    let out = Tile {
        dtype: ty.dtype,
        shape: arg.shape,
        valid: arg.valid,
        data,
    };
    out.expect_type(ty, span)?;
    Ok(out.finish())
}

/// numpy's `maximum` and `minimum`: NaN in either operand wins.
fn nan_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || a > b {
        a
    } else {
        b
    }
}

fn nan_min(a: f32, b: f32) -> f32 {
    if a.is_nan() || a < b {
        a
    } else {
        b
    }
}

/// `None` for the bit operators, which have no float form (the checker allows them on
/// i32 tiles and masks only).
fn binary_f32(op: BinaryOp) -> Option<fn(f32, f32) -> f32> {
    Some(match op {
        BinaryOp::Add => |a, b| a + b,
        BinaryOp::Sub => |a, b| a - b,
        BinaryOp::Mul => |a, b| a * b,
        BinaryOp::Div => |a, b| a / b,
        BinaryOp::Maximum => nan_max,
        BinaryOp::Minimum => nan_min,
        _ => return None,
    })
}

/// i32 division truncates toward zero; dividing by zero gives 0 (there is no trap to
/// report from inside a vector op, and masked lanes hold 0).
fn binary_i32(op: BinaryOp) -> fn(i32, i32) -> i32 {
    match op {
        BinaryOp::Add => i32::wrapping_add,
        BinaryOp::Sub => i32::wrapping_sub,
        BinaryOp::Mul => i32::wrapping_mul,
        BinaryOp::Div => |a, b| if b == 0 { 0 } else { a.wrapping_div(b) },
        BinaryOp::Maximum => i32::max,
        BinaryOp::Minimum => i32::min,
        // On masks (0 or 1) these are numpy's logical and, or and xor.
        BinaryOp::BitAnd => |a, b| a & b,
        BinaryOp::BitOr => |a, b| a | b,
        BinaryOp::BitXor => |a, b| a ^ b,
        // An amount outside 0 .. 32 shifts every bit out: 0, or the sign for `>>`.
        BinaryOp::Shl => |a, b| {
            if (0..32).contains(&b) {
                a.wrapping_shl(b as u32)
            } else {
                0
            }
        },
        BinaryOp::Shr => |a, b| {
            if (0..32).contains(&b) {
                a >> b
            } else {
                a >> 31
            }
        },
        BinaryOp::FloorDiv => floor_div,
        BinaryOp::Mod => floor_mod,
    }
}

/// numpy's int32 `//`: rounds toward negative infinity, wraps (`-2^31 // -1` is
/// `-2^31`), and a zero divisor gives 0.
fn floor_div(a: i32, b: i32) -> i32 {
    if b == 0 {
        return 0;
    }
    let q = a.wrapping_div(b);
    if a.wrapping_rem(b) != 0 && (a < 0) != (b < 0) {
        q - 1
    } else {
        q
    }
}

/// numpy's int32 `%`: the remainder takes the divisor's sign; a zero divisor gives 0.
fn floor_mod(a: i32, b: i32) -> i32 {
    if b == 0 {
        return 0;
    }
    let r = a.wrapping_rem(b);
    if r != 0 && (r < 0) != (b < 0) {
        r + b
    } else {
        r
    }
}

pub fn binary(
    op: BinaryOp,
    lhs: &Tile,
    rhs: &Tile,
    ty: &TileType,
    span: Span,
) -> Result<Tile, Diagnostic> {
    zip_tiles(lhs, rhs, ty, span, op.name(), |shape, (a, sa), (b, sb)| {
        Some(match (a, b) {
            (Data::F(a), Data::F(b)) => {
                Data::F(zip_broadcast(shape, (a, sa), (b, sb), binary_f32(op)?))
            }
            (Data::I(a), Data::I(b)) => {
                Data::I(zip_broadcast(shape, (a, sa), (b, sb), binary_i32(op)))
            }
            _ => return None,
        })
    })
}

/// Two tiles combined lane by lane under numpy broadcasting into a tile of type `ty`:
/// `zip` gets the result's shape and each operand's data with its broadcast strides, and
/// gives `None` for operands of kinds it does not combine (an internal error naming
/// `what`). A lane is valid when it is valid in both operands.
pub fn zip_tiles(
    lhs: &Tile,
    rhs: &Tile,
    ty: &TileType,
    span: Span,
    what: &str,
    zip: impl FnOnce(&[usize], (&Data, &[usize]), (&Data, &[usize])) -> Option<Data>,
) -> Result<Tile, Diagnostic> {
    let shape = shape_of(ty);
    let sa = broadcast_strides(&lhs.shape, &shape, span)?;
    let sb = broadcast_strides(&rhs.shape, &shape, span)?;
    let mut valid = shape.clone();
    merge_valid(&mut valid, lhs, &shape);
    merge_valid(&mut valid, rhs, &shape);
    let data = zip(&shape, (&lhs.data, &sa), (&rhs.data, &sb))
        .ok_or_else(|| internal(format!("{what} of {} and {}", lhs.dtype, rhs.dtype), span))?;
    Ok(Tile {
        dtype: ty.dtype,
        shape,
        valid,
        data,
    }
    .finish())
}

/// Applies a loop-carried update `cur op= value` on the lanes valid in `value` (already
/// broadcast to `cur`'s shape); other lanes keep their value.
pub fn update_in_place(
    cur: &mut Tile,
    value: &Tile,
    op: Option<BinaryOp>,
    span: Span,
) -> Result<(), Diagnostic> {
    let (shape, valid, dtype) = (cur.shape.clone(), value.valid.clone(), cur.dtype);
    match (&mut cur.data, &value.data) {
        (Data::F(c), Data::F(v)) => {
            let f = match op {
                Some(op) => Some(
                    binary_f32(op).ok_or_else(|| internal("a bit operation on floats", span))?,
                ),
                None => None,
            };
            super::value::for_each_valid_run(&shape, &valid, |off, len| {
                for i in off..off + len {
                    let new = f.map_or(v[i], |f| f(c[i], v[i]));
                    c[i] = round_to(dtype, new);
                }
            });
        }
        (Data::I(c), Data::I(v)) => {
            let f = op.map(binary_i32);
            super::value::for_each_valid_run(&shape, &valid, |off, len| {
                for i in off..off + len {
                    c[i] = f.map_or(v[i], |f| f(c[i], v[i]));
                }
            });
        }
        _ => return Err(internal("update with a value of another dtype", span)),
    }
    Ok(())
}

/// Splits `shape` around `axis` into (outer, reduced, inner) element counts.
fn split_axis(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product();
    (outer, shape[axis], inner)
}

/// Reduces `[outer, n, inner]` over the first `count` of the `n` lanes, keeping the
/// reduced axis with extent 1. Each output sums its lanes in index order.
fn reduce_generic<T: Copy, A: Copy>(
    v: &[T],
    (outer, n, inner): (usize, usize, usize),
    count: usize,
    init: A,
    step: impl Fn(A, T) -> A,
    finish: impl Fn(A) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(outer * inner);
    let mut acc = vec![init; inner];
    for o in 0..outer {
        acc.iter_mut().for_each(|a| *a = init);
        for j in 0..count {
            let row = &v[(o * n + j) * inner..(o * n + j + 1) * inner];
            for (a, &x) in acc.iter_mut().zip(row) {
                *a = step(*a, x);
            }
        }
        out.extend(acc.iter().map(|&a| finish(a)));
    }
    out
}

/// `argmax` / `argmin` over the first `count` lanes along the axis (`dims`: the sizes
/// before, along and after it), as numpy picks: the first of equal lanes, and the first
/// NaN when there is one. Every position is below 2^31 (tiles are far smaller).
fn positions(
    op: ReduceOp,
    data: &Data,
    (outer, n, inner): (usize, usize, usize),
    count: usize,
) -> Vec<i32> {
    let lane = |at: usize| -> f64 {
        match data {
            Data::F(v) => v.get(at).map_or(f64::NAN, |&x| f64::from(x)),
            Data::I(v) => v.get(at).map_or(f64::NAN, |&x| f64::from(x)),
        }
    };
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let mut best: Option<(usize, f64)> = None;
            let mut nan = None;
            for j in 0..count {
                let x = lane((o * n + j) * inner + i);
                if x.is_nan() {
                    nan = Some(j);
                    break;
                }
                let wins =
                    best.is_none_or(|(_, b)| if op == ReduceOp::Argmax { x > b } else { x < b });
                if wins {
                    best = Some((j, x));
                }
            }
            let at = nan.or(best.map(|(j, _)| j)).unwrap_or(0);
            out.push(i32::try_from(at).unwrap_or(i32::MAX));
        }
    }
    out
}

/// Reductions ignore masked lanes. Over no lanes they give the identity (0, -inf, +inf;
/// for i32 `i32::MIN`/`i32::MAX`), and `mean` gives NaN (i32: 0). f16/bf16 accumulate in
/// f32 and round the final value. i32 `mean` truncates toward zero.
pub fn reduce(
    op: ReduceOp,
    arg: &Tile,
    axis: usize,
    ty: &TileType,
    span: Span,
) -> Result<Tile, Diagnostic> {
    if axis >= arg.shape.len() {
        return Err(internal(
            format!("reduction axis {axis} of a rank-{} tile", arg.shape.len()),
            span,
        ));
    }
    let dims = split_axis(&arg.shape, axis);
    let count = arg.valid[axis];
    let data = match &arg.data {
        _ if op.is_arg() => Data::I(positions(op, &arg.data, dims, count)),
        Data::F(v) => {
            let n = count as f32;
            Data::F(match op {
                ReduceOp::Sum => reduce_generic(v, dims, count, 0.0f32, |a, x| a + x, |a| a),
                ReduceOp::Mean => reduce_generic(v, dims, count, 0.0f32, |a, x| a + x, |a| a / n),
                ReduceOp::Amax | ReduceOp::Amin => {
                    let (init, pick) = if op == ReduceOp::Amax {
                        (f32::NEG_INFINITY, nan_max as fn(f32, f32) -> f32)
                    } else {
                        (f32::INFINITY, nan_min as fn(f32, f32) -> f32)
                    };
                    reduce_generic(v, dims, count, init, pick, |a| a)
                }
                // Taken by the first arm.
                ReduceOp::Argmax | ReduceOp::Argmin => Vec::new(),
            })
        }
        Data::I(v) => {
            let n = count as i32;
            Data::I(match op {
                ReduceOp::Sum => reduce_generic(v, dims, count, 0i32, i32::wrapping_add, |a| a),
                ReduceOp::Mean => reduce_generic(v, dims, count, 0i32, i32::wrapping_add, |a| {
                    a.checked_div(n).unwrap_or(0)
                }),
                ReduceOp::Amax => reduce_generic(v, dims, count, i32::MIN, i32::max, |a| a),
                ReduceOp::Amin => reduce_generic(v, dims, count, i32::MAX, i32::min, |a| a),
                ReduceOp::Argmax | ReduceOp::Argmin => Vec::new(),
            })
        }
    };
    let mut shape = arg.shape.clone();
    shape[axis] = 1;
    let mut valid = arg.valid.clone();
    valid[axis] = 1;
    let out = Tile {
        dtype: ty.dtype,
        shape,
        valid,
        data,
    };
    out.expect_type(ty, span)?;
    Ok(out.finish())
}

/// `[m, k] @ [k, n]` summing over the valid k only, in index order, accumulating in f32
/// (i32 operands: wrapping i32).
pub fn matmul(lhs: &Tile, rhs: &Tile, ty: &TileType, span: Span) -> Result<Tile, Diagnostic> {
    let (&[m, k], &[k2, n]) = (lhs.shape.as_slice(), rhs.shape.as_slice()) else {
        return Err(internal("matmul of tiles that are not 2-D", span));
    };
    if k != k2 {
        return Err(internal(format!("matmul inner extents {k} and {k2}"), span));
    }
    let kv = lhs.valid[1].min(rhs.valid[0]);
    let data = match (&lhs.data, &rhs.data) {
        (Data::F(a), Data::F(b)) => {
            Data::F(matmul_generic(a, b, (m, k, n), kv, |acc, x, y| acc + x * y))
        }
        (Data::I(a), Data::I(b)) => Data::I(matmul_generic(a, b, (m, k, n), kv, |acc, x, y| {
            acc.wrapping_add(x.wrapping_mul(y))
        })),
        _ => return Err(internal("matmul of mixed dtypes", span)),
    };
    let out = Tile {
        dtype: ty.dtype,
        shape: vec![m, n],
        valid: vec![lhs.valid[0], rhs.valid[1]],
        data,
    };
    out.expect_type(ty, span)?;
    Ok(out.finish())
}

/// i-k-j order keeps both inner reads contiguous; each output still accumulates its k
/// terms in index order, so the result equals the naive triple loop bit for bit.
fn matmul_generic<T: Copy + Default>(
    a: &[T],
    b: &[T],
    (m, k, n): (usize, usize, usize),
    kv: usize,
    fma: impl Fn(T, T, T) -> T,
) -> Vec<T> {
    let mut out = vec![T::default(); m * n];
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        for p in 0..kv {
            let x = a[i * k + p];
            for (o, &y) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *o = fma(*o, x, y);
            }
        }
    }
    out
}

pub fn transpose(arg: &Tile, span: Span) -> Result<Tile, Diagnostic> {
    let &[r, c] = arg.shape.as_slice() else {
        return Err(internal("transpose of a tile that is not 2-D", span));
    };
    fn t<T: Copy>(v: &[T], r: usize, c: usize) -> Vec<T> {
        (0..c)
            .flat_map(|j| (0..r).map(move |i| v[i * c + j]))
            .collect()
    }
    let data = match &arg.data {
        Data::F(v) => Data::F(t(v, r, c)),
        Data::I(v) => Data::I(t(v, r, c)),
    };
    Ok(Tile {
        dtype: arg.dtype,
        shape: vec![c, r],
        valid: vec![arg.valid[1], arg.valid[0]],
        data,
    })
}

/// Whether two shapes hold the same elements in the same row-major order: equal once
/// their axes of extent 1 are dropped.
pub fn same_elements(a: &[usize], b: &[usize]) -> bool {
    let non_unit = |s: &[usize]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    non_unit(a) == non_unit(b)
}

/// numpy's `reshape` (and `squeeze`, `unsqueeze`): the same elements in row-major order.
/// A tile with masked lanes (a tail) keeps them only where the reshape just adds or
/// drops axes of extent 1; any other reshape of it is an error, as the machine's is.
pub fn reshape(arg: Tile, shape: Vec<usize>, span: Span) -> Result<Tile, Diagnostic> {
    if arg.len() != shape.iter().product::<usize>() {
        return Err(internal("a reshape that changes the element count", span));
    }
    let valid = if arg.is_fully_valid() {
        shape.clone()
    } else {
        let kept = |s: &[usize], v: &[usize]| -> Option<Vec<usize>> {
            let mut out = Vec::new();
            for (&d, &w) in s.iter().zip(v) {
                match (d, w) {
                    (1, 1) => {}
                    (1, _) => return None,
                    _ => out.push(w),
                }
            }
            Some(out)
        };
        let (Some(mut lanes), true) = (
            kept(&arg.shape, &arg.valid),
            same_elements(&arg.shape, &shape),
        ) else {
            return Err(Diagnostic::error(
                "this reshape regroups a tile whose last loop iteration holds fewer lanes (a tail): reshape only whole tiles, or add and drop axes of extent 1",
                span,
            ));
        };
        lanes.reverse();
        // The non-unit extents of both shapes are equal and in order, so each takes
        // one entry of `lanes`; the default is never used.
        shape
            .iter()
            .map(|&d| if d == 1 { 1 } else { lanes.pop().unwrap_or(d) })
            .collect()
    };
    Ok(Tile {
        dtype: arg.dtype,
        shape,
        valid,
        data: arg.data,
    })
}

/// `arg[window]`, one `(start, len, step)` per axis: numpy's basic slicing,
/// `start::step` for `len` positions. A lane masked in `arg` (at or past its valid
/// extent) stays masked in the slice.
pub fn slice(arg: &Tile, window: &[(usize, usize, usize)], span: Span) -> Result<Tile, Diagnostic> {
    let last =
        |&(s, l, step): &(usize, usize, usize)| l.checked_sub(1)?.checked_mul(step)?.checked_add(s);
    let inside = window.len() == arg.shape.len()
        && window
            .iter()
            .zip(&arg.shape)
            .all(|(w, &e)| w.1 > 0 && w.2 > 0 && last(w).is_some_and(|end| end < e));
    if !inside {
        return Err(internal("a slice outside its tile", span));
    }
    let shape: Vec<usize> = window.iter().map(|&(_, l, _)| l).collect();
    // Row-major strides of the source.
    let mut strides = vec![1; arg.shape.len()];
    for a in (0..arg.shape.len().saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * arg.shape[a + 1];
    }
    let sources: Vec<usize> = (0..shape.iter().product())
        .map(|flat: usize| {
            let mut rest = flat;
            let mut at = 0;
            for a in (0..shape.len()).rev() {
                at += (window[a].0 + (rest % shape[a]) * window[a].2) * strides[a];
                rest /= shape[a];
            }
            at
        })
        .collect();
    let data = match &arg.data {
        Data::F(v) => Data::F(sources.iter().map(|&i| v[i]).collect()),
        Data::I(v) => Data::I(sources.iter().map(|&i| v[i]).collect()),
    };
    // The positions `s, s + step, ...` below the valid extent `v`.
    let valid = window
        .iter()
        .zip(&arg.valid)
        .map(|(&(s, l, step), &v)| v.saturating_sub(s).div_ceil(step.max(1)).min(l))
        .collect();
    Ok(Tile {
        dtype: arg.dtype,
        shape,
        valid,
        data,
    })
}

/// `as`: float -> integer truncates toward zero and saturates (NaN -> 0); integer ->
/// integer wraps, as numpy's `astype`; anything -> float rounds to nearest-even in the
/// target type.
pub fn cast(arg: Tile, to: DType) -> Tile {
    let data = match (arg.data, to) {
        (Data::F(v), DType::I32) => Data::I(v.into_iter().map(|x| x as i32).collect()),
        (Data::F(v), DType::I8) => Data::I(v.into_iter().map(|x| i32::from(x as i8)).collect()),
        (Data::F(v), DType::U8) => Data::I(v.into_iter().map(|x| i32::from(x as u8)).collect()),
        (Data::I(v), DType::I32 | DType::I8 | DType::U8) => Data::I(
            v.into_iter()
                .map(|x| to.wrap_int(i64::from(x)) as i32)
                .collect(),
        ),
        (Data::I(v), _) => Data::F(v.into_iter().map(|x| x as f32).collect()),
        (Data::F(v), _) => Data::F(v),
    };
    Tile {
        dtype: to,
        shape: arg.shape,
        valid: arg.valid,
        data,
    }
    .finish()
}
