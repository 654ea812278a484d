//! `buffers(...)` tiles: each is `slots` tiles, written and read one slot at a time.
//! The checker proved every slot index in range; the interpreter checks again, and a
//! read of a slot no statement wrote is an error naming the read (it has no value).

use super::value::internal;
use super::{eval_index, Machine, Tile};
use crate::diag::{Diagnostic, Span};
use crate::front::hir::{IndexExpr, LocalId};

impl Machine<'_> {
    /// The slot `slot` names of the `buffers` tile `local`, after the range check.
    fn slot_of(&self, local: LocalId, slot: &IndexExpr, span: Span) -> Result<usize, Diagnostic> {
        let l = self
            .kernel
            .locals
            .get(local.0 as usize)
            .ok_or_else(|| internal("unknown local", span))?;
        let n = l
            .slots
            .ok_or_else(|| internal("a slot of a tile without slots", span))?;
        let s = eval_index(slot, &self.vars, 0)?;
        if s < 0 || s >= i64::from(n) {
            return Err(Diagnostic::error(
                format!("slot {s} of `{}` is outside 0..{n}", l.name),
                span,
            ));
        }
        Ok(s as usize)
    }

    pub(super) fn declare_slots(&mut self, local: LocalId, span: Span) -> Result<(), Diagnostic> {
        let n = self
            .kernel
            .locals
            .get(local.0 as usize)
            .and_then(|l| l.slots)
            .ok_or_else(|| internal("`buffers` of a tile without slots", span))?;
        let slots = self
            .slots
            .get_mut(local.0 as usize)
            .ok_or_else(|| internal("unknown local", span))?;
        *slots = vec![None; n as usize];
        Ok(())
    }

    pub(super) fn write_slot(
        &mut self,
        local: LocalId,
        slot: &IndexExpr,
        value: Tile,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let s = self.slot_of(local, slot, span)?;
        let cell = self
            .slots
            .get_mut(local.0 as usize)
            .and_then(|v| v.get_mut(s))
            .ok_or_else(|| internal("a slot write before `buffers`", span))?;
        *cell = Some(value);
        Ok(())
    }

    pub(super) fn read_slot(
        &self,
        local: LocalId,
        slot: &IndexExpr,
        span: Span,
    ) -> Result<Tile, Diagnostic> {
        let s = self.slot_of(local, slot, span)?;
        let name = self
            .kernel
            .locals
            .get(local.0 as usize)
            .map_or("?", |l| l.name.as_str());
        self.slots
            .get(local.0 as usize)
            .and_then(|v| v.get(s))
            .and_then(Option::as_ref)
            .cloned()
            .ok_or_else(|| {
                Diagnostic::error(
                    format!("slot {s} of `{name}` is read before any statement writes it"),
                    span,
                )
            })
    }
}
