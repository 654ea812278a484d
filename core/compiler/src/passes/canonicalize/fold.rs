//! Constant folding and algebraic simplification:
//! - index expressions to affine normal form (`(%r + 1) * 8` -> `%r * 8 + 8`);
//! - elementwise ops and casts of constants to constants, rounded to the result dtype
//!   as the machine would round them;
//! - exact identities: `x * 1`, `1 * x`, `x / 1`, `x - 0`, `neg(neg(x))` -> `x`
//!   (`x + 0` is not folded: it turns `-0.0` into `+0.0`);
//! - in kernels with no clamped range (so no masked lanes), `update op old, v` becomes
//!   the plain elementwise op, which fusion can then merge;
//! - a slice of a loaded tile of a tensor the kernel never stores becomes a load of the
//!   window (`slice (load %x[:, :])[:, 16 .. 48]` -> `load %x[:, 16 .. 48]`): a DMA
//!   reads any window of GM, where a vector copy in UB costs the V pipe and must start
//!   on UB's alignment;
//! - a reshape that only adds or drops axes of extent 1 disappears into the load before
//!   it (the load's tile becomes the box it moves, `load %q[h, :] : f32[1, 64]`) or
//!   the store after it: tiles are dense, so it would copy the same bytes.

use crate::dense::DenseMap;
use crate::front::hir::{BinaryOp, UnaryOp, UpdateOp};
use crate::ir::affine;
use crate::ir::{Index, IndexExpr, Kernel, OpId, OpKind, ValueId, ValueMap};
use crate::types::DType;

pub fn run(k: &mut Kernel) -> bool {
    let mut ids = Vec::new();
    k.walk_ops(|id, _| ids.push(id));
    let unmasked = !has_clamped_range(k, &ids);
    let mut changed = false;
    let mut subst: ValueMap<ValueId> = DenseMap::new();
    for &id in &ids {
        changed |= apply(k, id, &subst);
        changed |= fold_indices(&mut k.ops[id].kind);
        changed |= store_without_reshape(k, id);
        match fold_op(k, id, unmasked) {
            Some(Folded::Kind(kind)) => {
                k.ops[id].kind = kind;
                changed = true;
            }
            // Counted as a change only once a use is rewritten: the replaced op stays
            // (unused) until dead-code elimination.
            Some(Folded::Value(v)) => {
                if let Some(&r) = k.ops[id].results.first() {
                    subst.insert(r, v);
                }
            }
            None => {}
        }
    }
    if !subst.is_empty() {
        // Loop yields are read before their loop body's substitutions are known.
        for &id in &ids {
            changed |= apply(k, id, &subst);
        }
    }
    changed
}

/// Rewrites the op's operands through `subst`; true if any changed.
fn apply(k: &mut Kernel, id: OpId, subst: &ValueMap<ValueId>) -> bool {
    let mut changed = false;
    k.ops[id].kind.map_operands(|v| {
        let w = resolve(subst, v);
        changed |= w != v;
        w
    });
    changed
}

fn resolve(subst: &ValueMap<ValueId>, mut v: ValueId) -> ValueId {
    // Chains are acyclic (each entry maps a result to an earlier value); the bound only
    // makes that assumption harmless if broken.
    for _ in 0..subst.len() {
        match subst.get(&v) {
            Some(&w) => v = w,
            None => break,
        }
    }
    v
}

fn has_clamped_range(k: &Kernel, ids: &[OpId]) -> bool {
    ids.iter().any(|&id| match &k.ops[id].kind {
        OpKind::Load { index, .. } | OpKind::Store { index, .. } => index
            .iter()
            .any(|ix| matches!(ix, Index::Range { clamped: true, .. })),
        _ => false,
    })
}

enum Folded {
    /// Rewrite the op in place (same results).
    Kind(OpKind),
    /// The op's result equals an existing value.
    Value(ValueId),
}

/// The constant an op produces, when it is a `full`/`const`.
fn constant(k: &Kernel, v: ValueId) -> Option<f64> {
    let crate::ir::ValueDef::Result { op, .. } = k.values.get(v)?.def else {
        return None;
    };
    match k.ops.get(op)?.kind {
        OpKind::Full { value } => Some(value),
        _ => None,
    }
}

