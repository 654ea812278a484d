//! Lowering of the checked kernel to the tile IR. Every hir expression becomes one op
//! (temporaries unnamed, `let` results named after the local); locals become SSA values
//! through an environment; a loop whose body updates locals defined outside it gets one
//! loop-carried value per such local (block argument, yield, result).

use super::{
    Block, ForOp, Index, IndexExpr, Kernel, LoopEnd, LoopVar, LoopVarId, OpId, OpKind, Param,
    ValueDef, ValueId,
};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::front::hir::{self, Cond};

/// Nesting deeper than this (expressions or loops) is an error rather than a stack
/// overflow. The front end limits nesting already; this guards lowering on its own.
const MAX_DEPTH: usize = 200;

pub fn lower(k: &hir::Kernel) -> Result<Kernel, Diagnostics> {
    let mut cx = Lower {
        hir: k,
        out: Kernel {
            name: k.name.clone(),
            span: k.span,
            params: k
                .params
                .iter()
                .map(|p| Param {
                    name: p.name.clone(),
                    ty: p.ty.clone(),
                    is_out: p.is_out,
                    scratch: false,
                    span: p.span,
                })
                .collect(),
            ..Kernel::default()
        },
        env: vec![None; k.locals.len()],
        vars: vec![None; k.loops.len()],
    };
    let body = cx.block(&k.body, 0)?;
    cx.out.body = Block::from_ops(body);
    Ok(cx.out)
}

/// A loop's header, for [`Lower::region`].
struct Head {
    var: LoopVarId,
    start: i64,
    end: LoopEnd,
    step: i64,
    buffers: Option<u32>,
}

struct Lower<'a> {
    hir: &'a hir::Kernel,
    out: Kernel,
    /// The SSA value each local currently holds.
    env: Vec<Option<ValueId>>,
    vars: Vec<Option<LoopVarId>>,
}

fn internal(message: impl Into<String>, span: Span) -> Diagnostics {
    vec![Diagnostic::error(
        format!("internal error in lowering: {}", message.into()),
        span,
    )]
}

