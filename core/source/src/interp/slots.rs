//! `buffers(...)` tiles: each is `slots` tiles, written and read one slot at a time,
//! kept in one flat list (`Machine::slots`, from `Machine::slot_base`). The checker
//! proved every slot index in range; the interpreter checks again, and a read of a slot
//! no statement wrote is an error naming the read (it has no value).

use super::{eval_index, Machine, Tile};
use crate::diag::{Diagnostic, Span};
use crate::front::hir::{IndexExpr, LocalId};

/// Where each local's slots start in the flat list, and the list's length.
pub(super) fn layout(kernel: &crate::front::hir::Kernel) -> (Vec<usize>, usize) {
    let mut next = 0;
    let base = kernel
        .locals
        .iter()
        .map(|l| {
            let at = next;
            next += l.slots.unwrap_or(0) as usize;
            at
        })
        .collect();
    (base, next)
}

impl Machine<'_> {
    /// Where the slots of `local` start in the flat list, their count and the local's
    /// name.
    fn slots_of(&self, local: LocalId, span: Span) -> Result<(usize, i64, &str), Diagnostic> {
        let i = local.0 as usize;
        match (self.kernel.locals.get(i), self.slot_base.get(i)) {
            (Some(l), Some(&base)) => Ok((base, i64::from(l.slots.unwrap_or(0)), &l.name)),
            _ => Err(super::value::internal("a slot of an unknown local", span)),
        }
    }

    /// The flat index of the slot `slot` names and that slot, after the range check.
    fn slot_cell(
        &self,
        local: LocalId,
        slot: &IndexExpr,
        span: Span,
    ) -> Result<(usize, i64), Diagnostic> {
        let (base, n, name) = self.slots_of(local, span)?;
        let s = eval_index(slot, &self.vars, 0)?;
        if s < 0 || s >= n {
            return Err(Diagnostic::error(
                format!("slot {s} of `{name}` is outside 0..{n}"),
                span,
            ));
        }
        Ok((base + s as usize, s))
    }

    /// `buffers`: no slot holds a value yet (again, in each iteration of a loop around).
    pub(super) fn declare_slots(&mut self, local: LocalId, span: Span) -> Result<(), Diagnostic> {
        let (base, n, _) = self.slots_of(local, span)?;
        for c in self.slots.iter_mut().skip(base).take(n as usize) {
            *c = None;
        }
        Ok(())
    }

    pub(super) fn write_slot(
        &mut self,
        local: LocalId,
        slot: &IndexExpr,
        value: Tile,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let (at, _) = self.slot_cell(local, slot, span)?;
        if let Some(c) = self.slots.get_mut(at) {
            *c = Some(value);
        }
        Ok(())
    }

    pub(super) fn read_slot(
        &self,
        local: LocalId,
        slot: &IndexExpr,
        span: Span,
    ) -> Result<Tile, Diagnostic> {
        let (at, s) = self.slot_cell(local, slot, span)?;
        match self.slots.get(at) {
            Some(Some(t)) => Ok(t.clone()),
            _ => {
                let (_, _, name) = self.slots_of(local, span)?;
                Err(Diagnostic::error(
                    format!("slot {s} of `{name}` is read before any statement writes it"),
                    span,
                ))
            }
        }
    }
}
