//! Blocks along M and N (see the module doc of `subtile`). A product that K pieces
//! cannot bring into L0 (its operands are f16 or f32, which pieces along K would sum in
//! another order than one product, or not even one K block of them fits) and that only
//! a store reads is split into blocks of rows of A and columns of B instead, each a
//! product of its own, stored by itself:
//!
//! ```text
//! for %mb in 0..M step M/p {
//!   for %nb in 0..N step N/q {
//!     %1 = slice %a[%mb .. %mb + M/p, :]; %2 = slice %b[%nb .. %nb + N/q, :] transposed
//!     %3 = matmul %1, %2
//!     store %y[r + %mb .. r + %mb + M/p, c + %nb .. c + %nb + N/q], %3
//!   }
//! }
//! ```
//!
//! Every element of the result is summed over the whole K in one product, in the same
//! order as the whole product sums it: the blocks are exact for every dtype. The
//! operand tiles stay whole in L1; the loop takes the store's place, so every other op
//! keeps its order with it.

use super::pieces::slice;
use super::{each_product, fresh_var_name, operands, Candidate, Mode, Operand};
use crate::ir::OpKind;
use crate::ir::{Block, BlockItem, ForOp, Index, IndexExpr, Kernel, L0Split, LoopVar, Op, OpId};
use crate::machine::Machine;
use crate::types::MemSpace;

/// Most blocks along one axis: enough for a 64 KiB tile on any preset's smallest L0.
const MAX_BLOCKS: u64 = 64;

/// Splits every product that fits the module doc's pattern and overflows L0 into the
/// fewest blocks that fit, `slots` slots each where they fit, else one.
pub(super) fn store_blocks(k: &mut Kernel, machine: &Machine, slots: u64) {
    each_product(k, |k, mm, ops, block, uses| {
        let Some(c) = operands(k, block, uses, mm, Mode::Blocks) else {
            return;
        };
        let Some(store) = sole_store(k, uses, &c, ops) else {
            return;
        };
        let fit = fit(machine, &c, slots).or_else(|| fit(machine, &c, 1));
        let Some(why) = fit else {
            return;
        };
        if let Some(l) = split(k, &c, store, why.blocks) {
            k.op_attrs.entry(l).or_default().l0_split = Some(why);
        }
    });
}

/// Whether `c`'s product tile is larger than L0C and a store is its one reader: no K
/// split shrinks it, and blocks will (so the K splits leave it whole).
pub(super) fn wants_blocks(k: &Kernel, machine: &Machine, c: &Candidate) -> bool {
    let l0c = machine.memories.get(MemSpace::L0C).size;
    let over = l0c.is_some_and(|cap| c.m.saturating_mul(c.n).saturating_mul(4) > cap);
    let uses = k.use_counts();
    let block = k
        .blocks()
        .into_iter()
        .find(|(_, ops)| ops.contains(&c.matmul));
    over && block.is_some_and(|(_, ops)| sole_store(k, &uses, c, &ops).is_some())
}

/// The store of `ops` (the product's block) that is the one reader of `c`'s product and
/// writes it whole: each axis a range without a tail, or `:`.
fn sole_store(k: &Kernel, uses: &[u32], c: &Candidate, ops: &[OpId]) -> Option<OpId> {
    let product = *k.ops.get(c.matmul)?.results.first()?;
    if uses.get(product.index()) != Some(&1) {
        return None;
    }
    ops.iter().copied().find(|&s| {
        k.ops.get(s).is_some_and(|op| match &op.kind {
            OpKind::Store { value, index, .. } => {
                *value == product
                    && index.len() == 2
                    && index.iter().all(|ix| match ix {
                        Index::Full => true,
                        Index::Range { clamped, .. } => !clamped,
                        _ => false,
                    })
            }
            _ => false,
        })
    })
}

