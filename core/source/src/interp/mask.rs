//! Masks in the reference interpreter: comparisons, `where` and `iota`
//! (`docs/language.md`, "Masks"). A mask is a tile of dtype `mask` held as i32 lanes of
//! 0 and 1; like every tile, its masked (tail) lanes hold 0, that is false.

use super::ops::zip_tiles;
use super::value::{internal, merge_valid, zip_broadcast, Data, Tile};
use crate::diag::{Diagnostic, Span};
use crate::types::{CmpOp, DType, TileType};

fn shape_of(ty: &TileType) -> Vec<usize> {
    ty.shape.iter().map(|&d| d as usize).collect()
}

/// numpy's comparisons, NaN included: it is unequal to everything, so only `!=` holds.
/// Kept apart from the compiler's `CmpOp::holds` so that agreement means something.
pub(super) fn compares<T: PartialOrd>(op: CmpOp, a: T, b: T) -> i32 {
    i32::from(match op {
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
    })
}

pub fn compare(
    op: CmpOp,
    lhs: &Tile,
    rhs: &Tile,
    ty: &TileType,
    span: Span,
) -> Result<Tile, Diagnostic> {
    zip_tiles(
        lhs,
        rhs,
        ty,
        span,
        op.symbol(),
        |shape, (a, sa), (b, sb)| {
            Some(Data::I(match (a, b) {
                (Data::F(a), Data::F(b)) => {
                    zip_broadcast(shape, (a, sa), (b, sb), |x, y| compares(op, x, y))
                }
                (Data::I(a), Data::I(b)) => {
                    zip_broadcast(shape, (a, sa), (b, sb), |x, y| compares(op, x, y))
                }
                _ => return None,
            }))
        },
    )
}

/// `where(mask, a, b)`: all three broadcast to the result's shape; a lane is valid when
/// it is valid in each.
pub fn select(
    mask: &Tile,
    on_true: &Tile,
    on_false: &Tile,
    ty: &TileType,
    span: Span,
) -> Result<Tile, Diagnostic> {
    let shape = shape_of(ty);
    let mut valid = shape.clone();
    for t in [mask, on_true, on_false] {
        merge_valid(&mut valid, t, &shape);
    }
    let m = mask.broadcast_to(&shape, span)?;
    let (a, b) = (
        on_true.broadcast_to(&shape, span)?,
        on_false.broadcast_to(&shape, span)?,
    );
    let keep = m.ints(span)?;
    let data = match (a.data, b.data) {
        (Data::F(mut x), Data::F(y)) => {
            pick(keep, &mut x, &y);
            Data::F(x)
        }
        (Data::I(mut x), Data::I(y)) => {
            pick(keep, &mut x, &y);
            Data::I(x)
        }
        _ => return Err(internal("`where` of values of two dtypes", span)),
    };
    Ok(Tile {
        dtype: ty.dtype,
        shape,
        valid,
        data,
    }
    .finish())
}

fn pick<T: Copy>(keep: &[i32], x: &mut [T], y: &[T]) {
    for ((x, y), k) in x.iter_mut().zip(y).zip(keep) {
        if *k == 0 {
            *x = *y;
        }
    }
}

/// `iota(ty, axis=K)`: lane `(.., i_K, ..)` holds `i_K`.
pub fn iota(axis: usize, ty: &TileType, span: Span) -> Result<Tile, Diagnostic> {
    let shape = shape_of(ty);
    let (Some(&extent), Ok(len)) = (
        shape.get(axis),
        i32::try_from(shape.iter().product::<usize>()),
    ) else {
        return Err(internal(format!("iota along axis {axis} of {ty}"), span));
    };
    // Lanes after one step along `axis`: the product of the extents after it.
    let inner: usize = shape.get(axis + 1..).map_or(1, |s| s.iter().product());
    let lanes = (0..len as usize)
        .map(|f| ((f / inner.max(1)) % extent.max(1)) as i32)
        .collect();
    Ok(Tile {
        dtype: DType::I32,
        valid: shape.clone(),
        shape,
        data: Data::I(lanes),
    })
}
