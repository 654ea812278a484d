//! Cycle estimates from the machine's cost table (`machine.rs`) for passes that choose a
//! schedule's shape before there are instructions to simulate (subtile-matmul, the
//! automatic depth of multi-buffer). The formulas are the simulator's (`sim::timing`)
//! for one op of known size; the simulator keeps its own copy because it prices resolved
//! instructions, not tiles, and must stay the independent judge of what passes chose.

use crate::front::hir::{BinaryOp, UnaryOp};
use crate::ir::{FusedExpr, Kernel, OpId, OpKind, ValueId};
use crate::machine::Machine;
use crate::types::{DType, MemSpace, Pipe};

/// A DMA or on-chip move of `bytes` from `src` to `dst`: startup plus bytes over bandwidth.
pub fn dma(machine: &Machine, src: MemSpace, dst: MemSpace, bytes: u64) -> u64 {
    let c = &machine.costs;
    let startup = if src == MemSpace::GM || dst == MemSpace::GM {
        c.dma_startup_gm
    } else {
        c.dma_startup_onchip
    };
    // Bandwidths are validated positive; an unknown path costs a byte per cycle, as in
    // the simulator.
    let bw = c.bandwidth.path(src, dst).unwrap_or(1.0);
    startup + (bytes as f64 / bw).ceil() as u64
}

/// One product of an `m x k` by `k x n` tile of `dtype` operands: an `mmad`, or for
/// `m = 1` the `mmv` lowering emits instead (the matrix-vector rate).
pub fn mmad(machine: &Machine, dtype: DType, m: u64, k: u64, n: u64) -> u64 {
    let mm = &machine.costs.matmul;
    let kb = (mm.k_block_bytes / dtype.bytes()).max(1);
    let f = if dtype == DType::F32 {
        mm.f32_factor
    } else {
        1
    };
    let (row_blocks, block_n) = if m == 1 {
        (1, mm.matvec_block_n)
    } else {
        (m.div_ceil(mm.block_m.max(1)), mm.block_n)
    };
    let blocks = row_blocks
        .saturating_mul(k.div_ceil(kb))
        .saturating_mul(n.div_ceil(block_n.max(1)));
    mm.base.saturating_add(f.saturating_mul(blocks))
}

/// One vector op over `elems` lanes (`transcendental` for exp, div and the like).
pub fn vector(machine: &Machine, dtype: DType, elems: u64, transcendental: bool) -> u64 {
    let c = &machine.costs;
    let slope = if dtype.bytes() == 2 {
        c.vector_slope_f16
    } else {
        c.vector_slope_f32
    };
    let factor = if transcendental {
        c.transcendental_factor
    } else {
        1.0
    };
    (slope * factor * elems as f64).ceil() as u64 + c.vector_bias
}

/// What one op of the tile IR (spaces set by scope inference) occupies its pipe, by the
/// formulas above; 0 for ops that lower to no instruction. A fused op counts one vector
/// op per operator node, as lowering emits them.
pub fn op_cycles(machine: &Machine, k: &Kernel, op: OpId) -> u64 {
    let Some(o) = k.ops.get(op) else { return 0 };
    let ty = |v: ValueId| k.values.get(v).map(|x| (&x.ty, x.space));
    let bytes = |v: ValueId| ty(v).map_or(0, |(t, _)| t.bytes());
    let result = o.results.first().copied();
    let Some(pipe) = crate::ir::analysis::op_pipe(k, op) else {
        return 0;
    };
    let out = result.and_then(ty);
    let elems = |v: ValueId| ty(v).map_or(0, |(t, _)| t.shape.iter().product::<u64>());
    let vec = |v: ValueId, transcendental: bool| {
        ty(v).map_or(0, |(t, _)| {
            vector(machine, t.dtype, elems(v), transcendental)
        })
    };
    match &o.kind {
        OpKind::Load { .. } => result.map_or(0, |r| {
            let space = out.and_then(|(_, s)| s).unwrap_or(MemSpace::UB);
            dma(machine, MemSpace::GM, space, bytes(r))
        }),
        // Bytes in the tensor's dtype: a store from L0C (fix-to-gm) casts on the way.
        OpKind::Store { param, value, .. } => ty(*value).map_or(0, |(t, space)| {
            let dtype = k.params.get(*param).map_or(t.dtype, |p| p.ty.dtype);
            let src = space.unwrap_or(MemSpace::UB);
            dma(machine, src, MemSpace::GM, elems(*value) * dtype.bytes())
        }),
        OpKind::MatMul { lhs, rhs, .. } => match (ty(*lhs), ty(*rhs)) {
            (Some((l, _)), Some((r, _))) => match (l.shape.as_slice(), r.shape.as_slice()) {
                ([m, kk], [_, n]) => mmad(machine, l.dtype, *m, *kk, *n),
                _ => 0,
            },
            _ => 0,
        },
        OpKind::Copy { arg } | OpKind::Transpose { arg } if pipe != Pipe::V => {
            let src = ty(*arg).and_then(|(_, s)| s).unwrap_or(MemSpace::UB);
            let dst = out.and_then(|(_, s)| s).unwrap_or(MemSpace::UB);
            dma(machine, src, dst, bytes(*arg))
        }
        // A piece of an L1 tile moved into L0A / L0B: the bytes of the piece.
        OpKind::Slice { arg, .. } => result.map_or(0, |r| {
            let src = ty(*arg).and_then(|(_, s)| s).unwrap_or(MemSpace::L1);
            let dst = out.and_then(|(_, s)| s).unwrap_or(MemSpace::L0A);
            dma(machine, src, dst, bytes(r))
        }),
        OpKind::Reduce { arg, .. } => {
            let rows = ty(*arg)
                .and_then(|(t, _)| t.shape.first().copied())
                .unwrap_or(1);
            vec(*arg, false) + rows * machine.costs.reduction_cycles_per_row
        }
        OpKind::Unary { op: u, .. } => result.map_or(0, |r| {
            vec(r, !matches!(u, UnaryOp::Abs | UnaryOp::Neg | UnaryOp::Relu))
        }),
        OpKind::Binary { op: b, .. } => result.map_or(0, |r| vec(r, *b == BinaryOp::Div)),
        OpKind::Fused { expr, .. } => result.map_or(0, |r| fused_cycles(expr, &|t| vec(r, t))),
        OpKind::Full { .. } if out.and_then(|(_, s)| s) == Some(MemSpace::L0C) => 0,
        _ => result.map_or(0, |r| vec(r, false)),
    }
}

fn fused_cycles(e: &FusedExpr, vec: &dyn Fn(bool) -> u64) -> u64 {
    match e {
        FusedExpr::Arg(_) | FusedExpr::Const(_) => 0,
        FusedExpr::Unary(u, a) => {
            vec(!matches!(u, UnaryOp::Abs | UnaryOp::Neg | UnaryOp::Relu)) + fused_cycles(a, vec)
        }
        FusedExpr::Binary(b, x, y) => {
            vec(*b == BinaryOp::Div) + fused_cycles(x, vec) + fused_cycles(y, vec)
        }
    }
}