impl Lower<'_> {
    fn local_name(&self, id: hir::LocalId) -> Option<String> {
        self.hir.locals.get(id.0 as usize).map(|l| l.name.clone())
    }

    fn local_value(&self, id: hir::LocalId, span: Span) -> Result<ValueId, Diagnostics> {
        self.env
            .get(id.0 as usize)
            .copied()
            .flatten()
            .ok_or_else(|| internal(format!("local {} used before its definition", id.0), span))
    }

    fn set_local(&mut self, id: hir::LocalId, v: ValueId, span: Span) -> Result<(), Diagnostics> {
        let slot = self
            .env
            .get_mut(id.0 as usize)
            .ok_or_else(|| internal("unknown local", span))?;
        *slot = Some(v);
        Ok(())
    }

    fn block(&mut self, stmts: &[hir::Stmt], depth: usize) -> Result<Vec<OpId>, Diagnostics> {
        let mut ops = Vec::new();
        for s in stmts {
            self.stmt(s, depth, &mut ops)?;
        }
        Ok(ops)
    }

    fn stmt(
        &mut self,
        s: &hir::Stmt,
        depth: usize,
        ops: &mut Vec<OpId>,
    ) -> Result<(), Diagnostics> {
        match &s.kind {
            hir::StmtKind::Let { local, value } => {
                let v = self.expr(value, depth, ops)?;
                // The let names the value it binds; a bare `let a = b;` renames nothing.
                let name = self.local_name(*local);
                if let Some(val) = self.out.values.get_mut(v) {
                    if val.name.is_none() {
                        val.name = name;
                    }
                }
                self.set_local(*local, v, s.span)
            }
            hir::StmtKind::Update { local, op, value } => {
                let old = self.local_value(*local, s.span)?;
                let value = self.expr(value, depth, ops)?;
                let ty = self.out.values[old].ty.clone();
                let kind = OpKind::Update {
                    op: *op,
                    old,
                    value,
                };
                let (id, v) = self.out.add_op(kind, s.span, ty, self.local_name(*local));
                ops.push(id);
                self.set_local(*local, v, s.span)
            }
            hir::StmtKind::Store {
                param,
                index,
                value,
                accumulate,
            } => {
                let source_index = source_index(index);
                let index = self.flat_gather(*param, index);
                let index = self.index(&index, depth, ops)?;
                let value = self.expr(value, depth, ops)?;
                let kind = OpKind::Store {
                    param: param.0 as usize,
                    index,
                    value,
                    accumulate: *accumulate,
                };
                let id = self.out.add_effect(kind, s.span);
                self.out.annotations.source_index.insert(id, source_index);
                ops.push(id);
                Ok(())
            }
            hir::StmtKind::For { id, body } => self.for_loop(*id, body, s.span, depth, ops),
            hir::StmtKind::If {
                cond,
                text,
                then,
                els,
                joins,
            } => self.if_stmt((cond, text), then, els, joins, s.span, depth, ops),
            hir::StmtKind::Buffers { local } => {
                let l = self
                    .hir
                    .locals
                    .get(local.0 as usize)
                    .ok_or_else(|| internal("unknown local", s.span))?;
                let (ty, name, slots) = (l.ty.clone(), l.name.clone(), l.slots);
                let (id, v) = self.out.add_op(OpKind::Buffers, s.span, ty, Some(name));
                self.out.values[v].attrs.slots = slots;
                ops.push(id);
                self.set_local(*local, v, s.span)
            }
            hir::StmtKind::SlotWrite { local, slot, value } => {
                let buf = self.local_value(*local, s.span)?;
                let value = self.expr(value, depth, ops)?;
                let slot = self.iexpr(slot, 0)?;
                let kind = OpKind::SlotWrite { buf, slot, value };
                ops.push(self.out.add_effect(kind, s.span));
                Ok(())
            }
        }
    }

    fn for_loop(
        &mut self,
        id: hir::LoopId,
        body: &[hir::Stmt],
        span: Span,
        depth: usize,
        ops: &mut Vec<OpId>,
    ) -> Result<(), Diagnostics> {
        nesting(depth, "loops are", span)?;
        let header = self
            .hir
            .loops
            .get(id.0 as usize)
            .ok_or_else(|| internal("unknown loop", span))?;
        let end = match &header.end {
            hir::LoopEnd::Const(c) => LoopEnd::Const(*c),
            hir::LoopEnd::Affine { expr, min, max } => LoopEnd::Affine {
                expr: self.iexpr(expr, depth)?,
                min: *min,
                max: *max,
            },
            hir::LoopEnd::Guard(_) => return Err(internal("a loop with a guard", span)),
        };
        let var = self.out.loop_vars.push(LoopVar {
            name: header.var.clone(),
            span: header.span,
            written: None,
        });
        *self
            .vars
            .get_mut(id.0 as usize)
            .ok_or_else(|| internal("unknown loop", span))? = Some(var);
        let head = Head {
            var,
            start: header.start,
            end,
            step: header.step,
            buffers: header.buffers,
        };
        self.region(head, body, &[], span, depth, ops)
    }

    /// `if`: the `then` branch as a region guarded by the condition and the `else`
    /// branch as one guarded by its negation (each a loop that runs once or not at
    /// all, `LoopEnd::Guard`). A name both branches define gets a zero placeholder
    /// before them, which each branch replaces (it is carried through both regions).
    #[allow(clippy::too_many_arguments)]
    fn if_stmt(
        &mut self,
        (cond, text): (&hir::Cond, &str),
        then: &[hir::Stmt],
        els: &[hir::Stmt],
        joins: &[hir::Join],
        span: Span,
        depth: usize,
        ops: &mut Vec<OpId>,
    ) -> Result<(), Diagnostics> {
        nesting(depth, "branches are", span)?;
        let cond = cond.try_map(&mut |e| self.iexpr(e, depth))?;
        for j in joins {
            let ty = self
                .hir
                .locals
                .get(j.local.0 as usize)
                .ok_or_else(|| internal("unknown local", span))?
                .ty
                .clone();
            let kind = OpKind::Full { value: 0.0 };
            let (op, v) = self.out.add_op(kind, span, ty, self.local_name(j.local));
            ops.push(op);
            self.set_local(j.local, v, span)?;
        }
        let then_joins: Vec<_> = joins.iter().map(|j| (j.local, j.then)).collect();
        self.guard(
            (cond.clone(), text.to_string()),
            then,
            &then_joins,
            span,
            depth,
            ops,
        )?;
        if !els.is_empty() || !joins.is_empty() {
            let els_joins: Vec<_> = joins.iter().map(|j| (j.local, j.els)).collect();
            let not = (Cond::Not(Box::new(cond)), format!("!({text})"));
            self.guard(not, els, &els_joins, span, depth, ops)?;
        }
        Ok(())
    }

    /// One branch: a region that runs once when `cond` holds.
    fn guard(
        &mut self,
        (cond, text): (Cond<IndexExpr>, String),
        body: &[hir::Stmt],
        joined: &[(hir::LocalId, hir::LocalId)],
        span: Span,
        depth: usize,
        ops: &mut Vec<OpId>,
    ) -> Result<(), Diagnostics> {
        let var = self.out.loop_vars.push(LoopVar {
            name: "if".to_string(),
            span,
            written: Some(text),
        });
        let head = Head {
            var,
            start: 0,
            end: LoopEnd::Guard(cond),
            step: 1,
            buffers: None,
        };
        self.region(head, body, joined, span, depth, ops)
    }

    /// A `for` op with `head` around `body`. `joined` are (local, branch local) pairs:
    /// at the end of the body, `local` takes the branch local's value.
    fn region(
        &mut self,
        head: Head,
        body: &[hir::Stmt],
        joined: &[(hir::LocalId, hir::LocalId)],
        span: Span,
        depth: usize,
        ops: &mut Vec<OpId>,
    ) -> Result<(), Diagnostics> {
        // Locals defined outside and updated inside are carried, in id order so the
        // printed order is stable.
        let mut carried = Vec::new();
        updated_locals(body, &mut carried, 0);
        carried.extend(joined.iter().map(|&(local, _)| local));
        carried.sort_unstable();
        carried.dedup();
        carried.retain(|l| matches!(self.env.get(l.0 as usize), Some(Some(_))));
        let inits = carried
            .iter()
            .map(|&l| self.local_value(l, span))
            .collect::<Result<Vec<_>, _>>()?;

        let op = self.out.ops.push(super::Op {
            kind: OpKind::Full { value: 0.0 }, // replaced below once the body exists
            span,
            results: Vec::new(),
        });
        let saved = self.env.clone();
        let mut args = Vec::new();
        for (i, (&l, &init)) in carried.iter().zip(&inits).enumerate() {
            let ty = self.out.values[init].ty.clone();
            let a = self.out.add_value(
                ty,
                self.local_name(l),
                ValueDef::LoopArg {
                    op,
                    index: i as u32,
                },
            );
            self.set_local(l, a, span)?;
            args.push(a);
        }
        let body_ops = self.block(body, depth + 1)?;
        for &(local, from) in joined {
            let v = self.local_value(from, span)?;
            self.set_local(local, v, span)?;
        }
        let yields = carried
            .iter()
            .map(|&l| self.local_value(l, span))
            .collect::<Result<Vec<_>, _>>()?;
        self.env = saved;
        let mut results = Vec::new();
        for (i, (&l, &init)) in carried.iter().zip(&inits).enumerate() {
            let ty = self.out.values[init].ty.clone();
            let r = self.out.add_value(
                ty,
                self.local_name(l),
                ValueDef::Result {
                    op,
                    index: i as u32,
                },
            );
            self.set_local(l, r, span)?;
            results.push(r);
        }
        let o = &mut self.out.ops[op];
        o.kind = OpKind::For(ForOp {
            var: head.var,
            start: head.start,
            end: head.end,
            step: head.step,
            buffers: head.buffers,
            inits,
            args,
            body: Block::from_ops(body_ops),
            yields,
        });
        o.results = results;
        ops.push(op);
        Ok(())
    }

    fn index(
        &mut self,
        index: &[hir::Index],
        depth: usize,
        ops: &mut Vec<OpId>,
    ) -> Result<Vec<Index>, Diagnostics> {
        index
            .iter()
            .map(|ix| {
                Ok(match ix {
                    hir::Index::Full => Index::Full,
                    hir::Index::Range {
                        start,
                        len,
                        clamped,
                    } => Index::Range {
                        start: self.iexpr(start, 0)?,
                        len: *len,
                        clamped: *clamped,
                    },
                    hir::Index::Strided { start, len, step } => Index::Strided {
                        start: self.iexpr(start, 0)?,
                        len: *len,
                        step: *step,
                    },
                    hir::Index::Single(e) => Index::Single(self.iexpr(e, 0)?),
                    hir::Index::Indirect(e) => Index::Indirect(self.expr(e, depth + 1, ops)?),
                })
            })
            .collect()
    }

    /// Index tiles on several adjacent axes (numpy's `x[i, j]`, loaded or stored) as one
    /// index tile on the last of them, `(i * J + j)` for axes of extents `I, J`, and position 0 on the
    /// others: row-major, position `i * J + j` along the last axis is element `(i, j)`,
    /// so the machine's gather of one axis picks each element. (Past the last axis's
    /// extent on purpose: the tensor continues there. The reference checks each index
    /// against its own axis.)
    fn flat_gather(&self, param: hir::ParamId, index: &[hir::Index]) -> Vec<hir::Index> {
        let gathered: Vec<usize> = (0..index.len())
            .filter(|&a| matches!(index[a], hir::Index::Indirect(_)))
            .collect();
        let extents = self.hir.params.get(param.0 as usize).map(|p| &p.ty.shape);
        let (Some(extents), [first, .., last]) = (extents, gathered.as_slice()) else {
            return index.to_vec();
        };
        let mut flat: Option<hir::Expr> = None;
        let mut out = index.to_vec();
        for a in *first..=*last {
            let hir::Index::Indirect(e) = &index[a] else {
                return index.to_vec();
            };
            let (ty, span) = (e.ty.clone(), e.span);
            flat = Some(match flat {
                None => (**e).clone(),
                Some(acc) => {
                    let extent = extents.get(a).copied().unwrap_or(1) as f64;
                    let scale = hir::Expr {
                        kind: hir::ExprKind::Scalar(extent),
                        ty: crate::types::TileType::scalar(ty.dtype),
                        span,
                    };
                    let scaled = hir::Expr {
                        kind: hir::ExprKind::Binary {
                            op: hir::BinaryOp::Mul,
                            lhs: Box::new(acc),
                            rhs: Box::new(scale),
                        },
                        ty: ty.clone(),
                        span,
                    };
                    hir::Expr {
                        kind: hir::ExprKind::Binary {
                            op: hir::BinaryOp::Add,
                            lhs: Box::new(scaled),
                            rhs: e.clone(),
                        },
                        ty,
                        span,
                    }
                }
            });
            let zero = hir::IndexExpr {
                kind: hir::IndexExprKind::Const(0),
                span,
            };
            out[a] = hir::Index::Single(zero);
        }
        if let Some(flat) = flat {
            out[*last] = hir::Index::Indirect(Box::new(flat));
        }
        out
    }

    fn iexpr(&self, e: &hir::IndexExpr, depth: usize) -> Result<IndexExpr, Diagnostics> {
        nesting(depth, "index expression is", e.span)?;
        let sub = |x: &hir::IndexExpr| self.iexpr(x, depth + 1).map(Box::new);
        Ok(match &e.kind {
            hir::IndexExprKind::Const(c) => IndexExpr::Const(*c),
            hir::IndexExprKind::Var(l) => IndexExpr::Var(
                self.vars
                    .get(l.0 as usize)
                    .copied()
                    .flatten()
                    .ok_or_else(|| internal("loop variable used outside its loop", e.span))?,
            ),
            hir::IndexExprKind::Add(a, b) => IndexExpr::Add(sub(a)?, sub(b)?),
            hir::IndexExprKind::Sub(a, b) => IndexExpr::Sub(sub(a)?, sub(b)?),
            hir::IndexExprKind::Mul(a, b) => IndexExpr::Mul(sub(a)?, sub(b)?),
            hir::IndexExprKind::FloorDiv(a, d) => IndexExpr::FloorDiv(sub(a)?, *d),
            hir::IndexExprKind::Mod(a, d) => IndexExpr::Mod(sub(a)?, *d),
        })
    }

    fn expr(
        &mut self,
        e: &hir::Expr,
        depth: usize,
        ops: &mut Vec<OpId>,
    ) -> Result<ValueId, Diagnostics> {
        nesting(depth, "expression is", e.span)?;
        let d = depth + 1;
        let kind = match &e.kind {
            hir::ExprKind::Local(l) => return self.local_value(*l, e.span),
            hir::ExprKind::Scalar(v) | hir::ExprKind::Full { value: v } => {
                OpKind::Full { value: *v }
            }
            hir::ExprKind::IndexValue(ix) => OpKind::IndexValue {
                expr: self.iexpr(ix, 0)?,
            },
            hir::ExprKind::SlotRead { local, slot } => OpKind::SlotRead {
                buf: self.local_value(*local, e.span)?,
                slot: self.iexpr(slot, 0)?,
            },
            hir::ExprKind::Load { param, index, pad } => {
                let index = self.flat_gather(*param, index);
                OpKind::Load {
                    param: param.0 as usize,
                    index: self.index(&index, d, ops)?,
                    pad: *pad,
                }
            }
            hir::ExprKind::Unary { op, arg } => OpKind::Unary {
                op: *op,
                arg: self.expr(arg, d, ops)?,
            },
            hir::ExprKind::Binary { op, lhs, rhs } => {
                let lhs = self.expr(lhs, d, ops)?;
                OpKind::Binary {
                    op: *op,
                    lhs,
                    rhs: self.expr(rhs, d, ops)?,
                }
            }
            hir::ExprKind::Reduce { op, arg, axis } => OpKind::Reduce {
                op: *op,
                arg: self.expr(arg, d, ops)?,
                axis: *axis,
            },
            hir::ExprKind::MatMul { lhs, rhs } => {
                let lhs = self.expr(lhs, d, ops)?;
                OpKind::MatMul {
                    lhs,
                    rhs: self.expr(rhs, d, ops)?,
                    acc: None,
                    acc_block: Vec::new(),
                }
            }
            hir::ExprKind::Transpose(a) => OpKind::Transpose {
                arg: self.expr(a, d, ops)?,
            },
            hir::ExprKind::Reshape(a) => OpKind::Reshape {
                arg: self.expr(a, d, ops)?,
            },
            hir::ExprKind::Slice { arg, index } => {
                let arg = self.expr(arg, d, ops)?;
                OpKind::Slice {
                    arg,
                    index: self.index(index, d, ops)?,
                    transpose: false,
                }
            }
            hir::ExprKind::Cast(a) => OpKind::Cast {
                arg: self.expr(a, d, ops)?,
            },
            hir::ExprKind::Compare { op, lhs, rhs } => {
                let lhs = self.expr(lhs, d, ops)?;
                OpKind::Compare {
                    op: *op,
                    lhs,
                    rhs: self.expr(rhs, d, ops)?,
                }
            }
            hir::ExprKind::Select {
                mask,
                on_true,
                on_false,
            } => {
                let mask = self.expr(mask, d, ops)?;
                let on_true = self.expr(on_true, d, ops)?;
                OpKind::Select {
                    mask,
                    on_true,
                    on_false: self.expr(on_false, d, ops)?,
                }
            }
            hir::ExprKind::Iota { axis } => OpKind::Iota { axis: *axis },
        };
        let (id, v) = self.out.add_op(kind, e.span, e.ty.clone(), None);
        if let hir::ExprKind::Load { index, .. } = &e.kind {
            self.out
                .annotations
                .source_index
                .insert(id, source_index(index));
        }
        ops.push(id);
        Ok(v)
    }
}

