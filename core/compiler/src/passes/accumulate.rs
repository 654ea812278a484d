//! Accumulators in L0C (part of scope-inference). A loop-carried matmul accumulator
//! (`let acc = zeros(..); for .. { acc += x @ w; }`) would otherwise live in UB, and
//! every iteration would move the product out of L0C (FIX) and add it on the vector
//! pipe. Here the update becomes `matmul x, w, acc=%acc`: the accumulator stays in L0C
//! for the whole loop, the matrix unit adds into it (`mmad .. acc=1`; the first
//! iteration writes with `acc=0`, which is why the init must be zeros), and one FIX
//! after the loop moves the result out.
//!
//! A product that subtile-matmul already made add into a block of the accumulator
//! (`matmul .., acc=%acc[..]`, made only where this pattern held) needs no rewrite: its
//! nest's values go to L0C all the same.
//!
//! Only the plain pattern is rewritten; everything else keeps the UB scheme:
//! - the init is a `full 0.0` read by nothing but the loop (a non-zero init, or one
//!   also read elsewhere, would need L0C initialised from UB, which has no data path
//!   on this machine);
//! - the body reads the accumulator once, in `acc + x @ w` (or `x @ w + acc`) whose
//!   product has no other reader and whose result is only yielded;
//! - the accumulator is f32 and has the product's type (no broadcasting);
//! - in a loop with tails (`update add`, masked lanes keep the old value) every lane
//!   of the product must be valid, which is known here when the operands are loads
//!   (or transposed loads) whose row/column axes are not clamped.

use crate::dense::DenseMap;
use crate::front::hir::{BinaryOp, UpdateOp};
use crate::ir::{BlockItem, Index, Kernel, OpId, OpKind, ValueDef, ValueId, ValueMap};
use crate::types::{DType, MemSpace};

/// Gives every loop-carried value that starts from a zero `full` read elsewhere too its
/// own zero. Canonicalize's CSE merges equal `zeros(..)` of two accumulators
/// (`g += x @ wg; u += x @ wu`) into one `full 0.0`, and an init read by more than its
/// loop cannot stay in L0C, so both would fall back to UB. A zero in L0C emits no
/// instruction (the first `mmad` writes with `acc=0`), and one in UB is one `vdup`.
pub fn unshare_zero_inits(k: &mut Kernel) {
    let uses = k.use_counts();
    let mut shared = Vec::new();
    k.walk_ops(|id, op| {
        let OpKind::For(l) = &op.kind else { return };
        for (i, (&init, &arg)) in l.inits.iter().zip(&l.args).enumerate() {
            let zero =
                matches!(def_op(k, init), Some((_, OpKind::Full { value })) if *value == 0.0);
            if zero && uses.get(init.index()).is_some_and(|&n| n > 1) {
                shared.push((id, i, init, arg));
            }
        }
    });
    for (f, i, init, arg) in shared {
        let Some((full, kind)) = def_op(k, init).map(|(op, kind)| (op, kind.clone())) else {
            continue;
        };
        let span = k.ops[full].span;
        let (ty, name) = (k.values[init].ty.clone(), k.values[arg].name.clone());
        let (op, zero) = k.add_op(kind, span, ty, name);
        if let OpKind::For(l) = &mut k.ops[f].kind {
            if let Some(x) = l.inits.get_mut(i) {
                *x = zero;
            }
        }
        // The new zero goes right before its loop, in the loop's block.
        if let Some((path, _)) = k.blocks().into_iter().find(|(_, ops)| ops.contains(&f)) {
            if let Some(block) = k.block_mut(&path) {
                if let Some(at) = block.items.iter().position(|x| *x == BlockItem::Op(f)) {
                    block.items.insert(at, BlockItem::Op(op));
                }
            }
        }
    }
    // A zero that only loops read is now read by none.
    let uses = k.use_counts();
    for (path, ops) in k.blocks() {
        let dead: Vec<OpId> = ops
            .into_iter()
            .filter(|&o| {
                let op = &k.ops[o];
                matches!(op.kind, OpKind::Full { value } if value == 0.0)
                    && op.results.iter().all(|r| uses.get(r.index()) == Some(&0))
            })
            .collect();
        if let (false, Some(block)) = (dead.is_empty(), k.block_mut(&path)) {
            block.retain_ops(|o| !dead.contains(&o));
        }
    }
}