fn fold_op(k: &Kernel, id: OpId, unmasked: bool) -> Option<Folded> {
    let op = &k.ops[id];
    let result_ty = &k.values.get(*op.results.first()?)?.ty;
    let dtype = result_ty.dtype;
    let same_type = |v: ValueId| k.values.get(v).is_some_and(|x| &x.ty == result_ty);
    let full = |value: Option<f64>| {
        Some(Folded::Kind(OpKind::Full {
            value: round(value?, dtype)?,
        }))
    };
    match &op.kind {
        OpKind::Unary {
            op: UnaryOp::Neg,
            arg,
        } => {
            let inner = match k.values.get(*arg)?.def {
                crate::ir::ValueDef::Result { op, .. } => &k.ops.get(op)?.kind,
                _ => return None,
            };
            match (inner, constant(k, *arg)) {
                (_, Some(c)) => full(unary(UnaryOp::Neg, c, dtype)),
                (
                    OpKind::Unary {
                        op: UnaryOp::Neg,
                        arg: x,
                    },
                    _,
                ) if same_type(*x) => Some(Folded::Value(*x)),
                _ => None,
            }
        }
        OpKind::Unary { op, arg } => full(unary(*op, constant(k, *arg)?, dtype)),
        OpKind::Binary { op, lhs, rhs } => {
            let (a, b) = (constant(k, *lhs), constant(k, *rhs));
            if let (Some(a), Some(b)) = (a, b) {
                return full(binary(*op, a, b, dtype));
            }
            let identity = match (op, a, b) {
                (BinaryOp::Mul, _, Some(1.0)) => Some(*lhs),
                (BinaryOp::Mul, Some(1.0), _) => Some(*rhs),
                (BinaryOp::Div, _, Some(1.0)) => Some(*lhs),
                (BinaryOp::Sub, _, Some(b)) if b == 0.0 && b.is_sign_positive() => Some(*lhs),
                _ => None,
            };
            identity.filter(|&v| same_type(v)).map(Folded::Value)
        }
        OpKind::Cast { arg } => full(constant(k, *arg)),
        OpKind::Slice {
            arg,
            index,
            transpose: false,
        } => load_window(k, *arg, index).map(Folded::Kind),
        OpKind::Reshape { arg } => load_as_box(k, *arg, result_ty).map(Folded::Kind),
        OpKind::IndexValue {
            expr: IndexExpr::Const(c),
        } => full(Some(*c as f64)),
        OpKind::Update { op, old, value } if unmasked => match op {
            UpdateOp::Set => same_type(*value).then_some(Folded::Value(*value)),
            UpdateOp::Add | UpdateOp::Sub | UpdateOp::Mul => {
                let op = match op {
                    UpdateOp::Add => BinaryOp::Add,
                    UpdateOp::Sub => BinaryOp::Sub,
                    _ => BinaryOp::Mul,
                };
                Some(Folded::Kind(OpKind::Binary {
                    op,
                    lhs: *old,
                    rhs: *value,
                }))
            }
        },
        _ => None,
    }
}

/// `load %x[r][w]` as one load of the window, when `arg` is a load of a tensor no op
/// stores (so reading it later reads the same) through ranges (strided ones too, a
/// DMA's GM stride), whole axes and single positions. A clamped range (a tail) folds
/// only under a whole-axis slice: the window of a tail may start past the tensor.
fn load_window(k: &Kernel, arg: ValueId, window: &[Index]) -> Option<OpKind> {
    let crate::ir::ValueDef::Result { op, .. } = k.values.get(arg)?.def else {
        return None;
    };
    let OpKind::Load {
        param,
        index,
        pad: None,
    } = &k.ops.get(op)?.kind
    else {
        return None;
    };
    if crate::ir::analysis::stored_to(k, *param) {
        return None;
    }
    // The tile drops the axes of single positions (numpy), so the window's indices
    // pair with the others in order. (A lone element, `[1]`, has nothing to narrow.)
    let kept = index
        .iter()
        .filter(|ix| !matches!(ix, Index::Single(_)))
        .count();
    if kept != window.len() {
        return None;
    }
    let mut window = window.iter();
    let mut out = Vec::with_capacity(index.len());
    for outer in index {
        if matches!(outer, Index::Single(_)) {
            out.push(outer.clone());
            continue;
        }
        let inner = window.next()?;
        out.push(match (outer, inner) {
            (Index::Indirect(_), _) => return None,
            (_, Index::Full) => outer.clone(),
            (Index::Full, Index::Range { .. } | Index::Strided { .. }) => inner.clone(),
            (
                Index::Range {
                    start,
                    clamped: false,
                    ..
                },
                Index::Strided {
                    start: s,
                    len,
                    step,
                },
            ) => Index::Strided {
                start: simplify(&IndexExpr::Add(
                    Box::new(start.clone()),
                    Box::new(s.clone()),
                )),
                len: *len,
                step: *step,
            },
            (
                Index::Range {
                    start,
                    clamped: false,
                    ..
                },
                Index::Range {
                    start: s,
                    len,
                    clamped: false,
                },
            ) => Index::Range {
                start: simplify(&IndexExpr::Add(
                    Box::new(start.clone()),
                    Box::new(s.clone()),
                )),
                len: *len,
                clamped: false,
            },
            _ => return None,
        });
    }
    Some(OpKind::Load {
        param: *param,
        index: out,
        pad: None,
    })
}

