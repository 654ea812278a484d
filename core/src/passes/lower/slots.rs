//! The slots of `buffers` tiles: where a member tile (`ir::slots`) lives, and the
//! copies into and out of a slot for a slot write or read that is not a member. A slot
//! index is computed on S at each access; the access records which slot it touches
//! in the form insert-sync reasons with (`lowered::Slot`).

use super::Lw;
use crate::affine::Affine;
use crate::ir::{IndexExpr, OpKind, ValueId};
use crate::isa::{AluOp, Val};
use crate::lowered::{LoopId, Slot};
use crate::passes::plan_memory::Liveness;

/// Each member tile's slot index.
pub(super) fn member_slots(
    k: &crate::ir::Kernel,
) -> Result<crate::ir::ValueMap<IndexExpr>, crate::diag::Diagnostic> {
    let live = Liveness::new(k)?;
    let members = crate::ir::slots::members(k, &live);
    let mut out = crate::dense::DenseMap::new();
    k.walk_ops(|_, op| {
        let (buf, slot, v) = match &op.kind {
            OpKind::SlotWrite { buf, slot, value } => (*buf, slot, *value),
            OpKind::SlotRead { buf, slot } => match op.results.first() {
                Some(&r) => (*buf, slot, r),
                None => return,
            },
            _ => return,
        };
        if members.get(&v) == Some(&buf) {
            out.insert(v, slot.clone());
        }
    });
    Ok(out)
}

impl Lw<'_> {
    /// The slot index `v` is accessed at: a member's, or the buffer's own while a slot
    /// copy is lowered.
    pub(super) fn slot_expr(&self, v: ValueId) -> Option<IndexExpr> {
        match &self.slot_copy {
            Some((b, e)) if *b == v => Some(e.clone()),
            _ => self.member_slot.get(&v).cloned(),
        }
    }

    /// `slot * slot bytes` for the slot index `e` of a slab of `bytes`-byte slots.
    pub(super) fn slot_offset(&mut self, e: &IndexExpr, bytes: u64) -> Val {
        let s = self.iexpr(e, 0);
        self.alu(AluOp::Mul, s, Val::Imm(bytes as i64))
    }

    /// Which of `slots` slots the index `e` names, as insert-sync compares them: a
    /// constant, or `(counter + offset) % slots` of one loop; `All` otherwise.
    pub(super) fn slot_kind(&self, e: &IndexExpr, slots: u32) -> Slot {
        let n = i64::from(slots.max(1));
        let (inner, modulo) = match e {
            IndexExpr::Mod(a, m) => (&**a, Some(*m)),
            _ => (e, None),
        };
        let Some(form) = self.counter_form(inner, 0) else {
            return Slot::All;
        };
        if modulo.is_some_and(|m| m != n) && form.as_const().is_none() {
            return Slot::All;
        }
        let wrap = |x: i64| match modulo {
            Some(m) => x.rem_euclid(m).rem_euclid(n),
            None => x.rem_euclid(n),
        };
        if let Some(c) = form.as_const() {
            return Slot::Fixed(wrap(c) as u32);
        }
        match form.terms() {
            [(l, k)] if k.rem_euclid(n) == 1 => Slot::Follows {
                loop_id: *l,
                offset: wrap(form.constant) as u32,
            },
            _ => Slot::All,
        }
    }

    /// `e` as an affine form in the counters of the enclosing lowered loops, where
    /// `//` divides exactly; `None` otherwise.
    fn counter_form(&self, e: &IndexExpr, depth: usize) -> Option<Affine<LoopId>> {
        if depth > crate::limits::MAX_NESTING_DEPTH {
            return None;
        }
        let sub = |x: &IndexExpr| self.counter_form(x, depth + 1);
        match e {
            IndexExpr::Const(c) => Some(Affine::constant(*c)),
            IndexExpr::Var(v) => {
                let &(l, start, step) = self.var_loop.get(v)?;
                let mut a = Affine::constant(start);
                a.add_term(l, step)?;
                Some(a)
            }
            IndexExpr::Add(a, b) => sub(a)?.add(sub(b)?, 1),
            IndexExpr::Sub(a, b) => sub(a)?.add(sub(b)?, -1),
            IndexExpr::Mul(a, b) => Affine::product(sub(a)?, sub(b)?),
            IndexExpr::FloorDiv(a, d) if *d > 0 => {
                let f = sub(a)?;
                let exact = f.constant % d == 0 && f.terms().iter().all(|(_, k)| k % d == 0);
                if !exact {
                    return None;
                }
                let mut out = Affine::constant(f.constant / d);
                for &(l, k) in f.terms() {
                    out.add_term(l, k / d)?;
                }
                Some(out)
            }
            IndexExpr::Mod(a, d) if *d > 0 => {
                Some(Affine::constant(sub(a)?.as_const()?.rem_euclid(*d)))
            }
            _ => None,
        }
    }
}
