//! relayout: a load whose index is still not affine after axis-split (a sum across
//! digits such as `(b + b // 4) % 4`, or radices that do not nest) reads a relaid-out
//! copy of its operand instead. This is PyTorchSim's graph-copy fallback: where an
//! index cannot be linearised, copy the data into a layout in which it can.
//!
//! The copy is a scratch tensor in GM holding, block after block of rows, the tile each
//! iteration of the loops in the index reads. A prologue fills it with one copy per
//! iteration, each at constant indices (so each is an affine transfer), and the load
//! reads block `i` of the scratch, `i` an affine function of the loop variables. The
//! prologue costs a GM -> UB -> GM round trip per iteration, so it is bounded by
//! [`MAX_RELAYOUT_COPIES`]; the operand must be read-only in the kernel and the load
//! free of tails. What relayout cannot take stays the affinity diagnostic, naming the
//! source variables.

use super::{axis_split, Context, Pass};
use crate::dense::DenseMap;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::front::hir;
use crate::ir::{
    BlockItem, Index, IndexExpr, Kernel, LoopVarId, OpId, OpKind, Param, ParamId, VarMap,
};
use crate::types::TileType;

/// Copies one relayout may put in the prologue: each is a load and a store in the IR
/// and in the program, so more would swamp both.
pub const MAX_RELAYOUT_COPIES: u64 = 64;

pub struct Relayout;

impl Pass for Relayout {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "relayout"
    }

    fn description(&self) -> &'static str {
        "copy an operand whose load index axis-split cannot make affine into a scratch tensor laid out in iteration order"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let source = std::mem::take(&mut cx.source);
        // Taken for the pass and put back whatever happens: the kernel is borrowed
        // from the same context.
        let result = cx
            .ir_mut(self.name())
            .and_then(|k| relayout_kernel(k, &source));
        cx.source = source;
        result
    }
}

fn relayout_kernel(k: &mut Kernel, source: &str) -> Result<(), Diagnostics> {
    let loops = loop_bounds(k);
    let mut todo = Vec::new();
    k.walk_ops(|id, op| {
        if let OpKind::Load { index, .. } = &op.kind {
            if index
                .iter()
                .any(|ix| start_expr(ix).is_some_and(|e| non_affine(e).is_some()))
            {
                todo.push(id);
            }
        }
    });
    let mut prologue = Vec::new();
    let mut errors = Vec::new();
    for id in todo {
        match relayout(k, id, &loops) {
            Ok(mut ops) => prologue.append(&mut ops),
            Err(why) => errors.push(not_affine(k, source, id, &why)),
        }
    }
    let items = prologue.into_iter().map(BlockItem::Op);
    k.body.items.splice(0..0, items);
    // Stores, and loads relayout could not take.
    k.walk_ops(|id, op| {
        if let OpKind::Store { index, .. } = &op.kind {
            if index
                .iter()
                .any(|ix| start_expr(ix).is_some_and(|e| non_affine(e).is_some()))
            {
                errors.push(not_affine(
                    k,
                    source,
                    id,
                    "relayout copies loads, not stores",
                ));
            }
        }
    });
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// `(start, end, step)` of the loop of each variable; for an end that depends on an
/// outer loop, the largest it takes (the scratch then covers every value).
fn loop_bounds(k: &Kernel) -> VarMap<(i64, i64, i64)> {
    let mut out = DenseMap::new();
    k.walk_ops(|_, op| {
        if let OpKind::For(l) = &op.kind {
            out.insert(l.var, (l.start, l.end.max(), l.step));
        }
    });
    out
}

fn start_expr(ix: &Index) -> Option<&IndexExpr> {
    match ix {
        Index::Range { start, .. } | Index::Strided { start, .. } | Index::Single(start) => {
            Some(start)
        }
        Index::Full | Index::Indirect(_) => None,
    }
}

/// The first `//` or `%` left in `e`.
fn non_affine(e: &IndexExpr) -> Option<&IndexExpr> {
    match e {
        IndexExpr::FloorDiv(..) | IndexExpr::Mod(..) => Some(e),
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
            non_affine(a).or_else(|| non_affine(b))
        }
        IndexExpr::Const(_) | IndexExpr::Var(_) => None,
    }
}

