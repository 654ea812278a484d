//! The typing rule of each op: the result type an op must have given its operand types.
//! The verifier checks every op against these; passes that build ops use them too.

use super::{FusedExpr, Index, IndexExpr, LoopVarId, Param};
use crate::front::hir::ReduceOp;
use crate::types::{DType, TileType};

pub use crate::types::broadcast_shapes;

/// True when `from` broadcasts to exactly `to`.
pub fn broadcasts_to(from: &[u64], to: &[u64]) -> bool {
    broadcast_shapes(from, to).as_deref() == Some(to)
}

/// The dtype two elementwise operands share: equal dtypes, or a rank-0 scalar taking the
/// other operand's dtype.
fn common_dtype(a: &TileType, b: &TileType) -> Result<DType, String> {
    if a.dtype == b.dtype || b.rank() == 0 {
        Ok(a.dtype)
    } else if a.rank() == 0 {
        Ok(b.dtype)
    } else {
        Err(format!("operand dtypes differ: {} and {}", a, b))
    }
}

pub fn binary(a: &TileType, b: &TileType) -> Result<TileType, String> {
    let dtype = common_dtype(a, b)?;
    let shape = broadcast_shapes(&a.shape, &b.shape)
        .ok_or_else(|| format!("shapes {} and {} do not broadcast", a, b))?;
    Ok(TileType::new(dtype, shape))
}

/// A comparison: the broadcast of two non-mask operands, as a mask.
pub fn compare(a: &TileType, b: &TileType) -> Result<TileType, String> {
    let t = binary(a, b)?;
    if t.dtype == DType::Mask {
        return Err(format!("comparison of masks {a} and {b}"));
    }
    Ok(TileType::new(DType::Mask, t.shape))
}

/// `where`: a mask and two values of one dtype, all three broadcast.
pub fn select(mask: &TileType, a: &TileType, b: &TileType) -> Result<TileType, String> {
    if mask.dtype != DType::Mask {
        return Err(format!("select condition {mask} is not a mask"));
    }
    let values = binary(a, b)?;
    let shape = broadcast_shapes(&mask.shape, &values.shape)
        .ok_or_else(|| format!("shapes {mask} and {values} do not broadcast"))?;
    Ok(TileType::new(values.dtype, shape))
}

/// `iota`: an i32 tile with `axis` among its axes.
pub fn iota(axis: usize, result: &TileType) -> Result<TileType, String> {
    if result.dtype != DType::I32 || axis >= result.rank() {
        return Err(format!("iota along axis {axis} cannot give {result}"));
    }
    Ok(result.clone())
}

pub fn reduce(op: ReduceOp, arg: &TileType, axis: usize) -> Result<TileType, String> {
    let mut shape = arg.shape.clone();
    let slot = shape
        .get_mut(axis)
        .ok_or_else(|| format!("axis {axis} out of range for {arg}"))?;
    *slot = 1;
    Ok(TileType::new(op.result_dtype(arg.dtype), shape))
}

pub fn matmul(a: &TileType, b: &TileType) -> Result<TileType, String> {
    match (a.shape.as_slice(), b.shape.as_slice()) {
        ([m, k], [k2, n]) if k == k2 && a.dtype == b.dtype => {
            let dtype = if a.dtype.is_float() {
                DType::F32
            } else {
                a.dtype
            };
            Ok(TileType::new(dtype, vec![*m, *n]))
        }
        _ => Err(format!("matmul operands {a} and {b} do not agree")),
    }
}

pub fn transpose(a: &TileType) -> Result<TileType, String> {
    match a.shape.as_slice() {
        [m, n] => Ok(TileType::new(a.dtype, vec![*n, *m])),
        _ => Err(format!("transpose needs a 2-D tile, got {a}")),
    }
}

/// The type of `slice arg[index]` (transposed when `transpose`, 2-D only): a tile of 1 or
/// 2 axes, each axis
/// `Full` or a `Range` that stays inside the tile where its start is a constant (a start
/// in loop variables is subtile-matmul's to keep in range: it steps over whole pieces).
pub fn slice(arg: &TileType, index: &[Index], transpose: bool) -> Result<TileType, String> {
    if arg.rank() == 0 || index.len() != arg.rank() || (transpose && arg.rank() != 2) {
        return Err(format!(
            "slice needs a tile with axes and one range per axis (2 to transpose), got {arg}"
        ));
    }
    let mut shape = Vec::with_capacity(arg.rank());
    for (ix, &extent) in index.iter().zip(&arg.shape) {
        let len = match ix {
            Index::Full => extent,
            Index::Range {
                start,
                len,
                clamped: false,
            } => {
                let fits = match start {
                    IndexExpr::Const(s) => {
                        *s >= 0 && (*s as u64).checked_add(*len).is_some_and(|e| e <= extent)
                    }
                    _ => *len <= extent,
                };
                if !fits || *len == 0 {
                    return Err(format!("slice range leaves {arg}"));
                }
                *len
            }
            Index::Strided { start, len, step } => {
                // The last position, `start + (len - 1) * step`, inside the tile.
                let span = len.saturating_sub(1).saturating_mul(*step);
                let fits = match start {
                    IndexExpr::Const(s) => *s >= 0 && (*s as u64).saturating_add(span) < extent,
                    _ => span < extent,
                };
                if !fits || *len == 0 || *step == 0 {
                    return Err(format!("strided slice range leaves {arg}"));
                }
                *len
            }
            _ => return Err("a slice axis that is not a range".into()),
        };
        shape.push(len);
    }
    if transpose {
        shape.reverse();
    }
    Ok(TileType::new(arg.dtype, shape))
}

