//! Which tiles live in the slots of a `buffers` tile. A slot write's value is computed
//! straight into the slot, and a slot read's result is the slot itself, wherever that
//! cannot be told apart from copying: the member's live range meets no other access to
//! the buffer. Elsewhere lowering copies (a vector move into or out of the slot).
//! plan-memory places members in their buffer's slab, lowering addresses them by
//! their slot index, and the address-plan verifier allows a member to share its
//! buffer's bytes, all by this one rule over the IR.
//!
//! The rule does not tell slots apart: any write to the buffer inside a member's live
//! range, whichever slot, makes it a copy. That is conservative and keeps the rule a
//! matter of positions alone.

use super::{Kernel, OpId, OpKind, ValueDef, ValueId, ValueMap};
use crate::dense::DenseMap;

/// Whether `v` is the result of a `buffers` op with 2 to 16 slots.
pub fn is_buffers(k: &Kernel, v: ValueId) -> bool {
    let Some(val) = k.values.get(v) else {
        return false;
    };
    let ValueDef::Result { op, index: 0 } = val.def else {
        return false;
    };
    matches!(val.attrs.slots, Some(2..=16))
        && matches!(k.ops.get(op).map(|o| &o.kind), Some(OpKind::Buffers))
}

/// A program's positions and live ranges, as the caller computes them (plan-memory
/// and the plan verifier each have their own).
pub trait Positions {
    fn pos(&self, op: OpId) -> Option<u64>;
    /// First and last position `v` is live (a use inside a loop keeps it live to the
    /// loop's end).
    fn interval(&self, v: ValueId) -> Option<(u64, u64)>;
}

/// Every member tile with the `buffers` value whose slot it lives in.
pub fn members(k: &Kernel, at: &dyn Positions) -> ValueMap<ValueId> {
    let counts = k.use_counts();
    // Every slot access: buffer, value written or read, position, whether a write.
    let mut accesses: Vec<(ValueId, ValueId, u64, bool)> = Vec::new();
    let mut carried: Vec<ValueId> = Vec::new();
    k.walk_ops(|id, op| {
        let (buf, v, write) = match (&op.kind, op.results.first()) {
            (OpKind::SlotWrite { buf, value, .. }, _) => (*buf, *value, true),
            (OpKind::SlotRead { buf, .. }, Some(&r)) => (*buf, r, false),
            (OpKind::For(l), _) => return carried.extend(l.inits.iter().chain(&l.yields)),
            _ => return,
        };
        if let Some(p) = at.pos(id) {
            accesses.push((buf, v, p, write));
        }
    });
    let space = |v: ValueId| k.values.get(v).and_then(|x| x.space);
    // Where a value is live, from its definition (or read) to its last use.
    // A read whose result nothing uses has no live range: it is live where it is read.
    let live = |v: ValueId, p: u64| at.interval(v).unwrap_or((p, p));
    let mut out = DenseMap::new();
    // Writes first: a member write happens at its value's definition, else at the op.
    let mut write_at: Vec<(ValueId, u64)> = Vec::new();
    for &(buf, v, p, _) in accesses.iter().filter(|a| a.3) {
        let (start, end) = live(v, p);
        let plain = match k.values.get(v).map(|x| x.def) {
            Some(ValueDef::Result { op, index: 0 }) => !matches!(
                k.ops.get(op).map(|o| &o.kind),
                Some(OpKind::For(_) | OpKind::SlotRead { .. } | OpKind::Buffers) | None
            ),
            _ => false,
        };
        // Nothing else touches the buffer while the value sits in the slot.
        let quiet = accesses.iter().all(|&(b, w, q, wr)| {
            let (s, e) = if wr { (q, q) } else { live(w, q) };
            b != buf || w == v || e < start || s > end
        });
        let single = counts.get(v.index()) == Some(&1);
        let member = plain && quiet && single && space(buf).is_some() && space(v) == space(buf);
        if member {
            out.insert(v, buf);
        }
        write_at.push((buf, if member { start } else { p }));
    }
    for &(buf, r, p, _) in accesses.iter().filter(|a| !a.3) {
        let (_, end) = live(r, p);
        let quiet = write_at.iter().all(|&(b, w)| b != buf || w <= p || w > end);
        if quiet && space(r) == space(buf) && space(buf).is_some() && !carried.contains(&r) {
            out.insert(r, buf);
        }
    }
    out
}
