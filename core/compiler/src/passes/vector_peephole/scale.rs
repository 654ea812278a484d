//! Rule: a constant scale moves past the reduction that is its only reader, so the
//! multiply runs on the reduced column instead of the whole tile.
//!
//! - `amax(x * c)` / `amin(x * c)` with `c > 0` are `amax(x) * c` / `amin(x) * c`:
//!   rounding is monotone, so the largest rounded product is the rounded product of the
//!   largest. Exact.
//! - `sum(x * c)` / `mean(x * c)` with `c = ±2^k` are `sum(x) * c` / `mean(x) * c`:
//!   scaling by a power of two commutes with every rounding of the sum. Exact barring
//!   overflow or subnormal products (a sum whose scaled partial sums leave the f32 range).
//!
//! Only f32 tiles, and only when the scaled tile has no other reader: attention's
//! `s = (q @ k.T) * 0.125` also feeds `exp(s - amax(s))`, so there the full-tile
//! multiply has to run anyway and the rule does not fire.

use crate::front::hir::{BinaryOp, ReduceOp};
use crate::ir::analysis::exact_reciprocal;
use crate::ir::analysis::scalar_constant;
use crate::ir::{FusedExpr, Kernel, OpId, OpKind, ValueDef, ValueId};
use crate::types::DType;

/// Applies the rule to every reduction it can; returns whether anything changed.
pub fn run(k: &mut Kernel) -> bool {
    let uses = k.use_counts();
    let mut reductions = Vec::new();
    k.walk_ops(|id, op| {
        if matches!(op.kind, OpKind::Reduce { .. }) {
            reductions.push(id);
        }
    });
    let mut changed = false;
    for r in reductions {
        changed |= fold(k, r, &uses);
    }
    changed
}

/// `%s = x * c; %m = reduce %s` becomes `%s = reduce x; %m = %s * c`: the producer's op
/// and value are reused for the reduction (its value retyped to the reduced shape), the
/// reduction's for the multiply, so no op moves and every reader of `%m` is unchanged.
fn fold(k: &mut Kernel, r: OpId, uses: &[u32]) -> bool {
    let Some(op) = k.ops.get(r) else {
        return false;
    };
    let OpKind::Reduce {
        op: red,
        arg: s,
        axis,
    } = op.kind
    else {
        return false;
    };
    let (Some(&m), r_span) = (op.results.first(), op.span) else {
        return false;
    };
    let Some(ValueDef::Result { op: p, .. }) = k.values.get(s).map(|v| v.def) else {
        return false;
    };
    let Some((x, c)) = scaled(k, p) else {
        return false;
    };
    let (Some(sv), Some(xv), Some(mv)) = (k.values.get(s), k.values.get(x), k.values.get(m)) else {
        return false;
    };
    let c32 = c as f32;
    let exact = match red {
        ReduceOp::Sum | ReduceOp::Mean => exact_reciprocal(c).is_some(),
        ReduceOp::Amax | ReduceOp::Amin => c32 > 0.0 && c32.is_finite(),
        // A position does not scale.
        ReduceOp::Argmax | ReduceOp::Argmin => false,
    };
    if !exact || sv.ty.dtype != DType::F32 || xv.ty != sv.ty || uses.get(s.index()) != Some(&1) {
        return false;
    }
    let reduced = mv.ty.clone();
    let p_span = k.ops.get(p).map_or(r_span, |o| o.span);
    if let Some(v) = k.values.get_mut(s) {
        v.ty = reduced;
    }
    if let Some(o) = k.ops.get_mut(p) {
        o.kind = OpKind::Reduce {
            op: red,
            arg: x,
            axis,
        };
        o.span = r_span;
    }
    if let Some(o) = k.ops.get_mut(r) {
        o.kind = OpKind::Fused {
            args: vec![s],
            expr: FusedExpr::Binary(
                BinaryOp::Mul,
                Box::new(FusedExpr::Arg(0)),
                Box::new(FusedExpr::Const(c)),
            ),
        };
        o.span = p_span;
    }
    true
}

/// `(x, c)` when op `p` multiplies a tile `x` by a scalar constant `c`, as a plain
/// multiply or a fused `$0 * c`.
fn scaled(k: &Kernel, p: OpId) -> Option<(ValueId, f64)> {
    match &k.ops.get(p)?.kind {
        OpKind::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => match (scalar_constant(k, *lhs), scalar_constant(k, *rhs)) {
            (None, Some(c)) => Some((*lhs, c)),
            (Some(c), None) => Some((*rhs, c)),
            _ => None,
        },
        OpKind::Fused { args, expr } => match (args.as_slice(), expr) {
            ([x], FusedExpr::Binary(BinaryOp::Mul, a, b)) => match (&**a, &**b) {
                (FusedExpr::Arg(0), FusedExpr::Const(c))
                | (FusedExpr::Const(c), FusedExpr::Arg(0)) => Some((*x, *c)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}
