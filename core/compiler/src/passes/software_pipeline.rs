//! software-pipeline: every pipe runs its queue in program order, so in a loop whose
//! body uses the matrix pipes both before and after its vector work (attention: the
//! scores product, the softmax on V, then the product with `v`), iteration i + 1's first
//! product queues behind iteration i's second one, which waits for iteration i's
//! softmax: the vector unit idles while the next scores are computed. A short loop of
//! this shape is unrolled and skewed by one stage, so each iteration's matrix-side
//! prologue (stage A: the ops before the first vector op) is issued before the previous
//! iteration's vector work and everything after it (stage B):
//!
//! ```text
//! for %i in 0..64 step 16 { A(%i); B(%i) }  ->  A(0) A(16) B(0) A(32) B(16) A(48) B(32) B(48)
//! ```
//!
//! The skew is made only where one iteration's vector work takes well over the time of
//! the stage issued ahead of it (by `cost::op_cycles`), so the stage hides behind it.
//!
//! A loop that carries state (an accumulator each block rescales and adds to) is
//! unrolled the same way: each copy reads what the one before yielded, and the loop's
//! results are the last copy's. Stage A may read none of that state, so issuing A(i + 1)
//! before B(i) reads nothing B(i) has yet to write. No loop is unrolled whose copies'
//! tiles would need more event ids on a pipe pair than the machine has: insert-sync
//! would turn pairs into barriers (flash attention's key blocks, a k and a v tile each,
//! took all 8 MTE2 -> MTE1 ids, and insert-sync five times as long).
//!
//! Every op of the unrolled copies is an SSA value, so the only orders that change are
//! between A of one iteration and B of the previous one: stage A holds no stores, and
//! its loads read no tensor the loop stores, so every load and store still touches the
//! same data. A loop is unrolled only where the rest of the pipeline up to plan-memory,
//! run on a copy of the unrolled kernel, still places every tile: the passes are
//! deterministic, so the unroll never turns a kernel that compiled into a capacity
//! error.

use super::cost::op_cycles;
use super::{Context, Pass};
use crate::dense::DenseSet;
use crate::diag::Diagnostics;
use crate::ir::analysis::op_pipe;
use crate::ir::rewrite::Cloner;
use crate::ir::{BlockItem, Index, IndexExpr, Kernel, OpId, OpKind};
use crate::machine::Machine;
use crate::types::Pipe;

pub struct SoftwarePipeline;

/// Loops with more iterations keep their loop (and multi-buffer slots). The gain
/// shrinks as trips grow, since a multi-buffered loop prefetches several iterations
/// ahead while the skew issues one stage ahead: over every shape the property test
/// draws, 2 to 5 trips gain 8 to 16%, 7 trips still gain in each, and at 8 the unroll
/// lost up to 2% (softmax over 16 x 128 blocks on a3: 9474 cycles against 9293).
pub const MAX_TRIPS: u64 = 7;

/// Unrolled copies larger than this (ops in all) are not made.
pub const MAX_UNROLLED_OPS: u64 = 256;

/// How many times longer than the stage issued ahead of it one iteration's vector
/// work must be. At 1x the stage's transfers still delay the previous iteration's tail
/// on some shapes (eight blocks of a 16 x 32 softmax: 5967 cycles against 5843 as a
/// loop); the property test over random two-product loops finds no loss at 2x.
const MIN_VECTOR_RATIO: u64 = 2;

/// The pipes whose reuse after the vector work makes the skew pay.
const MATRIX_SIDE: [Pipe; 3] = [Pipe::MTE1, Pipe::M, Pipe::FIX];

