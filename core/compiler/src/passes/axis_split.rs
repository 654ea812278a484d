//! axis-split: a loop whose variable appears under `//` and `%` in transfer indices is
//! split into nested loops, one per mixed-radix digit, so that every DMA index is affine
//! in the loop variables. `for b in 0..32` used as `b // 8`, `(b // 2) % 4` and `b % 2`
//! has the radices 2 and 8 and becomes `for b0 in 0..4 { for b1 in 0..4 { for b2 in
//! 0..2 { .. } } }` with `b = b0 * 8 + b1 * 2 + b2`. The radices must form a divisibility
//! chain, the step must divide the smallest and the start and trip length must be
//! multiples of the largest. After the substitution every `e // c` and `e % c` whose
//! operand is `c * Q + R` with `R` provably in `0..c` becomes `Q` and `R`. Anything `//`
//! or `%` left afterwards cannot be linearised and is rejected with a diagnostic naming
//! the expression.

use super::{Context, Pass};
use crate::affine::Affine;
use crate::dense::DenseMap;
use crate::diag::Diagnostics;
use crate::ir::affine;
use crate::ir::rewrite::{replace_var, visit_exprs_from};
use crate::ir::{
    Block, BlockItem, ForOp, IndexExpr, Kernel, LoopEnd, LoopVar, LoopVarId, OpId, OpKind,
    ValueDef, VarMap,
};

pub struct AxisSplit;

impl Pass for AxisSplit {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "axis-split"
    }

    fn description(&self) -> &'static str {
        "split loop axes into mixed-radix digits so that `//` and `%` in transfer indices become affine"
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
        let ranges = var_ranges(k);
        let roots: Vec<OpId> = k.body.ops().collect();
        visit_exprs_from(k, roots, true, |e| simplify(e, &ranges));
        // What is still not affine is relayout's to copy or reject.
        Ok(())
    }
}

/// The radices of `var` in `e`: for a chain of `//` and `%` applied directly to the
/// variable, the place value each operation cuts at (`v // 2` cuts at 2, `(v // 2) % 4`
/// at 2 and 8, `v % 8` at 8).
fn radices(e: &IndexExpr, var: LoopVarId, out: &mut Vec<i64>) {
    if let Some(cuts) = digit_cuts(e, var) {
        out.extend(cuts);
        return;
    }
    match e {
        IndexExpr::FloorDiv(a, _) | IndexExpr::Mod(a, _) => radices(a, var, out),
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
            radices(a, var, out);
            radices(b, var, out);
        }
        IndexExpr::Const(_) | IndexExpr::Var(_) => {}
    }
}

/// For `e` a non-empty chain of `//` and `%` by positive constants over `Var(var)`, the
/// place values it cuts at; `None` otherwise. `walk` returns the place value of the
/// lowest digit the chain so far keeps.
fn digit_cuts(e: &IndexExpr, var: LoopVarId) -> Option<Vec<i64>> {
    fn walk(e: &IndexExpr, var: LoopVarId, cuts: &mut Vec<i64>) -> Option<i64> {
        match e {
            IndexExpr::Var(v) if *v == var => Some(1),
            IndexExpr::FloorDiv(a, c) if *c > 0 => {
                let unit = walk(a, var, cuts)?.checked_mul(*c)?;
                cuts.push(unit);
                Some(unit)
            }
            IndexExpr::Mod(a, c) if *c > 0 => {
                let unit = walk(a, var, cuts)?;
                cuts.push(unit.checked_mul(*c)?);
                Some(unit)
            }
            _ => None,
        }
    }
    let mut cuts = Vec::new();
    walk(e, var, &mut cuts)?;
    (!cuts.is_empty()).then_some(cuts)
}

/// Splits loop `id` on the radices its variable is used with, when they form a chain
/// `c1 | c2 | .. | cn` that the iteration space factors by: step divides `c1`, start and
/// trip length are multiples of `cn`. The loop keeps its body, inner trip `c1 / step` and
/// step; `n` loops wrap it, the outermost first.
fn split_loop(k: &mut Kernel, id: OpId) {
    let Some(OpKind::For(l)) = k.ops.get(id).map(|o| o.kind.clone()) else {
        return;
    };
    // A loop variable occurs only in its loop's body: visiting just that keeps the
    // pass linear in a kernel of many loops.
    let body: Vec<OpId> = l.body.ops().collect();
    let mut found = Vec::new();
    // Slot indices follow the loops as they are; only transfer and value indices ask
    // for a split.
    let mut exprs = Vec::new();
    visit_exprs_from(k, body.clone(), false, |e| exprs.push(e.clone()));
    for e in &exprs {
        radices(e, l.var, &mut found);
    }
    // A cut at 1 (`v % 1`, `v // 1`) is no digit boundary.
    found.retain(|&c| c > 1);
    found.sort_unstable();
    found.dedup();
    let radices = found;
    let (Some(&first), Some(&last)) = (radices.first(), radices.last()) else {
        return;
    };
    let chain = radices.windows(2).all(|w| w[1] % w[0] == 0);
    // A loop whose end depends on an outer loop keeps its one variable.
    let Some(end) = l.end.as_const() else {
        return;
    };
    let length = end - l.start;
    if !chain
        || l.step <= 0
        || first % l.step != 0
        || length <= 0
        || length % last != 0
        || l.start % last != 0
    {
        return;
    }
    let span = k.ops[id].span;
    let name = k
        .loop_vars
        .get(l.var)
        .map_or_else(|| "v".to_string(), |v| v.name.clone());
    // Digit loops, outermost first: (variable, trip count, place value).
    let mut digits = Vec::new();
    let mut upper = length;
    for (i, &c) in radices.iter().rev().enumerate() {
        let var = k.loop_vars.push(LoopVar {
            name: format!("{name}{i}"),
            span,
            written: None,
        });
        digits.push((var, upper / c, c));
        upper = c;
    }
    let inner_var = k.loop_vars.push(LoopVar {
        name: format!("{name}{}", radices.len()),
        span,
        written: None,
    });
    let mut value = IndexExpr::Var(inner_var);
    for &(var, _, c) in digits.iter().rev() {
        value = IndexExpr::Add(
            Box::new(IndexExpr::Mul(
                Box::new(IndexExpr::Var(var)),
                Box::new(IndexExpr::Const(c)),
            )),
            Box::new(value),
        );
    }
    if l.start != 0 {
        value = IndexExpr::Add(Box::new(IndexExpr::Const(l.start)), Box::new(value));
    }
    visit_exprs_from(k, body, true, |e| replace_var(e, l.var, &value));
    if let OpKind::For(inner) = &mut k.ops[id].kind {
        inner.var = inner_var;
        inner.start = 0;
        inner.end = LoopEnd::Const(first);
    }
    let mut current = id;
    for &(var, trips, _) in digits.iter().rev() {
        current = wrap(k, current, var, trips);
    }
}

