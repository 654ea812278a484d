//! Where the instructions of a new pair go, given the producer and consumer instances
//! the walk found: in the innermost block that holds both, hoisted out of any inner
//! loop only one of them is in (so every set runs exactly as often as its wait), and
//! primed and drained around the loop whose back edge the dependence crosses.
//!
//! Nest-wide rotation: when that loop is the only non-scalar item of its parent loop
//! (a perfect nest, as axis-split makes), the primes and drains move out to the
//! outermost loop of the nest. The flags then rotate over the flattened iteration
//! space: the first iteration of each run of the inner loop waits on the set its slot
//! got in the previous run, which is exactly the dependence across the outer back
//! edge, instead of draining every flag and priming it again at each outer iteration
//! (which stalls the producer pipe until the consumer has caught up). A dynamic pair's
//! ids follow the rotating loop's slot (`counter % slots`), as the buffer does, so the
//! last set of flag `s` in a run is made by the last iteration that used slot `s`, for
//! any trip count including zero (the prime then meets the drain directly). For the
//! same reason a slot whose reuse the walk first meets across an outer loop of the nest
//! (runs no longer than the slots) is ordered inside the rotating loop with slot ids,
//! not by a static pair around the inner loop that would serialise the runs.

use super::internal;
use super::tree::{Ids, Kind, NodeId, Pair, PairId, Reason, Rotation, Sync, Tree};
use super::walk::Inst;
use crate::diag::Diagnostic;
use crate::types::Pipe;

/// The block and anchors for ordering `p` before `c`.
pub struct Site {
    /// The loop whose body holds both anchors (`None`: top level).
    pub owner: Option<NodeId>,
    /// After this node on the producer's pipe.
    pub after: NodeId,
    /// Before this node on the consumer's pipe.
    pub before: NodeId,
    /// The dependence crosses this loop's back edge.
    pub carried: Option<NodeId>,
    /// Primes and drains go around this loop: `carried`, or the outermost loop of the
    /// perfect nest `carried` is the innermost of.
    pub primed: Option<NodeId>,
    /// The pair was placed inside an `if` region: one that holds both ends of a
    /// dependence its enclosing loop carries, or the consumer's (`site`'s
    /// `into_branches`).
    pub in_branch: bool,
    /// The set goes before `after` (the first node of the `if` region, or loop of one
    /// iteration, the pair went into) rather than after it.
    pub set_at_start: bool,
}

/// Where the primes of a pair set on `src` and primed around loop `l` go: before the
/// first of the instructions and waits on `src` that lead up to `l` in its block (not
/// past an earlier loop or barrier; other sets and primes keep their order). A prime at
/// the loop head runs on `src` only after all of `src`'s straight-line work before the
/// loop (a peeled first iteration, say), holding back the
/// loop's first transfers for nothing; raised above that work it lets them start. The
/// walk runs again after every placement, so anything the prime ordered only by its old
/// position gets its own pair.
fn prime_anchor(tree: &Tree, l: NodeId, src: Pipe) -> NodeId {
    let block = tree.block(tree.parent(l));
    let Some(at) = block.iter().position(|&n| n == l) else {
        return l;
    };
    let mut anchor = l;
    // `at` is a position in `block`, so the slice is never empty by mistake.
    for &n in block.get(..at).unwrap_or_default().iter().rev() {
        match tree.node(n).map(|x| &x.kind) {
            Some(Kind::Loop(..) | Kind::Sync(Sync::Barrier)) | None => break,
            Some(Kind::Instr(_) | Kind::Sync(Sync::Wait(_))) if tree.pipe(n) == src => anchor = n,
            _ => {}
        }
    }
    anchor
}

/// The outermost loop of the perfect nest whose innermost loop is `l`: each loop around
/// it holds nothing but the inner loop and scalar instructions (no other work, and no
/// sync, which would mean an earlier pair was primed around the inner loop alone).
fn nest_top(tree: &Tree, l: NodeId) -> NodeId {
    let mut top = l;
    while let Some(parent) = tree.parent(top) {
        let perfect = tree.block(Some(parent)).iter().all(|&n| {
            n == top
                || matches!(tree.node(n).map(|n| &n.kind), Some(Kind::Instr(i)) if i.pipe() == Pipe::S)
        });
        if !perfect {
            break;
        }
        top = parent;
    }
    top
}

/// Whether loop node `l` runs its body at most once per entry: an `if` region, or a
/// loop of one iteration (as axis-split leaves).
fn runs_at_most_once(tree: &Tree, l: NodeId) -> bool {
    tree.loop_head(l)
        .is_some_and(|h| h.branch.is_some() || matches!(h.count, crate::isa::Val::Imm(c) if c <= 1))
}

