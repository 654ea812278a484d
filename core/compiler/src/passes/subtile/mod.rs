//! subtile-matmul: a matrix product whose two operands are loaded whole just for it
//! cannot start before the last byte of both arrives. This pass splits such a product
//! along K into an accumulating loop over sub-tiles, fusing the two operands' chunk
//! loops into one: chunk i's GM -> L1 loads, L1 -> L0 moves and `mmad` into L0C run
//! while chunk i+1 loads (multi-buffer gives the loop two slots). Every chunk pays the
//! DMA startup again, so the split is made only when a schedule of the chunks on MTE2,
//! MTE1 and M priced with the target's costs ends earlier than the whole product; of
//! the chunk counts that tie for the best time the fewest wins.
//!
//! The rewrite (`[..]` marks what is kept):
//!
//! ```text
//! %a = load A[..]; %b = load B[..]; %bt = transpose %b; %c = matmul %a, %bt
//! ```
//! becomes
//! ```text
//! %0 = full 0.0
//! %c = for %kc in 0..K step K/n iter(%1 = %0) {
//!   %a = load A[.., %kc .. %kc + K/n]; %b = ..; %bt = ..; %2 = matmul %a, %bt
//!   %3 = add %1, %2
//!   yield %3
//! }
//! ```
//! the shape scope inference turns into an L0C accumulator (see `accumulate`). Only
//! that plain pattern is split: both operands are single-use loads (or transposed
//! loads) of input tensors in the product's block, the K axis is not a tail, the
//! product is outside every loop (see `candidate`), and the operands are
//! bf16. The split sums the chunks' partial products in a different order than one
//! `mmad` (and the reference interpreter) does. bf16 values have 8 significant bits, so
//! their products have 16 and sums of them stay exact in the f32 accumulator over a wide
//! range (every generated input is exact that way); f16 products have 22 and f32 ones
//! 48, and random f16 and f32 products with cancellation left the simulator's 1e-5
//! tolerance against the reference when split, so they stay whole along K (see `blocks`
//! for what splits them exactly).
//!
//! Capacity comes first: a product whose whole operand tile (every slot counted, rounded
//! up to the memory's alignment) does not fit L0A or L0B is split into the fewest K
//! sub-tiles that fit, whatever the cost model says (top-level: the cost model then
//! chooses among that many chunks or more). The accumulating form
//! `for k .. step S { acc += load A[.., k .. k + S] @ load B[.., k .. k + S].T }`, whose
//! body is nothing but that product, is split in place for capacity: the loop's step and
//! the loads' K extent shrink to the sub-tile, and the accumulator stays one L0C tile.
//! The loop prints which memory required it. An accumulator too large for L0C, or an
//! operand too large for L1, cannot be split here: plan-memory reports them.
//!
//! Loading pieces from GM suits a tile read once. A tile read by more products (a
//! weight loaded once ahead of a loop over row blocks) would be read from GM once per
//! use, so when such a product still does not fit L0 its operand tiles stay whole in
//! L1 and a loop moves K pieces of them into L0A / L0B, each piece one `slice` (an MTE1
//! `mov2d` from a strided view of the L1 tile, transposed where the operand was), every
//! piece starting on L1's alignment:
//!
//! ```text
//! %wt = load W[..]                       (ahead of the loop, once)
//! for %r .. { %x = load X[%r ..]
//!   %1 = full 0.0
//!   %y = for %kc in 0..K step K/n iter(%2 = %1) {
//!     %3 = slice %x[:, %kc .. %kc + K/n]; %4 = slice %wt[:, %kc .. %kc + K/n] transposed
//!     %5 = matmul %3, %4; %6 = add %2, %5
//!     yield %6 } .. }
//! ```
//!
//! When the product is the update of an accumulator carried by the loop around it
//! (`acc += ..`), the piece loop carries that accumulator instead of a zero: the nest
//! keeps one L0C tile (`accumulate`), first written where every counter of the nest is 0.
//! Pieces are double-buffered where two slots fit, else single (`pieces`).
//!
//! K pieces do not help an f32 product (they would sum in another order than one
//! product) nor one whose product tile overflows L0C. When a store is the product's one
//! reader, `blocks` splits it along M and N instead: blocks of A's rows and B's columns,
//! each a product of its own stored by itself, exact for every dtype. When the product
//! is the update of an accumulator carried across a loop, the blocks add into their
//! blocks of the one L0C accumulator (`matmul %1, %2, acc=%acc[%mb .., %nb ..]`).

