//! Loop-invariant code motion: a computation in a loop body whose operands are all
//! defined outside the loop moves in front of the loop, so it runs once instead of
//! every iteration. The case that matters is a matrix operand rebuilt from a tile the
//! loop only reads (attention's `kt.T`, which otherwise refills L0B on every block).
//!
//! Only computations move: loads (their tensor may be stored by the loop), stores,
//! loop-carried updates, index values (they read the loop variable) and constants
//! (nothing to save) stay. A branch (`if`, a region that runs once or not at all) is
//! not a loop to hoist from, but what it computes from values defined outside the
//! loop around it leaves that loop. Inner loops go first, so an op can leave a whole
//! nest in one run.

use crate::dense::DenseMap;
use crate::ir::{BlockItem, Kernel, OpId, OpKind, ValueMap, ValueSet};

pub fn run(k: &mut Kernel) -> bool {
    let mut changed = false;
    // `blocks` lists outer blocks before inner ones.
    for (path, _) in k.blocks().into_iter().rev() {
        let Some((&lp, parent)) = path.split_last() else {
            continue;
        };
        changed |= hoist_from(k, lp, parent);
    }
    changed
}

/// Moves the invariant ops of loop `lp`'s body, and of the branches in it, in front of
/// `lp` in the block at `parent`; returns whether any moved. A branch itself moves
/// nothing out (its work is what the `if` skips), but an op in a branch that reads
/// nothing of the loop leaves the loop with the others: it then runs once before the
/// loop, not once per iteration that takes the branch.
fn hoist_from(k: &mut Kernel, lp: OpId, parent: &[OpId]) -> bool {
    let OpKind::For(l) = &k.ops[lp].kind else {
        return false;
    };
    if l.end.guard().is_some() {
        return false;
    }
    // Every value the loop defines, the block arguments of loops inside it included.
    let mut inside: ValueSet = l.args.iter().copied().collect();
    k.walk_ops_from(l.body.ops().collect(), |_, op| {
        inside.extend(op.results.iter().copied());
        if let OpKind::For(inner) = &op.kind {
            inside.extend(inner.args.iter().copied());
        }
    });
    // The body and the branches in it, in program order, each op with the loop (or
    // branch) whose block holds it.
    let mut order: Vec<(OpId, OpId)> = Vec::new();
    let mut stack = vec![(lp, l.body.ops().collect::<Vec<_>>().into_iter())];
    while let Some((owner, items)) = stack.last_mut() {
        let owner = *owner;
        let Some(id) = items.next() else {
            stack.pop();
            continue;
        };
        match &k.ops[id].kind {
            OpKind::For(b) if b.end.guard().is_some() => {
                stack.push((id, b.body.ops().collect::<Vec<_>>().into_iter()));
            }
            _ => order.push((owner, id)),
        }
    }
    // Constants count as invariant and move along with their first moving reader
    // (later readers still see them).
    let mut constants: ValueMap<(OpId, OpId)> = DenseMap::new();
    for &(owner, id) in &order {
        if let OpKind::Full { .. } = k.ops[id].kind {
            for r in &k.ops[id].results {
                inside.remove(r);
                constants.insert(*r, (owner, id));
            }
        }
    }
    let mut moved: Vec<(OpId, OpId)> = Vec::new();
    for &(owner, id) in &order {
        let op = &k.ops[id];
        let operands = op.kind.operands();
        if movable(&op.kind) && operands.iter().all(|v| !inside.contains(v)) {
            for v in &operands {
                if let Some(c) = constants.remove(v) {
                    moved.push(c);
                }
            }
            for r in &op.results {
                inside.remove(r);
            }
            moved.push((owner, id));
        }
    }
    if moved.is_empty() {
        return false;
    }
    // Where the loop stands in its block, found before anything moves: a hoisted op
    // placed anywhere else could run before the values it reads are defined.
    let Some(at) = k.block_mut(parent).and_then(|outer| {
        outer
            .items
            .iter()
            .position(|item| matches!(item, BlockItem::Op(op) if *op == lp))
    }) else {
        return false;
    };
    let ids: Vec<OpId> = moved.iter().map(|&(_, id)| id).collect();
    let mut owners: Vec<OpId> = moved.iter().map(|&(owner, _)| owner).collect();
    owners.sort_unstable();
    owners.dedup();
    for owner in owners {
        if let Some(body) = k.block_mut(&[owner]) {
            body.retain_ops(|op| !ids.contains(&op));
        }
    }
    let Some(outer) = k.block_mut(parent) else {
        return false;
    };
    outer
        .items
        .splice(at..at, ids.into_iter().map(BlockItem::Op));
    true
}

fn movable(kind: &OpKind) -> bool {
    match kind {
        OpKind::Unary { .. }
        | OpKind::Binary { .. }
        | OpKind::Reduce { .. }
        | OpKind::Transpose { .. }
        | OpKind::Reshape { .. }
        | OpKind::Cast { .. }
        | OpKind::Copy { .. }
        | OpKind::Compare { .. }
        | OpKind::Select { .. }
        // Unlike a constant fill, an iota is worth computing once: the causal mask's
        // `iota(..) + i` rebuilds only the sum in the loop.
        | OpKind::Iota { .. }
        | OpKind::Fused { .. } => true,
        OpKind::MatMul { acc, .. } => acc.is_none(),
        OpKind::Load { .. }
        | OpKind::Store { .. }
        | OpKind::Full { .. }
        | OpKind::IndexValue { .. }
        // subtile-matmul makes slices after this pass runs, each indexed by its loop.
        | OpKind::Slice { .. }
        | OpKind::Update { .. }
        | OpKind::Buffers
        | OpKind::SlotWrite { .. }
        | OpKind::SlotRead { .. }
        | OpKind::For(_) => false,
    }
}
