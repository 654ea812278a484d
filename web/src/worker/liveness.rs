//! When each on-chip buffer slot holds a live value: built in the worker from the
//! compile's buffer table and the simulator's per-entry accesses, read by the page at
//! the timeline cursor (`components::buffers`).
//!
//! A value is born when a write to the slot ends and is live until the last read of it
//! ends (an instruction reads its operands while it runs); a value never read is dead
//! at once. Writes that fill an unread value piece by
//! piece (two loads into halves of a tile) extend it rather than start a new one. Trace
//! entries are in completion order, which is the order their data effects applied, so a
//! read belongs to the value current when it completed, and an instruction that reads
//! and writes a slot (an accumulate) reads the old value and writes a new one.

use tilescope::compile::BufferInfo;
use tilescope::sim::{TraceAccess, TraceEntry};

use crate::protocol::buffers::{BufferSlot, SlotValue};

/// Values kept over all slots at most, like the timeline's slice cap.
pub const VALUE_CAP: usize = 200_000;
/// Distinct producing or consuming instructions listed per value.
const INSTR_CAP: usize = 8;

struct Open {
    value: SlotValue,
    /// Bounding byte range its writes covered.
    covered: (u64, u64),
    read: bool,
}

fn push_capped(list: &mut Vec<u32>, instr: u32) {
    if list.len() < INSTR_CAP && !list.contains(&instr) {
        list.push(instr);
    }
}

