//! Shapes: numpy broadcasting and the size limits of `docs/language.md`.

use super::expr::Val;
use super::Checker;
use crate::diag::Span;
use crate::front::hir::{Expr, ExprKind};
use crate::limits::{MAX_TENSOR_ELEMENTS, MAX_TILE_ELEMENTS};
use crate::types::TileType;

#[derive(Clone, Copy)]
pub enum Limit {
    Tensor,
    Tile,
}

/// Product of the extents, saturating so absurd shapes compare as too large.
pub fn elements(shape: &[u64]) -> u64 {
    shape.iter().fold(1u64, |acc, &d| acc.saturating_mul(d))
}

pub use crate::types::broadcast_shapes as broadcast;

impl Checker<'_> {
    pub(super) fn check_size(&mut self, ty: &TileType, limit: Limit, span: Span) -> Option<()> {
        let (max, what, power) = match limit {
            Limit::Tensor => (MAX_TENSOR_ELEMENTS, "a tensor", 24),
            Limit::Tile => (MAX_TILE_ELEMENTS, "a tile", 20),
        };
        let n = elements(&ty.shape);
        if n > max {
            return self.error(
                format!("{ty} has {n} elements; {what} may have at most 2^{power} = {max}"),
                span,
            );
        }
        Some(())
    }

    /// Makes `value` fit a destination of type `to`: same dtype, and a shape that
    /// broadcasts to exactly `to.shape`. `what` names the destination.
    pub(super) fn fit(&mut self, value: Val, to: &TileType, what: &str) -> Option<Expr> {
        let value = match value {
            Val::Tile(t) => t,
            Val::Lit(l) => self.typed_lit(l, to.dtype)?,
        };
        if value.ty.dtype != to.dtype {
            return self.error(
                format!(
                    "{what} has type {to} but the value has type {}: convert with `as {}`",
                    value.ty, to.dtype
                ),
                value.span,
            );
        }
        if broadcast(&value.ty.shape, &to.shape).as_deref() != Some(&to.shape[..]) {
            return self.error(
                format!(
                    "a value of type {} does not broadcast to {what}, of type {to}",
                    value.ty
                ),
                value.span,
            );
        }
        Some(value)
    }
}

/// A typed scalar literal.
pub fn scalar(value: f64, dtype: crate::types::DType, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Scalar(value),
        ty: TileType::scalar(dtype),
        span,
    }
}