mod blocks;
mod pieces;
mod whole;

use super::{cost, Context, Pass};
use crate::diag::Diagnostics;
use crate::front::hir::BinaryOp;
use crate::ir::{
    Block, ForOp, Index, IndexExpr, Kernel, L0Split, LoopEnd, LoopVar, Op, OpId, OpKind, OpMap,
    ValueDef, ValueId,
};
use crate::machine::Machine;
use crate::types::{DType, MemSpace};

/// The most chunks a product is split into: past this the startups dominate on every
/// preset, and the loop stays short to read.
const MAX_CHUNKS: u64 = 8;

pub struct SubtileMatmul;

impl Pass for SubtileMatmul {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "subtile-matmul"
    }

    fn description(&self) -> &'static str {
        "split a product into K pieces accumulated in L0C (loaded from GM, or moved from tiles kept in L1) or into M x N blocks (stored, or added into one accumulator), when L0 capacity requires it or the cost model gains"
    }

    fn optional(&self) -> bool {
        true
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        let depth = if cx.auto_multi_buffer { 2 } else { 1 };
        let k = cx.ir_mut(self.name())?;
        // Accumulators whose zero inits CSE merged are told apart first, so that each
        // can stay in L0C (`keeps_in_l0c`).
        super::accumulate::unshare_zero_inits(k);
        // Only top-level products split (see `candidate`); the splits leave the other
        // candidates' loads and their uses as they were, so one look at the block and
        // one count of uses serve them all.
        let mut loops = Vec::new();
        k.walk_ops(|id, op| {
            if matches!(op.kind, OpKind::For(_)) {
                loops.push(id);
            }
        });
        let top: OpMap<usize> = k.body.ops().enumerate().map(|(i, o)| (o, i)).collect();
        let uses = k.use_counts();
        let mut candidates: Vec<Candidate> = top
            .keys()
            .filter_map(|mm| candidate(k, &top, &uses, mm))
            .collect();
        candidates.sort_by_key(|c| top.get(&c.matmul).copied());
        for c in candidates {
            // No K split shrinks a product tile larger than L0C: `blocks` splits it if a
            // store is its one reader.
            if blocks::wants_blocks(k, &machine, &c) {
                continue;
            }
            // Not even the smallest sub-tiles fit: the cost model alone decides, and
            // plan-memory reports what overflows.
            let (min, why) = capacity_chunks(&machine, &c, 1).unwrap_or((1, None));
            let chunks = best_chunks(&machine, &c, depth, min);
            if chunks > 1 {
                let l = split(k, &c, chunks);
                if let (Some(l), Some(why)) = (l, why) {
                    k.annotations.l0_split.insert(l, L0Split { chunks, ..why });
                }
            }
        }
        let uses = k.use_counts();
        for f in loops {
            let Some((c, slots)) = loop_candidate(k, &uses, f) else {
                continue;
            };
            if let Some((chunks, Some(why))) = capacity_chunks(&machine, &c, slots) {
                narrow_loop(k, f, &c, chunks);
                k.annotations.l0_split.insert(f, why);
            }
        }
        pieces::resident_pieces(k, &machine, depth as u64);
        blocks::store_blocks(k, &machine, depth as u64);
        blocks::accumulator_blocks(k, &machine, depth as u64);
        whole::explain(k, &machine);
        Ok(())
    }
}

/// An operand of the product: its load, the transpose applied to it (if any), and which
/// axis of the loaded tile is the product's K.
#[derive(Clone, Debug)]
struct Operand {
    load: OpId,
    transpose: Option<OpId>,
    k_axis: usize,
    /// Elements of the loaded tile.
    elems: u64,
    /// Position of the load in the product's block (loads issue in this order).
    position: usize,
}

