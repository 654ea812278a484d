//! scope-inference: gives every tile a memory space from its uses and inserts the
//! `copy` ops that move tiles between spaces. Vector operands live in UB; matmul operands
//! travel GM -> L1 -> L0A/L0B and accumulate in L0C; a matmul result feeding vector work
//! moves L0C -> UB (FIX); a vector result feeding a matmul goes UB -> L1 (MTE3) ->
//! L0A/L0B, and so does a gathered matmul operand (the gather DMA writes UB only).
//! A transpose whose uses are all one side of matmuls becomes the L1 -> L0 move
//! (the MTE1 transpose flag); any other transpose works in UB. A `slice` read only by
//! one side of matmuls (subtile-matmul's pieces, or the source's `t[:, 0 .. 32] @ w`)
//! reads L1 and lands in the L0 side its product reads; any other slice works in UB. A
//! loop-carried matmul accumulator stays in L0C (see `accumulate`).

use super::{Context, Pass};
use crate::dense::DenseMap;
use crate::diag::Diagnostics;
use crate::ir::{BlockItem, Index, Kernel, OpId, OpKind, OpMap, ValueDef, ValueId, ValueMap};
use crate::types::MemSpace;

pub struct ScopeInference;

impl Pass for ScopeInference {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "scope-inference"
    }

    fn description(&self) -> &'static str {
        "give every tile a memory space (UB, L1, L0A, L0B, L0C) and insert the moves between them"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let k = cx.ir_mut(self.name())?;
        privatize_loop_inits(k);
        materialize_broadcast_stores(k);
        let fixed = super::accumulate::accumulate_in_l0c(k);
        infer(k, &fixed);
        Ok(())
    }
}

/// The space each operand of `op` must be in (matmul: per side; otherwise one space).
fn demand(
    k: &Kernel,
    op: &OpKind,
    operand_side: usize,
    matmul_side: &OpMap<MemSpace>,
    this: OpId,
) -> MemSpace {
    match op {
        OpKind::MatMul { .. } if operand_side < 2 => {
            if operand_side == 0 {
                MemSpace::L0A
            } else {
                MemSpace::L0B
            }
        }
        OpKind::MatMul { .. } => MemSpace::L0C,
        OpKind::Transpose { .. } if matmul_side.contains_key(&this) => MemSpace::L1,
        OpKind::Slice { .. } if matmul_side.contains_key(&this) => MemSpace::L1,
        // Loop inits and yields go where the loop's block argument lives.
        OpKind::For(l) => {
            let arg = l.args.get(operand_side % l.args.len().max(1));
            arg.and_then(|&a| k.values.get(a))
                .and_then(|v| v.space)
                .unwrap_or(MemSpace::UB)
        }
        _ => MemSpace::UB,
    }
}

/// Users of each value: (op, operand position within `operands()`).
fn users(k: &Kernel) -> ValueMap<Vec<(OpId, usize)>> {
    let mut out: ValueMap<Vec<(OpId, usize)>> = DenseMap::new();
    k.walk_ops(|id, op| {
        for (i, v) in op.kind.operands().into_iter().enumerate() {
            out.entry(v).or_default().push((id, i));
        }
    });
    out
}