/// numpy's shape of `param[index]`: the box's extents with each single position's axis
/// dropped (`hir::numpy_shape`), the type of a load's tile and the region a store's
/// value broadcasts to. `indirect` gives the type of each indirect index value.
pub fn region(
    param: &Param,
    index: &[Index],
    indirect: impl Fn(super::ValueId) -> Option<TileType>,
) -> Result<Vec<u64>, String> {
    let boxed = region_box(param, index, indirect)?;
    Ok(numpy_region(index, &boxed))
}

/// numpy's shape of an access from its box (`region_box`): single positions' axes
/// dropped, a lone element kept as `[1]` (`hir::numpy_shape`).
pub fn numpy_region(index: &[Index], boxed: &[u64]) -> Vec<u64> {
    crate::front::hir::drop_single_axes(
        index.iter().map(|ix| matches!(ix, Index::Single(_))),
        boxed,
    )
}

/// Whether two shapes hold the same elements in the same row-major order: equal once
/// their axes of extent 1 are dropped. Tiles are dense, so such shapes share a layout:
/// a load's box and its tile, a stored value and its box.
pub fn same_layout(a: &[u64], b: &[u64]) -> bool {
    let non_unit = |s: &[u64]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    non_unit(a) == non_unit(b)
}

/// The box `param[index]` moves: one extent per tensor axis, a single position as 1.
pub fn region_box(
    param: &Param,
    index: &[Index],
    indirect: impl Fn(super::ValueId) -> Option<TileType>,
) -> Result<Vec<u64>, String> {
    if index.len() != param.ty.rank() {
        return Err(format!(
            "`{}` has {} axes but is indexed with {}",
            param.name,
            param.ty.rank(),
            index.len()
        ));
    }
    let mut shape = Vec::with_capacity(index.len());
    for (ix, extent) in index.iter().zip(&param.ty.shape) {
        shape.push(match ix {
            Index::Full => *extent,
            Index::Range { len, .. } | Index::Strided { len, .. } => *len,
            Index::Single(_) => 1,
            Index::Indirect(v) => {
                let ty = indirect(*v).ok_or("indirect index refers to a missing value")?;
                let n = match ty.shape.as_slice() {
                    [n] | [n, 1] if ty.dtype == DType::I32 => *n,
                    _ => {
                        return Err(format!(
                            "indirect index must be i32[n] or i32[n, 1], got {ty}"
                        ))
                    }
                };
                n
            }
        });
    }
    Ok(shape)
}

/// The result type of a fused expression over operands of types `args`: the broadcast
/// of every operand it reads, in their common dtype.
pub fn fused(expr: &FusedExpr, args: &[TileType]) -> Result<TileType, String> {
    let mut acc: Option<TileType> = None;
    let mut err = None;
    visit_args(expr, &mut |i| {
        let Some(t) = args.get(i as usize) else {
            err = Some(format!(
                "fused expression reads ${i} but has {} operands",
                args.len()
            ));
            return;
        };
        acc = Some(match acc.take() {
            None => t.clone(),
            Some(a) => match binary(&a, t) {
                Ok(r) => r,
                Err(e) => {
                    err = Some(e);
                    a
                }
            },
        });
    });
    if let Some(e) = err {
        return Err(e);
    }
    acc.ok_or_else(|| "fused expression reads no operand".to_string())
}

/// Calls `f` with each operand index the expression reads.
pub fn visit_args(expr: &FusedExpr, f: &mut impl FnMut(u32)) {
    match expr {
        FusedExpr::Arg(i) => f(*i),
        FusedExpr::Const(_) => {}
        FusedExpr::Unary(_, a) => visit_args(a, f),
        FusedExpr::Binary(_, a, b) => {
            visit_args(a, f);
            visit_args(b, f);
        }
    }
}

/// Calls `f` with each loop variable an index expression reads.
pub fn visit_index_vars(expr: &IndexExpr, f: &mut impl FnMut(LoopVarId)) {
    match expr {
        IndexExpr::Const(_) => {}
        IndexExpr::Var(v) => f(*v),
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
            visit_index_vars(a, f);
            visit_index_vars(b, f);
        }
        IndexExpr::FloorDiv(a, _) | IndexExpr::Mod(a, _) => visit_index_vars(a, f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_shapes(&[8, 512], &[8, 1]), Some(vec![8, 512]));
        assert_eq!(broadcast_shapes(&[512], &[8, 1]), Some(vec![8, 512]));
        assert_eq!(broadcast_shapes(&[], &[3]), Some(vec![3]));
        assert_eq!(broadcast_shapes(&[4, 2], &[4, 3]), None);
        assert!(broadcasts_to(&[1], &[8, 4]));
        assert!(!broadcasts_to(&[8, 4], &[1]));
    }
}
