//! Event id allocation within each (src, dst) pipe pair. A pair inside a loop, a
//! slot-following (dynamic) pair and a loop-carried pair get ids of their own, one for a
//! static pair and one per slot for a dynamic pair; those ids come first. The
//! straight-line pairs (top level, outside every loop) share the ids after them: a pair
//! takes the id of an earlier one whose wait happens before its set in every run
//! ([`recycle`]), so no two pairs ever share a live flag.
//!
//! When a pipe pair needs more ids than the machine has, the fallbacks apply in order.
//! First, straight-line pairs reuse the id of a pair whose wait comes earlier in program
//! order once a `FlagReuse` pair orders that wait before their set (tried with as many
//! ids as are left and then fewer, until the pairs added fit their own pipe pairs too).
//! Then a dynamic pair gets fewer ids than its loop has slots (it then lets fewer
//! iterations run ahead: still correct, since the id of iteration i + ids orders after
//! iteration i), then the latest pairs become `pipe_barrier ALL`. A pair on explicit
//! slots has no form with fewer ids (read and written at two phases, its ids line up
//! only modulo the slot count, and the walk follows explicit slots only with the slot
//! count's period): it becomes a `pipe_barrier ALL` at once, with a note.

use super::recycle::{self, Order, Straight};
use super::tree::{Ids, NodeId, Tree};
use super::SyncReport;
use crate::diag::Diagnostic;
use crate::lowered::Lowered;
use crate::machine::Machine;
use crate::types::Pipe;

/// (loop node, src, dst, slots, ids) for every dynamic pair given fewer ids than slots.
pub type Reduction = (NodeId, Pipe, Pipe, u32, u32);

/// Every (src, dst) pipe pair, in the order ids are allocated.
fn pipe_pairs() -> impl Iterator<Item = (Pipe, Pipe)> {
    Pipe::ALL
        .into_iter()
        .flat_map(|src| Pipe::ALL.into_iter().map(move |dst| (src, dst)))
}

/// The live pairs of one pipe pair: those with ids of their own, and the straight-line
/// ones that share.
struct Group {
    pipes: (Pipe, Pipe),
    own: Vec<usize>,
    /// Ids the pairs with ids of their own need.
    own_ids: u32,
    straight: Vec<Straight>,
}

impl Group {
    fn of(tree: &Tree, order: &Order, src: Pipe, dst: Pipe) -> Group {
        let mut g = Group {
            pipes: (src, dst),
            own: Vec::new(),
            own_ids: 0,
            straight: Vec::new(),
        };
        for (i, p) in tree.pairs.iter().enumerate() {
            if !p.live() || p.src != src || p.dst != dst {
                continue;
            }
            match order.straight(tree, i) {
                Some(s) => g.straight.push(s),
                None => {
                    g.own.push(i);
                    g.own_ids += p.ids.count();
                }
            }
        }
        g
    }

    /// Ids left for the straight-line pairs.
    fn cap(&self, avail: u32) -> u32 {
        avail.saturating_sub(self.own_ids)
    }

    /// The straight-line pairs' ids, when everything fits.
    fn fit(&self, order: &Order, avail: u32) -> Option<recycle::Colouring> {
        let c = recycle::colour(order, &self.straight, self.cap(avail));
        (self.own_ids <= avail && c.short.is_empty()).then_some(c)
    }
}