#[derive(Clone, Debug)]
struct Candidate {
    matmul: OpId,
    lhs: Operand,
    rhs: Operand,
    dtype: DType,
    /// The operands stay whole in L1 and pieces move from there ([`resident_candidate`]).
    from_l1: bool,
    m: u64,
    k: u64,
    n: u64,
}

/// The product `mm` of the top-level block (`top`: each op's position in it) when it
/// fits the pattern of the module doc (`uses`: the use count of every value). Inside a
/// loop the new K loop would become the innermost one, and automatic multi-buffering
/// would move from the loop around it (overlapping whole iterations) to it, which the
/// chunk schedule does not price: such products stay whole.
fn candidate(k: &Kernel, top: &OpMap<usize>, uses: &[u32], mm: OpId) -> Option<Candidate> {
    operands(k, top, uses, mm, Mode::Stream)
}

/// Which products [`operands`] takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// bf16 operands loaded just for the product, in its block ([`candidate`]).
    Stream,
    /// bf16 operands kept in L1 ([`resident_candidate`]).
    Resident,
    /// Operands of any dtype kept in L1, with no tail on any axis (`blocks`).
    Blocks,
}

/// The product `mm` when its operands are loads (or transposed loads) that stay whole
/// in L1 for it, wherever they are loaded and however often they are read (a weight
/// loaded once ahead of a loop over rows): pieces move from them into L0 (see
/// the `pieces` module). Every reader of such a load must be a matrix move, so that it lives in
/// L1.
fn resident_candidate(
    k: &Kernel,
    block: &OpMap<usize>,
    uses: &[u32],
    mm: OpId,
) -> Option<Candidate> {
    operands(k, block, uses, mm, Mode::Resident)
}

/// The product `mm` with its operands, when they fit `mode`.
fn operands(
    k: &Kernel,
    top: &OpMap<usize>,
    uses: &[u32],
    mm: OpId,
    mode: Mode,
) -> Option<Candidate> {
    let resident = mode != Mode::Stream;
    let op = k.ops.get(mm)?;
    let OpKind::MatMul {
        lhs,
        rhs,
        acc: None,
        ..
    } = op.kind
    else {
        return None;
    };
    let result = *op.results.first()?;
    if k.values.get(result)?.ty.dtype != DType::F32 {
        return None;
    }
    if mode != Mode::Blocks && k.values.get(lhs)?.ty.dtype != DType::BF16 {
        return None;
    }
    let (ls, rs) = (&k.values.get(lhs)?.ty, &k.values.get(rhs)?.ty);
    let ([m, kk], [_, n]) = (ls.shape.as_slice(), rs.shape.as_slice()) else {
        return None;
    };
    let operand = |v: ValueId, k_axis_of_value: usize| -> Option<Operand> {
        let single = |v: ValueId| uses.get(v.index()) == Some(&1);
        let def = |v: ValueId| match k.values.get(v)?.def {
            ValueDef::Result { op, .. } if resident || top.contains_key(&op) => Some(op),
            _ => None,
        };
        let mut at = def(v)?;
        let mut transpose = None;
        let mut k_axis = k_axis_of_value;
        if let OpKind::Transpose { arg } = k.ops.get(at)?.kind {
            if !single(v) {
                return None;
            }
            transpose = Some(at);
            k_axis = 1 - k_axis;
            at = def(arg)?;
        }
        let load = k.ops.get(at)?;
        let OpKind::Load {
            param,
            index,
            pad: None,
        } = &load.kind
        else {
            return None;
        };
        let tile = *load.results.first()?;
        let input = k.params.get(*param).is_some_and(|p| !p.is_out);
        let splits = |ix: &Index| match ix {
            Index::Full => true,
            Index::Range { clamped, .. } => !clamped,
            _ => false,
        };
        let k_index_splits = if mode == Mode::Blocks {
            index.iter().all(splits)
        } else {
            splits(index.get(k_axis)?)
        };
        let kept = if resident {
            matrix_moves_only(k, tile)
        } else {
            single(tile)
        };
        // A 2-D tensor read as a 2-D tile: tile axes are tensor axes.
        let rank = k.values.get(tile)?.ty.rank();
        if !input || index.len() != 2 || rank != 2 || !kept || !k_index_splits {
            return None;
        }
        Some(Operand {
            load: at,
            transpose,
            k_axis,
            elems: k.values.get(tile)?.ty.shape.iter().product(),
            position: match top.get(&at) {
                Some(&p) => p,
                None if resident => 0,
                None => return None,
            },
        })
    };
    Some(Candidate {
        matmul: mm,
        lhs: operand(lhs, 1)?,
        rhs: operand(rhs, 0)?,
        dtype: ls.dtype,
        from_l1: resident,
        m: *m,
        k: *kk,
        n: *n,
    })
}

