//! sink-to-use: within each block, a load or a move of a matrix operand into L0A / L0B
//! moves down to just before the first op that reads it. Every pipe runs its queue in
//! program order, so the order of these ops is the order the transfer pipes serve them:
//! sinking lets the data the next computation needs arrive first (attention moves `k`
//! into L0B before `v`, which only the second product reads; scatter loads the rows it
//! adds to before the index only the final scatter reads). A load never moves past a
//! store or a loop (which may store), so it reads what it read before.
//!
//! A move into L0A / L0B ahead of a loop that alone reads it (a weight's `kt.T`, which
//! LICM hoisted, or the copy scope-inference placed at a load ahead of the loop) holds
//! its L0 tile for the whole loop. L0 is small: two such tiles can overflow it where one
//! at a time fits (attention's `kt.T` and `vt`, each a whole L0B). When the kernel does
//! not fit, such moves go into the loop, before their first reader, so each tile lives
//! one iteration; the operand then moves again every iteration, so this is done only
//! when the rest of the compile (up to plan-memory) fails without it and succeeds with
//! it.

use super::{Context, Pass};
use crate::diag::Diagnostics;
use crate::ir::analysis::{reads, writes_memory};
use crate::ir::{BlockItem, Kernel, OpId, OpKind, ValueId, ValueSet};
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
        // What moving L0 tiles into loops is tried against: the passes up to
        // plan-memory, as the compile will run them.
        let trial = super::Trial::new(cx, self.name(), "lower-to-pipes")?;
        let k = cx.ir_mut(self.name())?;
        for (path, _) in k.blocks() {
            sink_block(k, &path);
        }
        let mut inside = k.clone();
        if sink_into_loops(&mut inside)
            && !trial.succeeds(k.clone())
            && trial.succeeds(inside.clone())
        {
            *k = inside;
        }
        Ok(())
    }
}

/// Rounds of [`sink_into_loops`], each moving ops one loop deeper.
const MAX_LOOP_DEPTH: usize = 8;

/// Gives every loop that reads a move into L0A / L0B made ahead of it in its block a
/// move of its own, in its body before the first op that reads it, as deep as such
/// loops nest; the move ahead stays only for the readers outside loops (peel-first's
/// first iteration). Returns whether any loop got one. Each block is then ordered as
/// `sink_block` orders blocks.
fn sink_into_loops(k: &mut Kernel) -> bool {
    let mut moved = false;
    for _ in 0..MAX_LOOP_DEPTH {
        let mut any = false;
        for (path, _) in k.blocks() {
            any |= into_loops(k, &path);
        }
        if !any {
            break;
        }
        moved = true;
    }
    if moved {
        for (path, _) in k.blocks() {
            sink_block(k, &path);
        }
    }
    moved
}

/// One block's part of [`sink_into_loops`].
fn into_loops(k: &mut Kernel, path: &[OpId]) -> bool {
    let Some(block) = k.block_mut(path) else {
        return false;
    };
    if block.items.iter().any(|i| matches!(i, BlockItem::Step(_))) {
        return false;
    }
    let order: Vec<OpId> = block.ops().collect();
    let mut changed = false;
    for &op in &order {
        if !movable(k, op) || kind_of(k, op) != Kind::Move {
            continue;
        }
        let Some(&result) = k.ops.get(op).and_then(|o| o.results.first()) else {
            continue;
        };
        let loops: Vec<OpId> = order
            .iter()
            .copied()
            .filter(|&o| matches!(k.ops.get(o).map(|x| &x.kind), Some(OpKind::For(_))))
            .filter(|&o| reads(k, o).contains(&result))
            .collect();
        for lp in loops {
            changed |= own_move(k, path, op, result, lp);
        }
        // The move ahead is left without readers when loops read it alone.
        let read = order
            .iter()
            .any(|&o| o != op && reads(k, o).contains(&result));
        if !read {
            if let Some(outer) = k.block_mut(path) {
                outer.retain_ops(|o| o != op);
            }
        }
    }
    changed
}

/// Gives loop `lp` (in the block at `path`) its own copy of move `op`, whose `result`
/// its body reads: placed before the body's first reader, read by the body instead.
fn own_move(k: &mut Kernel, path: &[OpId], op: OpId, result: ValueId, lp: OpId) -> bool {
    let Some(OpKind::For(l)) = k.ops.get(lp).map(|o| &o.kind) else {
        return false;
    };
    if l.inits.contains(&result) || l.yields.contains(&result) {
        return false;
    }
    let body: Vec<OpId> = l.body.ops().collect();
    // The body has no steps either (they come later), so `at` is an item index.
    let Some(at) = body.iter().position(|&o| reads(k, o).contains(&result)) else {
        return false;
    };
    let (Some(orig), Some(value)) = (k.ops.get(op).cloned(), k.values.get(result).cloned()) else {
        return false;
    };
    let (copy, fresh) = k.add_op(orig.kind, orig.span, value.ty.clone(), value.name.clone());
    if let Some(v) = k.values.get_mut(fresh) {
        v.space = value.space;
        v.attrs = value.attrs.clone();
    }
    k.annotations.copy(op, copy);
    let mut inner = path.to_vec();
    inner.push(lp);
    match k.block_mut(&inner) {
        Some(b) if at <= b.items.len() => b.items.insert(at, BlockItem::Op(copy)),
        _ => return false,
    }
    let mut readers = Vec::new();
    k.walk_ops_from(body, |id, _| readers.push(id));
    for id in readers {
        if let Some(o) = k.ops.get_mut(id) {
            o.kind.map_operands(|v| if v == result { fresh } else { v });
        }
    }
    true
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
