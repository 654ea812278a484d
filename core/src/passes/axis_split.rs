//! axis-split: a loop whose variable appears as `v // c` and `v % c` in transfer indices
//! is split into two nested loops, `v0` over `v // c` and `v1` over `v % c`, so that
//! every DMA index is affine in the loop variables. Anything `//` or `%` left afterwards
//! cannot be linearised and is rejected with a diagnostic naming the expression.

use super::{Context, Pass};
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{
    Block, BlockItem, ForOp, Index, IndexExpr, Kernel, LoopVar, LoopVarId, OpId, OpKind, ValueDef,
};
use std::collections::BTreeSet;

pub struct AxisSplit;

impl Pass for AxisSplit {
    fn name(&self) -> &'static str {
        "axis-split"
    }

    fn description(&self) -> &'static str {
        "split loop axes so that `//` and `%` in transfer indices become affine per-axis indices"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let k = cx.ir_mut(self.name())?;
        let mut loops = Vec::new();
        k.walk_ops(|id, op| {
            if let OpKind::For(_) = op.kind {
                loops.push(id);
            }
        });
        for id in loops {
            split_loop(k, id);
        }
        check_affine(k)
    }
}

/// Every index expression of the ops under `roots`, mutably.
fn visit_exprs_from(k: &mut Kernel, roots: Vec<OpId>, mut f: impl FnMut(&mut IndexExpr)) {
    let mut ids = Vec::new();
    k.walk_ops_from(roots, |id, _| ids.push(id));
    for id in ids {
        match &mut k.ops[id].kind {
            OpKind::Load { index, .. } | OpKind::Store { index, .. } => {
                for ix in index {
                    match ix {
                        Index::Range { start, .. } | Index::Single(start) => f(start),
                        Index::Full | Index::Indirect(_) => {}
                    }
                }
            }
            OpKind::IndexValue { expr } => f(expr),
            _ => {}
        }
    }
}

/// The divisors `c` of `var // c` and `var % c`; `None` if the variable also appears
/// under `//` or `%` inside a larger expression (not splittable by this pass).
fn divisors(e: &IndexExpr, var: LoopVarId, out: &mut BTreeSet<i64>) {
    match e {
        IndexExpr::FloorDiv(a, c) | IndexExpr::Mod(a, c) => {
            if **a == IndexExpr::Var(var) {
                out.insert(*c);
            } else {
                divisors(a, var, out);
            }
        }
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
            divisors(a, var, out);
            divisors(b, var, out);
        }
        IndexExpr::Const(_) | IndexExpr::Var(_) => {}
    }
}

fn rewrite(e: &mut IndexExpr, var: LoopVarId, c: i64, outer: LoopVarId, inner: LoopVarId) {
    let replacement = match e {
        IndexExpr::FloorDiv(a, d) if **a == IndexExpr::Var(var) && *d == c => {
            Some(IndexExpr::Var(outer))
        }
        IndexExpr::Mod(a, d) if **a == IndexExpr::Var(var) && *d == c => {
            Some(IndexExpr::Var(inner))
        }
        IndexExpr::Var(v) if *v == var => Some(IndexExpr::Add(
            Box::new(IndexExpr::Mul(
                Box::new(IndexExpr::Var(outer)),
                Box::new(IndexExpr::Const(c)),
            )),
            Box::new(IndexExpr::Var(inner)),
        )),
        IndexExpr::FloorDiv(a, _) | IndexExpr::Mod(a, _) => {
            rewrite(a, var, c, outer, inner);
            None
        }
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
            rewrite(a, var, c, outer, inner);
            rewrite(b, var, c, outer, inner);
            None
        }
        IndexExpr::Const(_) | IndexExpr::Var(_) => None,
    };
    if let Some(r) = replacement {
        *e = r;
    }
}