/// `reshape (load %x[i, :])` to the box the load moves (`f32[1, 64]`, the single
/// position's axis kept) as the load itself with that type, and `reshape (load %x[i ..
/// i + 1, :])` that drops the axis as `load %x[i, :]`: the same elements in the same
/// order, so the DMA writes the reshaped tile directly, where the reshape would copy it
/// on the vector pipe. The load's tile must have no other reader (the load is moved,
/// not copied).
fn load_as_box(k: &Kernel, arg: ValueId, to: &crate::types::TileType) -> Option<OpKind> {
    let crate::ir::ValueDef::Result { op, .. } = k.values.get(arg)?.def else {
        return None;
    };
    let load = k.ops.get(op)?;
    let OpKind::Load { param, index, .. } = &load.kind else {
        return None;
    };
    if k.use_counts().get(arg.index()) != Some(&1) {
        return None;
    }
    let tensor = &k.params.get(*param)?.ty.shape;
    let boxed = crate::ir::analysis::region_shape(k, tensor, index);
    if to.shape == boxed {
        return Some(load.kind.clone());
    }
    // A tile's single position (`t[3, :]`, a window of one, then the axis dropped) on
    // a loaded tile: the load's own integer index, which drops the axis.
    let mut points = load.kind.clone();
    let OpKind::Load { index, .. } = &mut points else {
        return None;
    };
    for ix in index.iter_mut() {
        if let Index::Range {
            start,
            len: 1,
            clamped: false,
        } = ix
        {
            *ix = Index::Single(start.clone());
        }
    }
    (crate::ir::typing::numpy_region(index, &boxed) == to.shape).then_some(points)
}

/// `store %y[i, :], (reshape %v)` as `store %y[i, :], %v` when `%v` holds the box's
/// elements in order: a DMA stores any such tile directly.
fn store_without_reshape(k: &mut Kernel, id: OpId) -> bool {
    let OpKind::Store {
        param,
        index,
        value,
        ..
    } = &k.ops[id].kind
    else {
        return false;
    };
    let Some(crate::ir::ValueDef::Result { op, .. }) = k.values.get(*value).map(|v| v.def) else {
        return false;
    };
    let Some(OpKind::Reshape { arg }) = k.ops.get(op).map(|o| &o.kind) else {
        return false;
    };
    let (Some(p), Some(from)) = (k.params.get(*param), k.values.get(*arg)) else {
        return false;
    };
    let boxed = crate::ir::analysis::region_shape(k, &p.ty.shape, index);
    if !crate::ir::typing::same_layout(&from.ty.shape, &boxed) {
        return false;
    }
    let arg = *arg;
    if let OpKind::Store { value, .. } = &mut k.ops[id].kind {
        *value = arg;
    }
    true
}

/// Rounds a folded value to what a tile of `dtype` holds; `None` when the value does
/// not fit (an `i32` result out of range or not an integer is left unfolded).
fn round(v: f64, dtype: DType) -> Option<f64> {
    Some(match dtype {
        DType::F32 => v as f32 as f64,
        DType::F16 => half::f16::from_f64(v).to_f64(),
        DType::BF16 => half::bf16::from_f64(v).to_f64(),
        DType::Mask if v == 0.0 || v == 1.0 => v,
        // 8-bit values are never folded: a float saturates into them and an integer
        // wraps, and the constant does not say which it came from.
        DType::Mask | DType::I8 | DType::U8 => return None,
        DType::I32 => {
            if v.fract() != 0.0 || v < i32::MIN as f64 || v > i32::MAX as f64 {
                return None;
            }
            v
        }
    })
}