/// Whether every reader of `tile` is a product, a transpose or a slice (each of which
/// reads it from L1).
fn matrix_moves_only(k: &Kernel, tile: ValueId) -> bool {
    let mut ok = true;
    k.walk_ops(|_, op| {
        if op.kind.operands().contains(&tile) {
            ok &= matches!(
                op.kind,
                OpKind::MatMul { .. } | OpKind::Transpose { .. } | OpKind::Slice { .. }
            );
        }
    });
    ok
}

/// Whether `c` may be split into `n` chunks: a chunk that is not whole K blocks would
/// add a partial block to every mmad.
fn splits_into(machine: &Machine, c: &Candidate, n: u64) -> bool {
    let kb = (machine.costs.matmul.k_block_bytes / c.dtype.bytes()).max(1);
    n > 0 && c.k.is_multiple_of(n) && (c.k / n).is_multiple_of(kb)
}

/// The fewest K chunks whose operand tiles, `slots` slots each, fit L0A and L0B: 1 when
/// the whole product fits, else the chunk count with what the whole operand needed.
/// `None` when no split fits either (plan-memory then reports the overflow).
fn capacity_chunks(machine: &Machine, c: &Candidate, slots: u64) -> Option<(u64, Option<L0Split>)> {
    let eb = c.dtype.bytes();
    let overflow = |chunks: u64| {
        [(&c.lhs, MemSpace::L0A), (&c.rhs, MemSpace::L0B)]
            .into_iter()
            .find_map(|(o, space)| {
                let mem = machine.memories.get(space);
                let capacity = mem.size?;
                let bytes = (o.elems / chunks).saturating_mul(eb);
                let bytes = bytes
                    .div_ceil(mem.alignment.max(1))
                    .saturating_mul(mem.alignment.max(1))
                    .saturating_mul(slots);
                (bytes > capacity).then_some(L0Split {
                    space,
                    bytes,
                    capacity,
                    chunks,
                    from_l1: false,
                    blocks: [1, 1],
                })
            })
    };
    let Some(whole) = overflow(1) else {
        return Some((1, None));
    };
    (2..=c.k)
        .find(|&n| splits_into(machine, c, n) && aligned(machine, c, n) && overflow(n).is_none())
        .map(|n| (n, Some(L0Split { chunks: n, ..whole })))
}

/// Whether every piece of `n` starts on L1's alignment, as every on-chip address must:
/// a piece along the columns starts `K/n` elements after the one before, along the rows
/// `K/n` rows. Pieces loaded from GM start at their own aligned address.
fn aligned(machine: &Machine, c: &Candidate, n: u64) -> bool {
    let align = machine.memories.get(MemSpace::L1).alignment.max(1);
    let chunk = c.k / n.max(1);
    !c.from_l1
        || [&c.lhs, &c.rhs].into_iter().all(|o| {
            let row = if o.k_axis == 1 {
                1
            } else {
                o.elems / c.k.max(1)
            };
            (chunk * row * c.dtype.bytes()).is_multiple_of(align)
        })
}

