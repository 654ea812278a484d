//! Recycling the event ids of finished pairs.
//!
//! A straight-line pair is one whose set and wait both sit at the top level of the
//! program (outside every loop), the set first: each runs exactly once. Pair B may take
//! the id of an earlier pair A of the same source and destination pipes when A's wait
//! happens before B's set in every run. Then the flag is clear when B sets it (A's wait
//! has consumed A's set), A's wait cannot consume B's set (it has already run), and B's
//! wait cannot consume A's set (both waits are on the destination pipe, A's first in
//! program order: it happens before B's set, which comes before B's wait). The holders
//! of one id thus form a chain, each wait before the next set, so the latest holder
//! being finished implies every earlier one is, and a greedy colouring in program order
//! of the sets, each pair taking the lowest id whose latest holder is finished (a new id
//! only when none is), is the greedy colouring of interval graphs, with "happens
//! before the set" standing for "ends before the start".
//!
//! Happens-before is the walk's (vector clocks over the pipes: each pipe's program
//! order, a wait inheriting its set's clock, `pipe_barrier ALL` joining them), taken
//! from one walk per scenario the pass checks (register-counted loops run once per
//! rotation phase and not at all), and an order is used only when it holds in all of
//! them. Nothing here is trusted on its own: the pass walks the program again with the
//! allocated ids as the hardware has them and rejects any flag set while it may still
//! be set or before the previous wait of its id.
//!
//! Pairs inside loops, slot-following (dynamic) pairs and loop-carried (primed and
//! drained) pairs keep ids of their own: their instances repeat, and sharing an id
//! across iterations is not proved here.
//!
//! When straight-line pairs need more ids than their pipe pair has left, B may still
//! take the id of a holder A whose wait comes before B's set in program order once a
//! new pair orders the two ([`plan`]): set on A's destination pipe right after A's
//! wait, waited for on the source pipe right before B's set (reason `FlagReuse`). It
//! only adds order, it cannot deadlock (the program order runs it), and it holds the
//! source pipe back only when it runs more pairs ahead than there are ids.

use super::tree::{Ids, Kind, NodeId, Pair, PairId, Reason, Sync, Tree};
use super::walk::{Flags, Seen, Walker};
use super::{internal, scenarios};
use crate::dense::DenseMap;
use crate::diag::Diagnostic;
use crate::lowered::Lowered;

/// What the walks saw of the top-level sets and waits, one map per scenario.
pub struct Order {
    runs: Vec<DenseMap<NodeId, Seen>>,
    /// Position of each top-level node in the top-level block.
    pos: DenseMap<NodeId, usize>,
}

impl Order {
    /// Walks every scenario of `tree` (private flags, clocks only) and records the
    /// top-level syncs. A finding is an internal error: callers walk a program already
    /// ordered.
    pub fn observe(tree: &Tree, lowered: &Lowered, spent: &mut u64) -> Result<Order, Diagnostic> {
        let mut runs = Vec::new();
        for s in scenarios(tree, lowered) {
            let (found, seen) = Walker::new(tree, lowered, Flags::Private, s).observe(spent)?;
            if let Some(f) = found {
                return Err(internal(format!(
                    "an ordered program has a finding when its ids are allocated: {f:?}"
                )));
            }
            runs.push(seen);
        }
        let pos = tree.root.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        Ok(Order { runs, pos })
    }

    /// Whether node `a` happens before node `b` in every scenario.
    fn before(&self, a: NodeId, b: NodeId) -> bool {
        !self.runs.is_empty()
            && self
                .runs
                .iter()
                .all(|run| matches!((run.get(&a), run.get(&b)), (Some(x), Some(y)) if x.before(y)))
    }

    /// The set and wait nodes of pair `p` and their top-level positions, when it is a
    /// live straight-line pair: static ids, not loop-carried, its two nodes a set and a
    /// wait in the top-level block, the set first.
    pub fn straight(&self, tree: &Tree, p: PairId) -> Option<Straight> {
        let pair = tree.pairs.get(p)?;
        if !pair.live() || pair.ids != Ids::Static || pair.carried.is_some() {
            return None;
        }
        let [a, b] = pair.nodes[..] else {
            return None;
        };
        let kind = |n: NodeId| tree.node(n).map(|x| &x.kind);
        let (Some(Kind::Sync(Sync::Set(x))), Some(Kind::Sync(Sync::Wait(y)))) = (kind(a), kind(b))
        else {
            return None;
        };
        let (set_at, wait_at) = (*self.pos.get(&a)?, *self.pos.get(&b)?);
        (*x == p && *y == p && set_at < wait_at).then_some(Straight {
            pair: p,
            set: a,
            wait: b,
            set_at,
            wait_at,
        })
    }
}

