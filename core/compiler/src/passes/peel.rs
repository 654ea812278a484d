//! peel-first: a loop-invariant load ahead of a loop sits in the transfer pipe's queue in
//! front of the loop's own first load. When the body needs that invariant data only late
//! (rmsnorm's weight at the final multiply, a linear layer's bias after the product),
//! the first iteration's computation waits for a transfer it does not need yet. This
//! pass peels the first iteration off such a loop and moves the late invariant load (with
//! the pure ops that only prepare it, such as its cast) down to just before its first use
//! in the peeled copy, so the first iteration's load is issued first:
//!
//! ```text
//! %wt = load %w            for %r in 0..8 step 8 { ... }   (peeled, %r = 0,
//! for %r in 0..32 step 8 {   -> %wt = load %w at its first use inside)
//!   ...                    for %r in 8..32 step 8 { ... }
//! ```
//!
//! Every iteration still runs once, in order, with the same loads and stores, so
//! results are unchanged. insert-sync raises the primes of the remaining loop's
//! multi-buffer flags above the copy's work (`sync::place`), so the loop's first loads
//! do not wait for the copy to finish. A peel is made only where the cost model (`cost`) says the
//! first iteration gains: the moved transfer time, bounded by the non-transfer work of
//! the first iteration that precedes the moved load's first use.

use super::cost::op_cycles;
use super::{Context, Pass};
use crate::diag::Diagnostics;
use crate::ir::analysis::{reads, writes_memory};
use crate::ir::rewrite::Cloner;
use crate::ir::{BlockItem, ForOp, IndexExpr, Kernel, OpId, OpKind, ValueDef, ValueId, ValueSet};
use crate::machine::Machine;
use crate::types::Pipe;

pub struct PeelFirst;

impl Pass for PeelFirst {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "peel-first"
    }

    fn description(&self) -> &'static str {
        "peel a loop's first iteration so its loads run before invariant loads it needs only late"
    }

    fn optional(&self) -> bool {
        true
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        let k = cx.ir_mut(self.name())?;
        // Blocks are listed before any peel: copies made by a peel are not peeled again,
        // so each loop is peeled at most once and the kernel at most doubles per level.
        for (path, _) in k.blocks() {
            if k.ops.len() > MAX_KERNEL_OPS_TO_PEEL {
                break;
            }
            if let Some(plan) = find(k, &machine, &path) {
                peel(k, &path, &plan);
            }
        }
        let mut notes = Vec::new();
        for (path, _) in k.blocks() {
            notes.extend(declined(k, &machine, &path));
        }
        for (span, var) in notes {
            cx.note(
                span,
                format!("loop `{var}` keeps its first iteration: peeling it would start its loads sooner, but how many times it runs depends on an outer loop (it may run fewer than twice)"),
            );
        }
        Ok(())
    }
}

/// Below this estimated gain in cycles a peel is not worth the longer program (the
/// peeled copy's own address setup on the scalar pipe costs a few cycles per op).
pub const MIN_GAIN_CYCLES: u64 = 32;

/// Bodies larger than this (ops, nested loops included) are not copied.
pub const MAX_PEEL_OPS: usize = 256;

/// Only kernels this far below `MAX_IR_OPS` grow by a copy, so a peel does not push a
/// kernel that compiled over a size limit of a later pass.
const MAX_KERNEL_OPS_TO_PEEL: usize = crate::limits::MAX_IR_OPS / 4;

/// How many ops before a loop are searched for invariant loads: bounds the pass's work
/// on long blocks (as `sink-to-use` bounds how far an op sinks).
const MAX_LOOKBACK: usize = 64;

/// A chosen peel: the loop and the invariant ops that move into its first iteration.
#[derive(Clone, Debug)]
pub struct Peel {
    pub for_op: OpId,
    /// Ops of the enclosing block before the loop, in order, that move into the peeled
    /// copy (each late load followed by the pure ops preparing its value).
    pub moved: Vec<OpId>,
    /// The estimated cycles the first iteration starts its late work sooner.
    pub gain: u64,
}

fn block_ops(k: &Kernel, path: &[OpId]) -> Option<Vec<OpId>> {
    let block = match path.last() {
        None => &k.body,
        Some(op) => match &k.ops.get(*op)?.kind {
            OpKind::For(l) => &l.body,
            _ => return None,
        },
    };
    // Steps do not exist yet when this pass runs; a block that has them is left alone.
    if block.items.iter().any(|i| matches!(i, BlockItem::Step(_))) {
        return None;
    }
    Some(block.ops().collect())
}

