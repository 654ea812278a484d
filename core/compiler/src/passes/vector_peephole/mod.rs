//! Pass `vector-peephole`: elementwise expressions rewritten into cheaper vector
//! instructions, each rule either bit-exact or justified below.
//!
//! The vector pipe charges every instruction a fixed bias plus a per-lane slope, 4x for
//! transcendental ops and division (`a3`). The rules, on plain elementwise ops and on the
//! nodes of `fused` expressions:
//!
//! - **Exact constant reciprocal.** `x / c` with `c = ±2^k` becomes `x * (1 / c)`. Both
//!   are the same real number, rounded once, so the result is bit-identical (including
//!   for f16/bf16 tiles, which the vector pipe computes in f32 and rounds on store).
//! - **Broadcast reciprocal.** `x / d` where `d` covers fewer lanes than the quotient
//!   (typically a reduction result `[8, 1]` against an `[8, 512]` tile, as in softmax's
//!   `e / sum(e)`) becomes `x * recip(d)`: the reciprocal runs once on the small tile and
//!   the full-size pass is a multiply. Done only where the machine's cost model says the
//!   two instructions are cheaper than the division.
//! - **rsqrt.** `recip(sqrt(x))` (also as made by the rule above) becomes `rsqrt(x)` in
//!   f32: the vector pipe's rsqrt is `1 / sqrt(x)` rounded at the same two points, so
//!   `t / sqrt(s)` costs one multiply on the full tile. (In f16/bf16 the square root is
//!   rounded to the narrow type in between, so the rule does not apply.)
//! - **Scale past a reduction** (`scale.rs`). `amax(x * c)` with `c > 0`, and `sum` or
//!   `mean` of `x * 2^k`, reduce `x` and scale the reduced column: exact, and the
//!   full-tile multiply becomes a column one.
//! - **silu.** `sigmoid(x) * x` (either order) becomes `silu(x)` in f32: the vector
//!   pipe's silu is `x * sigmoid(x)` with the sigmoid rounded to f32 in between, as the
//!   two instructions round it, so the multiply's full-tile pass disappears.
//!
//! Numerics of the broadcast reciprocal, the one inexact rule: two f32 roundings
//! instead of one, so the result is within about 1.5 ulp of the quotient (relative
//! 2e-7; with a divisor near the top of the f32 range, whose reciprocal is subnormal,
//! within 5e-7), far inside the f32 tolerance against the reference interpreter (1e-5).
//! The one case outside it: a subnormal divisor below 2^-128, whose reciprocal
//! overflows to infinity where the quotient of a small enough numerator is finite.
//!
//! The rule is applied only to f32 quotients that no cast and no matrix product reads:
//! a cast to f16/bf16 (or i32) can turn that last-bit difference into a whole step of
//! the narrow type where the language rounds, and a product sums many of them.
//! Attention's `(w as f16) @ v`, with `w = p / sum(p)`, shows it: rewritten, the matrix
//! product carried such a step into an f32 result outside its 1e-5 tolerance on 3 of
//! 201 input seeds; kept as a division, it matches exactly.

mod scale;

use super::{Context, Pass};
use crate::dense::DenseSet;
use crate::diag::Diagnostics;
use crate::front::hir::{BinaryOp, UnaryOp};
use crate::ir::analysis::exact_reciprocal;
use crate::ir::analysis::fused_shape;
use crate::ir::analysis::scalar_constant;
use crate::ir::{FusedExpr, Kernel, OpId, OpKind, ValueId, ValueSet};
use crate::limits::MAX_FUSED_NODES;
use crate::machine::Costs;
use crate::types::DType;

pub struct VectorPeephole;

impl Pass for VectorPeephole {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "vector-peephole"
    }

    fn description(&self) -> &'static str {
        "cheaper vector forms: divide by a broadcast tile through its reciprocal and by a power of two through a multiply; recip(sqrt) as rsqrt, sigmoid(x) * x as silu"
    }

    fn optional(&self) -> bool {
        true
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let costs = cx.machine().costs;
        run(cx.ir_mut(self.name())?, &costs);
        Ok(())
    }
}

