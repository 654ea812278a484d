//! Rewriting helpers several passes share: copying ops with fresh values
//! (`Cloner`), substituting a loop variable in index expressions, and renumbering the
//! steps.

use super::{
    Block, BlockItem, Index, IndexExpr, Kernel, LoopVar, LoopVarId, OpId, OpKind, Value, ValueDef,
    ValueId, ValueMap,
};

/// Copies blocks of ops with fresh values and loop variables; operands defined outside
/// the copied ops are kept.
#[derive(Default)]
pub struct Cloner {
    values: ValueMap<ValueId>,
    /// Loop variables of copied nested loops: (original, copy).
    pub vars: Vec<(crate::ir::LoopVarId, crate::ir::LoopVarId)>,
    /// Every op made, nested ones included.
    pub ops: Vec<OpId>,
}

impl Cloner {
    /// Recursion is as deep as the loop nest, which the checker bounds
    /// (`MAX_LOOP_NESTING`).
    pub fn block(&mut self, k: &mut Kernel, block: &Block) -> Vec<OpId> {
        block
            .ops()
            .collect::<Vec<_>>()
            .into_iter()
            .filter_map(|op| self.op(k, op))
            .collect()
    }

    fn value(&mut self, k: &mut Kernel, v: ValueId, def: ValueDef) -> ValueId {
        let Some(orig) = k.values.get(v).cloned() else {
            return v;
        };
        let new = k.values.push(Value { def, ..orig });
        self.values.insert(v, new);
        new
    }

    fn op(&mut self, k: &mut Kernel, id: OpId) -> Option<OpId> {
        let orig = k.ops.get(id)?.clone();
        let mut kind = orig.kind.clone();
        let new = k.ops.push(crate::ir::Op {
            kind: OpKind::Full { value: 0.0 },
            span: orig.span,
            results: Vec::new(),
        });
        self.ops.push(new);
        k.annotations.copy(id, new);
        if let OpKind::For(l) = &mut kind {
            l.inits = l.inits.iter().map(|v| self.map(*v)).collect();
            let var = k.loop_vars.get(l.var).cloned().unwrap_or(LoopVar {
                name: String::new(),
                span: orig.span,
                written: None,
            });
            let new_var = k.loop_vars.push(var);
            self.vars.push((l.var, new_var));
            l.var = new_var;
            l.args = (0u32..)
                .zip(l.args.clone())
                .map(|(index, a)| self.value(k, a, ValueDef::LoopArg { op: new, index }))
                .collect();
            l.body = Block::from_ops(self.block(k, &l.body));
            l.yields = l.yields.iter().map(|v| self.map(*v)).collect();
        } else {
            kind.map_operands(|v| self.map(v));
        }
        let results: Vec<ValueId> = (0u32..)
            .zip(orig.results.iter())
            .map(|(index, &r)| self.value(k, r, ValueDef::Result { op: new, index }))
            .collect();
        if let Some(o) = k.ops.get_mut(new) {
            o.kind = kind;
            o.results = results;
        }
        Some(new)
    }

    /// What `v` is in the copies made so far: its copy, the value bound to it, or `v`
    /// itself when neither.
    pub fn map(&self, v: ValueId) -> ValueId {
        self.values.get(&v).copied().unwrap_or(v)
    }

    /// Makes later copies read `to` wherever the original read `from` (a loop's block
    /// argument, when one of its iterations is copied out of the loop).
    pub fn bind(&mut self, from: ValueId, to: ValueId) {
        self.values.insert(from, to);
    }
}

/// Every index expression of the ops under `roots`, mutably (loop ends and branch
/// conditions included); slot indices of `buffers` tiles too when `slots`.
pub fn visit_exprs_from(
    k: &mut Kernel,
    roots: Vec<OpId>,
    slots: bool,
    mut f: impl FnMut(&mut IndexExpr),
) {
    let mut ids = Vec::new();
    k.walk_ops_from(roots, |id, _| ids.push(id));
    for id in ids {
        match &mut k.ops[id].kind {
            OpKind::Load { index, .. }
            | OpKind::Store { index, .. }
            | OpKind::Slice { index, .. }
            | OpKind::MatMul {
                acc_block: index, ..
            } => {
                for ix in index {
                    match ix {
                        Index::Range { start, .. }
                        | Index::Strided { start, .. }
                        | Index::Single(start) => f(start),
                        Index::Full | Index::Indirect(_) => {}
                    }
                }
            }
            OpKind::IndexValue { expr } => f(expr),
            // A loop's end and a branch's condition read the variables of the loops
            // around them.
            OpKind::For(l) => match &mut l.end {
                crate::ir::LoopEnd::Affine { expr, .. } => f(expr),
                crate::ir::LoopEnd::Guard(cond) => cond.visit_mut(&mut f),
                crate::ir::LoopEnd::Const(_) => {}
            },
            OpKind::SlotWrite { slot: expr, .. } | OpKind::SlotRead { slot: expr, .. } if slots => {
                f(expr)
            }
            _ => {}
        }
    }
}

pub fn replace_var(e: &mut IndexExpr, var: LoopVarId, with: &IndexExpr) {
    match e {
        IndexExpr::Var(v) if *v == var => *e = with.clone(),
        IndexExpr::FloorDiv(a, _) | IndexExpr::Mod(a, _) => replace_var(a, var, with),
        IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
            replace_var(a, var, with);
            replace_var(b, var, with);
        }
        IndexExpr::Const(_) | IndexExpr::Var(_) => {}
    }
}

/// Numbers the steps in program order (steps of a loop body before the steps after the
/// loop), so step ids read top to bottom in the printed IR and the step graph.
/// Numbers every step in program order (instructions carry the number as their step).
pub fn renumber(k: &mut Kernel) {
    let mut next = 0u32;
    renumber_block(k, &mut Vec::new(), &mut next);
}

/// Recursion depth is the loop nesting, bounded by the front end (`MAX_LOOP_NESTING`).
fn renumber_block(k: &mut Kernel, path: &mut Vec<OpId>, next: &mut u32) {
    if path.len() > crate::limits::MAX_LOOP_NESTING * 2 {
        return;
    }
    let len = k.block_mut(path).map_or(0, |b| b.items.len());
    for i in 0..len {
        let mut nested = None;
        if let Some(item) = k.block_mut(path).and_then(|b| b.items.get_mut(i)) {
            match item {
                BlockItem::Step(s) => {
                    s.id = *next;
                    *next += 1;
                }
                BlockItem::Op(op) => nested = Some(*op),
            }
        }
        if let Some(op) = nested {
            if matches!(k.ops.get(op).map(|o| &o.kind), Some(OpKind::For(_))) {
                path.push(op);
                renumber_block(k, path, next);
                path.pop();
            }
        }
    }
}