fn op_count(k: &Kernel, root: OpId) -> usize {
    let mut n = 0;
    k.walk_ops_from(vec![root], |_, _| n += 1);
    n
}

/// The first loop of the block at `path` worth peeling, with what moves into its copy.
pub fn find(k: &Kernel, machine: &Machine, path: &[OpId]) -> Option<Peel> {
    let ops = block_ops(k, path)?;
    // A loop whose end depends on an outer loop may run fewer than two times.
    let twice = |l: &ForOp| l.static_trip_count().is_some_and(|n| n >= 2);
    (0..ops.len()).find_map(|p| worth(k, machine, &ops, p, twice))
}

/// The loops of the block at `path` that would be worth peeling but for a trip count
/// that depends on an outer loop: where each is and its variable's name.
fn declined(k: &Kernel, machine: &Machine, path: &[OpId]) -> Vec<(crate::diag::Span, String)> {
    let Some(ops) = block_ops(k, path) else {
        return Vec::new();
    };
    let varies = |l: &ForOp| {
        l.static_trip_count().is_none() && l.end.guard().is_none() && l.max_trip_count() >= 2
    };
    (0..ops.len())
        .filter_map(|p| {
            let plan = worth(k, machine, &ops, p, varies)?;
            let op = k.ops.get(plan.for_op)?;
            let OpKind::For(l) = &op.kind else {
                return None;
            };
            Some((op.span, k.loop_vars.get(l.var)?.name.clone()))
        })
        .collect()
}

/// The peel of `ops[p]` when it is a loop whose trip count `trips` accepts, that carries
/// no state, is small enough to copy, and gains from the invariant loads before it.
fn worth(
    k: &Kernel,
    machine: &Machine,
    ops: &[OpId],
    p: usize,
    trips: impl Fn(&ForOp) -> bool,
) -> Option<Peel> {
    let f = *ops.get(p)?;
    let Some(OpKind::For(l)) = k.ops.get(f).map(|o| &o.kind) else {
        return None;
    };
    if !trips(l) || !l.inits.is_empty() || op_count(k, f) > MAX_PEEL_OPS {
        return None;
    }
    let before = ops
        .get(p.saturating_sub(MAX_LOOKBACK)..p)
        .unwrap_or_default();
    plan_loop(k, machine, before, f, l)
}

/// The invariant chains before loop `f` (`before` is the block up to it) that its body
/// reads only after it has read one of its own loads, and the gain of moving them.
fn plan_loop(k: &Kernel, machine: &Machine, before: &[OpId], f: OpId, l: &ForOp) -> Option<Peel> {
    let body: Vec<OpId> = l.body.ops().collect();
    let body_reads: Vec<ValueSet> = body.iter().map(|&op| reads(k, op)).collect();
    let results = |op: OpId| k.ops.get(op).map(|o| o.results.clone()).unwrap_or_default();
    let first_read = |vals: &ValueSet| {
        body_reads
            .iter()
            .position(|r| r.iter().any(|v| vals.contains(&v)))
    };
    let own_loads: ValueSet = body
        .iter()
        .filter(|&&op| matches!(k.ops.get(op).map(|o| &o.kind), Some(OpKind::Load { .. })))
        .flat_map(|&op| results(op))
        .collect();
    let own_first = first_read(&own_loads)?;
    // The body's first memory write bounds where a moved load may go.
    let first_write = body
        .iter()
        .position(|&op| writes_memory(k, op))
        .unwrap_or(body.len());
    let mut moved = Vec::new();
    let mut gain = 0u64;
    for (q, &op) in before.iter().enumerate() {
        if !matches!(k.ops.get(op).map(|o| &o.kind), Some(OpKind::Load { .. })) {
            continue;
        }
        let Some(chain) = chain(k, &before[q..]) else {
            continue;
        };
        let values: ValueSet = chain.iter().flat_map(|&c| results(c)).collect();
        let Some(use_at) = first_read(&values) else {
            continue;
        };
        if use_at <= own_first || use_at > first_write {
            continue;
        }
        // The first iteration's work that no longer waits for this transfer: what the
        // other pipes do between the body's first use of its own load and this use.
        let overlap: u64 = body
            .get(own_first..use_at)
            .unwrap_or_default()
            .iter()
            .filter(|&&b| crate::ir::analysis::op_pipe(k, b).is_some_and(|p| p != Pipe::MTE2))
            .map(|&b| op_cycles(machine, k, b))
            .sum();
        let transfer: u64 = chain
            .iter()
            .filter(|&&c| crate::ir::analysis::op_pipe(k, c) == Some(Pipe::MTE2))
            .map(|&c| op_cycles(machine, k, c))
            .sum();
        gain += transfer.min(overlap);
        moved.extend(chain);
    }
    (gain >= MIN_GAIN_CYCLES).then_some(Peel {
        for_op: f,
        moved,
        gain,
    })
}