/// The fewest blocks (M blocks x N blocks) whose operand and product tiles, `slots`
/// slots each, fit L0A, L0B and L0C, each block starting on L1's alignment and a whole
/// number of 16-row (16-column) blocks of the matrix unit; with what the whole product
/// needed. `None` when the whole product fits, or no split does.
fn fit(machine: &Machine, c: &Candidate, slots: u64) -> Option<L0Split> {
    let eb = c.dtype.bytes();
    let overflow = |p: u64, q: u64| {
        let (mb, nb) = (c.m / p, c.n / q);
        [
            (MemSpace::L0A, mb * c.k * eb),
            (MemSpace::L0B, c.k * nb * eb),
            (MemSpace::L0C, mb * nb * 4),
        ]
        .into_iter()
        .find_map(|(space, bytes)| {
            let mem = machine.memories.get(space);
            let capacity = mem.size?;
            let align = mem.alignment.max(1);
            let bytes = bytes
                .div_ceil(align)
                .saturating_mul(align)
                .saturating_mul(slots);
            (bytes > capacity).then_some((space, bytes, capacity))
        })
    };
    let (space, bytes, capacity) = overflow(1, 1)?;
    let l1 = machine.memories.get(MemSpace::L1).alignment.max(1);
    let axis_ok = |extent: u64, parts: u64, o: &Operand| {
        let len = extent / parts;
        // The block's axis of the loaded tile, and the elements one step along it skips.
        let row = if o.k_axis == 1 { c.k } else { 1 };
        parts == 1
            || (extent.is_multiple_of(parts)
                && len.is_multiple_of(16)
                && (len * row * eb).is_multiple_of(l1))
    };
    let counts = || (0..).map(|i| 1u64 << i).take_while(|&p| p <= MAX_BLOCKS);
    let mut options: Vec<(u64, u64)> = counts()
        .flat_map(|p| counts().map(move |q| (p, q)))
        .filter(|&(p, q)| (p, q) != (1, 1))
        .filter(|&(p, q)| axis_ok(c.m, p, &c.lhs) && axis_ok(c.n, q, &c.rhs))
        .collect();
    // Fewest blocks first; of as many, the split along M (A's rows are contiguous).
    crate::order::sort_by_key(&mut options, |&(p, q)| (p * q, q, 0));
    let (p, q) = options
        .into_iter()
        .find(|&(p, q)| overflow(p, q).is_none())?;
    Some(L0Split {
        space,
        bytes,
        capacity,
        chunks: 1,
        from_l1: true,
        blocks: [p, q],
    })
}

/// Rewrites `c` and its `store` into the block loops of the module doc, in the store's
/// place; returns the outer loop.
fn split(k: &mut Kernel, c: &Candidate, store: OpId, [p, q]: [u64; 2]) -> Option<OpId> {
    let span = k.ops.get(c.matmul)?.span;
    let product = *k.ops.get(c.matmul)?.results.first()?;
    let (mb, nb) = (c.m / p, c.n / q);
    // Per loop (outer first): its variable, extent, step and the slice it makes, which
    // goes first in its body (a block of A's rows is moved once for all N blocks).
    let mut loops = Vec::new();
    for (parts, o, len, base, extent) in [(p, &c.lhs, mb, "mb", c.m), (q, &c.rhs, nb, "nb", c.n)] {
        if parts == 1 {
            continue;
        }
        let var = k.loop_vars.push(LoopVar {
            name: fresh_var_name(k, base),
            span,
        });
        let piece = slice(k, c, o, 1 - o.k_axis, var, len)?;
        loops.push((var, extent, len, piece));
    }
    if let Some(v) = k.values.get_mut(product) {
        v.ty.shape = vec![mb, nb];
    }
    // The store writes the block: each split axis starts the block's offset further.
    if let OpKind::Store { index, .. } = &mut k.ops.get_mut(store)?.kind {
        for (axis, &(var, _, len, _)) in [p, q]
            .iter()
            .enumerate()
            .filter(|(_, &parts)| parts > 1)
            .map(|(axis, _)| axis)
            .zip(&loops)
        {
            let ix = index.get_mut(axis)?;
            let start = match ix {
                Index::Range { start, .. } => {
                    IndexExpr::Add(Box::new(start.clone()), Box::new(IndexExpr::Var(var)))
                }
                _ => IndexExpr::Var(var),
            };
            *ix = Index::Range {
                start,
                len,
                clamped: false,
            };
        }
    }
    let mut ops = vec![c.matmul, store];
    for &(var, extent, len, piece) in loops.iter().rev() {
        ops.insert(0, piece);
        let l = k.ops.push(Op {
            kind: OpKind::For(ForOp {
                var,
                start: 0,
                end: extent as i64,
                step: len as i64,
                buffers: None,
                inits: Vec::new(),
                args: Vec::new(),
                body: Block::from_ops(ops),
                yields: Vec::new(),
            }),
            span,
            results: Vec::new(),
        });
        ops = vec![l];
    }
    let outer = *ops.first()?;
    place(k, c, store, outer);
    Some(outer)
}

/// Puts loop `l` where `store` was; the product and the transposes made slices are in
/// it now, wherever they were.
fn place(k: &mut Kernel, c: &Candidate, store: OpId, l: OpId) {
    let moved: Vec<OpId> = [c.lhs.transpose, c.rhs.transpose, Some(c.matmul)]
        .into_iter()
        .flatten()
        .filter(|&t| is_in_loop(k, l, t))
        .collect();
    for (path, ops) in k.blocks() {
        if ops.contains(&store) || ops.iter().any(|o| moved.contains(o)) {
            if let Some(block) = k.block_mut(&path) {
                for item in &mut block.items {
                    if *item == BlockItem::Op(store) {
                        *item = BlockItem::Op(l);
                    }
                }
                block.retain_ops(|o| !moved.contains(&o));
            }
        }
    }
}

/// Whether `op` is in loop `l`'s body, at any depth (a transpose the split left whole
/// stays where it was).
fn is_in_loop(k: &Kernel, l: OpId, op: OpId) -> bool {
    let mut found = false;
    k.walk_ops_from(vec![l], |id, _| found |= id == op && id != l);
    found
}
