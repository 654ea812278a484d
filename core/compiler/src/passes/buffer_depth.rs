//! The depth multi-buffer gives an automatically buffered loop: two slots, or three
//! where the cost model of the target says the third pays. A slot is free again only
//! once the last reader of the tile in it is done, so the producer of iteration i
//! waits for the readers of iteration i - depth. With even stages two slots keep every
//! pipe busy; a tile whose readers sit far down a chain of pipes (a load read by the
//! vector pipe only after the matrix pipe and FIX) lives longer than two iterations'
//! worth of the busiest pipe, and then its producer stalls on the second slot.
//!
//! The model: a list schedule of a few iterations of the loop body, each op on its
//! pipe in program order at the cycles of `cost::op_cycles`, after the ops it reads
//! (and, for loop-carried values, the previous iteration's), and after the slot it
//! writes is free. The scalar pipe hands every instruction (the op and its
//! `wait_flag`s and `set_flag`s) to its pipe's queue in program order and stalls while
//! that queue is full, so how far a pipe can run ahead is bounded by the queue depth as
//! much as by the slots: with shallow queues a third slot often gains nothing, and the
//! model must see that. Depth 3 is chosen when it ends the iterations at least
//! `MIN_GAIN_PERCENT` earlier than depth 2, and every pipe pair has event ids for one
//! per slot of each tile crossing it (else insert-sync would hand out fewer ids than
//! slots and the third slot would gain nothing).

use super::cost;
use crate::dense::DenseMap;
use crate::ir::analysis::op_pipe;
use crate::ir::{Kernel, OpId, OpKind, OpMap, ValueDef, ValueId, ValueMap};
use crate::machine::Machine;
use crate::types::Pipe;

/// Iterations the schedule runs: enough for a stall that recurs every third iteration
/// to show twice, few enough to stay cheap.
const MODEL_ITERATIONS: u64 = 8;

/// Queues deeper than this are modelled as this deep: the model keeps every queued
/// instruction, so a preset with absurd queues must not make it quadratic, and past a
/// few iterations' worth of instructions depth no longer limits anything.
const MAX_MODEL_QUEUE: usize = 64;

/// Below this gain the extra slot's memory and event ids are not worth spending (the
/// model leaves out syncs and loop control, a few cycles per iteration).
const MIN_GAIN_PERCENT: u64 = 3;

/// The depth to give loop `id` (already given two slots on `rotated`): 3 or 2.
pub fn choose(machine: &Machine, k: &Kernel, id: OpId, rotated: &[ValueId]) -> u32 {
    let two = makespan(machine, k, id, rotated, 2);
    let three = makespan(machine, k, id, rotated, 3);
    let gains = three.saturating_mul(100) < two.saturating_mul(100 - MIN_GAIN_PERCENT);
    if gains && ids_allow(machine, k, rotated, 3) {
        3
    } else {
        2
    }
}

/// One op of the body in the schedule.
struct Task {
    pipe: Pipe,
    cycles: u64,
    /// Body positions of the ops this one reads in the same iteration.
    deps: Vec<usize>,
    /// Body positions of the ops whose previous-iteration result this one reads.
    carried: Vec<usize>,
    /// The readers of the rotated tile this op writes, if any.
    slot_readers: Vec<usize>,
    /// The `wait_flag`s before the op and the `set_flag`s after it.
    waits: u64,
    sets: u64,
}

/// Distinct pipes other than `own`.
fn others(own: Pipe, pipes: impl IntoIterator<Item = Pipe>) -> u64 {
    let set = pipes
        .into_iter()
        .filter(|&p| p != own)
        .fold(0u64, |set, p| set | 1 << (p as u64));
    u64::from(set.count_ones())
}

/// The instructions handed to pipes: when each leaves its queue (`None` while not
/// known yet, i.e. not before the op being placed starts).
#[derive(Default)]
struct Queues {
    pending: [Vec<Option<u64>>; Pipe::ALL.len()],
    /// When the scalar pipe is free to dispatch the next instruction.
    scalar: u64,
}

