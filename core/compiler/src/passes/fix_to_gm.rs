//! fix-to-gm: a store whose value is a matrix product (or an L0C accumulator) with at
//! most a cast on the way reads the product from L0C itself: lowering moves it to GM
//! with one FIX instruction, which casts f32 to the tensor's dtype as it moves, instead
//! of FIX to UB, a vector cast and an MTE3 DMA. Runs right after scope-inference, so the
//! UB tiles it removes never reach sinking, steps or memory planning.
//!
//! Only where it is not slower by the cost model: FIX to GM pays the GM DMA startup on
//! the FIX pipe and moves at `l0c_gm`, where the round trip pays the on-chip startup at
//! `l0c_ub`, then the vector cast and the GM startup at `ub_gm` on MTE3. Inside a loop
//! the round trip's pipes also overlap across iterations, so there the direct move must
//! not be slower than the busiest of them either. The value must be read by the store
//! alone (a product a vector op also reads goes to UB anyway), and the region 2-D with
//! contiguous rows (what one FIX tile describes; tails clamp its rows and columns).

use super::{cost, Context, Pass};
use crate::diag::Diagnostics;
use crate::ir::{Index, Kernel, OpId, OpKind, ValueDef, ValueId};
use crate::machine::Machine;
use crate::types::{DType, MemSpace};

pub struct FixToGm;

impl Pass for FixToGm {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "fix-to-gm"
    }

    fn description(&self) -> &'static str {
        "store matrix products from L0C straight to GM through FIX (casting on the way) where the cost model says it is not slower than through UB"
    }

    fn optional(&self) -> bool {
        true
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        let k = cx.ir_mut(self.name())?;
        for r in routes(k) {
            if !not_slower(&machine, k, &r) {
                continue;
            }
            if let Some(OpKind::Store { value, .. }) = k.ops.get_mut(r.store).map(|o| &mut o.kind) {
                *value = r.product;
            }
            for (path, _) in k.blocks() {
                if let Some(b) = k.block_mut(&path) {
                    b.retain_ops(|o| !r.bypassed.contains(&o));
                }
            }
        }
        Ok(())
    }
}

/// A store that could read `product` from L0C, and the ops it would bypass (the FIX to
/// UB and the cast, in program order).
struct Route {
    store: OpId,
    product: ValueId,
    bypassed: Vec<OpId>,
    in_loop: bool,
}

fn routes(k: &Kernel) -> Vec<Route> {
    let uses = k.use_counts();
    let mut out = Vec::new();
    for (path, ops) in k.blocks() {
        for store in ops {
            if let Some(mut r) = route(k, &uses, store) {
                r.in_loop = !path.is_empty();
                out.push(r);
            }
        }
    }
    out
}

fn route(k: &Kernel, uses: &[u32], store: OpId) -> Option<Route> {
    let op = k.ops.get(store)?;
    let OpKind::Store {
        param,
        index,
        value,
        accumulate: false,
    } = &op.kind
    else {
        return None;
    };
    let target = k.params.get(*param)?.ty.dtype;
    let plain_rows = index.len() == 2
        && index
            .iter()
            .all(|ix| matches!(ix, Index::Full | Index::Range { .. }));
    let transposed = k.annotations.transposed.contains(&store);
    if !plain_rows || transposed || !target.is_float() {
        return None;
    }
    // Walk back from the stored value over a cast, then the move out of L0C; each must
    // be read by the next step only and live in UB.
    let single_ub = |v: ValueId| {
        uses.get(v.index()) == Some(&1)
            && k.values.get(v).and_then(|x| x.space) == Some(MemSpace::UB)
    };
    let def = |v: ValueId| match k.values.get(v)?.def {
        ValueDef::Result { op, .. } => Some((op, &k.ops.get(op)?.kind)),
        ValueDef::LoopArg { .. } => None,
    };
    let mut bypassed = Vec::new();
    let mut v = *value;
    if let Some((cast, OpKind::Cast { arg })) = def(v) {
        if !single_ub(v) {
            return None;
        }
        bypassed.push(cast);
        v = *arg;
    }
    let Some((copy, OpKind::Copy { arg })) = def(v) else {
        return None;
    };
    let product = k.values.get(*arg)?;
    let from_l0c = product.space == Some(MemSpace::L0C) && product.ty.dtype == DType::F32;
    if !single_ub(v) || !from_l0c || product.ty.rank() != 2 {
        return None;
    }
    bypassed.insert(0, copy);
    Some(Route {
        store,
        product: *arg,
        bypassed,
        in_loop: false,
    })
}

/// Whether the direct move costs no more than the round trip (and, in a loop, than the
/// round trip's busiest pipe: its pipes would overlap across iterations).
fn not_slower(machine: &Machine, k: &Kernel, r: &Route) -> bool {
    let Some(OpKind::Store { param, .. }) = k.ops.get(r.store).map(|o| &o.kind) else {
        return false;
    };
    let Some(target) = k.params.get(*param).map(|p| p.ty.dtype) else {
        return false;
    };
    let elems: u64 = k
        .values
        .get(r.product)
        .map_or(0, |v| v.ty.shape.iter().product());
    let direct = cost::dma(machine, MemSpace::L0C, MemSpace::GM, elems * target.bytes());
    let through: Vec<u64> = r
        .bypassed
        .iter()
        .chain([&r.store])
        .map(|&op| cost::op_cycles(machine, k, op))
        .collect();
    let latency = through.iter().sum::<u64>();
    // A cost estimate: an empty chain costs nothing.
    let busiest = through.iter().copied().max().unwrap_or(0);
    direct <= latency && (!r.in_loop || direct <= busiest)
}