/// Splits loop `id` when its variable is used with exactly one divisor that the
/// iteration space factors by: `for v in 0..end step s` with `c % s == 0` and
/// `end % c == 0` becomes `for v0 in 0..end/c { for v1 in 0..c step s { ... } }`.
fn split_loop(k: &mut Kernel, id: OpId) {
    let Some(OpKind::For(l)) = k.ops.get(id).map(|o| o.kind.clone()) else {
        return;
    };
    // A loop variable occurs only in its loop's body: visiting just that keeps the
    // pass linear in a kernel of many loops.
    let body: Vec<OpId> = l.body.ops().collect();
    let mut found = BTreeSet::new();
    let mut exprs = Vec::new();
    visit_exprs_from(k, body.clone(), |e| exprs.push(e.clone()));
    for e in &exprs {
        divisors(e, l.var, &mut found);
    }
    let [c] = found.into_iter().collect::<Vec<_>>()[..] else {
        return;
    };
    if l.start != 0 || l.step <= 0 || c % l.step != 0 || l.end % c != 0 || l.end <= 0 {
        return;
    }
    let span = k.ops[id].span;
    let name = k
        .loop_vars
        .get(l.var)
        .map_or_else(|| "v".to_string(), |v| v.name.clone());
    let outer_var = k.loop_vars.push(LoopVar {
        name: format!("{name}0"),
        span,
    });
    let inner_var = k.loop_vars.push(LoopVar {
        name: format!("{name}1"),
        span,
    });
    visit_exprs_from(k, body, |e| rewrite(e, l.var, c, outer_var, inner_var));
    // The outer loop carries the same values: its arguments feed the inner loop's
    // inits and the inner loop's results are its yields.
    let outer_id = k.ops.push(crate::ir::Op {
        kind: OpKind::Full { value: 0.0 },
        span,
        results: Vec::new(),
    });
    let mut outer_args = Vec::new();
    let mut outer_results = Vec::new();
    let inner_results = k.ops[id].results.clone();
    for (i, &arg) in l.args.iter().enumerate() {
        let ty = k.values[arg].ty.clone();
        let name = k.values[arg].name.clone();
        let index = i as u32;
        outer_args.push(k.add_value(
            ty.clone(),
            name.clone(),
            ValueDef::LoopArg {
                op: outer_id,
                index,
            },
        ));
        outer_results.push(k.add_value(
            ty,
            name,
            ValueDef::Result {
                op: outer_id,
                index,
            },
        ));
    }
    for (old, new) in inner_results.iter().zip(&outer_results) {
        k.replace_uses(*old, *new);
    }
    if let OpKind::For(inner) = &mut k.ops[id].kind {
        inner.var = inner_var;
        inner.end = c;
        inner.inits = outer_args.clone();
    }
    k.ops[outer_id] = crate::ir::Op {
        kind: OpKind::For(ForOp {
            var: outer_var,
            start: 0,
            end: l.end / c,
            step: 1,
            buffers: None,
            inits: l.inits.clone(),
            args: outer_args,
            body: Block::from_ops([id]),
            yields: inner_results,
        }),
        span,
        results: outer_results,
    };
    replace_in_parent(k, id, outer_id);
}

fn replace_in_parent(k: &mut Kernel, from: OpId, to: OpId) {
    let Some((path, _)) = k.blocks().into_iter().find(|(_, ops)| ops.contains(&from)) else {
        return;
    };
    if let Some(block) = k.block_mut(&path) {
        for item in &mut block.items {
            match item {
                BlockItem::Op(op) if *op == from => *op = to,
                BlockItem::Step(s) => s
                    .ops
                    .iter_mut()
                    .filter(|o| **o == from)
                    .for_each(|o| *o = to),
                _ => {}
            }
        }
    }
}

/// Source-like text of an index expression, for diagnostics.
pub fn expr_text(k: &Kernel, e: &IndexExpr) -> String {
    match e {
        IndexExpr::Const(c) => c.to_string(),
        IndexExpr::Var(v) => k.loop_vars.get(*v).map_or("?".into(), |v| v.name.clone()),
        IndexExpr::Add(a, b) => format!("({} + {})", expr_text(k, a), expr_text(k, b)),
        IndexExpr::Sub(a, b) => format!("({} - {})", expr_text(k, a), expr_text(k, b)),
        IndexExpr::Mul(a, b) => format!("{} * {}", factor(k, a), factor(k, b)),
        IndexExpr::FloorDiv(a, c) => format!("{} // {c}", factor(k, a)),
        IndexExpr::Mod(a, c) => format!("{} % {c}", factor(k, a)),
    }
}

/// An operand of `*`, `//` or `%`: parenthesised unless it is a name or a number.
fn factor(k: &Kernel, e: &IndexExpr) -> String {
    match e {
        IndexExpr::Const(_) | IndexExpr::Var(_) | IndexExpr::Add(..) | IndexExpr::Sub(..) => {
            expr_text(k, e)
        }
        _ => format!("({})", expr_text(k, e)),
    }
}

fn non_affine(e: &IndexExpr) -> Option<&IndexExpr> {
    match e {
        IndexExpr::FloorDiv(..) | IndexExpr::Mod(..) => Some(e),
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
            non_affine(a).or_else(|| non_affine(b))
        }
        IndexExpr::Const(_) | IndexExpr::Var(_) => None,
    }
}

fn check_affine(k: &Kernel) -> Result<(), Diagnostics> {
    let mut errors = Vec::new();
    k.walk_ops(|_, op| {
        let (OpKind::Load { index, .. } | OpKind::Store { index, .. }) = &op.kind else {
            return;
        };
        for ix in index {
            if let Index::Range { start: e, .. } | Index::Single(e) = ix {
                if let Some(bad) = non_affine(e) {
                    errors.push(
                        Diagnostic::error(
                            format!(
                                "cannot make the transfer index `{}` affine: `{}` does not split into loop axes",
                                expr_text(k, e),
                                expr_text(k, bad)
                            ),
                            op.span,
                        )
                        .with_note(
                            "axis-split handles `v // c` and `v % c` of a loop `for v in 0..N` with N a multiple of c",
                        ),
                    );
                }
            }
        }
    });
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
