//! Dead-code elimination: removes pure ops and loads (not gathers) whose results are
//! unused, and loops that store nothing and whose results are unused. Blocks are walked backwards with live
//! use counts, so a whole dead chain goes in one pass.

use crate::dense::DenseSet;
use crate::ir::{Index, Kernel, OpId, OpKind, OpSet};

pub fn run(k: &mut Kernel) -> bool {
    let mut uses = k.use_counts();
    let mut dead = DenseSet::new();
    let body: Vec<OpId> = k.body.ops().collect();
    sweep(k, &body, &mut uses, &mut dead);
    if dead.is_empty() {
        return false;
    }
    for (path, _) in k.blocks() {
        if let Some(b) = k.block_mut(&path) {
            b.retain_ops(|op| !dead.contains(&op));
        }
    }
    true
}

fn unused(k: &Kernel, id: OpId, uses: &[u32]) -> bool {
    k.ops[id]
        .results
        .iter()
        .all(|r| uses.get(r.index()).is_none_or(|&n| n == 0))
}

fn sweep(k: &Kernel, ops: &[OpId], uses: &mut [u32], dead: &mut OpSet) {
    for &id in ops.iter().rev() {
        let op = &k.ops[id];
        let removable = match &op.kind {
            OpKind::For(_) => !stores_inside(k, id) && unused(k, id, uses),
            // A load without an indirect index reads a region the checker proved
            // inside its tensor: unread, it goes (a condition reads its own element of
            // `let on = load mask[i, j]`). A gather may fail at run time, so it stays.
            OpKind::Load { index, .. } => {
                !index.iter().any(|ix| matches!(ix, Index::Indirect(_))) && unused(k, id, uses)
            }
            kind => kind.is_pure() && unused(k, id, uses),
        };
        if removable {
            // Everything inside a dead loop dies with it; release what it all read.
            let mut gone = vec![id];
            let mut i = 0;
            while let Some(&g) = gone.get(i) {
                for v in k.ops[g].kind.operands() {
                    if let Some(n) = uses.get_mut(v.index()) {
                        *n = n.saturating_sub(1);
                    }
                }
                if let OpKind::For(l) = &k.ops[g].kind {
                    gone.extend(l.body.ops());
                }
                i += 1;
            }
            dead.extend(gone);
        } else if let OpKind::For(l) = &op.kind {
            let body: Vec<OpId> = l.body.ops().collect();
            sweep(k, &body, uses, dead);
        }
    }
}

fn stores_inside(k: &Kernel, id: OpId) -> bool {
    let mut stack = vec![id];
    while let Some(op) = stack.pop() {
        match &k.ops[op].kind {
            OpKind::Store { .. } => return true,
            OpKind::For(l) => stack.extend(l.body.ops()),
            _ => {}
        }
    }
    false
}
