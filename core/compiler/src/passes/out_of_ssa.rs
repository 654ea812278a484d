//! out-of-ssa: gives every loop-carried tile one buffer before plan-memory addresses it.
//!
//! A source variable updated in a loop (`m = mn;`, `acc += x;`) is four SSA values in
//! the tile IR: the loop's init, its block argument, the value it yields and the loop's
//! result. The lowering keeps the four in one buffer, so the body updates its state in
//! place and the back edge moves nothing. That is right only where they do not
//! interfere. Where the old value is still read after the new one is defined
//! (`let mn = maximum(m, t); d = d + (mn - m); m = mn;`), where two carried tiles swap
//! (`a = b; b = n;`), or where an init is read again after the loop starts, one buffer
//! would overwrite a value that is still needed: the lost-copy and swap problems of
//! leaving SSA.
//!
//! This pass coalesces (Boissinot et al., "Revisiting Out-of-SSA Translation"): a block
//! argument always shares the loop result's buffer, and its init and its yielded value
//! join that buffer only when no two values in it are live at once. Live ranges are
//! plan-memory's ([`Liveness`]): an op may write its result over an operand it reads
//! last only where the lowering computes it in place ([`may_overwrite`]). Merges are
//! tried most frequent copy first (a back edge of an inner loop before a loop entry).
//! What cannot be merged is copied: inits in a step before the loop, yields in a step at
//! the end of the body. The copies of one loop entry or back edge are a parallel copy,
//! emitted so that no copy overwrites a buffer another copy still reads, a cycle (a
//! swap) broken with one temporary. A constant init (`zeros`) is re-materialised instead
//! of copied. Every inserted op prints why it is there (`// copy: %m is read after %mn
//! is defined`). The plan verifier (`ir/verify_plan.rs`) checks the result without
//! trusting this pass.

use std::cmp::Reverse;

use super::{Context, Pass};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::ir::analysis::may_overwrite;
use crate::ir::liveness::Liveness;
use crate::ir::{BlockItem, CopyNote, Kernel, OpId, OpKind, Step, StepKind, ValueDef, ValueId};
use crate::types::MemSpace;

pub struct OutOfSsa;

impl Pass for OutOfSsa {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "out-of-ssa"
    }

    fn description(&self) -> &'static str {
        "give each loop-carried tile one buffer, copying at a loop's entry or back edge where the values interfere"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let k = cx.ir_mut(self.name())?;
        leave_ssa(k).map_err(|d| vec![d])
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edge {
    /// The value a loop starts from, copied before the loop.
    Init,
    /// The value a body yields to the next iteration, copied at the end of the body.
    Yield,
}

/// One copy that is still to be placed: into the buffer of `slot`'s block argument.
struct Pending {
    slot: usize,
    src: ValueId,
    note: CopyNote,
}