/// Rewrites every accumulator that fits the pattern; returns the values (init, block
/// argument, yielded update, loop result) that must live in L0C.
pub fn accumulate_in_l0c(k: &mut Kernel) -> ValueMap<MemSpace> {
    unshare_zero_inits(k);
    let mut fors = Vec::new();
    k.walk_ops(|id, op| {
        if matches!(op.kind, OpKind::For(_)) {
            fors.push(id);
        }
    });
    let mut out = DenseMap::new();
    for f in fors {
        let n = match &k.ops[f].kind {
            OpKind::For(l) => l.args.len(),
            _ => 0,
        };
        for i in 0..n {
            if let Some(found) = find(k, f, i) {
                rewrite(k, f, &found);
                for v in [found.init, found.arg, found.update, found.result] {
                    out.insert(v, MemSpace::L0C);
                }
                for &v in &found.enclosing {
                    out.insert(v, MemSpace::L0C);
                }
            }
        }
    }
    out
}

/// Whether the `i`-th value carried by loop `f` is an accumulator this pass keeps in
/// L0C (subtile-matmul asks before it splits the product into blocks of it).
pub fn keeps_in_l0c(k: &Kernel, f: OpId, i: usize) -> bool {
    find(k, f, i).is_some()
}

struct Found {
    init: ValueId,
    arg: ValueId,
    update: ValueId,
    result: ValueId,
    /// The `add`/`update add` op, removed by the rewrite (`None`: the product already
    /// adds into the accumulator).
    add: Option<OpId>,
    matmul: OpId,
    /// The carried values of the loops around this one that only pass the accumulator
    /// through (see [`enclosing`]).
    enclosing: Vec<ValueId>,
}

fn def_op(k: &Kernel, v: ValueId) -> Option<(OpId, &OpKind)> {
    match k.values.get(v)?.def {
        ValueDef::Result { op, .. } => Some((op, &k.ops.get(op)?.kind)),
        ValueDef::LoopArg { .. } => None,
    }
}

fn find(k: &Kernel, f: OpId, i: usize) -> Option<Found> {
    let op = k.ops.get(f)?;
    let OpKind::For(l) = &op.kind else {
        return None;
    };
    if !l.always_runs() {
        return None;
    }
    let (init, arg, update) = (*l.inits.get(i)?, *l.args.get(i)?, *l.yields.get(i)?);
    let result = *op.results.get(i)?;
    let uses = k.use_counts();
    let once = |v: ValueId| uses.get(v.index()) == Some(&1);
    let arg_ty = &k.values.get(arg)?.ty;
    if !once(arg) || !once(update) || arg_ty.dtype != DType::F32 {
        return None;
    }
    let enclosing = enclosing(k, &uses, f, init, result, 0)?;
    let (add, add_kind) = def_op(k, update)?;
    if !l.body.ops().any(|o| o == add) {
        return None;
    }
    // Already a product into a block of the accumulator (subtile-matmul's M x N blocks,
    // made only where this pattern held): nothing to rewrite, but the nest's values
    // live in L0C all the same.
    if let OpKind::MatMul {
        acc: Some(a),
        acc_block,
        ..
    } = add_kind
    {
        return (*a == arg && !acc_block.is_empty()).then_some(Found {
            init,
            arg,
            update,
            result,
            add: None,
            matmul: add,
            enclosing,
        });
    }
    let (a, b, masked) = match add_kind {
        OpKind::Binary {
            op: BinaryOp::Add,
            lhs,
            rhs,
        } => (*lhs, *rhs, false),
        OpKind::Update {
            op: UpdateOp::Add,
            old,
            value,
        } => (*old, *value, true),
        _ => return None,
    };
    let product = if a == arg {
        b
    } else if b == arg && !masked {
        a
    } else {
        return None;
    };
    let (matmul, mm_kind) = def_op(k, product)?;
    let OpKind::MatMul {
        lhs,
        rhs,
        acc: None,
        ..
    } = mm_kind
    else {
        return None;
    };
    let in_body = l.body.ops().any(|o| o == matmul);
    if !in_body || !once(product) || k.values.get(product)?.ty != *arg_ty {
        return None;
    }
    if masked && !(all_valid_on(k, *lhs, 0) && all_valid_on(k, *rhs, 1)) {
        return None;
    }
    Some(Found {
        init,
        arg,
        update,
        result,
        add: Some(add),
        matmul,
        enclosing,
    })
}

