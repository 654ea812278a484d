//! Common-subexpression elimination: a pure op identical to one that dominates it (same
//! kind, same operands, same result type) is removed and its uses take the earlier
//! result. Values defined outside a loop are visible inside it, so the table is scoped:
//! entries made in a loop body are dropped when the body ends.

use crate::dense::{DenseMap, DenseSet};
use crate::ir::{Kernel, OpId, OpKind, OpSet, ValueId, ValueMap};
use std::collections::HashMap;

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
    /// Key -> result of the first op with that key, per enclosing block.
    scopes: Vec<HashMap<String, ValueId>>,
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
            let Some(ty) = k.values.get(*result).map(|v| (&v.ty, v.space)) else {
                continue;
            };
            // `OpKind` holds floats, so it is not `Hash`; its Debug text is an exact key
            // (floats print in shortest round-trip form, handles by index).
            let key = format!("{:?} : {:?}", op.kind, ty);
            match self.scopes.iter().rev().find_map(|s| s.get(&key)) {
                Some(&earlier) => {
                    self.subst.insert(*result, earlier);
                    self.dead.insert(id);
                }
                None => {
                    if let Some(scope) = self.scopes.last_mut() {
                        scope.insert(key, *result);
                    }
                }
            }
        }
    }
}