/// The chunk count, `min` or more, with the earliest estimated end (1: do not split).
fn best_chunks(machine: &Machine, c: &Candidate, depth: usize, min: u64) -> u64 {
    let mut best = (estimate(machine, c, min, depth), min);
    for n in min + 1..=MAX_CHUNKS {
        if !splits_into(machine, c, n) {
            continue;
        }
        let end = estimate(machine, c, n, depth);
        if end < best.0 {
            best = (end, n);
        }
    }
    best.1
}

/// When the last `mmad` of `n` chunks ends, with `depth` slots per chunk tile: loads in
/// block order on MTE2, each operand's move on MTE1 once loaded, the product on M once
/// both moves are done. A chunk's load waits for the `mmad` `depth` chunks earlier to
/// free its slot. Syncs (a cycle each) and loop control are left out: the margin they
/// would need is smaller than one startup, the least a split changes.
fn estimate(machine: &Machine, c: &Candidate, n: u64, depth: usize) -> u64 {
    let eb = c.dtype.bytes();
    let kc = c.k / n.max(1);
    let mut ordered = [(&c.lhs, MemSpace::L0A), (&c.rhs, MemSpace::L0B)];
    if c.rhs.position < c.lhs.position {
        ordered.swap(0, 1);
    }
    let (mut mte2, mut mte1, mut m) = (0u64, 0u64, 0u64);
    let mut mmad_ends: Vec<u64> = Vec::new();
    for i in 0..n as usize {
        let slot_free = i
            .checked_sub(depth.max(1))
            .and_then(|j| mmad_ends.get(j))
            .copied()
            .unwrap_or(0); // the first `depth` chunks find their slot free from the start
        let mut moved = 0;
        for (o, l0) in ordered {
            let bytes = o.elems / n.max(1) * eb;
            mte2 = mte2.max(slot_free) + cost::dma(machine, MemSpace::GM, MemSpace::L1, bytes);
            mte1 = mte1.max(mte2) + cost::dma(machine, MemSpace::L1, l0, bytes);
            moved = moved.max(mte1);
        }
        m = m.max(moved) + cost::mmad(machine, c.dtype, c.m, kc, c.n);
        mmad_ends.push(m);
    }
    m
}

/// The product of loop `f` when the loop is the accumulating form of the module doc,
/// with the slots its tiles get (`@buffers`, else 1: automatic multi-buffering adds a
/// slot only where it fits).
fn loop_candidate(k: &Kernel, uses: &[u32], f: OpId) -> Option<(Candidate, u64)> {
    let OpKind::For(l) = &k.ops.get(f)?.kind else {
        return None;
    };
    let ([arg], [y]) = (l.args.as_slice(), l.yields.as_slice()) else {
        return None;
    };
    // The reduction loop is split by its constant length.
    let end = l.end.as_const()?;
    if !l.always_runs() || (end - l.start) % l.step != 0 {
        return None;
    }
    let ValueDef::Result { op: add, .. } = k.values.get(*y)?.def else {
        return None;
    };
    let OpKind::Binary {
        op: BinaryOp::Add,
        lhs,
        rhs,
    } = k.ops.get(add)?.kind
    else {
        return None;
    };
    let product = if lhs == *arg { rhs } else { lhs };
    let once = |v: ValueId| uses.get(v.index()) == Some(&1);
    if (lhs != *arg && rhs != *arg) || !once(*arg) || !once(product) {
        return None;
    }
    if k.values.get(product)?.ty != k.values.get(*arg)?.ty {
        return None;
    }
    let ValueDef::Result { op: mm, .. } = k.values.get(product)?.def else {
        return None;
    };
    let body: OpMap<usize> = l.body.ops().enumerate().map(|(i, o)| (o, i)).collect();
    let c = candidate(k, &body, uses, mm)?;
    // Nothing else runs in the loop: with a shorter step it would run more often.
    let mut ops = vec![c.lhs.load, c.rhs.load, c.matmul, add];
    ops.extend(c.lhs.transpose.into_iter().chain(c.rhs.transpose));
    if body.len() != ops.len() || !ops.iter().all(|o| body.contains_key(o)) {
        return None;
    }
    // Each load reads K chunk `var + e .. var + e + step` and moves with `var` on no
    // other axis, so the narrower chunks of the shorter step cover the same elements.
    for o in [&c.lhs, &c.rhs] {
        let OpKind::Load { index, .. } = &k.ops.get(o.load)?.kind else {
            return None;
        };
        for (axis, ix) in index.iter().enumerate() {
            let on_k = axis == o.k_axis;
            let coefficient = match ix {
                Index::Full => 0,
                Index::Range { start, len, .. } if !on_k || *len == l.step as u64 => {
                    let a = crate::ir::affine::of_index(start)?;
                    let t = a.terms().iter().find(|(v, _)| *v == l.var);
                    t.map_or(0, |t| t.1)
                }
                _ => return None,
            };
            if coefficient != i64::from(on_k) {
                return None;
            }
        }
    }
    Some((c, u64::from(l.buffers.unwrap_or(1))))
}

