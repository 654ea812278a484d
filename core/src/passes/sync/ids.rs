//! Event id allocation: each live pair gets its own ids within its (src, dst) pipe pair,
//! one for a static pair and one per slot for a dynamic pair, so no two pairs ever share
//! a live flag. When a pipe pair needs more than the machine has, the fallbacks
//! apply in order: a dynamic pair gets fewer ids than its loop has slots (it then lets
//! fewer iterations run ahead: still correct, since the id of iteration i + ids orders
//! after iteration i), then the latest pairs become `pipe_barrier ALL`.

use super::tree::{Ids, Kind, NodeId, Sync, Tree};
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
                        let slots = reductions.get(i).copied().flatten().map_or(count, |r| r.3);
                        // Ids of two phases (explicit slots) only line up modulo the
                        // slot count: fewer ids would pair a wait with the wrong set.
                        let phased = offsets != (0, 0);
                        p.ids = if count > 2 && !phased {
                            Ids::Dynamic {
                                rotation,
                                count: count - 1,
                                offsets,
                            }
                        } else {
                            Ids::Static
                        };
                        let left = p.ids.count();
                        if let Some(r) = reductions.get_mut(i) {
                            *r = Some((rotation, src, dst, slots, left));
                        }
                        if phased {
                            one_prime_and_drain(tree, i);
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

/// A pair that became static keeps one prime and one drain: its first ones, given id
/// 0; the others get ids past its count, which the walk and the write-back leave out.
fn one_prime_and_drain(tree: &mut Tree, pair: usize) {
    let nodes = tree
        .pairs
        .get(pair)
        .map(|p| p.nodes.clone())
        .unwrap_or_default();
    let (mut primes, mut drains) = (0, 0);
    for n in nodes {
        let Some(node) = tree.nodes.get_mut(n) else {
            continue;
        };
        match &mut node.kind {
            Kind::Sync(Sync::Prime(_, k)) => {
                *k = primes;
                primes += 1;
            }
            Kind::Sync(Sync::Drain(_, k)) => {
                *k = drains;
                drains += 1;
            }
            _ => {}
        }
    }
}
