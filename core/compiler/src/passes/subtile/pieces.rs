//! Pieces of tiles kept whole in L1 (see the module doc of `subtile`): a loop moves K
//! slices of a product's operand tiles into L0A / L0B and accumulates their products
//! in one L0C tile.

use super::{
    capacity_chunks, each_product, fresh_var_name, loop_shell, resident_candidate, Candidate,
    Operand,
};
use crate::front::hir::BinaryOp;
use crate::ir::{
    Block, ForOp, Index, IndexExpr, Kernel, L0Split, LoopEnd, LoopVar, OpId, OpKind, ValueDef,
    ValueId,
};
use crate::machine::Machine;
use crate::types::TileType;

/// When product `mm` is the update of an accumulator carried by the loop around it
/// (`acc += a @ b`: `add %acc, product` of the loop's block argument, yielded and read
/// by nothing else), that `add` and the block argument.
pub(super) fn accumulating(k: &Kernel, uses: &[u32], mm: OpId) -> Option<(OpId, ValueId)> {
    let once = |v: ValueId| uses.get(v.index()) == Some(&1);
    let product = *k.ops.get(mm)?.results.first()?;
    if !once(product) {
        return None;
    }
    let mut found = None;
    k.walk_ops(|id, op| {
        if let OpKind::Binary {
            op: BinaryOp::Add,
            lhs,
            rhs,
        } = op.kind
        {
            if lhs == product || rhs == product {
                found = Some((id, if lhs == product { rhs } else { lhs }));
            }
        }
    });
    let (add, arg) = found?;
    let ValueDef::LoopArg { op: f, index } = k.values.get(arg)?.def else {
        return None;
    };
    let OpKind::For(l) = &k.ops.get(f)?.kind else {
        return None;
    };
    let sum = *k.ops.get(add)?.results.first()?;
    let body: Vec<OpId> = l.body.ops().collect();
    let in_body = body.contains(&add) && body.contains(&mm);
    let yielded = l.yields.get(index as usize) == Some(&sum);
    let same_type = k.values.get(product)?.ty == k.values.get(arg)?.ty;
    (in_body && yielded && same_type && once(arg) && once(sum)).then_some((add, arg))
}

/// Moves K pieces of L1 tiles through L0 for every bf16 product that still does not
/// fit L0 whole and whose operands stay whole in L1 (`resident_candidate`): a weight
/// loaded once ahead of a loop, read by the product of every iteration, or tiles read
/// by more than one product. Loading such a tile again in narrower pieces would read GM
/// once per use; its pieces come from L1 instead.
pub(super) fn resident_pieces(k: &mut Kernel, machine: &Machine, slots: u64) {
    each_product(k, |k, mm, _, block, uses| {
        let Some(c) = resident_candidate(k, block, uses, mm) else {
            return;
        };
        if super::blocks::wants_blocks(k, machine, &c) {
            return;
        }
        // Pieces double-buffered where they fit, else single (multi-buffer then leaves
        // the piece loop single-buffered, as it finds two slots do not fit).
        let fit = capacity_chunks(machine, &c, slots).filter(|(_, why)| why.is_some());
        let Some((chunks, Some(why))) = fit.or_else(|| capacity_chunks(machine, &c, 1)) else {
            return;
        };
        let made = match accumulating(k, uses, mm) {
            Some((add, acc)) => pieces(k, &c, chunks, acc, Some(add)).map(|l| (l, None, Some(add))),
            None => zero_init(k, &c).and_then(|(init_op, init)| {
                pieces(k, &c, chunks, init, None).map(|l| (l, Some(init_op), None))
            }),
        };
        if let Some(((l, _), init, add)) = made {
            place(k, &c, init, l, add);
            k.annotations.l0_split.insert(
                l,
                L0Split {
                    from_l1: true,
                    ..why
                },
            );
        }
    });
}

/// A `full 0.0` of the product's type: the accumulator a product outside the
/// accumulating form starts from (placed by [`place`]).
fn zero_init(k: &mut Kernel, c: &Candidate) -> Option<(OpId, ValueId)> {
    let op = k.ops.get(c.matmul)?;
    let span = op.span;
    let ty = k.values.get(*op.results.first()?)?.ty.clone();
    Some(k.add_op(OpKind::Full { value: 0.0 }, span, ty, None))
}

