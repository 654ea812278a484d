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
//!
//! An accumulator carried across a loop (`acc += a @ b`) is split the same way, except
//! that the blocks add into their block of the one accumulator, which the block loops
//! carry ([`split_accumulator`]); lower-to-pipes lays an accumulator with N blocks out in
//! column strips, so that every block is a dense tile at an aligned address.

use super::pieces::{accumulating, slice};
use super::{each_product, fresh_var_name, operands, Candidate, Mode, Operand};
use crate::ir::OpKind;
use crate::ir::{
    Block, BlockItem, ForOp, Index, IndexExpr, Kernel, L0Split, LoopEnd, LoopVar, Op, OpId,
    ValueDef, ValueId,
};
use crate::machine::Machine;
use crate::passes::accumulate::keeps_in_l0c;
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
        let whole = whole_slots(k, mm);
        let fit = fit(machine, &c, [slots, whole], Dest::Store)
            .or_else(|| fit(machine, &c, [1, whole], Dest::Store));
        let Some(why) = fit else {
            return;
        };
        if let Some(l) = split(k, &c, store, why.blocks) {
            k.annotations.l0_split.insert(l, why);
        }
    });
}

/// Splits every accumulating product (`acc += a @ b` in a loop, an accumulator
/// `accumulate` keeps in L0C) that overflows L0A or L0B and that no K split brought
/// into L0 into blocks that add into the one accumulator: each block's product is an
/// `mmad` into its block of the L0C tile ([`split_accumulator`]). Every element is
/// still summed over the whole K of the iteration in one product, so the blocks are
/// exact for every dtype. An accumulator larger than L0C stays plan-memory's error.
pub(super) fn accumulator_blocks(k: &mut Kernel, machine: &Machine, slots: u64) {
    each_product(k, |k, mm, _, block, uses| {
        let Some(c) = operands(k, block, uses, mm, Mode::Blocks) else {
            return;
        };
        let Some((add, acc)) = accumulating(k, uses, mm) else {
            return;
        };
        let kept = match k.values.get(acc).map(|v| v.def) {
            Some(ValueDef::LoopArg { op, index }) => keeps_in_l0c(k, op, index as usize),
            _ => false,
        };
        if !kept {
            return;
        }
        let Some(why) = fit_accumulator(machine, &c, [slots, whole_slots(k, mm)]) else {
            return;
        };
        if let Some(l) = split_accumulator(k, &c, add, acc, why.blocks) {
            k.annotations.l0_split.insert(l, why);
        }
    });
}

/// The slots of the loop whose body holds product `mm` (its `@buffers`, else 1): an
/// operand the blocks leave whole stays in that body and takes them.
fn whole_slots(k: &Kernel, mm: OpId) -> u64 {
    let mut slots = 1;
    k.walk_ops(|_, op| {
        if let OpKind::For(l) = &op.kind {
            if l.body.ops().any(|o| o == mm) {
                slots = u64::from(l.buffers.unwrap_or(1).max(1));
            }
        }
    });
    slots
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

/// Where the blocks' products go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dest {
    /// Each block's product is a tile of its own, stored by itself.
    Store,
    /// Each block's product adds into its block of one whole L0C accumulator.
    Accumulator,
}

/// The fewest blocks that fit ([`fitting`]), with what the whole product needed.
fn fit(machine: &Machine, c: &Candidate, slots: [u64; 2], into: Dest) -> Option<L0Split> {
    let (why, options) = fitting(machine, c, slots, into)?;
    let &blocks = options.first()?;
    Some(L0Split { blocks, ..why })
}

/// Of the block counts that fit an accumulator with `slots` slots or one, the one with
/// the earliest estimated end ([`estimate`]); of those that tie, the first of
/// [`fitting`]'s order, two slots before one. `None` when the whole product fits with
/// `slots` slots, or no split does.
fn fit_accumulator(machine: &Machine, c: &Candidate, [slots, whole]: [u64; 2]) -> Option<L0Split> {
    let mut best: Option<(u64, L0Split)> = None;
    let tries = if slots > 1 { vec![slots, 1] } else { vec![1] };
    for s in tries {
        let Some((why, options)) = fitting(machine, c, [s, whole], Dest::Accumulator) else {
            continue;
        };
        for [p, q] in options {
            let end = estimate(machine, c, [p, q], s);
            if best.as_ref().is_none_or(|(b, _)| end < *b) {
                best = Some((
                    end,
                    L0Split {
                        blocks: [p, q],
                        ..why
                    },
                ));
            }
        }
    }
    best.map(|(_, why)| why)
}

