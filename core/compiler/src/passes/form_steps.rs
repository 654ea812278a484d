//! form-steps: each block (the kernel body and every loop body) becomes an ordered list
//! of steps, each load -> compute -> store (any part may be missing). An op that builds
//! an indirect index gets a step of its own, so an in-kernel computed gather is three
//! steps bridged through UB: index load, offset build, gather. Loops stay between steps.

use super::{Context, Pass};
use crate::dense::DenseSet;
use crate::diag::{Diagnostics, Span};
use crate::ir::rewrite::renumber;
use crate::ir::{Block, BlockItem, Index, Kernel, OpId, OpKind, Step, StepKind, ValueSet};

pub struct FormSteps;

impl Pass for FormSteps {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "form-steps"
    }

    fn description(&self) -> &'static str {
        "group each block's ops into ordered load -> compute -> store steps"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let k = cx.ir_mut(self.name())?;
        let index_values = indirect_indices(k);
        let mut next_id = 0u32;
        // Blocks in pre-order so step numbers follow the program text.
        let blocks = k.blocks();
        let mut order: Vec<(Vec<OpId>, Vec<OpId>)> = Vec::new();
        // `blocks()` is breadth-first; re-sort into program order by the position of
        // each block's first op in a pre-order walk.
        let mut pre = Vec::new();
        k.walk_ops(|id, _| pre.push(id));
        let pos = |ops: &[OpId], path: &[OpId]| {
            // Only orders blocks for numbering; a block not found sorts first.
            let key = ops.first().or(path.last()).copied();
            key.and_then(|k| pre.iter().position(|p| *p == k))
                .unwrap_or(0)
        };
        order.extend(blocks);
        order.sort_by_key(|(path, ops)| (pos(ops, path), path.len()));
        for (path, ops) in order {
            let block = group(k, &ops, &index_values, &mut next_id);
            if let Some(b) = k.block_mut(&path) {
                *b = block;
            }
        }
        renumber(k);
        Ok(())
    }
}

/// Values used as an indirect index somewhere.
fn indirect_indices(k: &Kernel) -> ValueSet {
    let mut out = DenseSet::new();
    k.walk_ops(|_, op| {
        if let OpKind::Load { index, .. } | OpKind::Store { index, .. } = &op.kind {
            for ix in index {
                if let Index::Indirect(v) = ix {
                    out.insert(*v);
                }
            }
        }
    });
    out
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Load,
    Compute,
    Store,
}

fn group(k: &Kernel, ops: &[OpId], index_values: &ValueSet, next_id: &mut u32) -> Block {
    let mut items = Vec::new();
    let mut cur: Vec<OpId> = Vec::new();
    let mut phase = Phase::Load;
    let mut isolate_next = false;
    let flush = |cur: &mut Vec<OpId>, items: &mut Vec<BlockItem>, next_id: &mut u32| {
        if cur.is_empty() {
            return;
        }
        let ops = std::mem::take(cur);
        items.push(BlockItem::Step(make_step(k, ops, *next_id)));
        *next_id += 1;
    };
    for &id in ops {
        let Some(op) = k.ops.get(id) else { continue };
        let this = match op.kind {
            OpKind::For(_) => {
                flush(&mut cur, &mut items, next_id);
                items.push(BlockItem::Op(id));
                phase = Phase::Load;
                continue;
            }
            OpKind::Load { .. } => Phase::Load,
            OpKind::Store { .. } => Phase::Store,
            // Scalars are immediates or registers: no work of any phase.
            _ if is_scalar(k, id) => {
                cur.push(id);
                continue;
            }
            _ => Phase::Compute,
        };
        let builds_index =
            this == Phase::Compute && op.results.iter().any(|r| index_values.contains(r));
        if isolate_next || builds_index || this < phase {
            flush(&mut cur, &mut items, next_id);
        }
        isolate_next = builds_index;
        phase = this;
        cur.push(id);
    }
    flush(&mut cur, &mut items, next_id);
    Block { items }
}

fn make_step(k: &Kernel, ops: Vec<OpId>, id: u32) -> Step {
    let mut kind = StepKind::default();
    let mut span: Option<Span> = None;
    for &o in &ops {
        let Some(op) = k.ops.get(o) else { continue };
        match op.kind {
            OpKind::Load { .. } => kind.load = true,
            OpKind::Store { .. } => kind.store = true,
            _ if is_scalar(k, o) => {}
            _ => kind.compute = true,
        }
        span = Some(match span {
            None => op.span,
            Some(s) => Span {
                start: s.start.min(op.span.start),
                end: s.end.max(op.span.end),
            },
        });
    }
    Step {
        ops,
        span: span.unwrap_or(Span::DUMMY),
        id,
        kind,
    }
}

/// An op whose results are all rank-0 scalars.
fn is_scalar(k: &Kernel, id: OpId) -> bool {
    k.ops.get(id).is_some_and(|op| {
        !op.results.is_empty()
            && op
                .results
                .iter()
                .all(|r| k.values.get(*r).is_some_and(|v| v.ty.rank() == 0))
    })
}