fn vars(e: &IndexExpr, out: &mut Vec<LoopVarId>) {
    match e {
        IndexExpr::Var(v) => {
            if !out.contains(v) {
                out.push(*v);
            }
        }
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
            vars(a, out);
            vars(b, out);
        }
        IndexExpr::FloorDiv(a, _) | IndexExpr::Mod(a, _) => vars(a, out),
        IndexExpr::Const(_) => {}
    }
}

/// The value of `e` with each variable at `at` (floor division and modulo by positive
/// constants, as the language defines them); `None` on overflow.
fn eval(e: &IndexExpr, at: &VarMap<i64>) -> Option<i64> {
    Some(match e {
        IndexExpr::Const(c) => *c,
        IndexExpr::Var(v) => *at.get(v)?,
        IndexExpr::Add(a, b) => eval(a, at)?.checked_add(eval(b, at)?)?,
        IndexExpr::Sub(a, b) => eval(a, at)?.checked_sub(eval(b, at)?)?,
        IndexExpr::Mul(a, b) => eval(a, at)?.checked_mul(eval(b, at)?)?,
        IndexExpr::FloorDiv(a, c) => eval(a, at)?.checked_div_euclid(*c)?,
        IndexExpr::Mod(a, c) => eval(a, at)?.checked_rem_euclid(*c)?,
    })
}

fn binary(
    f: fn(Box<IndexExpr>, Box<IndexExpr>) -> IndexExpr,
    a: IndexExpr,
    b: IndexExpr,
) -> IndexExpr {
    f(Box::new(a), Box::new(b))
}