/// The first of L0A, L0B and L0C that `p x q` blocks of `c` overflow, with the bytes
/// they need (each tile rounded up to the memory's alignment) and its capacity. `slots`:
/// the slots of each block's tiles, and of an operand left whole (not split along its
/// axis: it stays in the product's loop body and takes that loop's slots). An
/// accumulator stays whole in L0C with one slot.
fn overflow(
    machine: &Machine,
    c: &Candidate,
    [p, q]: [u64; 2],
    [slots, whole]: [u64; 2],
    into: Dest,
) -> Option<(MemSpace, u64, u64)> {
    let eb = c.dtype.bytes();
    let (mb, nb) = (c.m / p, c.n / q);
    let split = [p, q] != [1, 1];
    let operand_slots = |parts: u64| if split && parts == 1 { whole } else { slots };
    let (c_bytes, c_slots) = match into {
        Dest::Store => (mb * nb * 4, slots),
        Dest::Accumulator => (c.m * c.n * 4, 1),
    };
    [
        (MemSpace::L0A, mb * c.k * eb, operand_slots(p)),
        (MemSpace::L0B, c.k * nb * eb, operand_slots(q)),
        (MemSpace::L0C, c_bytes, c_slots),
    ]
    .into_iter()
    .find_map(|(space, bytes, slots)| {
        let mem = machine.memories.get(space);
        let capacity = mem.size?;
        let align = mem.alignment.max(1);
        let bytes = bytes
            .div_ceil(align)
            .saturating_mul(align)
            .saturating_mul(slots);
        (bytes > capacity).then_some((space, bytes, capacity))
    })
}

/// When the last product of `p x q` blocks into one accumulator ends: MTE1 moves each
/// block of A's rows once (all of A once when M is whole) and a block of B's columns
/// for every block (all of B once when N is whole), and M runs one product per block.
/// With two slots the moves overlap the products; with one they take turns. The
/// estimate leaves out syncs and loop control, which every option pays alike per block.
fn estimate(machine: &Machine, c: &Candidate, [p, q]: [u64; 2], slots: u64) -> u64 {
    let eb = c.dtype.bytes();
    let (mb, nb) = (c.m / p, c.n / q);
    let a = p * super::cost::dma(machine, MemSpace::L1, MemSpace::L0A, mb * c.k * eb);
    let b_moves = if q > 1 { p * q } else { 1 };
    let b = b_moves * super::cost::dma(machine, MemSpace::L1, MemSpace::L0B, c.k * nb * eb);
    let m = p * q * super::cost::mmad(machine, c.dtype, mb, c.k, nb);
    if slots > 1 {
        (a + b).max(m)
    } else {
        a + b + m
    }
}