/// Transposes and slices all of whose uses are the same side of matmuls: they become
/// L1 -> L0 moves.
fn matmul_transposes(k: &Kernel, users: &ValueMap<Vec<(OpId, usize)>>) -> OpMap<MemSpace> {
    let mut out = DenseMap::new();
    k.walk_ops(|id, op| {
        let (OpKind::Transpose { .. } | OpKind::Slice { .. }, Some(&r)) =
            (&op.kind, op.results.first())
        else {
            return;
        };
        let sides: Vec<Option<MemSpace>> = users
            .get(&r)
            .map(|us| {
                us.iter()
                    .map(|&(u, pos)| match k.ops.get(u).map(|o| &o.kind) {
                        Some(OpKind::MatMul { .. }) => Some(if pos == 0 {
                            MemSpace::L0A
                        } else {
                            MemSpace::L0B
                        }),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some(Some(first)) = sides.first() {
            if sides.iter().all(|s| *s == Some(*first)) {
                out.insert(id, *first);
            }
        }
    });
    out
}

/// The space a value is produced in.
fn natural(
    k: &Kernel,
    v: ValueId,
    users: &ValueMap<Vec<(OpId, usize)>>,
    transposes: &OpMap<MemSpace>,
) -> Option<MemSpace> {
    let val = k.values.get(v)?;
    if val.ty.rank() == 0 {
        return None;
    }
    let ValueDef::Result { op, .. } = val.def else {
        return Some(MemSpace::UB);
    };
    let kind = &k.ops.get(op)?.kind;
    Some(match kind {
        OpKind::MatMul { .. } => MemSpace::L0C,
        OpKind::Transpose { .. } | OpKind::Slice { .. } => {
            transposes.get(&op).copied().unwrap_or(MemSpace::UB)
        }
        OpKind::Load { index, pad, .. } => {
            // The machine's gather and `dmapad` write UB only: such a matmul operand
            // moves on to L1 from there.
            let gathers = pad.is_some() || index.iter().any(|i| matches!(i, Index::Indirect(_)));
            let matrix_only = !gathers
                && users.get(&v).is_some_and(|us| {
                    !us.is_empty()
                        && us.iter().all(|&(u, pos)| {
                            let kind = k.ops.get(u).map(|o| &o.kind);
                            let d = kind.map(|kd| demand(k, kd, pos, transposes, u));
                            matches!(d, Some(MemSpace::L1 | MemSpace::L0A | MemSpace::L0B))
                        })
                });
            if matrix_only && !k_tail(k, op, users, transposes) {
                MemSpace::L1
            } else {
                MemSpace::UB
            }
        }
        _ => MemSpace::UB,
    })
}

/// Whether a load feeding matmuls is clamped on the axis the product sums over (K). In
/// the tail iteration its lanes past the extent would be summed too, so such a load goes
/// to UB, where lowering zeroes those lanes on the vector pipe before the tile moves on
/// to L1 (nothing else can write L1 but a DMA).
fn k_tail(
    k: &Kernel,
    load: OpId,
    users: &ValueMap<Vec<(OpId, usize)>>,
    transposes: &OpMap<MemSpace>,
) -> bool {
    let Some(op) = k.ops.get(load) else {
        return false;
    };
    let (OpKind::Load { index, .. }, Some(r)) = (&op.kind, op.results.first()) else {
        return false;
    };
    let rank = k.values.get(*r).map_or(0, |v| v.ty.rank());
    // An axis with no tensor axis behind it is taken as clamped: the safe way is UB.
    let clamped = |axis: usize| match crate::ir::analysis::tensor_axis(index, rank, axis) {
        Some(a) => matches!(index.get(a), Some(Index::Range { clamped: true, .. })),
        None => true,
    };
    users.get(r).is_some_and(|us| {
        us.iter().any(|&(u, pos)| {
            // K is axis 1 of the left operand and axis 0 of the right one; a transpose
            // on the way swaps them.
            let axis = match k.ops.get(u).map(|o| &o.kind) {
                Some(OpKind::MatMul { .. }) if pos < 2 => 1 - pos,
                Some(OpKind::Transpose { .. }) => match transposes.get(&u) {
                    Some(MemSpace::L0A) => 0,
                    Some(_) => 1,
                    None => return false,
                },
                _ => return false,
            };
            clamped(axis)
        })
    })
}

/// The spaces a tile passes through from `from` to `to` (excluding `from`).
fn path(from: MemSpace, to: MemSpace) -> Vec<MemSpace> {
    use MemSpace::*;
    match (from, to) {
        (a, b) if a == b => vec![],
        (UB, L1) => vec![L1],
        (UB, L0A | L0B) => vec![L1, to],
        (L1, L0A | L0B) => vec![to],
        (L0C, UB) => vec![UB],
        (L0C, L1) => vec![UB, L1],
        (L0C, L0A | L0B) => vec![UB, L1, to],
        // L1 tiles only feed matrix moves (natural() puts any tile with a vector use in
        // UB), and L0 tiles only feed matmuls; a move back is never needed.
        _ => vec![to],
    }
}

enum Anchor {
    After(OpId),
    BodyStart(OpId),
    Before(OpId),
}

fn anchor_of(k: &Kernel, v: ValueId) -> Option<Anchor> {
    match k.values.get(v)?.def {
        ValueDef::Result { op, .. } => Some(Anchor::After(op)),
        ValueDef::LoopArg { op, .. } => Some(Anchor::BodyStart(op)),
    }
}

fn insert(k: &mut Kernel, anchor: Anchor, new: Vec<OpId>) {
    let target = match anchor {
        Anchor::After(op) | Anchor::Before(op) => op,
        Anchor::BodyStart(op) => {
            if let Some(OpKind::For(l)) = k.ops.get_mut(op).map(|o| &mut o.kind) {
                let items: Vec<BlockItem> = new.into_iter().map(BlockItem::Op).collect();
                l.body.items.splice(0..0, items);
            }
            return;
        }
    };
    let after = matches!(anchor, Anchor::After(_));
    let Some((path, _)) = k
        .blocks()
        .into_iter()
        .find(|(_, ops)| ops.contains(&target))
    else {
        return;
    };
    if let Some(block) = k.block_mut(&path) {
        if let Some(pos) = block.items.iter().position(|i| *i == BlockItem::Op(target)) {
            let at = if after { pos + 1 } else { pos };
            let items: Vec<BlockItem> = new.into_iter().map(BlockItem::Op).collect();
            block.items.splice(at..at, items);
        }
    }
}

fn copy_op(k: &mut Kernel, v: ValueId, space: MemSpace) -> (OpId, ValueId) {
    let span = match k.values[v].def {
        ValueDef::Result { op, .. } | ValueDef::LoopArg { op, .. } => k.ops[op].span,
    };
    let ty = k.values[v].ty.clone();
    let (op, r) = k.add_op(OpKind::Copy { arg: v }, span, ty, None);
    k.values[r].space = Some(space);
    (op, r)
}

/// A loop init that is also read elsewhere gets its own copy, so that a zero
/// accumulator shared by two loops (or kept by CSE for another reader) is still read by
/// nothing but its loop, the pattern that keeps a matmul accumulator in L0C
/// (`accumulate`). Correctness does not depend on it: out-of-ssa copies wherever a
/// carried value and its init would interfere.
fn privatize_loop_inits(k: &mut Kernel) {
    let counts = k.use_counts();
    let mut fors = Vec::new();
    k.walk_ops(|id, op| {
        if let OpKind::For(l) = &op.kind {
            fors.push((id, l.inits.clone()));
        }
    });
    for (id, inits) in fors {
        for (i, init) in inits.into_iter().enumerate() {
            let shared = counts.get(init.index()).is_some_and(|&c| c > 1);
            let tile = k.values.get(init).is_some_and(|v| v.ty.rank() > 0);
            if shared && tile {
                let (op, r) = copy_op(k, init, MemSpace::UB);
                insert(k, Anchor::Before(id), vec![op]);
                if let OpKind::For(l) = &mut k.ops[id].kind {
                    if let Some(slot) = l.inits.get_mut(i) {
                        *slot = r;
                    }
                }
            }
        }
    }
}

/// A store whose value broadcasts to the stored region (`store y[..] = 1.0`, a row
/// stored over many rows) first materialises the region-shaped tile, `zeros + value`,
/// since a DMA moves exactly the elements it is given.
fn materialize_broadcast_stores(k: &mut Kernel) {
    let mut todo = Vec::new();
    k.walk_ops(|id, op| {
        if let OpKind::Store {
            param,
            index,
            value,
            ..
        } = &op.kind
        {
            // Verified IR: every parameter index names a parameter.
            let tensor = k
                .params
                .get(*param)
                .map(|p| p.ty.shape.clone())
                .unwrap_or_default();
            let boxed = crate::ir::analysis::region_shape(k, &tensor, index);
            // A value of the box's elements in order is stored as it is; any other
            // broadcasts to numpy's region (single positions' axes dropped).
            let region = crate::ir::typing::numpy_region(index, &boxed);
            if k.values
                .get(*value)
                .is_some_and(|v| !crate::ir::typing::same_layout(&v.ty.shape, &boxed))
            {
                todo.push((id, *value, region));
            }
        }
    });
    for (store, value, region) in todo {
        let span = k.ops[store].span;
        let dtype = k.values[value].ty.dtype;
        let ty = crate::types::TileType::new(dtype, region);
        let (zeros, z) = k.add_op(OpKind::Full { value: 0.0 }, span, ty.clone(), None);
        let kind = OpKind::Binary {
            op: crate::front::hir::BinaryOp::Add,
            lhs: z,
            rhs: value,
        };
        let (add, full) = k.add_op(kind, span, ty, None);
        insert(k, Anchor::Before(store), vec![zeros, add]);
        if let OpKind::Store { value, .. } = &mut k.ops[store].kind {
            *value = full;
        }
    }
}

/// `fixed`: values whose space is already decided (L0C accumulators).
fn infer(k: &mut Kernel, fixed: &ValueMap<MemSpace>) {
    let users = users(k);
    let transposes = matmul_transposes(k, &users);
    // Natural spaces first, for every value that exists now.
    let mut all = Vec::new();
    k.walk_ops(|_, op| all.extend(op.results.iter().copied()));
    k.walk_ops(|_, op| {
        if let OpKind::For(l) = &op.kind {
            all.extend(l.args.iter().copied());
        }
    });
    for &v in &all {
        let space = match fixed.get(&v) {
            Some(&s) => Some(s),
            None => natural(k, v, &users, &transposes),
        };
        if let Some(val) = k.values.get_mut(v) {
            val.space = space;
        }
    }
    // Then a copy chain for every use in another space, shared per (value, space).
    let mut copies: Copies = DenseMap::new();
    let mut user_ops = Vec::new();
    k.walk_ops(|id, _| user_ops.push(id));
    for u in user_ops {
        let kind = k.ops[u].kind.clone();
        let operands = kind.operands();
        let mut replaced = Vec::with_capacity(operands.len());
        for (pos, &v) in operands.iter().enumerate() {
            let Some(have) = k.values.get(v).and_then(|x| x.space) else {
                replaced.push(v);
                continue;
            };
            let want = demand(k, &kind, pos, &transposes, u);
            replaced.push(chain(k, v, have, want, &mut copies));
        }
        let mut it = replaced.into_iter();
        k.ops[u].kind.map_operands(|old| it.next().unwrap_or(old));
    }
}

/// Per value, its copy in each memory space (by `MemSpace::index`).
type Copies = ValueMap<[Option<ValueId>; MemSpace::ALL.len()]>;

fn chain(
    k: &mut Kernel,
    v: ValueId,
    have: MemSpace,
    want: MemSpace,
    copies: &mut Copies,
) -> ValueId {
    if have == want {
        return v;
    }
    if let Some(c) = copies.get(&v).and_then(|c| c[want.index()]) {
        return c;
    }
    let mut cur = v;
    let mut new_ops = Vec::new();
    for space in path(have, want) {
        if let Some(c) = copies.get(&v).and_then(|c| c[space.index()]) {
            cur = c;
            continue;
        }
        let (op, r) = copy_op(k, cur, space);
        new_ops.push(op);
        copies.entry(v).or_default()[space.index()] = Some(r);
        cur = r;
    }
    if let Some(anchor) = anchor_of(k, v) {
        // Shared copies already placed sit before these in the same block, since they
        // were inserted right after the same definition earlier.
        insert_after_existing(k, anchor, new_ops);
    }
    cur
}

/// Inserts `new` after the definition, after any copies of it already inserted there,
/// so a chain reads its predecessors after they are defined.
fn insert_after_existing(k: &mut Kernel, anchor: Anchor, new: Vec<OpId>) {
    if new.is_empty() {
        return;
    }
    let (block_path, start) = match anchor {
        Anchor::After(op) => {
            let Some((path, ops)) = k.blocks().into_iter().find(|(_, ops)| ops.contains(&op))
            else {
                return;
            };
            let pos = ops.iter().position(|o| *o == op).map_or(0, |p| p + 1);
            (path, pos)
        }
        Anchor::BodyStart(op) => {
            let Some((mut path, _)) = k.blocks().into_iter().find(|(_, ops)| ops.contains(&op))
            else {
                return;
            };
            path.push(op);
            (path, 0)
        }
        Anchor::Before(op) => return insert(k, Anchor::Before(op), new),
    };
    let is_copy = |k: &Kernel, id: &OpId| {
        matches!(k.ops.get(*id).map(|o| &o.kind), Some(OpKind::Copy { .. }))
    };
    // `block_path` comes from the kernel's own blocks.
    let ops: Vec<OpId> = k
        .block_mut(&block_path)
        .map(|b| b.ops().collect())
        .unwrap_or_default();
    let mut at = start;
    while ops.get(at).is_some_and(|id| is_copy(k, id)) {
        at += 1;
    }
    if let Some(block) = k.block_mut(&block_path) {
        let items: Vec<BlockItem> = new.into_iter().map(BlockItem::Op).collect();
        let at = at.min(block.items.len());
        block.items.splice(at..at, items);
    }
}
