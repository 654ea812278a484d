//! Why a product that overflows L0 stays whole. subtile-matmul splits only the patterns
//! of its module doc; a product outside them whose tiles overflow L0A, L0B or L0C even
//! with one slot each gets the reason recorded (`Annotations::l0_whole`), and plan-memory's
//! capacity error points at the product with it, so the error says what to change.

use super::pieces::accumulating;
use super::{each_product, operands, Mode};
use crate::ir::{Kernel, OpId, OpKind};
use crate::machine::Machine;
use crate::types::MemSpace;

/// Records the reason on every product left whole that overflows L0.
pub(super) fn explain(k: &mut Kernel, machine: &Machine) {
    each_product(k, |k, mm, ops, block, uses| {
        if let Some(reason) = reason(k, machine, mm, ops, block, uses) {
            k.annotations.l0_whole.insert(mm, reason);
        }
    });
}

fn reason(
    k: &Kernel,
    machine: &Machine,
    mm: OpId,
    ops: &[OpId],
    block: &crate::ir::OpMap<usize>,
    uses: &[u32],
) -> Option<String> {
    let OpKind::MatMul { lhs, rhs, .. } = k.ops.get(mm)?.kind else {
        return None;
    };
    let (a, b) = (&k.values.get(lhs)?.ty, &k.values.get(rhs)?.ty);
    let ([m, kk], [_, n]) = (a.shape.as_slice(), b.shape.as_slice()) else {
        return None;
    };
    let eb = a.dtype.bytes();
    let over = |space: MemSpace, bytes: u64| {
        let mem = machine.memories.get(space);
        let align = mem.alignment.max(1);
        mem.size
            .is_some_and(|cap| bytes.div_ceil(align).saturating_mul(align) > cap)
    };
    let c_over = over(MemSpace::L0C, m * n * 4);
    let fits = !over(MemSpace::L0A, m * kk * eb) && !over(MemSpace::L0B, kk * n * eb) && !c_over;
    if fits {
        return None;
    }
    let accumulator = accumulating(k, uses, mm).is_some();
    let stored = ops.iter().any(|&s| {
        matches!(&k.ops.get(s).map(|o| &o.kind), Some(OpKind::Store { value, .. })
            if k.ops.get(mm).and_then(|o| o.results.first()) == Some(value))
    });
    let loaded = operands(k, block, uses, mm, Mode::Blocks).is_some();
    let l0c = machine.memories.get(MemSpace::L0C).size;
    Some(
        if let (true, true, Some(cap)) = (accumulator, c_over, l0c) {
            format!(
                "the accumulator ({m} x {n} f32, {} bytes) stays whole in L0C, which holds {cap}: \
             accumulate fewer rows or columns",
                m * n * 4,
            )
        } else if !(accumulator || stored) {
            "subtile-matmul splits a product that a store alone reads or that updates an \
         accumulator carried across a loop; this one is read otherwise"
                .to_string()
        } else if !loaded {
            "subtile-matmul splits products of loaded tiles (or their transposes) that only \
         products, transposes and slices read"
                .to_string()
        } else {
            "no split fits: blocks are whole multiples of 16 rows and columns starting on the \
         memories' alignment, and K pieces are made for bf16 only"
                .to_string()
        },
    )
}