/// The block counts (M blocks x N blocks, fewest blocks first) whose operand and
/// product tiles, `slots` slots each, fit L0A, L0B and L0C (`into` an accumulator: the
/// whole accumulator, one slot, in L0C), each block starting on L1's alignment and a
/// whole number of 16-row (16-column) blocks of the matrix unit; with what the whole
/// product needed (its `blocks` still 1 x 1). `None` when the whole product fits, or no
/// split does.
fn fitting(
    machine: &Machine,
    c: &Candidate,
    slots: [u64; 2],
    into: Dest,
) -> Option<(L0Split, Vec<[u64; 2]>)> {
    let eb = c.dtype.bytes();
    let overflow = |p: u64, q: u64| overflow(machine, c, [p, q], slots, into);
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
    // Blocks of one accumulator start on L0C's alignment too (blocks stored by
    // themselves are tiles of their own): each column strip (`lower`'s layout for N
    // blocks: strip j holds columns j*nb .. (j+1)*nb, rows nb apart), and each block of
    // rows in it.
    // The FIX that moves the accumulator out moves a strip at a time, into its columns
    // of the destination: in UB those start on UB's alignment (2 bytes a column when it
    // casts to a 16-bit type).
    let l0c = machine.memories.get(MemSpace::L0C).alignment.max(1);
    let ub = machine.memories.get(MemSpace::UB).alignment.max(1);
    let blocks_aligned = |p: u64, q: u64| {
        let (mb, nb) = (c.m / p, c.n / q);
        into == Dest::Store
            || ((p == 1 || (mb * nb * 4).is_multiple_of(l0c))
                && (q == 1 || ((c.m * nb * 4).is_multiple_of(l0c) && (nb * 2).is_multiple_of(ub))))
    };
    let counts = || (0..).map(|i| 1u64 << i).take_while(|&p| p <= MAX_BLOCKS);
    let mut options: Vec<(u64, u64)> = counts()
        .flat_map(|p| counts().map(move |q| (p, q)))
        .filter(|&(p, q)| (p, q) != (1, 1))
        .filter(|&(p, q)| axis_ok(c.m, p, &c.lhs) && axis_ok(c.n, q, &c.rhs))
        .filter(|&(p, q)| blocks_aligned(p, q))
        .collect();
    // Fewest blocks first; of as many, the split along M (A's rows are contiguous).
    options.sort_by_key(|&(p, q)| (p * q, q));
    let fit: Vec<[u64; 2]> = options
        .into_iter()
        .filter(|&(p, q)| overflow(p, q).is_none())
        .map(|(p, q)| [p, q])
        .collect();
    let why = L0Split {
        space,
        bytes,
        capacity,
        chunks: 1,
        from_l1: true,
        blocks: [1, 1],
    };
    (!fit.is_empty()).then_some((why, fit))
}

/// A loop over the blocks of one axis of the product, with the slice of its operand
/// it moves into L0 (first in its body).
struct BlockLoop {
    /// 0: blocks of A's rows (M), 1: of B's columns (N).
    axis: usize,
    var: crate::ir::LoopVarId,
    extent: u64,
    len: u64,
    piece: OpId,
}

/// The loops of `p x q` blocks of `c`, outer first (a block of A's rows is moved once
/// for all N blocks), each with a new variable and the slice it makes; an axis in one
/// block has none.
fn block_loops(k: &mut Kernel, c: &Candidate, [p, q]: [u64; 2]) -> Option<Vec<BlockLoop>> {
    let span = k.ops.get(c.matmul)?.span;
    let mut loops = Vec::new();
    for (axis, parts, o, base, extent) in [(0, p, &c.lhs, "mb", c.m), (1, q, &c.rhs, "nb", c.n)] {
        if parts == 1 {
            continue;
        }
        let len = extent / parts;
        let var = k.loop_vars.push(LoopVar {
            name: fresh_var_name(k, base),
            span,
            written: None,
        });
        let piece = slice(k, c, o, 1 - o.k_axis, var, len)?;
        loops.push(BlockLoop {
            axis,
            var,
            extent,
            len,
            piece,
        });
    }
    Some(loops)
}

