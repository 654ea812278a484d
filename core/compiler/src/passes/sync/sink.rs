//! Drains as late as the order allows. A loop-carried pair's drains (the waits after
//! its loop that consume the last iterations' sets) go right after the loop when they
//! are placed, where they also order what follows the loop after its last iterations.
//! Where the consumer pipe has work after the loop that needs no such order (an
//! epilogue computing into other buffers), the drains hold it back until the loop's
//! last iterations are done: a kernel can then run slower with pairs than with
//! barriers. Once every pair and id is placed, each pair's drains move down their
//! block past that work, to before the next loop or barrier (or the block's end). The
//! move is kept only where the walk, with the hardware's ids, still finds everything
//! ordered: a drain that ordered something by its place stays there.

use super::check;
use super::tree::{Kind, Sync, Tree};
use super::walk::Flags;
use crate::diag::Diagnostic;
use crate::isa::Op;
use crate::lowered::Lowered;

pub fn sink_drains(tree: &mut Tree, lowered: &Lowered, spent: &mut u64) -> Result<(), Diagnostic> {
    for pair in 0..tree.pairs.len() {
        let Some(p) = tree
            .pairs
            .get(pair)
            .filter(|p| p.live() && p.carried.is_some())
        else {
            continue;
        };
        let dst = p.dst;
        let drains: Vec<_> = p
            .nodes
            .iter()
            .copied()
            .filter(|&n| {
                matches!(tree.node(n).map(|x| &x.kind), Some(Kind::Sync(Sync::Drain(q, _))) if *q == pair)
            })
            .collect();
        let Some(&first) = drains.first() else {
            continue;
        };
        let owner = tree.parent(first);
        let block = tree.block(owner).to_vec();
        // In their order in the block (ascending ids), which the move keeps.
        let drains: Vec<_> = block
            .iter()
            .copied()
            .filter(|n| drains.contains(n))
            .collect();
        let Some(last) = drains
            .iter()
            .filter_map(|&d| block.iter().position(|&n| n == d))
            .max()
        else {
            continue;
        };
        // How far the drains may go: up to the next loop or barrier, else the block's
        // end. (`last` is a position in `block`, so both slices exist; empty is right
        // for the `get`s that cannot fail.)
        let rest = block.get(last + 1..).unwrap_or_default();
        let stop = rest
            .iter()
            .position(|&n| match tree.node(n).map(|x| &x.kind) {
                Some(Kind::Loop(..)) | Some(Kind::Sync(Sync::Barrier)) | None => true,
                Some(Kind::Instr(i)) => matches!(i.op, Op::Barrier { .. }),
                Some(Kind::Sync(_)) => false,
            })
            .unwrap_or(rest.len());
        let passed = rest.get(..stop).unwrap_or_default();
        let frees_work = passed.iter().any(
            |&n| matches!(tree.node(n).map(|x| &x.kind), Some(Kind::Instr(i)) if i.pipe() == dst),
        );
        if !frees_work {
            continue;
        }
        let mut order: Vec<_> = block
            .iter()
            .copied()
            .filter(|n| !drains.contains(n))
            .collect();
        let at = last + 1 + stop - drains.len();
        let at = at.min(order.len());
        let tail = order.split_off(at);
        order.extend(drains.iter().copied());
        order.extend(tail);
        tree.reorder(owner, order)
            .ok_or_else(|| super::internal("a drain moved out of its block"))?;
        let budget = *spent;
        let kept = match check(tree, lowered, Flags::Hardware, spent) {
            Ok(found) => found.is_none(),
            // Out of analysis budget: the drains stay where they were.
            Err(e) if !e.message.starts_with("internal") => {
                *spent = budget;
                false
            }
            Err(e) => return Err(e),
        };
        if !kept {
            tree.reorder(owner, block)
                .ok_or_else(|| super::internal("a drain's block changed"))?;
        }
    }
    Ok(())
}