/// Wraps loop `inner` in `for var in 0..trips`, which carries the same values: its
/// arguments feed the inner loop's inits and the inner loop's results are its yields.
fn wrap(k: &mut Kernel, inner: OpId, var: LoopVarId, trips: i64) -> OpId {
    let Some(OpKind::For(l)) = k.ops.get(inner).map(|o| o.kind.clone()) else {
        return inner;
    };
    let span = k.ops[inner].span;
    let outer_id = k.ops.push(crate::ir::Op {
        kind: OpKind::Full { value: 0.0 },
        span,
        results: Vec::new(),
    });
    let mut outer_args = Vec::new();
    let mut outer_results = Vec::new();
    let inner_results = k.ops[inner].results.clone();
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
    if let OpKind::For(l) = &mut k.ops[inner].kind {
        l.inits = outer_args.clone();
    }
    k.ops[outer_id] = crate::ir::Op {
        kind: OpKind::For(ForOp {
            var,
            start: 0,
            end: LoopEnd::Const(trips),
            step: 1,
            buffers: None,
            inits: l.inits.clone(),
            args: outer_args,
            body: Block::from_ops([inner]),
            yields: inner_results,
        }),
        span,
        results: outer_results,
    };
    replace_in_parent(k, inner, outer_id);
    outer_id
}

/// The smallest and largest value of every loop variable.
fn var_ranges(k: &Kernel) -> VarMap<(i64, i64)> {
    let mut out = DenseMap::new();
    k.walk_ops(|_, op| {
        if let OpKind::For(l) = &op.kind {
            if let Some(range) = l.var_range() {
                out.insert(l.var, range);
            }
        }
    });
    out
}

/// `(a // c, a % c)` when the variable part of the remainder provably stays in `0..c`
/// over the variables' ranges.
fn div_mod(
    a: &Affine<LoopVarId>,
    c: i64,
    ranges: &VarMap<(i64, i64)>,
) -> Option<(Affine<LoopVarId>, Affine<LoopVarId>)> {
    if c <= 0 {
        return None;
    }
    let mut quotient = Affine::constant(a.constant.div_euclid(c));
    let mut rest = Affine::constant(a.constant.rem_euclid(c));
    let (mut lo, mut hi) = (rest.constant, rest.constant);
    for &(v, coef) in a.terms() {
        let (q, r) = (coef.div_euclid(c), coef.rem_euclid(c));
        quotient.add_term(v, q)?;
        if r != 0 {
            let &(vmin, vmax) = ranges.get(&v)?;
            let (x, y) = (r.checked_mul(vmin)?, r.checked_mul(vmax)?);
            lo = lo.checked_add(x.min(y))?;
            hi = hi.checked_add(x.max(y))?;
            rest.add_term(v, r)?;
        }
    }
    (lo >= 0 && hi < c).then_some((quotient, rest))
}

/// Replaces, innermost first, every `e // c` and `e % c` whose operand splits as
/// `c * Q + R` with `R` in `0..c` by `Q` and `R`.
fn simplify(e: &mut IndexExpr, ranges: &VarMap<(i64, i64)>) {
    let replacement = match e {
        IndexExpr::FloorDiv(a, _) | IndexExpr::Mod(a, _) => {
            simplify(a, ranges);
            let is_div = matches!(e, IndexExpr::FloorDiv(..));
            let (IndexExpr::FloorDiv(a, c) | IndexExpr::Mod(a, c)) = &*e else {
                return;
            };
            affine::of_index(a)
                .and_then(|f| div_mod(&f, *c, ranges))
                .map(|(q, r)| affine::to_index(if is_div { &q } else { &r }))
        }
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
            simplify(a, ranges);
            simplify(b, ranges);
            None
        }
        IndexExpr::Const(_) | IndexExpr::Var(_) => None,
    };
    if let Some(r) = replacement {
        *e = r;
    }
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
