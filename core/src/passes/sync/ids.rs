//! Event id allocation: each live pair gets its own ids within its (src, dst) pipe pair,
//! one for a static pair and one per slot for a dynamic pair, so no two pairs ever share
//! a live flag. When a pipe pair needs more than the machine has, the fallbacks of SPEC 2
//! apply in order: a dynamic pair gets fewer ids than its loop has slots (it then lets
//! fewer iterations run ahead: still correct, since the id of iteration i + ids orders
//! after iteration i), then the latest pairs become `pipe_barrier ALL`.

use super::tree::{Ids, NodeId, Tree};
use super::SyncReport;
use crate::machine::Machine;
use crate::types::Pipe;
use std::collections::BTreeMap;

/// (loop node, src, dst, slots, ids) for every dynamic pair given fewer ids than slots.
pub type Reduction = (NodeId, Pipe, Pipe, u32, u32);

pub fn allocate(tree: &mut Tree, machine: &Machine, report: &mut SyncReport) -> Vec<Reduction> {
    let avail = machine.event_ids_per_pair.max(1);
    let mut groups: BTreeMap<(Pipe, Pipe), Vec<usize>> = BTreeMap::new();
    for (i, p) in tree.pairs.iter().enumerate() {
        if p.live() {
            groups.entry((p.src, p.dst)).or_default().push(i);
        }
    }
    let mut reductions: BTreeMap<usize, Reduction> = BTreeMap::new();
    for ((src, dst), members) in groups {
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
                    if let Ids::Dynamic { rotation, count } = p.ids {
                        let slots = reductions.get(&i).map_or(count, |r| r.3);
                        p.ids = if count > 2 {
                            Ids::Dynamic {
                                rotation,
                                count: count - 1,
                            }
                        } else {
                            Ids::Static
                        };
                        reductions.insert(i, (rotation, src, dst, slots, count - 1));
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
    reductions.into_values().collect()
}