impl Queues {
    /// Dispatches one instruction to `pipe` (capacity `depth`) once its queue has room;
    /// returns when it is in the queue.
    fn dispatch(&mut self, pipe: Pipe, depth: usize, dispatch_cycles: u64) -> u64 {
        let now = self.scalar;
        let q = &mut self.pending[pipe.index()];
        q.retain(|t| t.is_none_or(|t| t > now));
        let mut at = now;
        if q.len() >= depth {
            // Room once enough known departures happened; unknown ones never free it.
            let mut known: Vec<u64> = q.iter().flatten().copied().collect();
            known.sort_unstable();
            let must_leave = q.len() + 1 - depth.max(1);
            at = known
                .get(must_leave - 1)
                .copied()
                .unwrap_or(u64::MAX / 4)
                .max(now);
        }
        q.push(None);
        self.scalar = at + dispatch_cycles;
        self.scalar
    }

    /// Sets when the instructions of `pipe` still unknown leave the queue.
    fn leave(&mut self, pipe: Pipe, at: u64) {
        for t in &mut self.pending[pipe.index()] {
            if t.is_none() {
                *t = Some(at);
            }
        }
    }
}

/// When `MODEL_ITERATIONS` iterations (or the trip count) of loop `id` end with
/// `depth` slots per rotated tile.
pub fn makespan(machine: &Machine, k: &Kernel, id: OpId, rotated: &[ValueId], depth: u64) -> u64 {
    let Some(OpKind::For(l)) = k.ops.get(id).map(|o| &o.kind) else {
        return 0;
    };
    let body: Vec<OpId> = l.body.ops().collect();
    let position: OpMap<usize> = body.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let producer = |v: ValueId| match k.values.get(v)?.def {
        ValueDef::Result { op, .. } => position.get(&op).copied(),
        ValueDef::LoopArg { .. } => None,
    };
    // A block argument reads what the previous iteration yielded.
    let carried_from = |v: ValueId| match k.values.get(v)?.def {
        ValueDef::LoopArg { op, index } if op == id => {
            l.yields.get(index as usize).and_then(|&y| producer(y))
        }
        _ => None,
    };
    // The body positions reading each value.
    let mut users: ValueMap<Vec<usize>> = DenseMap::new();
    for (i, &op) in body.iter().enumerate() {
        for v in k.ops.get(op).map(|o| o.kind.operands()).unwrap_or_default() {
            users.entry(v).or_default().push(i);
        }
    }
    let tasks: Vec<Task> = body
        .iter()
        .map(|&op| {
            let operands = k.ops.get(op).map(|o| o.kind.operands()).unwrap_or_default();
            let writes_rotated = k
                .ops
                .get(op)
                .and_then(|o| o.results.first())
                .filter(|r| rotated.contains(r))
                .copied();
            let slot_readers = writes_rotated
                .and_then(|r| users.get(&r))
                .cloned()
                .unwrap_or_default();
            let pipe = op_pipe(k, op).unwrap_or(Pipe::S);
            let deps: Vec<usize> = operands.iter().filter_map(|&v| producer(v)).collect();
            let pipe_at = |i: &usize| body.get(*i).and_then(|&o| op_pipe(k, o));
            let results = k.ops.get(op).map(|o| o.results.as_slice()).unwrap_or(&[]);
            let readers: Vec<Pipe> = results
                .iter()
                .filter_map(|r| users.get(r))
                .flatten()
                .filter_map(pipe_at)
                .collect();
            let rotated_sources = operands
                .iter()
                .filter(|v| rotated.contains(v))
                .filter_map(|&v| producer(v))
                .filter_map(|i| pipe_at(&i));
            let slot_pipes = slot_readers.iter().filter_map(pipe_at);
            Task {
                pipe,
                cycles: cost::op_cycles(machine, k, op),
                waits: others(pipe, deps.iter().filter_map(pipe_at)) + others(pipe, slot_pipes),
                sets: others(pipe, readers) + others(pipe, rotated_sources),
                deps,
                carried: operands.iter().filter_map(|&v| carried_from(v)).collect(),
                slot_readers,
            }
        })
        .collect();
    let transfers = body
        .iter()
        .filter(|&&o| {
            k.ops
                .get(o)
                .is_some_and(|o| matches!(o.kind, OpKind::Load { .. } | OpKind::Store { .. }))
        })
        .count() as u64;
    // Loop control, the slot arithmetic and one address per transfer (as lowering emits).
    let scalar_per_iteration = (4 + 2 * transfers) * machine.costs.scalar_op_cycles;
    let c = &machine.costs;
    let mut queues = Queues::default();
    let iterations = l.max_trip_count().min(MODEL_ITERATIONS) as usize;
    let mut pipe_free = [0u64; Pipe::ALL.len()];
    // ends[i][j]: when op j of iteration i ends.
    let mut ends: Vec<Vec<u64>> = Vec::with_capacity(iterations);
    let end_of = |ends: &Vec<Vec<u64>>, i: usize, j: usize| {
        ends.get(i).and_then(|e| e.get(j)).copied().unwrap_or(0)
    };
    for i in 0..iterations {
        queues.scalar += scalar_per_iteration;
        let mut now: Vec<u64> = Vec::with_capacity(tasks.len());
        for t in &tasks {
            let depth_q = (machine.queue_depth.get(t.pipe) as usize).min(MAX_MODEL_QUEUE);
            let mut dispatched = 0;
            if t.cycles > 0 {
                for _ in 0..=t.waits {
                    dispatched = queues.dispatch(t.pipe, depth_q, c.dispatch_cycles);
                }
            }
            let mut start = pipe_free[t.pipe.index()].max(dispatched);
            for &d in &t.deps {
                start = start.max(now.get(d).copied().unwrap_or(0));
            }
            if let Some(prev) = i.checked_sub(1) {
                for &d in &t.carried {
                    start = start.max(end_of(&ends, prev, d));
                }
            }
            if let Some(owner) = i.checked_sub(depth as usize) {
                for &r in &t.slot_readers {
                    start = start.max(end_of(&ends, owner, r));
                }
            }
            let end = start + t.cycles;
            if t.cycles > 0 {
                queues.leave(t.pipe, start);
                for _ in 0..t.sets {
                    queues.dispatch(t.pipe, depth_q, c.dispatch_cycles);
                }
                queues.leave(t.pipe, end);
                pipe_free[t.pipe.index()] = end + (t.waits + t.sets) * c.sync_cycles;
            }
            now.push(end);
        }
        ends.push(now);
    }
    ends.iter().flatten().copied().max().unwrap_or(0)
}