/// Rewrites load `id` to read a scratch copy; returns the prologue's ops (a load and a
/// store per iteration), or why it cannot.
fn relayout(
    k: &mut Kernel,
    id: OpId,
    loops: &VarMap<(i64, i64, i64)>,
) -> Result<Vec<OpId>, String> {
    let op = &k.ops[id];
    let span = op.span;
    let OpKind::Load {
        param,
        index,
        pad: None,
    } = op.kind.clone()
    else {
        return Err("not a load, or a load with `pad` (relayout copies plain loads)".into());
    };
    let ty = op
        .results
        .first()
        .map(|v| k.values[*v].ty.clone())
        .ok_or("a load without a result")?;
    let operand = k
        .params
        .get(param)
        .ok_or("a load of an unknown tensor")?
        .clone();
    if crate::ir::analysis::stored_to(k, param) {
        return Err(format!(
            "relayout copies `{}` before the loops, but the kernel stores to it",
            operand.name
        ));
    }
    if index.iter().any(|ix| {
        matches!(
            ix,
            Index::Range { clamped: true, .. } | Index::Indirect(_) | Index::Strided { .. }
        )
    }) {
        return Err("relayout takes no tail ranges, strided ranges or indirect indices".into());
    }
    // The loops the index depends on, each with its (start, end, step); the scratch
    // has a block of rows for every value `end - start` of each (a step leaves gaps).
    let mut used = Vec::new();
    for e in index.iter().filter_map(start_expr) {
        vars(e, &mut used);
    }
    used.sort_by_key(|v| v.index());
    let bounds: Vec<(LoopVarId, (i64, i64, i64))> = used
        .iter()
        .map(|v| {
            loops
                .get(v)
                .map(|b| (*v, *b))
                .ok_or("a variable of no loop")
        })
        .collect::<Result<_, _>>()?;
    let mut copies: u64 = 1;
    let mut blocks: u64 = 1;
    for (_, (start, end, step)) in &bounds {
        let trips = if *step > 0 && end > start {
            (end - start + step - 1) / step
        } else {
            0
        };
        copies = copies.saturating_mul(trips as u64);
        blocks = blocks.saturating_mul(end.saturating_sub(*start).max(0) as u64);
    }
    if copies > MAX_RELAYOUT_COPIES {
        return Err(format!(
            "relayout would copy {copies} tiles, more than its limit of {MAX_RELAYOUT_COPIES}"
        ));
    }
    let rows = ty.shape.first().copied().ok_or("a scalar load")?;
    let mut shape = ty.shape.clone();
    shape[0] = rows.saturating_mul(blocks);
    let scratch_ty = TileType::new(ty.dtype, shape);
    if scratch_ty.elements() > crate::limits::MAX_TENSOR_ELEMENTS {
        return Err(format!("its scratch tensor {scratch_ty} is too large"));
    }
    let scratch = add_scratch(k, &operand, scratch_ty, span);

    // Block of iteration `vars`: sum of (v - start) times the product of the later
    // loops' spans, an affine expression.
    let mut block = IndexExpr::Const(0);
    let mut place = 1i64;
    for (v, (start, end, _)) in bounds.iter().rev() {
        let offset = binary(IndexExpr::Sub, IndexExpr::Var(*v), IndexExpr::Const(*start));
        let term = binary(IndexExpr::Mul, offset, IndexExpr::Const(place));
        block = binary(IndexExpr::Add, term, block);
        place = place.saturating_mul(end - start);
    }
    let scratch_index = |first: IndexExpr| {
        let mut ix = vec![Index::Range {
            start: first,
            len: rows,
            clamped: false,
        }];
        ix.extend((1..ty.shape.len()).map(|_| Index::Full));
        ix
    };
    let read = scratch_index(binary(
        IndexExpr::Mul,
        block.clone(),
        IndexExpr::Const(rows as i64),
    ));
    k.ops[id].kind = OpKind::Load {
        param: scratch,
        index: read,
        pad: None,
    };

    // The prologue: every iteration's tile, at constant indices.
    let mut ops = Vec::new();
    // The copies are named after the operand, so the IR reads `%x_copy`, `%x_copy.1`, ...
    let copy_name = Some(format!("{}_copy", operand.name));
    let mut at: VarMap<i64> = DenseMap::new();
    for (v, (start, ..)) in &bounds {
        at.insert(*v, *start);
    }
    for _ in 0..copies {
        let constant = |e: &IndexExpr| {
            eval(e, &at)
                .map(IndexExpr::Const)
                .ok_or("an index that overflows")
        };
        let from = index
            .iter()
            .map(|ix| {
                Ok(match ix {
                    Index::Range { start, len, .. } => Index::Range {
                        start: constant(start)?,
                        len: *len,
                        clamped: false,
                    },
                    Index::Single(e) => Index::Single(constant(e)?),
                    other => other.clone(),
                })
            })
            .collect::<Result<Vec<_>, &str>>()?;
        let to = scratch_index(constant(&binary(
            IndexExpr::Mul,
            block.clone(),
            IndexExpr::Const(rows as i64),
        ))?);
        let (load, tile) = k.add_op(
            OpKind::Load {
                param,
                index: from,
                pad: None,
            },
            span,
            ty.clone(),
            copy_name.clone(),
        );
        let store = k.add_effect(
            OpKind::Store {
                param: scratch,
                index: to,
                value: tile,
                accumulate: false,
            },
            span,
        );
        ops.extend([load, store]);
        // The next iteration, the last variable fastest.
        for (v, (start, end, step)) in bounds.iter().rev() {
            let now = at
                .get(v)
                .copied()
                .ok_or("internal error: relayout lost a loop counter")?;
            let next = now.checked_add(*step).ok_or("an index that overflows")?;
            if next < *end {
                at.insert(*v, next);
                break;
            }
            at.insert(*v, *start);
        }
    }
    Ok(ops)
}

/// A GM scratch tensor named after `operand` (`x_relayout`, `x_relayout2`, ...).
fn add_scratch(k: &mut Kernel, operand: &Param, ty: TileType, span: Span) -> ParamId {
    let taken = |name: &str| k.params.iter().any(|p| p.name == name);
    let mut name = format!("{}_relayout", operand.name);
    let mut n = 2;
    while taken(&name) {
        name = format!("{}_relayout{n}", operand.name);
        n += 1;
    }
    k.params.push(Param {
        name,
        ty,
        is_out: true,
        scratch: true,
        span,
    });
    k.params.len() - 1
}

