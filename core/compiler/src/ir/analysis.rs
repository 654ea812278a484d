//! Analyses of the tile IR that more than one pass, and the verifiers, rely on: where a
//! fused expression computes each node (plan-memory sizes its scratch, lower-to-pipes
//! emits it, and which operand its destination may overwrite follows from it), and which
//! ops may write their result over an operand (out-of-ssa coalesces across them, the
//! plan verifier allows them to overlap). They live here, not in the pass that used
//! them first, so no pass or verifier imports another pass.

use super::typing::broadcast_shapes;
use super::{FusedExpr, Index, Kernel, Op, OpId, OpKind, ValueDef, ValueId, ValueSet};
use crate::dense::DenseSet;
use crate::types::{MemSpace, Pipe};

/// `x` rounded up to a multiple of `a` (a zero alignment counts as 1).
/// Whether any op of `k` stores to parameter `param`: a load of a tensor no op stores
/// reads the same wherever it moves (relayout's copies, canonicalize's load windows).
pub fn stored_to(k: &Kernel, param: usize) -> bool {
    let mut stored = false;
    k.walk_ops(|_, o| stored |= matches!(o.kind, OpKind::Store { param: p, .. } if p == param));
    stored
}

pub fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

/// Where each interior node of a fused expression is computed: into the destination,
/// or at a byte offset of the op's scratch. Left operands of the same shape reuse their
/// parent's place (elementwise ops may run in place); everything else gets fresh scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Dest,
    Scratch(u64),
}

pub struct FusedLayout {
    /// Per interior node in evaluation (post-)order: place and shape.
    pub nodes: Vec<(Place, Vec<u64>)>,
    pub scratch_bytes: u64,
}

pub fn fused_shape(e: &FusedExpr, args: &[Vec<u64>]) -> Vec<u64> {
    match e {
        FusedExpr::Arg(i) => args.get(*i as usize).cloned().unwrap_or_default(),
        FusedExpr::Const(_) => Vec::new(),
        FusedExpr::Unary(_, a) => fused_shape(a, args),
        FusedExpr::Binary(_, a, b) => {
            broadcast_shapes(&fused_shape(a, args), &fused_shape(b, args)).unwrap_or_default()
        }
    }
}

/// The layout of a fused op's intermediates; `elem` is the element size, `align` the
/// UB alignment. The expression is capped in size by fusion, bounding the recursion.
pub fn fused_layout(e: &FusedExpr, args: &[Vec<u64>], elem: u64, align: u64) -> FusedLayout {
    fn go(
        e: &FusedExpr,
        place: Place,
        args: &[Vec<u64>],
        elem: u64,
        align: u64,
        bump: &mut u64,
        out: &mut Vec<(Place, Vec<u64>)>,
    ) {
        let shape = fused_shape(e, args);
        let child =
            |c: &FusedExpr, reuse: bool, bump: &mut u64, out: &mut Vec<(Place, Vec<u64>)>| {
                if matches!(c, FusedExpr::Arg(_) | FusedExpr::Const(_)) {
                    return;
                }
                let cs = fused_shape(c, args);
                let p = if reuse && cs == shape {
                    place
                } else {
                    let at = *bump;
                    let bytes = cs.iter().product::<u64>().max(1) * elem;
                    *bump += bytes.div_ceil(align) * align;
                    Place::Scratch(at)
                };
                go(c, p, args, elem, align, bump, out);
            };
        match e {
            FusedExpr::Unary(_, a) => child(a, true, bump, out),
            FusedExpr::Binary(_, a, b) => {
                child(a, true, bump, out);
                child(b, false, bump, out);
            }
            FusedExpr::Arg(_) | FusedExpr::Const(_) => return,
        }
        out.push((place, shape));
    }
    let mut bump = 0;
    let mut nodes = Vec::new();
    go(
        e,
        Place::Dest,
        args,
        elem,
        align.max(1),
        &mut bump,
        &mut nodes,
    );
    FusedLayout {
        nodes,
        scratch_bytes: bump,
    }
}

