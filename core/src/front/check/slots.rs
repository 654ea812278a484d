//! Explicit multi-buffers (`docs/language.md`, "Explicit multi-buffers"): the
//! declaration `let b = buffers(f32[16, 128], 2);`, slot writes `b[s] = e;` and slot
//! reads `b[s]`. A slot index is an index expression checked against the slot count
//! for every iteration of the loops around it, so nothing past this point range-checks
//! it again; a read of a slot that no statement can have written yet is an error.

use super::expr::Val;
use super::shape::Limit;
use super::{show, Binding, Checker};
use crate::diag::Span;
use crate::front::ast;
use crate::front::hir::{self, IndexExpr, IndexExprKind, LocalId, LoopId};
use crate::limits::MAX_SLOT_CHECK_EVALUATIONS;

/// The slots of one `buffers` tile that statements before the current one may have
/// written: a bit per slot written at a constant index, and whether a write at an index
/// that varies (which may be any slot) came first.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Written {
    mask: u32,
    any: bool,
}

impl Checker<'_> {
    /// `let name = buffers(TYPE, N);`
    pub(super) fn buffers_decl(
        &mut self,
        name: &ast::Ident,
        e: &ast::Expr,
    ) -> Option<hir::StmtKind> {
        let ast::ExprKind::Call { ty, args, axis, .. } = &e.kind else {
            return None;
        };
        let usage = "`buffers` takes a tile type and a slot count: `buffers(f32[16, 128], 2)`";
        let (Some(ty), [n], None) = (ty, args.as_slice(), axis) else {
            self.bind(name, Binding::Poisoned);
            return self.error(usage, e.span);
        };
        let ty = self.type_expr(ty, Limit::Tile);
        let slots = match self.const_expr(n) {
            Some(n @ 2..=16) => Some(n as u32),
            Some(k) => self.error(
                format!(
                    "`{}`: the number of slots must be 2 to 16, but it is {k}",
                    show::expr(e)
                ),
                n.span,
            ),
            None => None,
        };
        let (Some(ty), Some(slots)) = (ty, slots) else {
            self.bind(name, Binding::Poisoned);
            return None;
        };
        let local = LocalId(self.locals.len() as u32);
        self.locals.push(hir::Local {
            name: name.name.clone(),
            ty,
            span: name.span,
            slots: Some(slots),
        });
        self.bind(name, Binding::Local(local));
        self.written.insert(local, Written::default());
        Some(hir::StmtKind::Buffers { local })
    }

    /// The `buffers` tile `name` names, with its slot count; an error for anything else.
    fn slot_local(&mut self, name: &ast::Ident) -> Option<(LocalId, u32)> {
        match self.lookup(&name.name) {
            Some((Binding::Local(id), _)) => {
                match self.locals.get(id.0 as usize).and_then(|l| l.slots) {
                    Some(n) => Some((id, n)),
                    None => self.error(
                        format!(
                            "`{}` is a tile, not a `buffers(...)` tile: only those have slots",
                            name.name
                        ),
                        name.span,
                    ),
                }
            }
            Some((Binding::Poisoned, _)) => None,
            Some((Binding::Loop(_), _)) => self.error(
                format!(
                    "`{}` is a loop variable, not a `buffers(...)` tile",
                    name.name
                ),
                name.span,
            ),
            None => self.unknown_name(&name.name, name.span),
        }
    }

    /// A slot index of a tile with `slots` slots, in range for every iteration.
    fn slot_index(&mut self, name: &str, e: &ast::Expr, slots: u32) -> Option<IndexExpr> {
        if !self.is_index_expr(e) {
            return self.error(
                format!(
                    "a slot index is an integer expression of loop variables and constants, but `{}` is not",
                    show::expr(e)
                ),
                e.span,
            );
        }
        let ie = self.index_expr(e)?;
        if let Some(v) = self.slot_outside(&ie, slots) {
            let message = match ie.kind {
                IndexExprKind::Const(_) => format!("slot {v} of `{name}` is outside 0..{slots}"),
                _ => format!(
                    "slot index `{}` of `{name}` reaches {v}, outside 0..{slots}",
                    show::expr(e)
                ),
            };
            return self.error(message, e.span);
        }
        Some(ie)
    }

    /// A value of `e` outside `0..slots` in some iteration of the loops it names.
    /// Evaluated for every combination of those loops' variables when that is at most
    /// `MAX_SLOT_CHECK_EVALUATIONS` (in total per kernel), which proves the value it
    /// returns is reached; past that, the interval of `e`, which may over-approximate
    /// (the kernel is then rejected rather than left unchecked).
    fn slot_outside(&mut self, e: &IndexExpr, slots: u32) -> Option<i128> {
        let mut vars = Vec::new();
        collect_vars(e, &mut vars);
        let loops: Vec<(LoopId, i64, i64, u64)> = vars
            .iter()
            .filter_map(|&v| {
                let l = self.loops.get(v.0 as usize)?;
                Some((v, l.start, l.step, l.trip_count().max(1)))
            })
            .collect();
        let combos = loops
            .iter()
            .try_fold(1u64, |acc, l| acc.checked_mul(l.3))
            .filter(|&c| c <= MAX_SLOT_CHECK_EVALUATIONS.saturating_sub(self.slot_evaluations));
        let Some(combos) = combos else {
            let (lo, hi) = self.interval(e);
            return (lo < 0)
                .then_some(lo)
                .or((hi >= i128::from(slots)).then_some(hi));
        };
        self.slot_evaluations += combos;
        let mut counters = vec![0u64; loops.len()];
        for _ in 0..combos {
            let value = |v: LoopId| {
                let i = loops.iter().position(|l| l.0 == v)?;
                let (_, start, step, _) = loops[i];
                Some(i128::from(start) + i128::from(step) * i128::from(counters[i]))
            };
            let x = eval(e, &value)?;
            if x < 0 || x >= i128::from(slots) {
                return Some(x);
            }
            // The next combination, odometer style.
            for (c, l) in counters.iter_mut().zip(&loops) {
                *c += 1;
                if *c < l.3 {
                    break;
                }
                *c = 0;
            }
        }
        None
    }

    /// `name[slot] = value;`
    pub(super) fn slot_write(
        &mut self,
        name: &ast::Ident,
        slot: &ast::Expr,
        value_ast: &ast::Expr,
    ) -> Option<hir::StmtKind> {
        let target = self.slot_local(name);
        let index = target.and_then(|(_, n)| self.slot_index(&name.name, slot, n));
        let value = self.value(value_ast);
        let (local, _) = target?;
        let ty = self.locals.get(local.0 as usize)?.ty.clone();
        let value = match value? {
            Val::Tile(t) if t.ty == ty => t,
            Val::Tile(t) => {
                return self.error(
                    format!(
                        "a slot of `{}` holds {ty}, but the value has type {}",
                        name.name, t.ty
                    ),
                    t.span,
                )
            }
            Val::Lit(_) => {
                return self.error(
                    format!(
                        "a slot of `{}` holds {ty}, but the value is a number: use full(...)",
                        name.name
                    ),
                    value_ast.span,
                )
            }
        };
        let slot = index?;
        let tail = self.loop_stack.iter().find_map(|id| {
            let l = self.loops.get(id.0 as usize)?;
            l.has_tail().then(|| l.var.clone())
        });
        if let Some(var) = tail {
            // A tail masks lanes of the value; a slot holds whole tiles.
            return self.error(
                format!(
                    "a slot of `{}` is written inside loop `{var}`, which has a tail iteration: slots hold whole tiles",
                    name.name
                ),
                name.span,
            );
        }
        let w = self.written.entry(local).or_default();
        match const_value(&slot) {
            Some(s) => w.mask |= 1 << s,
            None => w.any = true,
        }
        Some(hir::StmtKind::SlotWrite { local, slot, value })
    }

    /// `name[slot]` in an expression.
    pub(super) fn slot_read(
        &mut self,
        name: &ast::Ident,
        slot: &ast::Expr,
        span: Span,
    ) -> Option<Val> {
        let (local, n) = self.slot_local(name)?;
        let slot = self.slot_index(&name.name, slot, n)?;
        let w = self.written.get(&local).copied().unwrap_or_default();
        let unwritten = match const_value(&slot) {
            Some(s) => !w.any && w.mask & (1 << s) == 0,
            None => !w.any && w.mask == 0,
        };
        if unwritten {
            let which = const_value(&slot).map_or("a slot".to_string(), |s| format!("slot {s}"));
            return self.error(
                format!(
                    "{which} of `{}` is read before any statement writes it",
                    name.name
                ),
                span,
            );
        }
        let ty = self.locals.get(local.0 as usize)?.ty.clone();
        Some(Val::Tile(hir::Expr {
            kind: hir::ExprKind::SlotRead { local, slot },
            ty,
            span,
        }))
    }

    /// Before a loop body is checked: the slots its statements write count as written
    /// for every read in it (a later statement may have written them in an earlier
    /// iteration), so a read is reported only where no iteration can have a write
    /// before it.
    pub(super) fn note_loop_writes(&mut self, body: &ast::Block) {
        let mut names = Vec::new();
        slot_writes(&body.stmts, &mut names, 0);
        for name in names {
            if let Some((Binding::Local(id), _)) = self.lookup(&name) {
                if let Some(w) = self.written.get_mut(&id) {
                    w.any = true;
                }
            }
        }
    }

    /// The error for a `buffers` tile used without a slot; `None` for any other name.
    pub(super) fn whole_slot_tile(&mut self, name: &str, span: Span, write: bool) -> Option<()> {
        let Some((Binding::Local(id), _)) = self.lookup(name) else {
            return None;
        };
        let n = self.locals.get(id.0 as usize)?.slots?;
        let how = if write {
            format!("write one with `{name}[slot] = ...`")
        } else {
            format!("read one with `{name}[slot]`")
        };
        self.error::<()>(format!("`{name}` is a tile with {n} slots: {how}"), span);
        Some(())
    }
}