/// Coalesces the loop-carried values of `k`, inserting the copies that cannot be avoided.
pub fn leave_ssa(k: &mut Kernel) -> Result<(), Diagnostic> {
    let live = Liveness::new(k)?;
    let mut fors: Vec<OpId> = Vec::new();
    k.walk_ops(|id, op| {
        if matches!(op.kind, OpKind::For(_)) {
            fors.push(id);
        }
    });
    if fors.is_empty() {
        return Ok(());
    }
    let mut classes = Classes::new(k, &live);
    // A block argument and the loop's result are the same variable at the end of the
    // last iteration (the body's final yield is copied or coalesced into it).
    for &l in &fors {
        let (results, f) = for_parts(k, l)?;
        for (slot, &a) in f.args.iter().enumerate() {
            let Some(&r) = results.get(slot) else {
                return Err(internal("a loop with fewer results than arguments", k, l));
            };
            if !classes.is_tile(a) {
                continue;
            }
            if classes.conflict(a, r).is_some() {
                return Err(internal(
                    "a loop's block argument interferes with its result",
                    k,
                    l,
                ));
            }
            classes.merge(a, r);
        }
    }
    // Try each init and yield, the most often executed copy first.
    let mut candidates: Vec<(OpId, usize, Edge, u64, u64)> = Vec::new();
    for &l in &fors {
        let (_, f) = for_parts(k, l)?;
        let outer = live
            .lin
            .loops
            .get(&l)
            .map(|ls| {
                ls.iter()
                    .map(|o| trips(k, *o))
                    .fold(1u64, |a, t| a.saturating_mul(t))
            })
            .ok_or_else(|| internal("a loop without a position", k, l))?;
        let pos = live
            .lin
            .pos
            .get(&l)
            .copied()
            .ok_or_else(|| internal("a loop without a position", k, l))?;
        let inner = outer.saturating_mul(trips(k, l));
        for slot in 0..f.args.len() {
            candidates.push((l, slot, Edge::Yield, inner, pos));
            candidates.push((l, slot, Edge::Init, outer, pos));
        }
    }
    candidates.sort_by_key(|&(_, slot, edge, weight, pos)| {
        (Reverse(weight), pos, slot, edge == Edge::Init)
    });
    // The copies each loop needs: (loop, edge) -> pending copies.
    let mut copies: Vec<(OpId, Edge, Vec<Pending>)> = Vec::new();
    for (l, slot, edge, _, _) in candidates {
        let (_, f) = for_parts(k, l)?;
        let (Some(&a), Some(&src)) = (
            f.args.get(slot),
            match edge {
                Edge::Init => f.inits.get(slot),
                Edge::Yield => f.yields.get(slot),
            },
        ) else {
            return Err(internal(
                "a loop whose inits, arguments and yields differ in number",
                k,
                l,
            ));
        };
        if !classes.is_tile(a) {
            continue;
        }
        let Some(note) = classes.conflict(src, a) else {
            classes.merge(src, a);
            continue;
        };
        let pending = Pending { slot, src, note };
        match copies.iter_mut().find(|(o, e, _)| *o == l && *e == edge) {
            Some((_, _, list)) => list.push(pending),
            None => copies.push((l, edge, vec![pending])),
        }
    }
    let Classes { mut class_of, .. } = classes;
    for (l, edge, mut pending) in copies {
        pending.sort_by_key(|p| p.slot);
        place_copies(k, &mut class_of, &live, l, edge, pending)?;
    }
    crate::ir::rewrite::renumber(k);
    Ok(())
}

/// The loop op's results and its `ForOp`, or an internal error.
fn for_parts(k: &Kernel, l: OpId) -> Result<(&[ValueId], &crate::ir::ForOp), Diagnostic> {
    match k.ops.get(l) {
        Some(crate::ir::Op {
            kind: OpKind::For(f),
            results,
            ..
        }) => Ok((results, f)),
        _ => Err(Diagnostic::global(
            "internal error in out-of-ssa: a loop handle that is not a loop",
        )),
    }
}

fn trips(k: &Kernel, l: OpId) -> u64 {
    match k.ops.get(l).map(|o| &o.kind) {
        Some(OpKind::For(f)) => f.max_trip_count().max(1),
        _ => 1,
    }
}

fn internal(what: &str, k: &Kernel, l: OpId) -> Diagnostic {
    let span = k.ops.get(l).map_or(Span::default(), |o| o.span);
    Diagnostic::error(format!("internal error in out-of-ssa: {what}"), span)
}

/// Congruence classes: values that will share one buffer.
struct Classes<'a> {
    k: &'a Kernel,
    live: &'a Liveness,
    /// Class of each value, by value index.
    class_of: Vec<usize>,
    /// Members of each class, by class id (a value's index when it was created).
    members: Vec<Vec<ValueId>>,
}