impl Pass for SoftwarePipeline {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "software-pipeline"
    }

    fn description(&self) -> &'static str {
        "unroll a short loop that uses the matrix pipes before and after its vector work, issuing each iteration's product ahead of the previous iteration's vector work"
    }

    fn optional(&self) -> bool {
        true
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        // An unrolling is kept only where the passes after this one, up to and including
        // plan-memory, still place every tile (software-pipeline runs only when it is not
        // disabled, so the range exists).
        let trial = super::Trial::new(cx, self.name(), "lower-to-pipes")?;
        let k = cx.ir_mut(self.name())?;
        let mut notes = Vec::new();
        // Blocks are listed before any change; a loop is unrolled only while it is still
        // an op of its block.
        for (path, ops) in k.blocks() {
            if k.ops.len() > crate::limits::MAX_IR_OPS / 4 {
                break;
            }
            for op in ops {
                let Some(cut) = plan(k, &machine, op) else {
                    if let Some((span, var)) = varying(k, &machine, op) {
                        notes.push((span, var));
                    }
                    continue;
                };
                let mut unrolled = k.clone();
                unroll(&mut unrolled, &path, op, cut);
                if trial.succeeds(unrolled.clone()) {
                    *k = unrolled;
                }
            }
        }
        for (span, var) in notes {
            cx.note(
                span,
                format!("loop `{var}` is left as written: it would be unrolled with each product issued ahead, but how many times it runs depends on an outer loop"),
            );
        }
        Ok(())
    }
}

/// A loop the pass would unroll but for its trip count, which depends on an outer
/// loop: where it is and its variable's name.
fn varying(k: &Kernel, machine: &Machine, f: OpId) -> Option<(crate::diag::Span, String)> {
    let op = k.ops.get(f)?;
    let OpKind::For(l) = &op.kind else {
        return None;
    };
    if l.static_trip_count().is_some() || l.end.guard().is_some() {
        return None;
    }
    plan_trips(k, machine, f, l.max_trip_count())?;
    let var = k.loop_vars.get(l.var)?.name.clone();
    Some((op.span, var))
}

/// Where stage A ends in loop `f`'s body, when the loop should be unrolled and skewed.
fn plan(k: &Kernel, machine: &Machine, f: OpId) -> Option<usize> {
    let OpKind::For(l) = &k.ops.get(f)?.kind else {
        return None;
    };
    // A loop whose end depends on an outer loop is not unrolled: its count varies.
    plan_trips(k, machine, f, l.static_trip_count()?)
}

/// `plan` for loop `f` run `trips` times.
fn plan_trips(k: &Kernel, machine: &Machine, f: OpId, trips: u64) -> Option<usize> {
    let OpKind::For(l) = &k.ops.get(f)?.kind else {
        return None;
    };
    if !(2..=MAX_TRIPS).contains(&trips) {
        return None;
    }
    let body: Vec<OpId> = l
        .body
        .items
        .iter()
        .map(|item| match item {
            BlockItem::Op(op) => Some(*op),
            BlockItem::Step(_) => None,
        })
        .collect::<Option<_>>()?;
    if body.len() as u64 * trips > MAX_UNROLLED_OPS {
        return None;
    }
    let mut stored = DenseSet::new();
    for &op in &body {
        match &k.ops[op].kind {
            // Issuing the next iteration's first stage early would move its slot
            // writes ahead of this iteration's slot reads.
            OpKind::For(_)
            | OpKind::Update { .. }
            | OpKind::SlotWrite { .. }
            | OpKind::SlotRead { .. } => return None,
            OpKind::Load { index, .. } | OpKind::Store { index, .. } if has_tail(index) => {
                return None
            }
            OpKind::Store { param, .. } => {
                stored.insert(*param);
            }
            _ => {}
        }
    }
    let cut = body
        .iter()
        .position(|&op| op_pipe(k, op) == Some(Pipe::V))?;
    let (a, b) = body.split_at(cut);
    let side = |ops: &[OpId]| -> DenseSet<Pipe> {
        ops.iter()
            .filter_map(|&op| op_pipe(k, op))
            .filter(|p| MATRIX_SIDE.contains(p))
            .collect()
    };
    if a.is_empty() || side(a).is_disjoint(&side(b)) {
        return None;
    }
    // The skew pays only where the vector work it overlaps is well over the stage it
    // issues ahead: otherwise that stage's transfers delay the previous iteration's
    // tail (its loads, its store) more than they save.
    let cycles = |ops: &[OpId], pipe: Option<Pipe>| -> u64 {
        ops.iter()
            .filter(|&&op| pipe.is_none() || op_pipe(k, op) == pipe)
            .map(|&op| op_cycles(machine, k, op))
            .sum()
    };
    if cycles(b, Some(Pipe::V)) < cycles(a, None).saturating_mul(MIN_VECTOR_RATIO) {
        return None;
    }
    // Every unrolled copy of a tile that crosses pipes takes event ids of its own (the
    // count leaves out tiles that stay on one pipe). Where the copies would take more
    // ids than a pipe pair has, insert-sync would run out and turn a pair into a
    // barrier, and walk a much longer program: flash attention's four key blocks, a k
    // and a v tile each from MTE2 to MTE1, would.
    let tiles: Vec<crate::ir::ValueId> = body
        .iter()
        .flat_map(|&op| k.ops[op].results.iter().copied())
        .filter(|&v| k.values.get(v).is_some_and(|x| x.ty.rank() > 0))
        .collect();
    let copies = u32::try_from(trips).unwrap_or(u32::MAX);
    if super::buffer_depth::ids_needed(k, &tiles, copies) > machine.event_ids_per_pair {
        return None;
    }
    // Stage A of iteration i + 1 is issued before stage B of iteration i, so it may
    // read no state the loop carries: that is B's to update first (an online softmax's
    // running maximum and sum are read by B only).
    let a_is_safe = a.iter().all(|&op| {
        let reads_carried = k.ops[op].kind.operands().iter().any(|v| l.args.contains(v));
        !reads_carried
            && match &k.ops[op].kind {
                OpKind::Store { .. } => false,
                OpKind::Load { param, .. } => !stored.contains(param),
                _ => true,
            }
    });
    a_is_safe.then_some(cut)
}