/// Where the accumulator of loop `f` (its init and result) starts: the zero `full`
/// read only by the loop (no enclosing values), or the block argument of the loop
/// directly around `f` (subtile-matmul's piece loop inside the K loop), which passes
/// the accumulator through: its init goes in (recursively valid), nothing else reads
/// its block argument, and it yields `f`'s result and nothing else reads that. Then
/// the whole nest keeps one L0C tile, whose first write is the one where every
/// counter of the nest is 0 (the lowering's `acc` operand). Returns the outer loops'
/// carried values.
fn enclosing(
    k: &Kernel,
    uses: &[u32],
    f: OpId,
    init: ValueId,
    result: ValueId,
    depth: usize,
) -> Option<Vec<ValueId>> {
    let once = |v: ValueId| uses.get(v.index()) == Some(&1);
    if !once(init) || depth > crate::limits::MAX_NESTING_DEPTH {
        return None;
    }
    let (outer, j) = match k.values.get(init)?.def {
        ValueDef::Result { op, .. } => {
            let zero = matches!(k.ops.get(op)?.kind, OpKind::Full { value } if value == 0.0);
            return zero.then(Vec::new);
        }
        ValueDef::LoopArg { op, index } => (op, index as usize),
    };
    let o = k.ops.get(outer)?;
    let OpKind::For(ol) = &o.kind else {
        return None;
    };
    let passes_through = ol.yields.get(j) == Some(&result)
        && once(result)
        && ol.body.ops().any(|x| x == f)
        && ol.always_runs();
    if !passes_through {
        return None;
    }
    let (oinit, oresult) = (*ol.inits.get(j)?, *o.results.get(j)?);
    let mut out = enclosing(k, uses, outer, oinit, oresult, depth + 1)?;
    out.extend([oinit, init, result, oresult]);
    Some(out)
}

/// Whether every lane of 2-D tile `v` along `axis` is valid in every iteration: a load
/// (or a transposed load) whose range on that axis is never clamped.
fn all_valid_on(k: &Kernel, v: ValueId, axis: usize) -> bool {
    match def_op(k, v) {
        Some((_, OpKind::Load { index, .. })) => {
            let rank = k.values.get(v).map_or(0, |x| x.ty.rank());
            let on = crate::ir::analysis::tensor_axis(index, rank, axis);
            !matches!(
                on.and_then(|a| index.get(a)),
                Some(Index::Range { clamped: true, .. }) | None
            )
        }
        Some((_, OpKind::Transpose { arg })) => all_valid_on(k, *arg, 1 - axis.min(1)),
        Some((_, OpKind::Slice { arg, transpose, .. })) => {
            all_valid_on(k, *arg, if *transpose { 1 - axis.min(1) } else { axis })
        }
        _ => false,
    }
}

fn rewrite(k: &mut Kernel, f: OpId, found: &Found) {
    let Some(add) = found.add else {
        return;
    };
    if let OpKind::MatMul { acc, .. } = &mut k.ops[found.matmul].kind {
        *acc = Some(found.arg);
    }
    k.ops[found.matmul].results = vec![found.update];
    k.values[found.update].def = ValueDef::Result {
        op: found.matmul,
        index: 0,
    };
    if let OpKind::For(l) = &mut k.ops[f].kind {
        l.body.retain_ops(|o| o != add);
    }
}