impl<'a> Classes<'a> {
    fn new(k: &'a Kernel, live: &'a Liveness) -> Classes<'a> {
        let n = k.values.len();
        Classes {
            k,
            live,
            class_of: (0..n).collect(),
            members: k.values.iter().map(|(v, _)| vec![v]).collect(),
        }
    }

    /// An on-chip tile, the only kind of value a buffer holds.
    fn is_tile(&self, v: ValueId) -> bool {
        self.k
            .values
            .get(v)
            .is_some_and(|x| x.ty.rank() > 0 && x.space.is_some_and(|s| s != MemSpace::GM))
    }

    fn class(&self, v: ValueId) -> usize {
        self.class_of.get(v.index()).copied().unwrap_or(usize::MAX)
    }

    fn merge(&mut self, x: ValueId, y: ValueId) {
        let (cx, cy) = (self.class(x), self.class(y));
        if cx == cy || cx == usize::MAX || cy == usize::MAX {
            return;
        }
        let moved = std::mem::take(&mut self.members[cy]);
        for v in &moved {
            if let Some(c) = self.class_of.get_mut(v.index()) {
                *c = cx;
            }
        }
        self.members[cx].extend(moved);
    }

    /// Why the classes of `src` and `dst` cannot share a buffer, or `None` if they can.
    fn conflict(&self, src: ValueId, dst: ValueId) -> Option<CopyNote> {
        let (cs, cd) = (self.class(src), self.class(dst));
        if cs == cd {
            return None;
        }
        let placed = |v: ValueId| {
            self.k
                .values
                .get(v)
                .map(|x| (x.space, x.ty.clone(), x.attrs.slots.unwrap_or(1)))
        };
        let (ps, pd) = (placed(src), placed(dst));
        // Multi-buffered tiles rotate with their loop; they keep buffers of their own.
        if !self.is_tile(src) || ps != pd || ps.as_ref().is_some_and(|p| p.2 > 1) {
            return Some(CopyNote::Placement { value: src });
        }
        let (ms, md) = (self.members.get(cs)?, self.members.get(cd)?);
        for &p in ms {
            for &q in md {
                if let Some(note) = self.interfere(p, q) {
                    return Some(note);
                }
            }
        }
        None
    }

    /// Why `p` and `q` cannot share a buffer, or `None` when their live ranges are
    /// disjoint or meet only where one is written over the other in place.
    fn interfere(&self, p: ValueId, q: ValueId) -> Option<CopyNote> {
        let (Some((pd, pe)), Some((qd, qe))) = (self.live.interval(p), self.live.interval(q))
        else {
            return Some(CopyNote::BothLive { a: p, b: q });
        };
        if pe < qd || qe < pd {
            return None;
        }
        if (pe == qd && self.meets(p, q)) || (qe == pd && self.meets(q, p)) {
            return None;
        }
        if pd == qd {
            return Some(CopyNote::BothLive { a: p, b: q });
        }
        let (early, late, early_end, late_start) = if pd < qd {
            (p, q, pe, qd)
        } else {
            (q, p, qe, pd)
        };
        Some(if early_end == late_start {
            CopyNote::NotInPlace {
                read: early,
                defined: late,
            }
        } else {
            CopyNote::ReadAfterDef {
                read: early,
                defined: late,
            }
        })
    }

    /// Whether `q`, defined where `p` is last read, may take `p`'s bytes there: `q` is
    /// a block argument and `p` an init of its loop, or `q` a loop result and `p` a
    /// yield of that loop (a loop entry or back edge reads every source before it
    /// writes a destination: `place_copies` orders them so), or `q`'s op writes it
    /// over `p` in place.
    fn meets(&self, p: ValueId, q: ValueId) -> bool {
        let Some(val) = self.k.values.get(q) else {
            return false;
        };
        match val.def {
            ValueDef::LoopArg { op, .. } => match self.k.ops.get(op).map(|o| &o.kind) {
                Some(OpKind::For(f)) => f.inits.contains(&p),
                _ => false,
            },
            ValueDef::Result { op, .. } => match self.k.ops.get(op) {
                Some(o) => match &o.kind {
                    OpKind::For(f) => f.yields.contains(&p),
                    _ => may_overwrite(self.k, o, p),
                },
                None => false,
            },
        }
    }
}