/// Where to order `p` before `c`; `nest` lets the primes and drains of a loop-carried
/// pair move out to the top of a perfect nest. `rotation` is the loop and slot count
/// when the conflict is on one rotating slot. `into_branches` lets a loop-carried pair
/// go inside an `if` region that holds both of its ends.
pub fn site(
    tree: &Tree,
    p: &Inst,
    c: &Inst,
    (nest, into_branches): (bool, bool),
    rotation: Option<Rotation>,
) -> Result<Site, Diagnostic> {
    // Slots read and written at different phases (`b[(i + 1) % 2]`, `b[i % 2]`) do not
    // line up across the runs of an inner loop: their primes and drains stay around the
    // loop itself.
    let nest = nest && rotation.is_none_or(|r| r.offsets.is_none());
    // A set at one phase met by a wait at another pairs iterations `d` apart (the
    // difference of the phases), even where the producer comes first in the body.
    let phased = rotation
        .filter(|r| r.offsets.is_some_and(|(p, c)| p != c))
        .map(|r| r.node);
    let rotation = rotation.map(|r| (r.node, r.count));
    let lp = tree.loops_of(p.node);
    let lc = tree.loops_of(c.node);
    let iter = |inst: &Inst, l: NodeId| inst.iters.iter().find(|(n, _)| *n == l).map(|x| x.1);
    let mut owner = None;
    let mut carried = None;
    for (a, b) in lp.iter().zip(&lc) {
        if a != b {
            break;
        }
        owner = Some(*a);
        if iter(p, *a) != iter(c, *a) {
            carried = Some(*a);
            break;
        }
    }
    // A slot reused across an outer loop of the perfect nest around its rotating loop
    // (as when a run has no more iterations than slots): ordered inside the rotating
    // loop with slot ids, like a reuse within one run, rather than by a static pair
    // around the whole inner loop that lets no run start before the previous one ends.
    if let (true, Some((r, slots)), Some(l)) = (nest, rotation, carried) {
        let top = nest_top(tree, r);
        let l_in_nest =
            tree.loops_of(r).contains(&l) && (top == l || tree.loops_of(l).contains(&top));
        if slots > 1 && l_in_nest && lp.contains(&r) && lc.contains(&r) {
            owner = Some(r);
            carried = Some(r);
        }
    }
    // A dependence carried by a loop between two instances of one `if` region in it
    // (the next block's write after this block's read, both inside the branch): the
    // pair goes inside the region, so that a skipped block runs none of it. Each taken
    // iteration runs its wait and its set once, on every path; the prime and drain
    // around the carrying loop balance them whichever iterations were taken, and the
    // wait consumes the set of the latest taken iteration, which is the one whose
    // producer ran last. The same holds through a loop that runs once.
    let mut in_branch = false;
    if carried.is_some() && into_branches {
        let from = owner.and_then(|o| lp.iter().position(|&l| l == o));
        let common = from.map_or(0, |k| k + 1);
        for (a, b) in lp.iter().zip(&lc).skip(common) {
            if a != b || !runs_at_most_once(tree, *a) {
                break;
            }
            owner = Some(*a);
            in_branch |= tree.loop_head(*a).is_some_and(|h| h.branch.is_some());
        }
    }
    let after = tree
        .child_in(p.node, owner)
        .ok_or_else(|| internal("producer outside its block"))?;
    let before = tree
        .child_in(c.node, owner)
        .ok_or_else(|| internal("consumer outside its block"))?;
    let (Some(pa), Some(pc)) = (tree.position(after), tree.position(before)) else {
        return Err(internal(
            "a producer or consumer without a position in its block",
        ));
    };
    let (mut owner, mut after, mut before) = (owner, after, before);
    let mut set_at_start = false;
    if pa < pc && (phased.is_none() || phased != carried) {
        // Ordering this iteration's instances orders the later ones by program order.
        carried = None;
        // Only a pair with one id: a slot-following pair placed in the region leaves
        // the walk, which keeps only what both paths know, unable to see the slots'
        // flags reused safely, and the pairs it then adds serialise the slots (an `if`
        // over a double-buffered load lost 19% on `teach`).
        if into_branches && rotation.is_none() {
            while let Some(first) = into_region(tree, before) {
                (owner, after) = (Some(before), first);
                before = tree
                    .child_in(c.node, owner)
                    .ok_or_else(|| internal("consumer outside its branch"))?;
                set_at_start = true;
                in_branch = true;
            }
        }
    } else if carried.is_none() {
        return Err(internal("a dependence runs backwards outside any loop"));
    }
    let primed = match carried {
        Some(l) if nest => Some(nest_top(tree, l)),
        _ => carried,
    };
    Ok(Site {
        owner,
        after,
        before,
        carried,
        primed,
        in_branch,
        set_at_start,
    })
}