/// The names written with `name[slot] = ...` anywhere in `stmts` (nested loops too).
fn slot_writes(stmts: &[ast::Stmt], out: &mut Vec<String>, depth: usize) {
    if depth > crate::limits::MAX_NESTING_DEPTH {
        return;
    }
    for s in stmts {
        match &s.kind {
            ast::StmtKind::SlotWrite { name, .. } => out.push(name.name.clone()),
            ast::StmtKind::For { body, .. } => slot_writes(&body.stmts, out, depth + 1),
            _ => {}
        }
    }
}

fn collect_vars(e: &IndexExpr, out: &mut Vec<LoopId>) {
    match &e.kind {
        IndexExprKind::Const(_) => {}
        IndexExprKind::Var(v) => {
            if !out.contains(v) {
                out.push(*v);
            }
        }
        IndexExprKind::Add(a, b) | IndexExprKind::Sub(a, b) | IndexExprKind::Mul(a, b) => {
            collect_vars(a, out);
            collect_vars(b, out);
        }
        IndexExprKind::FloorDiv(a, _) | IndexExprKind::Mod(a, _) => collect_vars(a, out),
    }
}

/// The value of `e` with each loop variable given by `var`; `None` on an unknown
/// variable or a zero divisor (which the checker already rejected).
fn eval(e: &IndexExpr, var: &dyn Fn(LoopId) -> Option<i128>) -> Option<i128> {
    Some(match &e.kind {
        IndexExprKind::Const(c) => i128::from(*c),
        IndexExprKind::Var(v) => var(*v)?,
        IndexExprKind::Add(a, b) => eval(a, var)?.checked_add(eval(b, var)?)?,
        IndexExprKind::Sub(a, b) => eval(a, var)?.checked_sub(eval(b, var)?)?,
        IndexExprKind::Mul(a, b) => eval(a, var)?.checked_mul(eval(b, var)?)?,
        IndexExprKind::FloorDiv(a, d) if *d > 0 => eval(a, var)?.div_euclid(i128::from(*d)),
        IndexExprKind::Mod(a, d) if *d > 0 => eval(a, var)?.rem_euclid(i128::from(*d)),
        _ => return None,
    })
}

/// The slot a constant index names (in range: checked before).
fn const_value(e: &IndexExpr) -> Option<u32> {
    match &e.kind {
        IndexExprKind::Const(c) => u32::try_from(*c).ok().filter(|&s| s < 32),
        _ => None,
    }
}
