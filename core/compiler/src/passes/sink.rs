//! sink-to-use: within each block, a load or a move of a matrix operand into L0A / L0B
//! moves down to just before the first op that reads it. Every pipe runs its queue in
//! program order, so the order of these ops is the order the transfer pipes serve them:
//! sinking lets the data the next computation needs arrive first (attention moves `k`
//! into L0B before `v`, which only the second product reads; scatter loads the rows it
//! adds to before the index only the final scatter reads). A load never moves past a
//! store or a loop (which may store), so it reads what it read before.

use super::{Context, Pass};
use crate::diag::Diagnostics;
use crate::ir::analysis::{reads, writes_memory};
use crate::ir::{BlockItem, Kernel, OpId, OpKind, ValueSet};
use crate::types::MemSpace;

pub struct SinkToUse;

impl Pass for SinkToUse {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "sink-to-use"
    }

    fn description(&self) -> &'static str {
        "move loads and matrix-operand moves down to their first use, so transfers run in the order they are consumed"
    }

    fn optional(&self) -> bool {
        true
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let k = cx.ir_mut(self.name())?;
        for (path, _) in k.blocks() {
            sink_block(k, &path);
        }
        Ok(())
    }
}

/// Loads, and copies or transposes into a matrix operand buffer.
fn movable(k: &Kernel, op: OpId) -> bool {
    let Some(o) = k.ops.get(op) else { return false };
    let into_l0 = o
        .results
        .first()
        .and_then(|&r| k.values.get(r))
        .is_some_and(|v| matches!(v.space, Some(MemSpace::L0A | MemSpace::L0B)));
    match o.kind {
        OpKind::Load { .. } => true,
        OpKind::Copy { .. } | OpKind::Transpose { .. } | OpKind::Slice { .. } => into_l0,
        _ => false,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Load,
    Move,
}

fn kind_of(k: &Kernel, op: OpId) -> Kind {
    match k.ops.get(op).map(|o| &o.kind) {
        Some(OpKind::Load { .. }) => Kind::Load,
        _ => Kind::Move,
    }
}

/// How far an op may sink, in ops: bounds the pass's work on long blocks.
const MAX_SINK: usize = 64;

/// The position of the first op after `i` (within `MAX_SINK`) that reads what op `i`
/// defines.
fn first_user(k: &Kernel, ops: &[(OpId, ValueSet)], i: usize) -> Option<usize> {
    let (op, _) = ops.get(i)?;
    let results = &k.ops.get(*op)?.results;
    ops.iter()
        .enumerate()
        .skip(i + 1)
        .take(MAX_SINK)
        .find(|(_, (_, r))| results.iter().any(|v| r.contains(v)))
        .map(|(j, _)| j)
}

fn sink_block(k: &mut Kernel, path: &[OpId]) {
    let Some(block) = k.block_mut(path) else {
        return;
    };
    // Steps do not exist yet when this pass runs; a block that has them is left alone.
    let mut order: Vec<OpId> = Vec::with_capacity(block.items.len());
    for item in &block.items {
        match item {
            BlockItem::Op(op) => order.push(*op),
            BlockItem::Step(_) => return,
        }
    }
    let reads: Vec<ValueSet> = order.iter().map(|&op| reads(k, op)).collect();
    // Walk from the end so an op sinks below ops that have already settled.
    let mut ops: Vec<(OpId, ValueSet)> = order.into_iter().zip(reads).collect();
    for i in (0..ops.len()).rev() {
        let Some((op, _)) = ops.get(i) else { continue };
        let op = *op;
        if !movable(k, op) {
            continue;
        }
        let kind = kind_of(k, op);
        let Some(user) = first_user(k, &ops, i) else {
            continue;
        };
        // An op of the same kind whose own first use comes no earlier keeps its place
        // ahead: the pipe serves both in first-use order (attention's `k` before `v`,
        // a loop's matrix operand before the bias its vector tail adds).
        let mut target = i;
        for j in i + 1..user {
            let Some((other, _)) = ops.get(j) else { break };
            if kind == Kind::Load && writes_memory(k, *other) {
                break;
            }
            if movable(k, *other)
                && kind_of(k, *other) == kind
                && first_user(k, &ops, j).is_none_or(|u| u >= user)
            {
                break;
            }
            target = j;
        }
        if target > i {
            let moved = ops.remove(i);
            ops.insert(target, moved);
        }
    }
    if let Some(block) = k.block_mut(path) {
        block.items = ops.into_iter().map(|(op, _)| BlockItem::Op(op)).collect();
    }
}