/// Emits the parallel copy `pending` of loop `l`'s entry or back edge as a sequence:
/// a copy runs once no other pending copy still reads the buffer it writes; when every
/// remaining copy waits on another (a cycle), one source is saved in a temporary first.
fn place_copies(
    k: &mut Kernel,
    class_of: &mut Vec<usize>,
    live: &Liveness,
    l: OpId,
    edge: Edge,
    mut pending: Vec<Pending>,
) -> Result<(), Diagnostic> {
    let (_, f) = for_parts(k, l)?;
    let args = f.args.clone();
    let span = k.ops[l].span;
    let class = |class_of: &Vec<usize>, v: ValueId| class_of.get(v.index()).copied();
    // A constant is re-materialised: its copy reads no buffer.
    let constant = |k: &Kernel, v: ValueId| match k.values.get(v).map(|x| x.def) {
        Some(ValueDef::Result { op, .. }) => match k.ops.get(op).map(|o| &o.kind) {
            Some(OpKind::Full { value }) => Some(*value),
            _ => None,
        },
        _ => None,
    };
    let mut placed: Vec<OpId> = Vec::new();
    let mut guard = 0usize;
    while !pending.is_empty() {
        guard += 1;
        if guard > 4 * args.len() + 4 {
            return Err(internal("the copies of a loop edge did not converge", k, l));
        }
        let reads: Vec<Option<usize>> = pending
            .iter()
            .map(|p| match constant(k, p.src) {
                Some(_) => None,
                None => class(class_of, p.src),
            })
            .collect();
        let ready = (0..pending.len()).find(|&i| {
            let dst = args.get(pending[i].slot).and_then(|a| class(class_of, *a));
            !(0..pending.len()).any(|j| j != i && reads[j].is_some() && reads[j] == dst)
        });
        match ready {
            Some(i) => {
                let p = pending.remove(i);
                let Some(&arg) = args.get(p.slot) else {
                    return Err(internal("a copy into a missing block argument", k, l));
                };
                let kind = match constant(k, p.src) {
                    Some(value) => OpKind::Full { value },
                    None => OpKind::Copy { arg: p.src },
                };
                let (op, v) = new_value(k, kind, arg, span, p.note)?;
                class_of.push(class(class_of, arg).unwrap_or(usize::MAX));
                if class_of.len() != k.values.len() {
                    return Err(internal("copies out of step with the value arena", k, l));
                }
                placed.push(op);
                if let Some(OpKind::For(f)) = k.ops.get_mut(l).map(|o| &mut o.kind) {
                    let slot = match edge {
                        Edge::Init => f.inits.get_mut(p.slot),
                        Edge::Yield => f.yields.get_mut(p.slot),
                    };
                    if let Some(s) = slot {
                        *s = v;
                    }
                }
            }
            None => {
                // Every copy waits on another: save the first one's source.
                let src = pending[0].src;
                let (op, t) = new_value(k, OpKind::Copy { arg: src }, src, span, CopyNote::Cycle)?;
                k.values[t].name = None;
                class_of.push(class_of.len());
                placed.push(op);
                pending[0].src = t;
            }
        }
    }
    let step = BlockItem::Step(Step {
        ops: placed,
        span,
        id: 0,
        kind: StepKind {
            compute: true,
            ..StepKind::default()
        },
    });
    match edge {
        Edge::Yield => match k.ops.get_mut(l).map(|o| &mut o.kind) {
            Some(OpKind::For(f)) => f.body.items.push(step),
            _ => return Err(internal("a loop handle that is not a loop", k, l)),
        },
        Edge::Init => {
            let Some(path) = live.lin.loops.get(&l).cloned() else {
                return Err(internal("a loop without a position", k, l));
            };
            let Some(block) = k.block_mut(&path) else {
                return Err(internal("a loop outside any block", k, l));
            };
            let Some(at) = block
                .items
                .iter()
                .position(|it| matches!(it, BlockItem::Op(o) if *o == l))
            else {
                return Err(internal("a loop not found in its block", k, l));
            };
            block.items.insert(at, step);
        }
    }
    Ok(())
}

/// A new op of `kind` whose result has `like`'s type, memory space and name.
fn new_value(
    k: &mut Kernel,
    kind: OpKind,
    like: ValueId,
    span: Span,
    note: CopyNote,
) -> Result<(OpId, ValueId), Diagnostic> {
    let Some(x) = k.values.get(like) else {
        return Err(Diagnostic::error(
            "internal error in out-of-ssa: a copy of a value that does not exist",
            span,
        ));
    };
    let (ty, space, name) = (x.ty.clone(), x.space, x.name.clone());
    let (op, v) = k.add_op(kind, span, ty, name);
    k.values[v].space = space;
    k.annotations.copy_note.insert(op, note);
    Ok((op, v))
}
