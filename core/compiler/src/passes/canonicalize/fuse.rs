//! Fusion of elementwise chains into one `fused` op whose expression tree reads the
//! chain's inputs: `%0 = sub %t, %m; %e = exp %0` becomes
//! `%e = fused(%t, %m) { exp($0 - $1) }`.
//!
//! A producer is merged into its consumer only when
//! - both are elementwise (unary, binary or fused) and in the same block, so nothing is
//!   fused across loops, loads, stores, reductions or matmuls;
//! - the producer's result is used exactly once (by this consumer), so no work is
//!   duplicated;
//! - the producer's result has the consumer's dtype and a shape that broadcasts to the
//!   consumer's. A narrower producer (a `[8, 1]` column under an `[8, 512]` consumer) is
//!   merged as a subtree that still runs at its own shape: each node of a fused
//!   expression is evaluated over the broadcast of the operands under it (plan-memory's
//!   `fused_shape`), so the fused op computes no more elements than the chain did, and
//!   the column lives in the op's scratch instead of a tile of its own;
//! - the merged tree stays within `MAX_FUSED_NODES`, which bounds expression depth.
//!
//! Rank-0 constants are the one exception to single use: they are copied into every
//! expression that reads them as literals, which costs nothing. The producers left
//! unused are removed by dead-code elimination.

use crate::ir::analysis::scalar_constant;
use crate::ir::{FusedExpr, Kernel, OpId, OpKind, OpSet, ValueDef, ValueId};
use crate::limits::MAX_FUSED_NODES;
use crate::types::TileType;

pub fn run(k: &mut Kernel) -> bool {
    let uses = read_counts(k);
    let mut changed = false;
    for (_, ops) in k.blocks() {
        let in_block: OpSet = ops.iter().copied().collect();
        for id in ops {
            changed |= fuse_into(k, id, &in_block, &uses);
        }
    }
    changed
}

/// How many times each value is read, counting every `$i` of a fused expression: a
/// value read twice by one fused op must not be merged into it (that duplicates work).
fn read_counts(k: &Kernel) -> Vec<u32> {
    let mut counts = k.use_counts();
    k.walk_ops(|_, op| {
        if let OpKind::Fused { args, expr } = &op.kind {
            let mut reads = vec![0u32; args.len()];
            crate::ir::typing::visit_args(expr, &mut |i| {
                if let Some(r) = reads.get_mut(i as usize) {
                    *r += 1;
                }
            });
            for (a, r) in args.iter().zip(reads) {
                if let Some(c) = counts.get_mut(a.index()) {
                    // `use_counts` counted the operand once already.
                    *c += r.saturating_sub(1);
                }
            }
        }
    });
    counts
}

/// The operand list and expression being built for one consumer.
struct Builder {
    args: Vec<ValueId>,
    /// Producers merged so far; fusion happens only if at least one is.
    merged: usize,
}

impl Builder {
    fn arg(&mut self, v: ValueId) -> FusedExpr {
        let i = match self.args.iter().position(|&a| a == v) {
            Some(i) => i,
            None => {
                self.args.push(v);
                self.args.len() - 1
            }
        };
        FusedExpr::Arg(i as u32)
    }
}

fn fuse_into(k: &mut Kernel, id: OpId, in_block: &OpSet, uses: &[u32]) -> bool {
    let op = &k.ops[id];
    let Some(&result) = op.results.first() else {
        return false;
    };
    if !op.kind.is_elementwise() {
        return false;
    }
    let Some(result_ty) = k.values.get(result).map(|v| v.ty.clone()) else {
        return false;
    };
    let mut b = Builder {
        args: Vec::new(),
        merged: 0,
    };
    // The consumer's own expression over its operands, each operand then expanded.
    let (own, operands) = own_expr(&op.kind);
    let mut leaves = Vec::new();
    for v in operands {
        let producer = match k.values.get(v).map(|x| x.def) {
            Some(ValueDef::Result { op, .. }) => k.ops.get(op).map(|p| (op, p)),
            _ => None,
        };
        let constant = scalar_constant(k, v);
        let leaf = match producer {
            // `is_some` holds here, so the default is never taken.
            _ if constant.is_some() => FusedExpr::Const(constant.unwrap_or_default()),
            Some((pid, p))
                if p.kind.is_elementwise()
                    && in_block.contains(&pid)
                    && uses.get(v.index()) == Some(&1)
                    && k.values
                        .get(v)
                        .is_some_and(|p| narrower_or_equal(&p.ty, &result_ty)) =>
            {
                let (pexpr, pargs) = own_expr(&p.kind);
                let mapped = remap(&pexpr, &pargs, &mut b, k);
                b.merged += 1;
                mapped
            }
            _ => b.arg(v),
        };
        leaves.push(leaf);
    }
    let expr = substitute(&own, &leaves);
    if b.merged == 0 || expr.node_count() > MAX_FUSED_NODES || b.args.is_empty() {
        return false;
    }
    k.ops[id].kind = OpKind::Fused { args: b.args, expr };
    true
}

/// `producer` has `consumer`'s dtype and rank, and each of its axes is the consumer's or
/// 1 (it broadcasts to the consumer without changing it).
fn narrower_or_equal(producer: &TileType, consumer: &TileType) -> bool {
    producer.dtype == consumer.dtype
        && producer.rank() == consumer.rank()
        && producer
            .shape
            .iter()
            .zip(&consumer.shape)
            .all(|(&p, &c)| p == c || p == 1)
}

/// An elementwise op as an expression over `$0..` and the values those stand for.
fn own_expr(kind: &OpKind) -> (FusedExpr, Vec<ValueId>) {
    match kind {
        OpKind::Unary { op, arg } => (
            FusedExpr::Unary(*op, Box::new(FusedExpr::Arg(0))),
            vec![*arg],
        ),
        OpKind::Binary { op, lhs, rhs } => (
            FusedExpr::Binary(
                *op,
                Box::new(FusedExpr::Arg(0)),
                Box::new(FusedExpr::Arg(1)),
            ),
            vec![*lhs, *rhs],
        ),
        OpKind::Fused { args, expr } => (expr.clone(), args.clone()),
        _ => (FusedExpr::Arg(0), Vec::new()),
    }
}

/// A producer's expression with its operands renumbered into the consumer's list
/// (rank-0 constants inlined as literals).
fn remap(expr: &FusedExpr, args: &[ValueId], b: &mut Builder, k: &Kernel) -> FusedExpr {
    let leaves: Vec<FusedExpr> = args
        .iter()
        .map(|&v| match scalar_constant(k, v) {
            Some(c) => FusedExpr::Const(c),
            None => b.arg(v),
        })
        .collect();
    substitute(expr, &leaves)
}

/// Replaces each `$i` in `expr` by `leaves[i]`.
fn substitute(expr: &FusedExpr, leaves: &[FusedExpr]) -> FusedExpr {
    match expr {
        FusedExpr::Arg(i) => leaves
            .get(*i as usize)
            .cloned()
            .unwrap_or(FusedExpr::Arg(*i)),
        FusedExpr::Const(c) => FusedExpr::Const(*c),
        FusedExpr::Unary(op, a) => FusedExpr::Unary(*op, Box::new(substitute(a, leaves))),
        FusedExpr::Binary(op, a, b) => FusedExpr::Binary(
            *op,
            Box::new(substitute(a, leaves)),
            Box::new(substitute(b, leaves)),
        ),
    }
}