/// When the consumer's anchor `before` is an `if` region, the pair goes inside it: the
/// set at the region's start (after the producer in the producer pipe's queue, and run
/// only when the wait is), the wait before the consumer, so each path runs both or
/// neither. A wait before the region would hold back, for nothing, the consumer pipe's
/// work that needs no producer: the branch's own ahead of the consumer, and on the path
/// that skips the branch, the `else` and everything after it. Returns the region's
/// first node, where the set goes.
///
/// A loop of at most one iteration (a constant `0..1`, as axis-split may leave) is
/// entered the same way: its body runs once or not at all, like a branch.
fn into_region(tree: &Tree, before: NodeId) -> Option<NodeId> {
    if !runs_at_most_once(tree, before) {
        return None;
    }
    tree.block(Some(before)).first().copied()
}

/// Adds a pair at `site` and its instructions to the tree.
pub fn add_pair(
    tree: &mut Tree,
    site: &Site,
    p: &Inst,
    c: &Inst,
    rotation: Option<Rotation>,
    reason: Reason,
    hazard: Option<(super::tree::HazardKind, crate::lowered::Target)>,
) -> Result<PairId, Diagnostic> {
    // Slot ids only where both anchors run inside the rotating loop and, for a back
    // edge, the edge is that loop's (the slot repeats every `count` iterations).
    let ids = match rotation {
        Some(Rotation {
            node: rot,
            count,
            offsets,
        }) if count > 1
            && (site.owner == Some(rot)
                || site.owner.is_some_and(|o| tree.loops_of(o).contains(&rot)))
            && site.carried.is_none_or(|l| l == rot) =>
        {
            Ids::Dynamic {
                rotation: rot,
                count,
                offsets,
            }
        }
        _ => Ids::Static,
    };
    let Some((primes, drains)) = prime_ids(tree, site, ids) else {
        // Explicit slots around a loop of unknown length: one id orders them all.
        return add_pair(tree, site, p, c, None, reason, hazard);
    };
    let id = tree.pairs.len();
    tree.pairs.push(Pair {
        src: p.pipe,
        dst: c.pipe,
        ids,
        carried: site.primed,
        nest_wide: site.primed != site.carried,
        reason,
        hazard,
        nodes: Vec::new(),
        removed: false,
        barrier: false,
        base: 0,
        set_prov: tree.prov(p.node),
        wait_prov: tree.prov(c.node),
        orders_ids: false,
        serves: None,
    });
    let mut nodes = Vec::new();
    let fail = || internal("anchor vanished");
    nodes.push(
        tree.insert(site.after, Sync::Set(id), !site.set_at_start)
            .ok_or_else(fail)?,
    );
    nodes.push(
        tree.insert(site.before, Sync::Wait(id), false)
            .ok_or_else(fail)?,
    );
    if let Some(l) = site.primed {
        let anchor = prime_anchor(tree, l, p.pipe);
        for &k in &primes {
            nodes.push(
                tree.insert(anchor, Sync::Prime(id, k), false)
                    .ok_or_else(fail)?,
            );
        }
        for &k in drains.iter().rev() {
            nodes.push(tree.insert(l, Sync::Drain(id, k), true).ok_or_else(fail)?);
        }
    }
    if let Some(pair) = tree.pairs.get_mut(id) {
        pair.nodes = nodes;
    }
    Ok(id)
}

/// The ids to prime before and drain after the loop of a back-edge pair, ascending.
/// Slot-following ids of one phase (`@buffers`) carry a dependence `count` iterations
/// back: every id is primed and drained. With explicit slots the consumer at iteration
/// `i` meets the producer at `i - d`, `d = (producer offset - consumer offset) mod
/// count` (or `count`): the first `d` waits find primes, and the last `d` sets are
/// drained, which needs the loop's trip count. `None` when it is not a constant.
fn prime_ids(tree: &Tree, site: &Site, ids: Ids) -> Option<(Vec<u32>, Vec<u32>)> {
    let all: Vec<u32> = (0..ids.count()).collect();
    let Ids::Dynamic {
        count,
        offsets: Some((kp, kc)),
        ..
    } = ids
    else {
        return Some((all.clone(), all));
    };
    if kp == kc || site.primed.is_none() {
        return Some((all.clone(), all));
    }
    let trips = match tree.loop_head(site.primed?)?.count {
        crate::isa::Val::Imm(t) => t,
        crate::isa::Val::Reg(_) => return None,
    };
    let n = i64::from(count);
    let d = match (i64::from(kp) - i64::from(kc)).rem_euclid(n) {
        0 => n,
        d => d,
    };
    // The ids `(c + kp) % n` for the `d` iterations `c` from `from`, ascending.
    let slots = |from: i64| -> Vec<u32> {
        let first = (from + i64::from(kp)).rem_euclid(n);
        (0..count)
            .filter(|&k| (i64::from(k) - first).rem_euclid(n) < d)
            .collect()
    };
    Some((slots(-d), slots(trips - d)))
}