/// Whether a fused op may write its destination over operand `arg` (share its bytes):
/// true when every read of `arg` happens before the first write of the destination, or
/// at that same node, which reads each element before writing it. The order is the
/// lowering's: interior nodes in post-order, each written to its place in
/// [`fused_layout`].
pub fn fused_in_place_ok(e: &FusedExpr, args: &[Vec<u64>], arg: u32) -> bool {
    struct Walk<'a> {
        nodes: std::vec::IntoIter<(Place, Vec<u64>)>,
        args: &'a [Vec<u64>],
        arg: u32,
        dest_written: bool,
        ok: bool,
    }
    fn go(w: &mut Walk, e: &FusedExpr) {
        let children: Vec<&FusedExpr> = match e {
            FusedExpr::Arg(_) | FusedExpr::Const(_) => return,
            FusedExpr::Unary(_, a) => vec![a],
            FusedExpr::Binary(_, a, b) => vec![a, b],
        };
        for c in &children {
            go(w, c);
        }
        let Some((place, shape)) = w.nodes.next() else {
            w.ok = false;
            return;
        };
        let reads_arg = children
            .iter()
            .any(|c| matches!(c, FusedExpr::Arg(i) if *i == w.arg));
        if reads_arg {
            let same_shape = w.args.get(w.arg as usize) == Some(&shape);
            if w.dest_written || (place == Place::Dest && !same_shape) {
                w.ok = false;
            }
        }
        if place == Place::Dest {
            w.dest_written = true;
        }
    }
    let layout = fused_layout(e, args, 4, 1);
    let mut w = Walk {
        nodes: layout.nodes.into_iter(),
        args,
        arg,
        dest_written: false,
        ok: true,
    };
    go(&mut w, e);
    w.ok
}

/// Whether the instructions lower-to-pipes emits for `op` stay correct when its result shares
/// bytes with its operand `v`: each element of `v` is read before that element of the
/// result is written (an elementwise op of one type, a fused expression that reads `v`
/// before it first writes its destination), or the op updates in place by design
/// (`update`'s old value, a matmul's accumulator). out-of-ssa coalesces only across such
/// ops, and the plan verifier allows only them to overlap.
pub fn may_overwrite(k: &Kernel, op: &Op, v: ValueId) -> bool {
    use OpKind;
    let Some(&r) = op.results.first() else {
        return false;
    };
    let same_type = match (k.values.get(r), k.values.get(v)) {
        (Some(a), Some(b)) => a.ty == b.ty,
        _ => false,
    };
    match &op.kind {
        OpKind::Unary { arg, .. } => *arg == v && same_type,
        OpKind::Binary { lhs, rhs, .. } => (*lhs == v || *rhs == v) && same_type,
        OpKind::Update { old, value, .. } => *old == v && *value != v,
        OpKind::MatMul { lhs, rhs, acc, .. } => *acc == Some(v) && *lhs != v && *rhs != v,
        OpKind::Fused { args, expr } => {
            let shapes: Option<Vec<Vec<u64>>> = args
                .iter()
                .map(|a| k.values.get(*a).map(|x| x.ty.shape.clone()))
                .collect();
            let Some(shapes) = shapes else {
                return false;
            };
            same_type
                && args.contains(&v)
                && (0..args.len())
                    .filter(|&i| args.get(i) == Some(&v))
                    .all(|i| fused_in_place_ok(expr, &shapes, i as u32))
        }
        _ => false,
    }
}

/// The tensor axis that axis `axis` of an access's tile steps along. The tile is numpy's
/// region (single positions' axes dropped) or, once canonicalize folds a reshape into
/// the load, the box itself (`typing::load_type`); `None` for a lone element's `[1]`.
pub fn tensor_axis(index: &[Index], tile_rank: usize, axis: usize) -> Option<usize> {
    if tile_rank == index.len() {
        return (axis < tile_rank).then_some(axis);
    }
    (0..index.len())
        .filter(|&a| !matches!(index[a], Index::Single(_)))
        .nth(axis)
}

