//! Loop-invariant code motion: a computation in a loop body whose operands are all
//! defined outside the loop moves in front of the loop, so it runs once instead of
//! every iteration. The case that matters is a matrix operand rebuilt from a tile the
//! loop only reads (attention's `kt.T`, which otherwise refills L0B on every block).
//!
//! Only computations move: loads (their tensor may be stored by the loop), stores,
//! loop-carried updates, index values (they read the loop variable) and constants
//! (nothing to save) stay. Inner loops go first, so an op can leave a whole nest in
//! one run.

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

/// Moves the invariant ops of loop `lp`'s body in front of `lp` in the block at
/// `parent`; returns whether any moved.
fn hoist_from(k: &mut Kernel, lp: OpId, parent: &[OpId]) -> bool {
    let OpKind::For(l) = &k.ops[lp].kind else {
        return false;
    };
    let mut inside: ValueSet = l.args.iter().copied().collect();
    // Constants of the body count as invariant and move along with their first
    // moving reader (later readers in the body still see them).
    let mut constants: ValueMap<OpId> = DenseMap::new();
    k.walk_ops_from(l.body.ops().collect(), |_, op| {
        inside.extend(op.results.iter().copied())
    });
    for item in &l.body.items {
        if let BlockItem::Op(id) = item {
            if let OpKind::Full { .. } = k.ops[*id].kind {
                for r in &k.ops[*id].results {
                    inside.remove(r);
                    constants.insert(*r, *id);
                }
            }
        }
    }
    let mut moved = Vec::new();
    for item in &l.body.items {
        let BlockItem::Op(id) = item else { continue };
        let op = &k.ops[*id];
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
            moved.push(*id);
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
    if let Some(body) = k.block_mut(&[parent, &[lp]].concat()) {
        body.retain_ops(|op| !moved.contains(&op));
    }
    let Some(outer) = k.block_mut(parent) else {
        return false;
    };
    outer
        .items
        .splice(at..at, moved.into_iter().map(BlockItem::Op));
    true
}

fn movable(kind: &OpKind) -> bool {
    match kind {
        OpKind::Unary { .. }
        | OpKind::Binary { .. }
        | OpKind::Reduce { .. }
        | OpKind::Transpose { .. }
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