/// The load `ops[0]` and the pure ops after it (up to the loop) that read only values of
/// this chain or values defined before the load, when nothing else before the loop reads
/// the chain and nothing between the load and the loop writes memory; `None` otherwise.
fn chain(k: &Kernel, ops: &[OpId]) -> Option<Vec<OpId>> {
    let (&load, rest) = ops.split_first()?;
    let mut values: ValueSet = k.ops.get(load)?.results.iter().copied().collect();
    let mut out = vec![load];
    for &op in rest {
        let o = k.ops.get(op)?;
        if writes_memory(k, op) {
            return None;
        }
        let operands = o.kind.operands();
        if !operands.iter().any(|v| values.contains(v)) {
            continue;
        }
        let only_chain = operands
            .iter()
            .all(|v| values.contains(v) || defined_before(k, *v, load, ops));
        if !o.kind.is_pure() || !only_chain {
            return None;
        }
        values.extend(o.results.iter().copied());
        out.push(op);
    }
    Some(out)
}

/// `v` is not defined by any op in `ops` from `load` on (so it is available wherever the
/// chain moves, which is later in the same block).
fn defined_before(k: &Kernel, v: ValueId, load: OpId, ops: &[OpId]) -> bool {
    match k.values.get(v).map(|x| x.def) {
        Some(ValueDef::Result { op, .. }) => op != load && !ops.contains(&op),
        Some(ValueDef::LoopArg { .. }) => true,
        None => false,
    }
}

/// Copies loop `plan.for_op`'s first iteration in front of it, moves `plan.moved` to just
/// before the first op of the copy that reads them, and starts the loop one step later.
fn peel(k: &mut Kernel, path: &[OpId], plan: &Peel) {
    let Some(OpKind::For(l)) = k.ops.get(plan.for_op).map(|o| o.kind.clone()) else {
        return;
    };
    let mut cloner = Cloner::default();
    let mut copy = cloner.block(k, &l.body);
    let first = IndexExpr::Const(l.start);
    let mut renames = vec![(l.var, first)];
    renames.extend(
        cloner
            .vars
            .iter()
            .map(|&(old, new)| (old, IndexExpr::Var(new))),
    );
    crate::ir::rewrite::visit_exprs_from(k, cloner.ops.clone(), true, |e| {
        for (var, with) in &renames {
            crate::ir::rewrite::replace_var(e, *var, with);
        }
    });
    // The moved ops go, in their order, before the first op of the copy reading any
    // of them (planning checked that no memory write of the copy comes earlier).
    let moved_values: ValueSet = plan
        .moved
        .iter()
        .filter_map(|&op| k.ops.get(op))
        .flat_map(|o| o.results.iter().copied())
        .collect();
    let at = copy
        .iter()
        .position(|&op| reads(k, op).iter().any(|v| moved_values.contains(&v)))
        .unwrap_or(copy.len());
    copy.splice(at..at, plan.moved.iter().copied());
    if let Some(OpKind::For(fl)) = k.ops.get_mut(plan.for_op).map(|o| &mut o.kind) {
        fl.start = fl.start.saturating_add(fl.step);
    }
    let Some(block) = k.block_mut(path) else {
        return;
    };
    let mut items: Vec<BlockItem> = Vec::with_capacity(block.items.len() + copy.len());
    for item in std::mem::take(&mut block.items) {
        match item {
            BlockItem::Op(op) if plan.moved.contains(&op) => {}
            BlockItem::Op(op) if op == plan.for_op => {
                items.extend(copy.iter().map(|&c| BlockItem::Op(c)));
                items.push(BlockItem::Op(op));
            }
            other => items.push(other),
        }
    }
    block.items = items;
}