/// Rewrites `c` and its `store` into the block loops of the module doc, in the store's
/// place; returns the outer loop.
fn split(k: &mut Kernel, c: &Candidate, store: OpId, [p, q]: [u64; 2]) -> Option<OpId> {
    let span = k.ops.get(c.matmul)?.span;
    let product = *k.ops.get(c.matmul)?.results.first()?;
    let (mb, nb) = (c.m / p, c.n / q);
    let loops = block_loops(k, c, [p, q])?;
    if let Some(v) = k.values.get_mut(product) {
        v.ty.shape = vec![mb, nb];
    }
    // The store writes the block: each split axis starts the block's offset further.
    if let OpKind::Store { index, .. } = &mut k.ops.get_mut(store)?.kind {
        for b in &loops {
            let (var, len) = (b.var, b.len);
            let ix = index.get_mut(b.axis)?;
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
    for b in loops.iter().rev() {
        ops.insert(0, b.piece);
        let l = k.ops.push(Op {
            kind: OpKind::For(ForOp {
                var: b.var,
                start: 0,
                end: LoopEnd::Const(b.extent as i64),
                step: b.len as i64,
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

/// Rewrites `c` and its accumulating `add` (of block argument `acc`) into loops over
/// the blocks that carry the accumulator, in the `add`'s place:
///
/// ```text
/// %acc.1 = for %mb in 0..M step M/p iter(%acc.2 = %acc) {
///   %1 = slice %a[%mb .. %mb + M/p, :]
///   %acc.3 = for %nb in 0..N step N/q iter(%acc.4 = %acc.2) {
///     %2 = slice %b[%nb .. %nb + N/q, :] transposed
///     %acc.5 = matmul %1, %2, acc=%acc.4[%mb .. %mb + M/p, %nb .. %nb + N/q]
///     yield %acc.5 }
///   yield %acc.3 }
/// ```
///
/// The loop over the blocks' rows goes outside, so a block of A's rows is moved once
/// for all N blocks. Returns the outer loop.
fn split_accumulator(
    k: &mut Kernel,
    c: &Candidate,
    add: OpId,
    acc: ValueId,
    [p, q]: [u64; 2],
) -> Option<OpId> {
    let span = k.ops.get(c.matmul)?.span;
    let product = *k.ops.get(c.matmul)?.results.first()?;
    let sum = *k.ops.get(add)?.results.first()?;
    let (ty, name) = {
        let v = k.values.get(acc)?;
        (v.ty.clone(), v.name.clone())
    };
    let blocks = block_loops(k, c, [p, q])?;
    let mut acc_block = vec![Index::Full, Index::Full];
    // Per block loop (outer first): its op, and the accumulator it takes in and carries
    // (made first, so that the values can name the op).
    let mut loops = Vec::new();
    let mut carried = acc;
    for b in &blocks {
        *acc_block.get_mut(b.axis)? = Index::Range {
            start: IndexExpr::Var(b.var),
            len: b.len,
            clamped: false,
        };
        let l = k.ops.push(Op {
            kind: OpKind::Full { value: 0.0 },
            span,
            results: Vec::new(),
        });
        let arg = k.add_value(
            ty.clone(),
            name.clone(),
            ValueDef::LoopArg { op: l, index: 0 },
        );
        let result = k.add_value(
            ty.clone(),
            name.clone(),
            ValueDef::Result { op: l, index: 0 },
        );
        k.ops.get_mut(l)?.results.push(result);
        loops.push((l, b, carried, arg, result));
        carried = arg;
    }
    // The product adds into its block of the innermost loop's accumulator; its result
    // is the whole accumulator.
    if let OpKind::MatMul {
        acc, acc_block: b, ..
    } = &mut k.ops.get_mut(c.matmul)?.kind
    {
        *acc = Some(carried);
        *b = acc_block;
    }
    let v = k.values.get_mut(product)?;
    v.ty = ty;
    v.name = name;
    // Fill the loops from the innermost out: each holds its slice and the loop (or
    // the product) inside it, and yields what that makes.
    let (mut inner, mut made) = (c.matmul, product);
    for &(l, b, init, arg, result) in loops.iter().rev() {
        k.ops.get_mut(l)?.kind = OpKind::For(ForOp {
            var: b.var,
            start: 0,
            end: LoopEnd::Const(b.extent as i64),
            step: b.len as i64,
            buffers: None,
            inits: vec![init],
            args: vec![arg],
            body: Block::from_ops([b.piece, inner]),
            yields: vec![made],
        });
        (inner, made) = (l, result);
    }
    let outer = inner;
    // The `add` is gone: the loop around yields the accumulator the blocks made.
    let moved: Vec<OpId> = [c.lhs.transpose, c.rhs.transpose, Some(c.matmul), Some(add)]
        .into_iter()
        .flatten()
        .filter(|&t| t == add || is_in_loop(k, outer, t))
        .collect();
    for (path, ops) in k.blocks() {
        if ops.iter().any(|o| moved.contains(o)) {
            if let Some(block) = k.block_mut(&path) {
                for item in &mut block.items {
                    if *item == BlockItem::Op(add) {
                        *item = BlockItem::Op(outer);
                    }
                }
                block.retain_ops(|o| !moved.contains(&o));
            }
        }
    }
    k.replace_uses(sum, made);
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
