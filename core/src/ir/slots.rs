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
    // Per buffer: each write (its op, value and position) and each read (its op and the
    // positions its result may be read at).
    let mut writes: ValueMap<Vec<(OpId, ValueId, u64)>> = DenseMap::new();
    let mut reads: ValueMap<Vec<(ValueId, u64, u64)>> = DenseMap::new();
    let mut for_uses: Vec<ValueId> = Vec::new();
    k.walk_ops(|id, op| match &op.kind {
        OpKind::SlotWrite { buf, value, .. } => {
            if let Some(p) = at.pos(id) {
                writes.entry(*buf).or_default().push((id, *value, p));
            }
        }
        OpKind::SlotRead { buf, .. } => {
            let r = op.results.first().copied();
            if let (Some(r), Some(p)) = (r, at.pos(id)) {
                let end = at.interval(r).map_or(p, |i| i.1);
                reads.entry(*buf).or_default().push((r, p, end));
            }
        }
        OpKind::For(l) => for_uses.extend(l.inits.iter().chain(&l.yields)),
        _ => {}
    });
    let mut out = DenseMap::new();
    for (buf, ws) in writes.iter() {
        let Some(space) = k.values.get(buf).and_then(|b| b.space) else {
            continue;
        };
        let rs = reads.get(&buf).map_or(&[][..], |r| r.as_slice());
        // Where each write happens: at its value's definition when that is a member.
        let mut write_at = Vec::new();
        for &(w, v, p) in ws {
            let direct = (|| {
                let val = k.values.get(v)?;
                let ValueDef::Result { op: d, index: 0 } = val.def else {
                    return None;
                };
                let def = k.ops.get(d)?;
                let plain = !matches!(
                    def.kind,
                    OpKind::For(_) | OpKind::SlotRead { .. } | OpKind::Buffers
                );
                let single = counts.get(v.index()) == Some(&1);
                let (start, end) = at.interval(v)?;
                // Nothing else touches the buffer while the value sits in the slot.
                let quiet = rs.iter().all(|&(_, rp, re)| re < start || rp > end)
                    && ws
                        .iter()
                        .all(|&(w2, _, p2)| w2 == w || p2 < start || p2 > end);
                (plain && single && quiet && val.space == Some(space)).then_some(start)
            })();
            if direct.is_some() {
                out.insert(v, buf);
            }
            write_at.push(direct.unwrap_or(p));
        }
        for &(r, p, end) in rs {
            let same_space = k.values.get(r).and_then(|x| x.space) == Some(space);
            let quiet = write_at.iter().all(|&w| w <= p || w > end);
            if same_space && quiet && !for_uses.contains(&r) {
                out.insert(r, buf);
            }
        }
    }
    out
}