/// Splits the accumulating loop `f` of product `c` into `chunks` K sub-tiles per
/// iteration of the old step: the step and both loads' K extent shrink.
fn narrow_loop(k: &mut Kernel, f: OpId, c: &Candidate, chunks: u64) {
    let chunk = c.k / chunks;
    for o in [&c.lhs, &c.rhs] {
        if let Some(OpKind::Load { index, .. }) = k.ops.get_mut(o.load).map(|op| &mut op.kind) {
            if let Some(Index::Range { len, .. }) = index.get_mut(o.k_axis) {
                *len = chunk;
            }
        }
        resize(k, o, chunk);
    }
    if let Some(OpKind::For(l)) = k.ops.get_mut(f).map(|op| &mut op.kind) {
        l.step = chunk as i64;
    }
}

/// Rewrites `c` into the accumulating loop of `chunks` sub-tiles (module doc); returns
/// the loop.
fn split(k: &mut Kernel, c: &Candidate, chunks: u64) -> Option<OpId> {
    let chunk = c.k / chunks;
    let span = k.ops[c.matmul].span;
    let &product = k.ops[c.matmul].results.first()?;
    let ty = k.values[product].ty.clone();
    let var = k.loop_vars.push(LoopVar {
        name: fresh_var_name(k, "kc"),
        span,
        written: None,
    });
    for o in [&c.lhs, &c.rhs] {
        narrow(k, o, var, chunk);
    }
    let (init_op, init) = k.add_op(OpKind::Full { value: 0.0 }, span, ty.clone(), None);
    let (for_id, arg, _) = loop_shell(k, span, &ty, None, product)?;
    let (add, sum) = k.add_op(
        OpKind::Binary {
            op: BinaryOp::Add,
            lhs: arg,
            rhs: product,
        },
        span,
        ty,
        None,
    );
    let mut body: Vec<OpId> = Vec::new();
    let mut operands = [&c.lhs, &c.rhs];
    if c.rhs.position < c.lhs.position {
        operands.swap(0, 1);
    }
    for o in operands {
        body.push(o.load);
        body.extend(o.transpose);
    }
    body.extend([c.matmul, add]);
    k.ops[for_id].kind = OpKind::For(ForOp {
        var,
        start: 0,
        end: LoopEnd::Const(chunk as i64 * chunks as i64),
        step: chunk as i64,
        buffers: None,
        inits: vec![init],
        args: vec![arg],
        body: Block::from_ops(body.iter().copied()),
        yields: vec![sum],
    });
    let block = &mut k.body;
    // The loop takes the place of the first load: it reads nothing defined in between,
    // and keeping the loads where they were keeps the order of MTE2's queue.
    // The loads are in this block; were none found, the block's start is still a valid
    // place, since the loop reads nothing the block defines.
    let at = block.ops().position(|o| body.contains(&o)).unwrap_or(0);
    let mut ops: Vec<OpId> = block.ops().filter(|o| !body.contains(o)).collect();
    let at = at.min(ops.len());
    ops.splice(at..at, [init_op, for_id]);
    *block = Block::from_ops(ops);
    Some(for_id)
}