/// Builds the loop that moves `chunks` K pieces of `c`'s two loaded tiles (which stay
/// whole in L1) through L0A / L0B and accumulates their products, from `init`:
///
/// ```text
/// %acc.2 = for %kc in 0..K step K/n iter(%acc.1 = init) {
///   %0 = slice %a[:, %kc .. %kc + K/n]; %1 = slice %b[:, %kc .. %kc + K/n] transposed
///   %2 = matmul %0, %1; %acc.3 = add %acc.1, %2
///   yield %acc.3
/// }
/// ```
///
/// The transposes become transposed slices. `add`: the accumulating form's update,
/// which moves into the loop (reading the loop's block argument instead of `init`),
/// the loop's result replacing it for the enclosing loop's yield; without it the loop
/// makes its own `add` and its result replaces the product for every reader. The loop
/// is not in any block yet ([`place`]). Returns the loop and its result.
fn pieces(
    k: &mut Kernel,
    c: &Candidate,
    chunks: u64,
    init: ValueId,
    add: Option<OpId>,
) -> Option<(OpId, ValueId)> {
    let chunk = c.k / chunks.max(1);
    let span = k.ops.get(c.matmul)?.span;
    let product = *k.ops.get(c.matmul)?.results.first()?;
    let ty = k.values.get(product)?.ty.clone();
    let var = k.loop_vars.push(LoopVar {
        name: fresh_var_name(k, "kc"),
        span,
        written: None,
    });
    let mut operands = [&c.lhs, &c.rhs];
    if c.rhs.position < c.lhs.position {
        operands.swap(0, 1);
    }
    let mut body = Vec::new();
    for o in operands {
        body.push(slice(k, c, o, o.k_axis, var, chunk)?);
    }
    let arg_name = k.values.get(init)?.name.clone();
    // What the loop's result stands for: the enclosing loop's update, or the product;
    // replaced before the loop's own `add` reads the product, so that one keeps it.
    let replaced = match add {
        Some(a) => *k.ops.get(a)?.results.first()?,
        None => product,
    };
    let (for_id, arg, result) = loop_shell(k, span, &ty, arg_name, replaced)?;
    let (add, sum) = match add {
        Some(a) => {
            let op = k.ops.get_mut(a)?;
            op.kind.map_operands(|v| if v == init { arg } else { v });
            (a, *op.results.first()?)
        }
        None => {
            let kind = OpKind::Binary {
                op: BinaryOp::Add,
                lhs: arg,
                rhs: product,
            };
            k.add_op(kind, span, ty, None)
        }
    };
    body.extend([c.matmul, add]);
    k.ops.get_mut(for_id)?.kind = OpKind::For(ForOp {
        var,
        start: 0,
        end: LoopEnd::Const((chunk * chunks) as i64),
        step: chunk as i64,
        buffers: None,
        inits: vec![init],
        args: vec![arg],
        body: Block::from_ops(body),
        yields: vec![sum],
    });
    Some((for_id, result))
}

/// The op that moves piece `var .. var + len` along `axis` of operand `o`'s loaded tile
/// into L0 (the K axis for K pieces, the other for blocks): its transpose, made a
/// transposed slice, or a new slice the product reads instead of the tile.
pub(super) fn slice(
    k: &mut Kernel,
    c: &Candidate,
    o: &Operand,
    axis: usize,
    var: crate::ir::LoopVarId,
    len: u64,
) -> Option<OpId> {
    let load = k.ops.get(o.load)?;
    let (span, tile) = (load.span, *load.results.first()?);
    let tile_ty = k.values.get(tile)?.ty.clone();
    let mut index = vec![Index::Full; tile_ty.rank()];
    *index.get_mut(axis)? = Index::Range {
        start: IndexExpr::Var(var),
        len,
        clamped: false,
    };
    let mut shape = tile_ty.shape.clone();
    *shape.get_mut(axis)? = len;
    let kind = OpKind::Slice {
        arg: tile,
        index,
        transpose: o.transpose.is_some(),
    };
    if let Some(t) = o.transpose {
        shape.reverse();
        let op = k.ops.get_mut(t)?;
        op.kind = kind;
        let r = *op.results.first()?;
        k.values.get_mut(r)?.ty.shape = shape;
        return Some(t);
    }
    let (op, piece) = k.add_op(kind, span, TileType::new(tile_ty.dtype, shape), None);
    k.ops
        .get_mut(c.matmul)?
        .kind
        .map_operands(|v| if v == tile { piece } else { v });
    Some(op)
}

/// Puts loop `l` (and the `init` op it starts from, if new) where `c`'s product was in
/// its block; the product, the transposes and an accumulating `add` are in the loop
/// now, wherever they were. The loads stay where they were, in front.
pub(super) fn place(k: &mut Kernel, c: &Candidate, init: Option<OpId>, l: OpId, add: Option<OpId>) {
    let moved: Vec<OpId> = [c.lhs.transpose, c.rhs.transpose, add]
        .into_iter()
        .flatten()
        .collect();
    // A transpose of a tile loaded ahead of a loop may sit ahead of it too (hoisted).
    for (path, ops) in k.blocks() {
        if ops.iter().any(|o| moved.contains(o) && *o != c.matmul) {
            if let Some(block) = k.block_mut(&path) {
                block.retain_ops(|o| !moved.contains(&o));
            }
        }
    }
    let Some((path, _)) = k
        .blocks()
        .into_iter()
        .find(|(_, ops)| ops.contains(&c.matmul))
    else {
        return;
    };
    let Some(block) = k.block_mut(&path) else {
        return;
    };
    let mut ops = Vec::new();
    for op in block.ops() {
        if op == c.matmul {
            ops.extend(init);
            ops.push(l);
        } else if !moved.contains(&op) {
            ops.push(op);
        }
    }
    *block = Block::from_ops(ops);
}