/// Applies every rule it can; returns whether anything changed.
pub fn run(k: &mut Kernel, costs: &Costs) -> bool {
    let mut ids = Vec::new();
    k.walk_ops(|id, _| ids.push(id));
    let magnified = magnifying_reads(k);
    let mut changed = false;
    for id in ids {
        changed |= rewrite_op(k, id, costs, &magnified);
    }
    // After the division rules, so a `/ 4.0` already turned `* 0.25` moves too.
    changed |= scale::run(k);
    if changed {
        // The divisor constants a rewrite inlined may now be unread.
        crate::ir::dce::run(k);
    }
    changed
}

/// Values a cast or a matrix product reads: the readers that can magnify a last-bit
/// difference (a cast by rounding it to a whole step of a narrower type, a product by
/// summing many of them) past the tolerance the reference comparison allows.
fn magnifying_reads(k: &Kernel) -> ValueSet {
    let mut out = DenseSet::new();
    k.walk_ops(|_, op| match op.kind {
        OpKind::Cast { arg } => {
            out.insert(arg);
        }
        OpKind::MatMul { lhs, rhs, .. } => {
            out.extend([lhs, rhs]);
        }
        _ => {}
    });
    // A transpose hands its operand's values on unchanged: walk back through them.
    let mut transposes = Vec::new();
    k.walk_ops(|_, op| {
        if let (OpKind::Transpose { arg }, Some(&r)) = (&op.kind, op.results.first()) {
            transposes.push((*arg, r));
        }
    });
    // Each round adds at least one value or stops: at most one round per transpose.
    for _ in 0..=transposes.len() {
        let before = out.len();
        for &(arg, r) in &transposes {
            if out.contains(&r) {
                out.insert(arg);
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

fn rewrite_op(k: &mut Kernel, id: OpId, costs: &Costs, magnified: &ValueSet) -> bool {
    let Some(op) = k.ops.get(id) else {
        return false;
    };
    let Some(&result) = op.results.first() else {
        return false;
    };
    let Some(dtype) = k.values.get(result).map(|v| v.ty.dtype) else {
        return false;
    };
    if dtype == DType::I32 {
        // Integer division truncates: no reciprocal stands for it.
        return false;
    }
    let (expr, args) = match &op.kind {
        OpKind::Binary {
            op: BinaryOp::Div,
            lhs,
            rhs,
        } => as_fused(k, *lhs, *rhs),
        OpKind::Fused { args, expr } => (expr.clone(), args.clone()),
        _ => return false,
    };
    let shapes: Vec<Vec<u64>> = args
        .iter()
        .map(|a| {
            k.values
                .get(*a)
                .map(|v| v.ty.shape.clone())
                .unwrap_or_default()
        })
        .collect();
    let rw = Rewriter {
        shapes: &shapes,
        costs,
        broadcast: dtype == DType::F32 && !magnified.contains(&result),
        f32: dtype == DType::F32,
    };
    let mut new = rw.expr(&expr);
    if new.node_count() > MAX_FUSED_NODES {
        // Keep the fused size bound: only the exact rewrites, which add no node.
        new = Rewriter {
            broadcast: false,
            ..rw
        }
        .expr(&expr);
    }
    if new == expr {
        return false;
    }
    if let Some(op) = k.ops.get_mut(id) {
        op.kind = OpKind::Fused { args, expr: new };
    }
    true
}

/// A plain division as a fused expression, a rank-0 constant operand inlined.
fn as_fused(k: &Kernel, lhs: ValueId, rhs: ValueId) -> (FusedExpr, Vec<ValueId>) {
    let mut args = Vec::new();
    let mut leaf = |v: ValueId| match scalar_constant(k, v) {
        Some(c) => FusedExpr::Const(c),
        None => {
            let i = args.iter().position(|&a| a == v).unwrap_or_else(|| {
                args.push(v);
                args.len() - 1
            });
            FusedExpr::Arg(i as u32)
        }
    };
    let (a, b) = (leaf(lhs), leaf(rhs));
    (
        FusedExpr::Binary(BinaryOp::Div, Box::new(a), Box::new(b)),
        args,
    )
}

struct Rewriter<'a> {
    shapes: &'a [Vec<u64>],
    costs: &'a Costs,
    /// Whether the broadcast (inexact) rewrite is allowed for this op.
    broadcast: bool,
    /// The op computes in f32 (its intermediates are not rounded to a narrower type).
    f32: bool,
}

impl Rewriter<'_> {
    /// The expression is bounded by `MAX_FUSED_NODES` (fusion's cap), bounding recursion.
    fn expr(&self, e: &FusedExpr) -> FusedExpr {
        match e {
            FusedExpr::Arg(_) | FusedExpr::Const(_) => e.clone(),
            FusedExpr::Unary(op, a) => self.unary(*op, self.expr(a)),
            FusedExpr::Binary(BinaryOp::Div, a, b) => {
                let (na, nb) = (self.expr(a), self.expr(b));
                if let FusedExpr::Const(c) = nb {
                    if let Some(r) = exact_reciprocal(c) {
                        return mul(na, FusedExpr::Const(r));
                    }
                }
                if self.broadcast && self.reciprocal_pays(e, b) {
                    return mul(na, self.unary(UnaryOp::Recip, nb));
                }
                FusedExpr::Binary(BinaryOp::Div, Box::new(na), Box::new(nb))
            }
            FusedExpr::Binary(BinaryOp::Mul, a, b) => {
                let (na, nb) = (self.expr(a), self.expr(b));
                match (&na, &nb) {
                    (FusedExpr::Unary(UnaryOp::Sigmoid, x), y)
                    | (y, FusedExpr::Unary(UnaryOp::Sigmoid, x))
                        if self.f32 && **x == *y && !matches!(**x, FusedExpr::Const(_)) =>
                    {
                        FusedExpr::Unary(UnaryOp::Silu, x.clone())
                    }
                    _ => mul(na, nb),
                }
            }
            FusedExpr::Binary(op, a, b) => {
                FusedExpr::Binary(*op, Box::new(self.expr(a)), Box::new(self.expr(b)))
            }
        }
    }

    /// `op(a)`, with `recip(sqrt(x))` as `rsqrt(x)` in f32: the vector pipe's rsqrt is
    /// `1 / sqrt(x)` rounded at the same two points, so one instruction does both. (In
    /// f16/bf16 the square root would be rounded to the narrow type in between.)
    fn unary(&self, op: UnaryOp, a: FusedExpr) -> FusedExpr {
        match (op, a) {
            (UnaryOp::Recip, FusedExpr::Unary(UnaryOp::Sqrt, x)) if self.f32 => {
                FusedExpr::Unary(UnaryOp::Rsqrt, x)
            }
            (op, a) => FusedExpr::Unary(op, Box::new(a)),
        }
    }

    /// Whether `recip(divisor)` plus a multiply over `quotient`'s lanes costs the vector
    /// pipe fewer cycles than the division (f32 slope, the machine's factor and bias).
    fn reciprocal_pays(&self, quotient: &FusedExpr, divisor: &FusedExpr) -> bool {
        let lanes = |e: &FusedExpr| {
            let s = fused_shape(e, self.shapes);
            (!s.is_empty()).then(|| s.iter().product::<u64>())
        };
        // A scalar divisor has no tile to take the reciprocal of.
        let (Some(n), Some(d)) = (lanes(quotient), lanes(divisor)) else {
            return false;
        };
        let c = self.costs;
        let slope = c.vector_slope_f32;
        // Saturating: a machine file may hold any bias.
        let cycles = |lanes: u64, factor: f64| {
            ((slope * factor * lanes as f64).ceil() as u64).saturating_add(c.vector_bias)
        };
        let divide = cycles(n, c.transcendental_factor);
        // A square root already costs its instruction; its reciprocal folds into it.
        let sqrt = matches!(divisor, FusedExpr::Unary(UnaryOp::Sqrt, _)) && self.f32;
        let inverse = if sqrt {
            0
        } else {
            cycles(d, c.transcendental_factor)
        };
        let reciprocal = inverse.saturating_add(cycles(n, 1.0));
        reciprocal < divide
    }
}

fn mul(a: FusedExpr, b: FusedExpr) -> FusedExpr {
    FusedExpr::Binary(BinaryOp::Mul, Box::new(a), Box::new(b))
}