/// Every slot of `buffers` with its values over the run `trace` / `accesses`
/// (`accesses` sorted by entry, as the simulator records them), named from `source`.
pub fn slots(
    buffers: &[BufferInfo],
    source: &str,
    trace: &[TraceEntry],
    accesses: &[TraceAccess],
) -> Vec<BufferSlot> {
    let mut slots: Vec<BufferSlot> = buffers
        .iter()
        .flat_map(|b| {
            let multi = b.addrs.len() > 1;
            let name = tilescope::explain::buffer_label(&b.name, b.span, source);
            b.addrs
                .iter()
                .enumerate()
                .map(move |(i, &addr)| BufferSlot {
                    name: if multi {
                        format!("{name} slot {i}")
                    } else {
                        name.clone()
                    },
                    space: b.space,
                    lo: addr,
                    hi: addr.saturating_add(b.bytes),
                    values: Vec::new(),
                })
        })
        .collect();
    let mut open: Vec<Option<Open>> = slots.iter().map(|_| None).collect();
    let mut kept = 0usize;
    // Within one entry reads come before writes; accesses are grouped by entry.
    for group in accesses.chunk_by(|a, b| a.entry == b.entry) {
        let Some(e) = group.first().and_then(|a| trace.get(a.entry as usize)) else {
            continue;
        };
        for a in group.iter().filter(|a| !a.write) {
            for s in touched(&slots, a) {
                if let Some(Some(o)) = open.get_mut(s) {
                    o.value.to = o.value.to.max(e.end.max(o.value.from));
                    o.read = true;
                    push_capped(&mut o.value.consumers, e.index);
                }
            }
        }
        for a in group.iter().filter(|a| a.write) {
            for s in touched(&slots, a) {
                let Some(cell) = open.get_mut(s) else {
                    continue;
                };
                match cell {
                    // A partial fill of a value nobody read yet (a write covering
                    // the whole value replaces it: the old one was never read).
                    Some(o) if !o.read && (a.lo > o.covered.0 || o.covered.1 > a.hi) => {
                        o.covered = (o.covered.0.min(a.lo), o.covered.1.max(a.hi));
                        o.value.writer = e.pipe;
                        push_capped(&mut o.value.producers, e.index);
                    }
                    _ => {
                        let fresh = Open {
                            value: SlotValue {
                                from: e.end,
                                to: e.end,
                                writer: e.pipe,
                                producers: vec![e.index],
                                consumers: Vec::new(),
                            },
                            covered: (a.lo, a.hi),
                            read: false,
                        };
                        if let (Some(done), Some(slot)) = (cell.replace(fresh), slots.get_mut(s)) {
                            if kept < VALUE_CAP {
                                slot.values.push(done.value);
                                kept += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    for (slot, o) in slots.iter_mut().zip(open) {
        if let Some(o) = o {
            if kept < VALUE_CAP {
                slot.values.push(o.value);
                kept += 1;
            }
        }
        // Completion order already sorts births; the stable sort only guards it.
        slot.values.sort_by_key(|v| v.from);
    }
    slots
}

/// The slots access `a` lies in: those containing it, else (never for a program
/// plan-memory laid out) those it overlaps. Buffers sharing a slab all contain it.
fn touched(slots: &[BufferSlot], a: &TraceAccess) -> Vec<usize> {
    let same = |s: &&BufferSlot| s.space == a.space;
    let inside: Vec<usize> = (0..slots.len())
        .filter(|&i| {
            slots
                .get(i)
                .filter(same)
                .is_some_and(|s| s.lo <= a.lo && a.hi <= s.hi)
        })
        .collect();
    if !inside.is_empty() {
        return inside;
    }
    (0..slots.len())
        .filter(|&i| {
            slots
                .get(i)
                .filter(same)
                .is_some_and(|s| s.lo < a.hi && a.lo < s.hi)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;
    use tilescope::types::{MemSpace, Pipe};

    fn simulated(name: &str) -> crate::protocol::SimOutput {
        simulated_source(catalog::find(name).map_or("", |e| e.source))
    }

    fn simulated_source(source: &str) -> crate::protocol::SimOutput {
        let (_, sim) =
            crate::worker::engine::run(source, &crate::protocol::options::playground(), 0);
        let (sim, _) = sim.expect("the example simulates");
        assert!(sim.errors.is_empty() && sim.reference_match);
        sim
    }

    #[test]
    fn the_multibuffered_stream_rotates_values_through_its_three_slots() {
        // The multibuffer example with a compute heavy enough (two transcendentals per
        // element) that loads run ahead of it: since `sigmoid(t) * t` became one `silu`
        // instruction the example itself is load-bound on the default preset.
        let source = catalog::find("multibuffer")
            .map_or("", |e| e.source)
            .replace("sigmoid(t) * t", "exp(sigmoid(t)) * t");
        assert!(source.contains("exp(sigmoid(t)) * t"));
        let sim = simulated_source(&source);
        let t: Vec<&BufferSlot> = sim
            .buffers
            .iter()
            .filter(|s| s.name.starts_with("t slot "))
            .collect();
        assert_eq!(t.len(), 3, "{:?}", sim.buffers);
        // 16 iterations over 3 slots: each slot holds 5 or 6 loaded tiles, each live
        // from its load's end until the compute reading it ends.
        for slot in &t {
            assert_eq!(slot.space, MemSpace::UB);
            assert!((5..=6).contains(&slot.values.len()), "{slot:?}");
            for v in &slot.values {
                assert_eq!(v.writer, Pipe::MTE2);
                assert!(v.from < v.to && !v.consumers.is_empty(), "{v:?}");
            }
            // A slot's values do not overlap: the next load waits for the last read.
            assert!(slot.values.windows(2).all(|w| w[0].to <= w[1].from));
        }
        // Double buffering shows: at some cycle two slots of `t` are live at once.
        let two_live = t
            .iter()
            .flat_map(|s| &s.values)
            .any(|v| t.iter().filter(|s| s.at(v.from).live.is_some()).count() >= 2);
        assert!(two_live);
        // Slots of different buffers in one space never overlap here.
        for (i, a) in sim.buffers.iter().enumerate() {
            for b in sim.buffers.iter().skip(i + 1) {
                assert!(
                    a.space != b.space || a.hi <= b.lo || b.hi <= a.lo,
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn a_slot_stays_live_while_an_instruction_reads_it() {
        // Softmax at cycle 826 once showed `t` slot 0 free while V's vsub read it.
        for name in ["softmax", "multibuffer", "flash_attention", "matmul_tiled"] {
            let sim = simulated(name);
            let slices: Vec<_> = sim.lanes.iter().flat_map(|l| &l.slices).collect();
            let mut reads = 0;
            for slot in &sim.buffers {
                for v in &slot.values {
                    let reading = slices.iter().filter(|s| {
                        v.consumers.contains(&s.instr) && v.from <= s.start && s.start <= v.to
                    });
                    for s in reading {
                        reads += 1;
                        assert!(
                            s.end <= v.to && slot.at(s.end - 1).live == Some(v),
                            "{name}: {} is free at cycle {} while #{} reads it ({}..{})",
                            slot.name,
                            v.to,
                            s.instr,
                            s.start,
                            s.end
                        );
                    }
                }
            }
            assert!(reads > 0, "{name}: no reads checked");
        }
    }

    #[test]
    fn at_a_cycle_a_slot_is_live_inside_a_value_and_free_outside() {
        let sim = simulated("multibuffer");
        let slot = sim
            .buffers
            .iter()
            .find(|s| s.values.len() >= 2)
            .expect("a slot written twice");
        let (a, b) = (&slot.values[0], &slot.values[1]);
        assert_eq!(slot.at(a.from).live, Some(a));
        assert_eq!(slot.at(a.to - 1).live, Some(a));
        // Between the last read and the next write the slot is free, last written by a.
        if a.to < b.from {
            let free = slot.at(a.to);
            assert_eq!((free.live, free.last), (None, Some(a)));
        }
        assert_eq!(slot.at(a.from.saturating_sub(1)).last, None);
        let after = slot.values.last().expect("values");
        assert_eq!(slot.at(sim.cycles).live, None);
        assert_eq!(slot.at(sim.cycles).last, Some(after));
    }

    #[test]
    fn buffers_go_by_source_names_never_ir_numbers() {
        for e in catalog::EXAMPLES {
            let (_, sim) =
                crate::worker::engine::run(e.source, &crate::protocol::options::playground(), 0);
            let Some((sim, _)) = sim else { continue };
            for slot in &sim.buffers {
                let base = slot.name.split(" slot ").next().unwrap_or("");
                assert!(
                    !base.is_empty()
                        && !base
                            .split(", ")
                            .any(|n| n.chars().all(|c| c.is_ascii_digit())),
                    "{}: buffer named {:?}",
                    e.name,
                    slot.name
                );
            }
        }
        // The elementwise example's fused result is named by its expression.
        let sim = simulated("elementwise");
        assert!(
            sim.buffers
                .iter()
                .any(|s| s.name.starts_with("relu(t * 2.0 + bias)")),
            "{:?}",
            sim.buffers.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_matmul_accumulator_is_rewritten_by_each_accumulate() {
        let sim = simulated("matmul_tiled");
        let l0c: Vec<&BufferSlot> = sim
            .buffers
            .iter()
            .filter(|s| s.space == MemSpace::L0C)
            .collect();
        assert!(!l0c.is_empty(), "{:?}", sim.buffers);
        let values = l0c.iter().flat_map(|s| &s.values);
        assert!(values.clone().any(|v| v.writer == Pipe::M));
        assert!(values.clone().all(|v| v.from <= v.to && v.to <= sim.cycles));
    }
}
