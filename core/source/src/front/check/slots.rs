//! Explicit multi-buffers (`docs/language.md`, "Explicit multi-buffers"): the
//! declaration `let b = buffers(f32[16, 128], 2);`, slot writes `b[s] = e;` and slot
//! reads `b[s]`. A slot index is an index expression checked against the slot count
//! by its interval over the loops' ranges (as tensor indices are), so nothing past this
//! point range-checks it again; a read of a slot that no statement can have written yet
//! is an error.

use super::expr::Val;
use super::shape::Limit;
use super::{show, Binding, Checker};
use crate::diag::{Diagnostic, Span};
use crate::front::ast;
use crate::front::hir::{self, IndexExpr, IndexExprKind, LocalId, LoopEnd};

/// The slots of one `buffers` tile that statements before the current one may have
/// written: a bit per slot written at a constant index, and whether a write at an index
/// that varies (which may be any slot) came first.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Written {
    mask: u32,
    pub(super) any: bool,
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
        self.written.push((local, Written::default()));
        Some(hir::StmtKind::Buffers { local })
    }

    /// The `buffers` tile `name` names, with its slot count; an error for anything else.
    fn slot_local(&mut self, name: &ast::Ident) -> Option<(LocalId, u32)> {
        let id = match self.lookup(&name.name) {
            Some((Binding::Local(id), _)) => Some(id),
            Some((Binding::Poisoned, _)) => return None,
            Some((Binding::Loop(_), _)) => None,
            None => return self.unknown_name(&name.name, name.span),
        };
        match id.and_then(|id| Some((id, self.locals.get(id.0 as usize)?.slots?))) {
            Some(found) => Some(found),
            None => self.error(
                format!(
                    "`{}` is not a `buffers(...)` tile: only those have slots (to slice a tile, give each axis `:` or a range, as in `{0}[0 .. 1, :]`)",
                    name.name
                ),
                name.span,
            ),
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
        // By its interval over the loops' ranges, as tensor indices are checked.
        let (lo, hi) = self.interval(&ie);
        let outside = (lo < 0)
            .then_some(lo)
            .or((hi >= i128::from(slots)).then_some(hi))
            .filter(|_| !self.never_evaluated(&ie));
        if let Some(v) = outside {
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
        if let Some(&branch) = self.branches.last() {
            // Which slots hold a tile after the `if` would depend on the path.
            let d = Diagnostic::error(
                format!(
                    "a slot of `{}` is written inside an `if`: slots are written outside branches",
                    name.name
                ),
                name.span,
            )
            .with_label(branch, "this `if`");
            self.report(d);
            return None;
        }
        let unsure = self.loop_stack.iter().find_map(|&id| {
            let l = self.loops.get(id.0 as usize)?;
            let affine = matches!(l.end, LoopEnd::Affine { .. });
            (self.loop_has_tail(id) || affine).then(|| (l.var.clone(), affine))
        });
        if let Some((var, true)) = unsure {
            // Such a loop may run zero times on one entry and not on another: what its
            // slots hold after it would depend on the path.
            return self.error(
                format!(
                    "a slot of `{}` is written inside loop `{var}`, whose bounds depend on an outer loop: slots are written in loops with constant bounds for now",
                    name.name
                ),
                name.span,
            );
        }
        if let Some((var, _)) = unsure {
            // A tail masks lanes of the value; a slot holds whole tiles.
            return self.error(
                format!(
                    "a slot of `{}` is written inside loop `{var}`, which has a tail iteration: slots hold whole tiles",
                    name.name
                ),
                name.span,
            );
        }
        let (_, w) = self.written.iter_mut().find(|(l, _)| *l == local)?;
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
        let w = self
            .written
            .iter()
            .find(|(l, _)| *l == local)
            .map_or(Written::default(), |&(_, w)| w);
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

/// The slot a constant index names (in range: checked before).
fn const_value(e: &IndexExpr) -> Option<u32> {
    match &e.kind {
        IndexExprKind::Const(c) => u32::try_from(*c).ok().filter(|&s| s < 32),
        _ => None,
    }
}
