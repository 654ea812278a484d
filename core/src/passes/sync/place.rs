//! Where the instructions of a new pair go, given the producer and consumer instances
//! the walk found: in the innermost block that holds both, hoisted out of any inner
//! loop only one of them is in (so every set runs exactly as often as its wait), and
//! primed and drained around the loop whose back edge the dependence crosses.

use super::tree::{Ids, NodeId, Pair, PairId, Reason, Sync, Tree};
use super::walk::Inst;
use crate::diag::Diagnostic;

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
}

fn internal(msg: &str) -> Diagnostic {
    Diagnostic::global(format!("internal error: insert-sync: {msg}"))
}

pub fn site(tree: &Tree, p: &Inst, c: &Inst) -> Result<Site, Diagnostic> {
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
    let after = tree
        .child_in(p.node, owner)
        .ok_or_else(|| internal("producer outside its block"))?;
    let before = tree
        .child_in(c.node, owner)
        .ok_or_else(|| internal("consumer outside its block"))?;
    let (pa, pc) = (
        tree.position(after).unwrap_or(0),
        tree.position(before).unwrap_or(0),
    );
    if pa < pc {
        // Ordering this iteration's instances orders the later ones by program order.
        carried = None;
    } else if carried.is_none() {
        return Err(internal("a dependence runs backwards outside any loop"));
    }
    Ok(Site {
        owner,
        after,
        before,
        carried,
    })
}

/// Adds a pair at `site` and its instructions to the tree.
pub fn add_pair(
    tree: &mut Tree,
    site: &Site,
    p: &Inst,
    c: &Inst,
    rotation: Option<(NodeId, u32)>,
    reason: Reason,
) -> Result<PairId, Diagnostic> {
    // Slot ids only where both anchors run inside the rotating loop and, for a back
    // edge, the edge is that loop's (the slot repeats every `count` iterations).
    let ids = match rotation {
        Some((rot, count))
            if count > 1
                && (site.owner == Some(rot)
                    || site.owner.is_some_and(|o| tree.loops_of(o).contains(&rot)))
                && site.carried.is_none_or(|l| l == rot) =>
        {
            Ids::Dynamic {
                rotation: rot,
                count,
            }
        }
        _ => Ids::Static,
    };
    let id = tree.pairs.len();
    tree.pairs.push(Pair {
        src: p.pipe,
        dst: c.pipe,
        ids,
        carried: site.carried,
        reason,
        nodes: Vec::new(),
        removed: false,
        barrier: false,
        base: 0,
        set_prov: tree.prov(p.node),
        wait_prov: tree.prov(c.node),
    });
    let mut nodes = Vec::new();
    let fail = || internal("anchor vanished");
    nodes.push(
        tree.insert(site.after, Sync::Set(id), true)
            .ok_or_else(fail)?,
    );
    nodes.push(
        tree.insert(site.before, Sync::Wait(id), false)
            .ok_or_else(fail)?,
    );
    if let Some(l) = site.carried {
        for k in 0..ids.count() {
            nodes.push(tree.insert(l, Sync::Prime(id, k), false).ok_or_else(fail)?);
        }
        for k in (0..ids.count()).rev() {
            nodes.push(tree.insert(l, Sync::Drain(id, k), true).ok_or_else(fail)?);
        }
    }
    if let Some(pair) = tree.pairs.get_mut(id) {
        pair.nodes = nodes;
    }
    Ok(id)
}