fn has_tail(index: &[Index]) -> bool {
    index
        .iter()
        .any(|ix| matches!(ix, Index::Range { clamped: true, .. }))
}

/// Replaces loop `f` in the block at `path` by its iterations, each split at `cut` and
/// skewed by one stage.
fn unroll(k: &mut Kernel, path: &[OpId], f: OpId, cut: usize) {
    let Some(OpKind::For(l)) = k.ops.get(f).map(|o| o.kind.clone()) else {
        return;
    };
    let Some(trips) = l.static_trip_count() else {
        return;
    };
    let mut stages: Vec<(Vec<OpId>, Vec<OpId>)> = Vec::new();
    // Each iteration reads what the one before yielded (the first, the loop's inits).
    let mut carried = l.inits.clone();
    for j in 0..trips as i64 {
        let mut cloner = Cloner::default();
        for (&arg, &value) in l.args.iter().zip(&carried) {
            cloner.bind(arg, value);
        }
        let mut copy = cloner.block(k, &l.body);
        carried = l.yields.iter().map(|&y| cloner.map(y)).collect();
        let at = IndexExpr::Const(l.start.saturating_add(j.saturating_mul(l.step)));
        crate::ir::rewrite::visit_exprs_from(k, cloner.ops.clone(), true, |e| {
            crate::ir::rewrite::replace_var(e, l.var, &at)
        });
        let b = copy.split_off(cut.min(copy.len()));
        stages.push((copy, b));
    }
    let mut order: Vec<OpId> = Vec::new();
    for j in 0..stages.len() {
        order.extend(stages[j].0.iter().copied());
        if j > 0 {
            order.extend(stages[j - 1].1.iter().copied());
        }
    }
    if let Some((_, last)) = stages.last() {
        order.extend(last.iter().copied());
    }
    // The loop's results are the last iteration's yields.
    let results = k.ops.get(f).map(|o| o.results.clone()).unwrap_or_default();
    for (&result, &last) in results.iter().zip(&carried) {
        k.replace_uses(result, last);
    }
    let Some(block) = k.block_mut(path) else {
        return;
    };
    let mut items: Vec<BlockItem> = Vec::with_capacity(block.items.len() + order.len());
    for item in std::mem::take(&mut block.items) {
        match item {
            BlockItem::Op(op) if op == f => items.extend(order.iter().map(|&o| BlockItem::Op(o))),
            other => items.push(other),
        }
    }
    block.items = items;
}