/// The box a tensor access moves: one extent per tensor axis, a single position as 1.
/// A load's tile holds the same elements in the same order (`typing::same_layout`).
pub fn region_shape(k: &Kernel, tensor: &[u64], index: &[Index]) -> Vec<u64> {
    tensor
        .iter()
        .zip(index)
        .map(|(&s, ix)| match ix {
            Index::Full => s,
            Index::Range { len, .. } | Index::Strided { len, .. } => *len,
            Index::Single(_) => 1,
            Index::Indirect(v) => k
                .values
                .get(*v)
                .and_then(|x| x.ty.shape.first().copied())
                // Verified IR: an indirect index is a 1-D or 2-D i32 tile.
                .unwrap_or(0),
        })
        .collect()
}

/// Row-major strides in elements.
pub fn strides(shape: &[u64]) -> Vec<i64> {
    let mut out = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1].saturating_mul(shape[i + 1] as i64);
    }
    out
}

/// The pipe that executes `op` once lowered (`None` for loops and scalar values).
pub fn op_pipe(k: &Kernel, op: OpId) -> Option<Pipe> {
    let o = k.ops.get(op)?;
    let space = |v: ValueId| k.values.get(v).and_then(|x| x.space);
    let result_space = o.results.first().and_then(|&r| space(r));
    Some(match &o.kind {
        // A slot access runs on no pipe of its own (or copies on V, `ir::slots`); the
        // tiles of explicit slots are never rotated by a loop.
        OpKind::For(_) | OpKind::Buffers | OpKind::SlotWrite { .. } | OpKind::SlotRead { .. } => {
            return None
        }
        OpKind::Load { .. } => Pipe::MTE2,
        OpKind::Store { value, .. } if space(*value) == Some(MemSpace::L0C) => Pipe::FIX,
        OpKind::Store { .. } => Pipe::MTE3,
        OpKind::MatMul { .. } => Pipe::M,
        OpKind::Slice { .. } => Pipe::MTE1,
        OpKind::Copy { arg } | OpKind::Transpose { arg } => match (space(*arg)?, result_space?) {
            (MemSpace::UB, MemSpace::L1) => Pipe::MTE3,
            (MemSpace::L1, _) => Pipe::MTE1,
            (MemSpace::L0C, _) => Pipe::FIX,
            _ => Pipe::V,
        },
        OpKind::Full { .. } | OpKind::IndexValue { .. } if result_space.is_none() => return None,
        _ => Pipe::V,
    })
}

/// `1 / c` when multiplying by it rounds exactly as dividing by `c` does: `c` is a
/// power of two (up to sign) whose reciprocal, like `c`, is exact in f32.
pub fn exact_reciprocal(c: f64) -> Option<f64> {
    const MANTISSA: u64 = (1 << 52) - 1;
    if !c.is_normal() || c.to_bits() & MANTISSA != 0 {
        return None;
    }
    let r = 1.0 / c;
    let exact_f32 = |x: f64| x != 0.0 && (x as f32).is_finite() && (x as f32) as f64 == x;
    (exact_f32(c) && exact_f32(r)).then_some(r)
}

/// What `op` reads, including, for a loop, every op of its body.
pub fn reads(k: &Kernel, op: OpId) -> ValueSet {
    let mut out = DenseSet::new();
    let mut stack = vec![op];
    while let Some(id) = stack.pop() {
        let Some(o) = k.ops.get(id) else { continue };
        out.extend(o.kind.operands());
        if let OpKind::For(l) = &o.kind {
            stack.extend(l.body.ops());
        }
    }
    out
}

/// Stores and loops: a load must not move past them.
pub fn writes_memory(k: &Kernel, op: OpId) -> bool {
    matches!(
        k.ops.get(op).map(|o| &o.kind),
        Some(OpKind::Store { .. } | OpKind::For(_) | OpKind::Update { .. })
    )
}

/// The value of `v` when it is a rank-0 constant.
pub fn scalar_constant(k: &Kernel, v: ValueId) -> Option<f64> {
    let val = k.values.get(v)?;
    let ValueDef::Result { op, .. } = val.def else {
        return None;
    };
    match k.ops.get(op)?.kind {
        OpKind::Full { value } if val.ty.rank() == 0 => Some(value),
        _ => None,
    }
}