/// The op of a new accumulating loop over `ty`, still a placeholder for the caller to
/// fill (made first so its values can name it), with its block argument (named
/// `arg_name`) and its result, which takes `replaced`'s name and place for every
/// reader. Returns the op, the argument and the result (`None` for a `replaced` the
/// kernel does not have).
fn loop_shell(
    k: &mut Kernel,
    span: crate::diag::Span,
    ty: &crate::types::TileType,
    arg_name: Option<String>,
    replaced: ValueId,
) -> Option<(OpId, ValueId, ValueId)> {
    let for_id = k.ops.push(Op {
        kind: OpKind::Full { value: 0.0 },
        span,
        results: Vec::new(),
    });
    let arg = k.add_value(
        ty.clone(),
        arg_name,
        ValueDef::LoopArg {
            op: for_id,
            index: 0,
        },
    );
    let name = k.values.get(replaced)?.name.clone();
    let result = k.add_value(
        ty.clone(),
        name,
        ValueDef::Result {
            op: for_id,
            index: 0,
        },
    );
    k.ops.get_mut(for_id)?.results.push(result);
    k.replace_uses(replaced, result);
    Some((for_id, arg, result))
}

/// Makes operand `o`'s load read chunk `var .. var + chunk` of its K axis, and narrows the
/// types of the load and its transpose to match.
fn narrow(k: &mut Kernel, o: &Operand, var: crate::ir::LoopVarId, chunk: u64) {
    if let OpKind::Load { index, .. } = &mut k.ops[o.load].kind {
        if let Some(ix) = index.get_mut(o.k_axis) {
            let start = match ix {
                Index::Range { start, .. } => {
                    IndexExpr::Add(Box::new(start.clone()), Box::new(IndexExpr::Var(var)))
                }
                _ => IndexExpr::Var(var),
            };
            *ix = Index::Range {
                start,
                len: chunk,
                clamped: false,
            };
        }
    }
    resize(k, o, chunk);
}

/// Narrows the K axis of operand `o`'s load and transpose types to `chunk`.
fn resize(k: &mut Kernel, o: &Operand, chunk: u64) {
    let resize = |k: &mut Kernel, op: OpId, axis: usize| {
        let Some(&v) = k.ops[op].results.first() else {
            return;
        };
        if let Some(extent) = k.values[v].ty.shape.get_mut(axis) {
            *extent = chunk;
        }
    };
    resize(k, o.load, o.k_axis);
    if let Some(t) = o.transpose {
        resize(k, t, 1 - o.k_axis);
    }
}

/// Calls `f` on every product without an accumulator, with the ops of its block in
/// order, their positions and the use count of every value, each freshly computed:
/// `pieces` and `blocks` rewrite the kernel between calls.
fn each_product(
    k: &mut Kernel,
    mut f: impl FnMut(&mut Kernel, OpId, &[OpId], &OpMap<usize>, &[u32]),
) {
    let mut products = Vec::new();
    k.walk_ops(|id, op| {
        if matches!(op.kind, OpKind::MatMul { acc: None, .. }) {
            products.push(id);
        }
    });
    for mm in products {
        let uses = k.use_counts();
        let Some((_, ops)) = k.blocks().into_iter().find(|(_, ops)| ops.contains(&mm)) else {
            continue;
        };
        let block: OpMap<usize> = ops.iter().enumerate().map(|(i, &o)| (o, i)).collect();
        f(k, mm, &ops, &block, &uses);
    }
}

/// `base`, `base1`, ...: the first name no loop variable of the kernel has.
fn fresh_var_name(k: &Kernel, base: &str) -> String {
    let taken = |name: &str| k.loop_vars.iter().any(|(_, v)| v.name == name);
    (0..)
        .map(|i| {
            if i == 0 {
                base.to_string()
            } else {
                format!("{base}{i}")
            }
        })
        .find(|n| !taken(n))
        .unwrap_or_default()
}
