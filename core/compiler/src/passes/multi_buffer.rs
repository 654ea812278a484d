//! multi-buffer: a loop with `@buffers(N)` gives each tile defined in its body that
//! crosses pipes (written on one pipe, read on another) N slots, slot `iteration % N`,
//! so the producer of iteration i+1 can run while the consumer of iteration i still reads.
//! In automatic mode an innermost loop without `@buffers` (the loops subtile-matmul made
//! of a product, its K pieces and M x N blocks, do not count) is double-buffered when memory
//! planning still fits, and triple-buffered where the cost model says a third slot
//! gains and memory and event ids allow (`buffer_depth`); otherwise it is left
//! single-buffered.

use super::{Context, Pass};
use crate::dense::DenseMap;
use crate::diag::Diagnostics;
use crate::ir::analysis::op_pipe;
use crate::ir::{Kernel, OpId, OpKind, ValueId, ValueMap};
use crate::limits::MAX_AUTO_MULTI_BUFFER_LOOPS;

pub struct MultiBuffer;

impl Pass for MultiBuffer {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "multi-buffer"
    }

    fn description(&self) -> &'static str {
        "give tiles that cross pipes in @buffers(N) loops N slots picked by iteration % N"
    }

    fn optional(&self) -> bool {
        true
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        let auto = cx.auto_multi_buffer;
        // What a try runs on a copy: the passes up to plan-memory, as the compile will.
        let trial = super::Trial::new(cx, self.name(), "lower-to-pipes")?;
        let k = cx.ir_mut(self.name())?;
        let mut loops = Vec::new();
        k.walk_ops(|id, op| {
            if let OpKind::For(l) = &op.kind {
                // Loops subtile-matmul made (its pieces and blocks) count as part of the
                // product they split: the loop around them still overlaps its
                // iterations' loads with the products, as it did before the split. An
                // `if` region, or a loop of one iteration (axis-split leaves them), is
                // part of the iteration it runs in: a loop whose blocks are skipped or
                // not still overlaps the ones that run.
                let innermost = body_ops(k, id).iter().all(|&o| {
                    !matches!(k.ops.get(o).map(|x| &x.kind), Some(OpKind::For(_)))
                        || k.annotations.l0_split.contains_key(&o)
                        || once(k, o)
                });
                // A loop whose end depends on an outer loop counts by the most
                // iterations it runs: slot `iteration % N` starts at 0 on each entry,
                // and insert-sync primes and drains every slot however many ran. An
                // `if` region runs at most once: nothing to overlap.
                let overlaps = l.end.guard().is_none() && l.max_trip_count() >= 2;
                loops.push((id, l.buffers, innermost, overlaps));
            }
        });
        // Slots change no operand, so the users of every value stay as computed here.
        let users = users(k);
        for &(id, buffers, _, _) in &loops {
            if let Some(n) = buffers.filter(|&n| n > 1) {
                set_slots(k, &users, id, Some(n));
            }
        }
        if auto {
            // Each try plans memory for the whole kernel: bound the tries so a kernel
            // of thousands of loops stays linear (later loops stay single-buffered).
            let candidates = loops
                .iter()
                .filter(|&&(_, buffers, innermost, overlaps)| {
                    buffers.is_none() && innermost && overlaps
                })
                .take(MAX_AUTO_MULTI_BUFFER_LOOPS);
            for &(id, _, _, _) in candidates {
                let rotated = set_slots(k, &users, id, Some(2));
                if rotated.is_empty() {
                    continue;
                }
                if !try_depth(k, &users, id, 2, &trial) {
                    set_depth(k, &users, id, None);
                    continue;
                }
                if super::buffer_depth::choose(&machine, k, id, &rotated) == 3
                    && !try_depth(k, &users, id, 3, &trial)
                {
                    set_depth(k, &users, id, Some(2));
                }
            }
        }
        Ok(())
    }
}

/// Gives loop `id` `depth` slots as if written `@buffers(depth)`; true when `trial`,
/// the passes up to plan-memory, still succeeds on a copy (memory planning still
/// fits, with out-of-ssa's copies).
fn try_depth(k: &mut Kernel, users: &Users, id: OpId, depth: u32, trial: &super::Trial) -> bool {
    set_depth(k, users, id, Some(depth));
    trial.succeeds(k.clone())
}

fn set_depth(k: &mut Kernel, users: &Users, id: OpId, depth: Option<u32>) {
    set_slots(k, users, id, depth);
    if let OpKind::For(l) = &mut k.ops[id].kind {
        l.buffers = depth;
    }
}

/// Sets (or clears) the slot count of the cross-pipe tiles of loop `id`'s body; returns
/// the tiles it touched.
fn set_slots(k: &mut Kernel, users: &Users, id: OpId, slots: Option<u32>) -> Vec<ValueId> {
    let touched = set_tile_slots(k, users, id, slots);
    let rotation = slots.filter(|_| !touched.is_empty());
    match rotation {
        Some(n) => k.annotations.rotation.insert(id, n),
        None => k.annotations.rotation.remove(&id),
    };
    touched
}

fn set_tile_slots(k: &mut Kernel, users: &Users, id: OpId, slots: Option<u32>) -> Vec<ValueId> {
    let Some(OpKind::For(l)) = k.ops.get(id).map(|o| &o.kind) else {
        return Vec::new();
    };
    let body = body_ops(k, id);
    // Values carried out of the loop or out of a region in it (an `if`'s join) keep
    // one place for every iteration.
    let mut carried: Vec<ValueId> = l.yields.clone();
    for &o in &body {
        if let Some(OpKind::For(g)) = k.ops.get(o).map(|x| &x.kind) {
            carried.extend(g.yields.iter().copied());
        }
    }
    let mut touched = Vec::new();
    for op in body {
        let Some(o) = k.ops.get(op) else { continue };
        if matches!(o.kind, OpKind::For(_) | OpKind::Update { .. }) {
            continue;
        }
        let Some(pipe) = op_pipe(k, op) else { continue };
        for &r in &o.results {
            let tile = k
                .values
                .get(r)
                .is_some_and(|v| v.ty.rank() > 0 && v.space.is_some());
            let crosses = users
                .get(&r)
                .is_some_and(|us| us.iter().any(|&u| op_pipe(k, u).is_some_and(|p| p != pipe)));
            if tile && crosses && !carried.contains(&r) {
                touched.push(r);
            }
        }
    }
    for &r in &touched {
        if let Some(v) = k.values.get_mut(r) {
            v.attrs.slots = slots;
        }
    }
    touched
}

/// The ops of loop `id`'s body, and of the `if` regions and one-iteration loops in it.
fn body_ops(k: &Kernel, id: OpId) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut stack = vec![id];
    while let Some(l) = stack.pop() {
        let Some(OpKind::For(f)) = k.ops.get(l).map(|o| &o.kind) else {
            continue;
        };
        for o in f.body.ops() {
            out.push(o);
            if once(k, o) {
                stack.push(o);
            }
        }
    }
    out
}

/// An `if` region, or a loop of one iteration: it runs at most once per iteration of
/// the loop around it.
fn once(k: &Kernel, op: OpId) -> bool {
    matches!(k.ops.get(op).map(|o| &o.kind),
        Some(OpKind::For(f)) if f.end.guard().is_some() || f.static_trip_count() == Some(1))
}

/// The ops that read each value.
type Users = ValueMap<Vec<OpId>>;

fn users(k: &Kernel) -> Users {
    let mut out: Users = DenseMap::new();
    k.walk_ops(|id, op| {
        for v in op.kind.operands() {
            out.entry(v).or_default().push(id);
        }
    });
    out
}