pub fn allocate(
    tree: &mut Tree,
    lowered: &Lowered,
    machine: &Machine,
    report: &mut SyncReport,
    spent: &mut u64,
) -> Result<Vec<Reduction>, Diagnostic> {
    let avail = machine.event_ids_per_pair.max(1);
    let mut order = Order::observe(tree, lowered, spent)?;
    if let Some((trial, seen)) = order_reuses(tree, lowered, &order, avail, spent)? {
        *tree = trial;
        order = seen;
    }
    // reductions[i]: the reduction of pair i, if its ids were reduced.
    let mut reductions: Vec<Option<Reduction>> = vec![None; tree.pairs.len()];
    for (src, dst) in pipe_pairs() {
        loop {
            let g = Group::of(tree, &order, src, dst);
            if let Some(c) = g.fit(&order, avail) {
                let mut next = 0;
                for &i in &g.own {
                    if let Some(p) = tree.pairs.get_mut(i) {
                        p.base = next;
                        next += p.ids.count();
                    }
                }
                for (i, id) in c.ids {
                    if let Some(p) = tree.pairs.get_mut(i) {
                        p.base = next + id;
                    }
                }
                break;
            }
            // The dynamic pair with the most ids (the latest on ties) gives one up.
            let widest = g
                .own
                .iter()
                .filter_map(|&i| Some((i, tree.pairs.get(i)?)))
                .filter(|(_, p)| p.ids.count() > 1)
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
            let latest = g
                .own
                .iter()
                .chain(g.straight.iter().map(|s| &s.pair))
                .copied()
                .max();
            let Some(i) = latest else { break };
            if let Some(p) = tree.pairs.get_mut(i) {
                p.barrier = true;
            }
            report.notes.push(format!(
                "event ids for {src} -> {dst} ran out ({avail} per pipe pair): one pair became pipe_barrier ALL"
            ));
        }
    }
    Ok(reductions.into_iter().flatten().collect())
}

/// The first fallback (module comment): when straight-line pairs of some pipe pairs
/// need more ids than those pipe pairs have left, a copy of `tree` with `FlagReuse`
/// pairs that order their reuses, and what its walks saw. The straight-line pairs of
/// each such pipe pair get as many ids as are left, then one fewer and so on, until the
/// added pairs (which lengthen the reverse pipe pair's share) leave every pipe pair they
/// were planned for and every pipe pair that fitted fitting. A pipe pair whose reuses
/// no pair can order (a set before every wait that could free an id) is left to the
/// later fallbacks. `None` when no number of ids does, or when the walks would exceed
/// the analysis budget (the other fallbacks then apply, with the budget as it was).
fn order_reuses(
    tree: &Tree,
    lowered: &Lowered,
    order: &Order,
    avail: u32,
    spent: &mut u64,
) -> Result<Option<(Tree, Order)>, Diagnostic> {
    let fits: Vec<bool> = pipe_pairs()
        .map(|(src, dst)| Group::of(tree, order, src, dst).fit(order, avail).is_some())
        .collect();
    // Pipe pairs short of ids only for their straight-line pairs.
    let short: Vec<Group> = pipe_pairs()
        .zip(&fits)
        .filter(|(_, &fit)| !fit)
        .map(|((src, dst), _)| Group::of(tree, order, src, dst))
        .filter(|g| g.cap(avail) > 0)
        .collect();
    let Some(widest) = short.iter().map(|g| g.cap(avail)).max() else {
        return Ok(None);
    };
    let budget = *spent;
    for k in (1..=widest).rev() {
        let mut trial = tree.clone();
        // The pipe pairs whose reuses this many ids can order (the others are left to
        // the later fallbacks).
        let mut planned = Vec::new();
        for g in &short {
            let plan = recycle::plan(order, &g.straight, k.min(g.cap(avail)));
            if !plan.short.is_empty() {
                continue;
            }
            for (a, b) in &plan.reuses {
                recycle::order_reuse(&mut trial, a, b)?;
            }
            planned.push(g.pipes);
        }
        if planned.is_empty() {
            continue;
        }
        let seen = match Order::observe(&trial, lowered, spent) {
            Ok(seen) => seen,
            Err(e) if !e.message.starts_with("internal") => {
                *spent = budget;
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let regressed = pipe_pairs().zip(&fits).any(|((src, dst), &fit)| {
            (fit || planned.contains(&(src, dst)))
                && Group::of(&trial, &seen, src, dst)
                    .fit(&seen, avail)
                    .is_none()
        });
        if !regressed {
            return Ok(Some((trial, seen)));
        }
    }
    Ok(None)
}
