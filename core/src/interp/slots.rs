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
    /// The flat index of slot `slot` of `local` (all of them with `None`), after the
    /// range check, and the local's name.
    fn slot_cell(
        &self,
        local: LocalId,
        slot: Option<&IndexExpr>,
        span: Span,
    ) -> Result<(std::ops::Range<usize>, &str), Diagnostic> {
        let i = local.0 as usize;
        let (Some(l), Some(&base)) = (self.kernel.locals.get(i), self.slot_base.get(i)) else {
            return Err(super::value::internal("a slot of an unknown local", span));
        };
        let n = i64::from(l.slots.unwrap_or(0));
        let Some(slot) = slot else {
            return Ok((base..base + n as usize, &l.name));
        };
        let s = eval_index(slot, &self.vars, 0)?;
        if s < 0 || s >= n {
            return Err(Diagnostic::error(
                format!("slot {s} of `{}` is outside 0..{n}", l.name),
                span,
            ));
        }
        let at = base + s as usize;
        Ok((at..at + 1, &l.name))
    }

    /// `buffers`: no slot holds a value yet (again, in each iteration of a loop around).
    pub(super) fn declare_slots(&mut self, local: LocalId, span: Span) -> Result<(), Diagnostic> {
        let (cells, _) = self.slot_cell(local, None, span)?;
        for c in self.slots.get_mut(cells).unwrap_or_default() {
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
        let (cells, _) = self.slot_cell(local, Some(slot), span)?;
        if let Some(c) = self.slots.get_mut(cells.start) {
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
        let (cells, name) = self.slot_cell(local, Some(slot), span)?;
        match self.slots.get(cells.start) {
            Some(Some(t)) => Ok(t.clone()),
            _ => Err(Diagnostic::error(
                format!(
                    "slot {} of `{name}` is read before any statement writes it",
                    cells.start - self.slot_base.get(local.0 as usize).copied().unwrap_or(0)
                ),
                span,
            )),
        }
    }
}
