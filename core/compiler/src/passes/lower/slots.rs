//! The slots of `buffers` tiles: where a member tile (`ir::slots`) lives, and the
//! copies into and out of a slot for a slot write or read that is not a member. A slot
//! index is computed on S at each access; the access records which slot it touches
//! in the form insert-sync reasons with (`lowered::Slot`).

use super::Lw;
use crate::ir::liveness::Liveness;
use crate::ir::{IndexExpr, OpId, OpKind, ValueId};
use crate::isa::{AluOp, Val};
use crate::lowered::{LoopId, Slot};

/// Each member tile's slot access (the `write` or `read` op, by index).
pub(super) fn member_slots(
    k: &crate::ir::Kernel,
) -> Result<crate::ir::ValueMap<usize>, crate::diag::Diagnostic> {
    let live = Liveness::new(k)?;
    let members = crate::ir::slots::members(k, &live);
    let mut out = crate::dense::DenseMap::new();
    k.walk_ops(|id, op| {
        let (buf, v) = match (&op.kind, op.results.first()) {
            (OpKind::SlotWrite { buf, value, .. }, _) => (*buf, *value),
            (OpKind::SlotRead { buf, .. }, Some(&r)) => (*buf, r),
            _ => return,
        };
        if members.get(&v) == Some(&buf) {
            out.insert(v, id.index());
        }
    });
    Ok(out)
}

impl<'a> Lw<'a> {
    /// The slot index `v` is accessed at: a member's, or the buffer's own while a slot
    /// copy is lowered.
    pub(super) fn slot_expr(&self, v: ValueId) -> Option<&'a IndexExpr> {
        let op = match self.slot_copy {
            Some((b, op)) if b == v => op,
            _ => OpId::from_index(*self.member_slot.get(&v)?),
        };
        let k: &'a crate::ir::Kernel = self.k;
        match &k.ops.get(op)?.kind {
            OpKind::SlotWrite { slot, .. } | OpKind::SlotRead { slot, .. } => Some(slot),
            _ => None,
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
        // A `% m` on top only wraps again when `m` is the slot count (or the rest is
        // constant).
        let (inner, modulo) = match e {
            IndexExpr::Mod(a, m) if *m > 0 => (&**a, *m),
            _ => (e, n),
        };
        match self.linear(inner, 0) {
            Some((c, None)) => Slot::Fixed(c.rem_euclid(modulo).rem_euclid(n) as u32),
            Some((c, Some((loop_id, k)))) if modulo == n && k.rem_euclid(n) == 1 => Slot::Follows {
                loop_id,
                offset: c.rem_euclid(n) as u32,
            },
            _ => Slot::All,
        }
    }

    /// `e` as `constant + coefficient * counter` of at most one enclosing lowered loop,
    /// where every `//` divides exactly; `None` otherwise.
    fn linear(&self, e: &IndexExpr, depth: usize) -> Option<(i64, Option<(LoopId, i64)>)> {
        if depth > crate::limits::MAX_NESTING_DEPTH {
            return None;
        }
        let sub = |x: &IndexExpr| self.linear(x, depth + 1);
        // Terms of one loop add up; two loops are not one counter.
        let join = |a: Option<(LoopId, i64)>, b: Option<(LoopId, i64)>, sign: i64| match (a, b) {
            (t, None) => Some(t),
            (None, Some((l, k))) => Some(Some((l, k.checked_mul(sign)?))),
            (Some((l, k)), Some((m, j))) if l == m => {
                Some(Some((l, k.checked_add(j.checked_mul(sign)?)?)))
            }
            _ => None,
        };
        let scale = |(c, t): (i64, Option<(LoopId, i64)>), by: i64| {
            let t = match t {
                Some((l, k)) => Some((l, k.checked_mul(by)?)),
                None => None,
            };
            Some((c.checked_mul(by)?, t))
        };
        match e {
            IndexExpr::Const(c) => Some((*c, None)),
            IndexExpr::Var(v) => {
                let &(l, start, step) = self.var_loop.get(v)?;
                Some((start, Some((l, step))))
            }
            IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) => {
                let sign = if matches!(e, IndexExpr::Add(..)) {
                    1
                } else {
                    -1
                };
                let ((ca, ta), (cb, tb)) = (sub(a)?, sub(b)?);
                Some((ca.checked_add(cb.checked_mul(sign)?)?, join(ta, tb, sign)?))
            }
            IndexExpr::Mul(a, b) => match (sub(a)?, sub(b)?) {
                ((c, None), x) | (x, (c, None)) => scale(x, c),
                _ => None,
            },
            IndexExpr::FloorDiv(a, d) if *d > 0 => {
                let (c, t) = sub(a)?;
                let exact = c % d == 0 && t.is_none_or(|(_, k)| k % d == 0);
                exact.then(|| (c / d, t.map(|(l, k)| (l, k / d))))
            }
            IndexExpr::Mod(a, d) if *d > 0 => match sub(a)? {
                (c, None) => Some((c.rem_euclid(*d), None)),
                _ => None,
            },
            _ => None,
        }
    }
}