/// True when every pipe pair has `depth` event ids for each rotated tile crossing it,
/// counting both directions (the reader waits for the data, the producer for the slot).
fn ids_allow(machine: &Machine, k: &Kernel, rotated: &[ValueId], depth: u32) -> bool {
    ids_needed(k, rotated, depth) <= machine.event_ids_per_pair
}

/// The most event ids the tiles `rotated`, `depth` copies of each, take on one ordered
/// pipe pair (one id per copy of a tile crossing it, either way).
pub(crate) fn ids_needed(k: &Kernel, rotated: &[ValueId], depth: u32) -> u32 {
    // need[src][dst]: event ids the rotated tiles take on that ordered pipe pair.
    let mut need = [[0u32; Pipe::ALL.len()]; Pipe::ALL.len()];
    let mut readers: ValueMap<Vec<Pipe>> = DenseMap::new();
    k.walk_ops(|op, o| {
        for v in o.kind.operands() {
            if rotated.contains(&v) {
                readers.entry(v).or_default().extend(op_pipe(k, op));
            }
        }
    });
    for &v in rotated {
        let Some(ValueDef::Result { op, .. }) = k.values.get(v).map(|x| x.def) else {
            continue;
        };
        let Some(src) = op_pipe(k, op) else { continue };
        let mut dsts = readers.remove(&v).unwrap_or_default();
        dsts.sort_unstable();
        dsts.dedup();
        for dst in dsts.into_iter().filter(|&d| d != src) {
            need[src.index()][dst.index()] += depth;
            need[dst.index()][src.index()] += depth;
        }
    }
    need.iter().flatten().copied().max().unwrap_or(0)
}
