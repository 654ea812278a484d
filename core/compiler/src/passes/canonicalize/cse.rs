//! Common-subexpression elimination: a pure op identical to one that dominates it (same
//! kind, same operands, same result type) is removed and its uses take the earlier
//! result. Values defined outside a loop are visible inside it, so the table is scoped:
//! entries made in a loop body are dropped when the body ends.

use crate::dense::{DenseMap, DenseSet};
use crate::ir::{FusedExpr, Kernel, OpId, OpKind, OpSet, ValueId, ValueMap};
use crate::types::{MemSpace, TileType};
use std::collections::HashMap;
use std::mem::Discriminant;

/// What two identical pure ops share: the kind of op, the operands, the bits of the
/// float constants in it and the result's type and space. Ops with one key are then
/// compared whole (`same`), so the key only narrows the search.
#[derive(PartialEq, Eq, Hash)]
struct Key {
    kind: Discriminant<OpKind>,
    operands: Vec<ValueId>,
    floats: Vec<u64>,
    ty: TileType,
    space: Option<MemSpace>,
}

/// The bits of every float constant in `kind`, in order.
fn float_bits(kind: &OpKind) -> Vec<u64> {
    fn walk(e: &FusedExpr, out: &mut Vec<u64>) {
        match e {
            FusedExpr::Const(c) => out.push(c.to_bits()),
            FusedExpr::Unary(_, a) => walk(a, out),
            FusedExpr::Binary(_, a, b) => {
                walk(a, out);
                walk(b, out);
            }
            FusedExpr::Arg(_) => {}
        }
    }
    let mut out = Vec::new();
    match kind {
        OpKind::Full { value } => out.push(value.to_bits()),
        OpKind::Fused { expr, .. } => walk(expr, &mut out),
        _ => {}
    }
    out
}

/// Whether two ops with one key compute the same: equal as values (`==`) with float
/// constants equal bit for bit (`==` alone would merge `0.0` with `-0.0`, whose
/// reciprocals differ; a NaN constant is never equal, so it is never merged).
fn same(a: &OpKind, b: &OpKind) -> bool {
    a == b && float_bits(a) == float_bits(b)
}

pub fn run(k: &mut Kernel) -> bool {
    let mut cx = Cse {
        scopes: vec![HashMap::new()],
        subst: DenseMap::new(),
        dead: DenseSet::new(),
    };
    let body: Vec<OpId> = k.body.ops().collect();
    cx.block(k, &body);
    if cx.dead.is_empty() {
        return false;
    }
    let mut ids = Vec::new();
    k.walk_ops(|id, _| ids.push(id));
    for id in ids {
        k.ops[id]
            .kind
            .map_operands(|v| cx.subst.get(&v).copied().unwrap_or(v));
    }
    for (path, _) in k.blocks() {
        if let Some(b) = k.block_mut(&path) {
            b.retain_ops(|op| !cx.dead.contains(&op));
        }
    }
    true
}

struct Cse {
    /// Key -> the ops with that key seen so far and their results, per enclosing block.
    scopes: Vec<HashMap<Key, Vec<(OpId, ValueId)>>>,
    subst: ValueMap<ValueId>,
    dead: OpSet,
}

impl Cse {
    fn block(&mut self, k: &mut Kernel, ops: &[OpId]) {
        for &id in ops {
            // Operands first take earlier replacements, so chains of duplicates merge.
            let subst = &self.subst;
            k.ops[id]
                .kind
                .map_operands(|v| subst.get(&v).copied().unwrap_or(v));
            if let OpKind::For(l) = &k.ops[id].kind {
                let body: Vec<OpId> = l.body.ops().collect();
                self.scopes.push(HashMap::new());
                self.block(k, &body);
                self.scopes.pop();
                continue;
            }
            let op = &k.ops[id];
            let [result] = op.results.as_slice() else {
                continue;
            };
            if !op.kind.is_pure() {
                continue;
            }
            let Some(value) = k.values.get(*result) else {
                continue;
            };
            let key = Key {
                kind: std::mem::discriminant(&op.kind),
                operands: op.kind.operands(),
                floats: float_bits(&op.kind),
                ty: value.ty.clone(),
                space: value.space,
            };
            let earlier = self.scopes.iter().rev().find_map(|s| {
                s.get(&key)?
                    .iter()
                    .find(|(e, _)| same(&k.ops[*e].kind, &op.kind))
                    .map(|(_, v)| *v)
            });
            match earlier {
                Some(earlier) => {
                    self.subst.insert(*result, earlier);
                    self.dead.insert(id);
                }
                None => {
                    if let Some(scope) = self.scopes.last_mut() {
                        scope.entry(key).or_default().push((id, *result));
                    }
                }
            }
        }
    }
}