/// Folds in f32 as the vector unit computes (integers exactly); `None` when the op is
/// not defined on integers.
fn unary(op: UnaryOp, x: f64, dtype: DType) -> Option<f64> {
    if dtype == DType::I32 {
        return match op {
            UnaryOp::Neg => Some(-x),
            UnaryOp::Abs => Some(x.abs()),
            UnaryOp::Relu => Some(x.max(0.0)),
            _ => None,
        };
    }
    Some(op.apply(x as f32) as f64)
}

fn binary(op: BinaryOp, a: f64, b: f64, dtype: DType) -> Option<f64> {
    if op.is_bitwise() {
        // i32 lanes, or a mask's 0 and 1: exact in f64, as the vector unit computes.
        if !matches!(dtype, DType::I32 | DType::Mask) {
            return None;
        }
        let (a, b) = (a as i32, b as i32);
        let shifts = (0..32).contains(&b);
        return Some(f64::from(match op {
            BinaryOp::BitAnd => a & b,
            BinaryOp::BitOr => a | b,
            BinaryOp::BitXor => a ^ b,
            BinaryOp::Shl if shifts => a.wrapping_shl(b as u32),
            BinaryOp::Shl => 0,
            BinaryOp::Shr if shifts => a >> b,
            BinaryOp::Shr => a >> 31,
            _ => return None,
        }));
    }
    if dtype == DType::I32 {
        // Exact in f64 for i32 operands; `round` rejects results outside i32.
        return match op {
            BinaryOp::Add => Some(a + b),
            BinaryOp::Sub => Some(a - b),
            BinaryOp::Mul => Some(a * b),
            BinaryOp::Maximum => Some(a.max(b)),
            BinaryOp::Minimum => Some(a.min(b)),
            // numpy's: a zero divisor gives 0 (the f64 quotient of exact i32 operands
            // floors exactly; `round` rejects the one overflow, -2^31 // -1).
            BinaryOp::FloorDiv | BinaryOp::Mod if b == 0.0 => Some(0.0),
            BinaryOp::FloorDiv => Some((a / b).floor()),
            BinaryOp::Mod => Some(a - (a / b).floor() * b),
            _ => None,
        };
    }
    let (a, b) = (a as f32, b as f32);
    let r = match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Maximum => a.max(b),
        BinaryOp::Minimum => a.min(b),
        _ => return None,
    };
    Some(r as f64)
}

fn fold_indices(kind: &mut OpKind) -> bool {
    let mut changed = false;
    let mut fold = |e: &mut IndexExpr| {
        let simple = simplify(e);
        if simple != *e {
            *e = simple;
            changed = true;
        }
    };
    match kind {
        OpKind::Load { index, .. } | OpKind::Store { index, .. } | OpKind::Slice { index, .. } => {
            for ix in index {
                if let Index::Range { start: e, .. }
                | Index::Strided { start: e, .. }
                | Index::Single(e) = ix
                {
                    fold(e);
                }
            }
        }
        OpKind::IndexValue { expr }
        | OpKind::SlotWrite { slot: expr, .. }
        | OpKind::SlotRead { slot: expr, .. } => fold(expr),
        _ => {}
    }
    changed
}

/// Affine normal form where possible; otherwise the same tree with simplified parts.
pub fn simplify(e: &IndexExpr) -> IndexExpr {
    if let Some(a) = affine::of_index(e) {
        return affine::to_index(&a);
    }
    let s = |x: &IndexExpr| Box::new(simplify(x));
    match e {
        IndexExpr::Const(_) | IndexExpr::Var(_) => e.clone(),
        IndexExpr::Add(a, b) => IndexExpr::Add(s(a), s(b)),
        IndexExpr::Sub(a, b) => IndexExpr::Sub(s(a), s(b)),
        IndexExpr::Mul(a, b) => IndexExpr::Mul(s(a), s(b)),
        IndexExpr::FloorDiv(a, d) => IndexExpr::FloorDiv(s(a), *d),
        IndexExpr::Mod(a, d) => IndexExpr::Mod(s(a), *d),
    }
}