fn source_index(index: &[hir::Index]) -> Vec<Option<hir::IndexExpr>> {
    index
        .iter()
        .map(|ix| match ix {
            hir::Index::Range { start, .. }
            | hir::Index::Strided { start, .. }
            | hir::Index::Single(start) => Some(start.clone()),
            hir::Index::Full | hir::Index::Indirect(_) => None,
        })
        .collect()
}

/// Locals updated anywhere in `stmts`, including nested loops.
fn updated_locals(stmts: &[hir::Stmt], out: &mut Vec<hir::LocalId>, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    for s in stmts {
        match &s.kind {
            hir::StmtKind::Update { local, .. } => {
                out.push(*local);
            }
            hir::StmtKind::For { body, .. } => updated_locals(body, out, depth + 1),
            hir::StmtKind::If { then, els, .. } => {
                updated_locals(then, out, depth + 1);
                updated_locals(els, out, depth + 1);
            }
            _ => {}
        }
    }
}

/// A located error when `depth` reaches `MAX_DEPTH`: "`what` nested too deeply".
fn nesting(depth: usize, what: &str, span: Span) -> Result<(), Diagnostics> {
    if depth >= MAX_DEPTH {
        return Err(vec![Diagnostic::error(
            format!("{what} nested too deeply"),
            span,
        )]);
    }
    Ok(())
}