/// A straight-line pair's set and wait, with their top-level positions.
#[derive(Clone, Copy, Debug)]
pub struct Straight {
    pub pair: PairId,
    pub set: NodeId,
    pub wait: NodeId,
    pub set_at: usize,
    pub wait_at: usize,
}

/// The ids of one pipe pair's straight-line pairs.
#[derive(Debug, Default)]
pub struct Colouring {
    /// Each coloured pair and its id, counted from the first id of the straight-line
    /// pairs.
    pub ids: Vec<(PairId, u32)>,
    /// Pairs left without an id: every one of `cap` ids was held by a pair not finished.
    pub short: Vec<PairId>,
    /// With [`plan`]: (holder, pair) of each reuse a new pair has to order.
    pub reuses: Vec<(Straight, Straight)>,
}

/// Colours the straight-line pairs `pairs` (of one pipe pair) with at most `cap` ids.
pub fn colour(order: &Order, pairs: &[Straight], cap: u32) -> Colouring {
    run(order, pairs, cap, false)
}

/// As [`colour`], but a pair that finds every id held takes the id whose holder's wait
/// comes first, when that wait comes before its set: `reuses` lists what new pairs then
/// have to order.
pub fn plan(order: &Order, pairs: &[Straight], cap: u32) -> Colouring {
    run(order, pairs, cap, true)
}

fn run(order: &Order, pairs: &[Straight], cap: u32, plan: bool) -> Colouring {
    let mut sorted = pairs.to_vec();
    sorted.sort_by_key(|s| s.set_at);
    let mut out = Colouring::default();
    // The latest holder of each id.
    let mut holders: Vec<Straight> = Vec::new();
    // With `plan`: the latest position of a wait that a planned pair orders before the
    // source pipe's later sets. Every wait of this pipe pair up to it (earlier on the
    // same destination pipe) is then finished for every later set (later on the same
    // source pipe).
    let mut ordered_upto: Option<usize> = None;
    for &b in &sorted {
        let finished = |a: &Straight| {
            order.before(a.wait, b.set) || ordered_upto.is_some_and(|w| a.wait_at <= w)
        };
        if let Some((i, h)) = holders.iter_mut().enumerate().find(|(_, a)| finished(a)) {
            *h = b;
            out.ids.push((b.pair, i as u32));
            continue;
        }
        if (holders.len() as u32) < cap {
            out.ids.push((b.pair, holders.len() as u32));
            holders.push(b);
            continue;
        }
        let earliest = holders
            .iter_mut()
            .enumerate()
            .filter(|(_, a)| plan && a.wait_at < b.set_at)
            .min_by_key(|(_, a)| a.wait_at);
        match earliest {
            Some((i, h)) => {
                out.reuses.push((*h, b));
                ordered_upto = ordered_upto.max(Some(h.wait_at));
                *h = b;
                out.ids.push((b.pair, i as u32));
            }
            None => out.short.push(b.pair),
        }
    }
    out
}

/// Adds the pair that orders `a`'s wait before `b`'s set (see the module comment).
pub fn order_reuse(tree: &mut Tree, a: &Straight, b: &Straight) -> Result<PairId, Diagnostic> {
    let (Some(pa), Some(pb)) = (tree.pairs.get(a.pair), tree.pairs.get(b.pair)) else {
        return Err(internal("an id reuse between pairs that do not exist"));
    };
    let (src, dst) = (pa.dst, pa.src);
    let (set_prov, wait_prov) = (pa.wait_prov, pb.set_prov);
    let id = tree.pairs.len();
    tree.pairs.push(Pair {
        src,
        dst,
        ids: Ids::Static,
        carried: None,
        nest_wide: false,
        reason: Reason::FlagReuse,
        hazard: None,
        nodes: Vec::new(),
        removed: false,
        barrier: false,
        base: 0,
        set_prov,
        wait_prov,
        orders_ids: true,
        serves: None,
    });
    let fail = || internal("an id reuse's anchor vanished");
    let set = tree.insert(a.wait, Sync::Set(id), true).ok_or_else(fail)?;
    let wait = tree.insert(b.set, Sync::Wait(id), false).ok_or_else(fail)?;
    if let Some(p) = tree.pairs.get_mut(id) {
        p.nodes = vec![set, wait];
    }
    Ok(id)
}
