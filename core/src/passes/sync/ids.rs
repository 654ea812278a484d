//! Event id allocation: each live pair gets its own ids within its (src, dst) pipe pair,
//! one for a static pair and one per slot for a dynamic pair, so no two pairs ever share
//! a live flag. When a pipe pair needs more than the machine has, the fallbacks
//! apply in order: a dynamic pair gets fewer ids than its loop has slots (it then lets
//! fewer iterations run ahead: still correct, since the id of iteration i + ids orders
//! after iteration i), then the latest pairs become `pipe_barrier ALL`. A pair on explicit
//! slots has no form with fewer ids (read and written at two phases, its ids line up
//! only modulo the slot count, and the walk follows explicit slots only with the slot
//! count's period): it becomes a `pipe_barrier ALL` at once, with a note.

use super::tree::{Ids, NodeId, Tree};
use super::SyncReport;
use crate::machine::Machine;
use crate::types::Pipe;

/// (loop node, src, dst, slots, ids) for every dynamic pair given fewer ids than slots.
pub type Reduction = (NodeId, Pipe, Pipe, u32, u32);

pub fn allocate(tree: &mut Tree, machine: &Machine, report: &mut SyncReport) -> Vec<Reduction> {
    let avail = machine.event_ids_per_pair.max(1);
    // The live pairs of each (src, dst) pipe pair, in pipe-pair order.
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); Pipe::ALL.len() * Pipe::ALL.len()];
    for (i, p) in tree.pairs.iter().enumerate() {
        if p.live() {
            if let Some(g) = groups.get_mut(p.src.index() * Pipe::ALL.len() + p.dst.index()) {
                g.push(i);
            }
        }
    }
    // reductions[i]: the reduction of pair i, if its ids were reduced.
    let mut reductions: Vec<Option<Reduction>> = vec![None; tree.pairs.len()];
    let pipe_pairs = Pipe::ALL
        .into_iter()
        .flat_map(|src| Pipe::ALL.into_iter().map(move |dst| (src, dst)));
    for ((src, dst), members) in pipe_pairs.zip(groups) {
        if members.is_empty() {
            continue;
        }
        loop {
            let need: u32 = members
                .iter()
                .filter_map(|&i| tree.pairs.get(i))
                .filter(|p| p.live())
                .map(|p| p.ids.count())
                .sum();
            if need <= avail {
                break;
            }
            // The dynamic pair with the most ids (the latest on ties) gives one up.
            let widest = members
                .iter()
                .filter_map(|&i| Some((i, tree.pairs.get(i)?)))
                .filter(|(_, p)| p.live() && p.ids.count() > 1)
                .max_by_key(|(i, p)| (p.ids.count(), *i))
                .map(|(i, _)| i);
            if let Some(i) = widest {
                if let Some(p) = tree.pairs.get_mut(i) {
                    if let Ids::Dynamic {
                        rotation,
                        count,
                        offsets,
                    } = p.ids
                    {
                        // Explicit slots have no fewer-ids fallback (module comment).
                        if offsets.is_some() {
                            p.barrier = true;
                            report.notes.push(format!(
                                "event ids for {src} -> {dst} ran out ({avail} per pipe pair): a pair on explicit slots became pipe_barrier ALL"
                            ));
                            continue;
                        }
                        let slots = reductions.get(i).copied().flatten().map_or(count, |r| r.3);
                        p.ids = if count > 2 {
                            Ids::Dynamic {
                                rotation,
                                count: count - 1,
                                offsets,
                            }
                        } else {
                            Ids::Static
                        };
                        if let Some(r) = reductions.get_mut(i) {
                            *r = Some((rotation, src, dst, slots, count - 1));
                        }
                    }
                }
                continue;
            }
            let latest = members
                .iter()
                .rev()
                .copied()
                .find(|&i| tree.pairs.get(i).is_some_and(|p| p.live()));
            let Some(i) = latest else { break };
            if let Some(p) = tree.pairs.get_mut(i) {
                p.barrier = true;
            }
            report.notes.push(format!(
                "event ids for {src} -> {dst} ran out ({avail} per pipe pair): one pair became pipe_barrier ALL"
            ));
        }
        let mut next = 0;
        for &i in &members {
            if let Some(p) = tree.pairs.get_mut(i) {
                if p.live() {
                    p.base = next;
                    next += p.ids.count();
                }
            }
        }
    }
    reductions.into_iter().flatten().collect()
}