/// The path (child positions) from `root` to the node `target` points at.
fn path_to(root: &IndexExpr, target: &IndexExpr) -> Option<Vec<usize>> {
    if std::ptr::eq(root, target) {
        return Some(Vec::new());
    }
    let children: Vec<&IndexExpr> = match root {
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => vec![a, b],
        IndexExpr::FloorDiv(a, _) | IndexExpr::Mod(a, _) => vec![a],
        IndexExpr::Const(_) | IndexExpr::Var(_) => Vec::new(),
    };
    children.into_iter().enumerate().find_map(|(i, c)| {
        let mut path = path_to(c, target)?;
        path.insert(0, i);
        Some(path)
    })
}

/// The source node at `path`, if the source has the same shape down to it (lowering
/// maps source index expressions to IR ones node for node; axis-split only replaces
/// the parts it made affine, below the node that stayed `//` or `%`).
fn source_at<'a>(
    e: &'a hir::IndexExpr,
    path: &[usize],
    want: &IndexExpr,
) -> Option<&'a hir::IndexExpr> {
    use hir::IndexExprKind as S;
    let Some((first, rest)) = path.split_first() else {
        let same = match (&e.kind, want) {
            (S::FloorDiv(_, a), IndexExpr::FloorDiv(_, b))
            | (S::Mod(_, a), IndexExpr::Mod(_, b)) => a == b,
            _ => false,
        };
        return same.then_some(e);
    };
    let child = match (&e.kind, first) {
        (S::Add(a, _) | S::Sub(a, _) | S::Mul(a, _) | S::FloorDiv(a, _) | S::Mod(a, _), 0) => a,
        (S::Add(_, b) | S::Sub(_, b) | S::Mul(_, b), 1) => b,
        _ => return None,
    };
    source_at(child, rest, want)
}

/// `span` without parentheses around the whole of it (a source node's span includes
/// them).
fn unparen(source: &str, mut span: Span) -> Span {
    loop {
        let Some(text) = source.get(span.start as usize..span.end as usize) else {
            return span;
        };
        let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
            return span;
        };
        // `(a) * (b)` starts and ends with parentheses that are not one pair.
        let mut depth = 0i32;
        for c in inner.chars() {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            if depth < 0 {
                return span;
            }
        }
        span = Span::new(span.start as usize + 1, span.end as usize - 1);
    }
}

/// The affinity error of load or store `id`: it quotes the index as written, with the
/// caret on the `//` or `%` that did not split (the whole access when the source of
/// the index is not known).
fn not_affine(k: &Kernel, source: &str, id: OpId, why: &str) -> Diagnostic {
    let op = &k.ops[id];
    let (OpKind::Load { index, .. } | OpKind::Store { index, .. }) = &op.kind else {
        return Diagnostic::error(why.to_string(), op.span);
    };
    // Lowering records the source index of every load and store it makes; an access a
    // pass made has none, and its message quotes the IR's index at the op's span
    // instead (located all the same, the caret just wider).
    let written: &[Option<hir::IndexExpr>] = k.annotations.source_index.get(&id).map_or(&[], |i| i);
    let text = |span: Span| {
        source
            .get(span.start as usize..span.end as usize)
            .unwrap_or("?")
            .to_string()
    };
    let bad = index.iter().enumerate().find_map(|(axis, ix)| {
        let e = start_expr(ix)?;
        Some((axis, e, non_affine(e)?))
    });
    let Some((axis, e, sub)) = bad else {
        return Diagnostic::error(why.to_string(), op.span);
    };
    let located = written.get(axis).and_then(Option::as_ref).and_then(|w| {
        let node = path_to(e, sub).and_then(|path| source_at(w, &path, sub))?;
        Some((w, node))
    });
    let (message, span) = match located {
        Some((whole, node)) => {
            let node = unparen(source, node.span);
            let message = format!(
                "cannot make the transfer index `{}` affine: `{}` does not split into loop axes, and {why}",
                text(unparen(source, whole.span)),
                text(node)
            );
            (message, node)
        }
        None => (
            format!(
                "cannot make the transfer index `{}` affine: `{}` does not split into loop axes, and {why}",
                axis_split::expr_text(k, e),
                axis_split::expr_text(k, sub)
            ),
            op.span,
        ),
    };
    Diagnostic::error(message, span).with_note(
        "axis-split handles chains of `//` and `%` by constants c1 | c2 | .. | cn on a loop `for v in s..e step t` with t dividing c1 and s and e - s multiples of cn; relayout copies other loads of read-only tensors",
    )
}
