//! Live ranges of the tile IR's values over the kernel linearised into positions:
//! what plan-memory packs, out-of-ssa coalesces by and lower-to-pipes reads. (The
//! address-plan verifier recomputes its own, trusting none of this.)

use super::{Kernel, OpId, OpKind, OpMap, ValueId, ValueMap};
use crate::dense::DenseMap;
use crate::diag::Diagnostic;

/// Program positions of the linearised kernel.
#[derive(Default)]
pub struct Linear {
    pub pos: OpMap<u64>,
    /// Start and end position of each loop.
    pub range: OpMap<(u64, u64)>,
    /// Enclosing loops of each op, outermost first.
    pub loops: OpMap<Vec<OpId>>,
}

pub fn linearize(k: &Kernel) -> Linear {
    let mut lin = Linear::default();
    let mut counter = 0u64;
    // Iterative walk: (ops of a block, index, enclosing loops).
    let mut stack: Vec<(Vec<OpId>, usize, Vec<OpId>)> =
        vec![(k.body.ops().collect(), 0, Vec::new())];
    while let Some((ops, i, path)) = stack.last_mut() {
        let Some(&id) = ops.get(*i) else {
            let path = path.clone();
            stack.pop();
            if let Some(&l) = path.last() {
                if let Some(r) = lin.range.get_mut(&l) {
                    r.1 = counter;
                }
                counter += 1;
            }
            continue;
        };
        *i += 1;
        let path = path.clone();
        lin.pos.insert(id, counter);
        lin.loops.insert(id, path.clone());
        counter += 1;
        if let Some(OpKind::For(l)) = k.ops.get(id).map(|o| &o.kind) {
            lin.range.insert(id, (counter - 1, counter - 1));
            let mut inner = path;
            inner.push(id);
            stack.push((l.body.ops().collect(), 0, inner));
        }
    }
    lin
}

/// Live ranges over the linearised kernel (`linearize`): a value is live from its
/// definition to its last use, and a use inside a loop the definition is outside of keeps
/// it live to that loop's end (the next iteration reads it again). A loop reads its
/// inits at its start and its yields at its end; its block arguments are defined at its
/// start and its results at its end.
pub struct Liveness {
    pub lin: Linear,
    /// Position, enclosing loops (outermost first) and span of each value's definition.
    def: ValueMap<(u64, Vec<OpId>, crate::diag::Span)>,
    /// Position and enclosing loops of each use.
    uses: ValueMap<Vec<(u64, Vec<OpId>)>>,
}

impl Liveness {
    /// Every op reachable from the body has a position (`linearize` walks the same
    /// blocks), so a missing one is a compiler bug, reported as an internal error.
    pub fn new(k: &Kernel) -> Result<Liveness, Diagnostic> {
        let lin = linearize(k);
        let mut def: ValueMap<(u64, Vec<OpId>, crate::diag::Span)> = DenseMap::new();
        let mut uses: ValueMap<Vec<(u64, Vec<OpId>)>> = DenseMap::new();
        let mut missing = None;
        k.walk_ops(|id, op| {
            let (Some(&p), Some(loops)) = (lin.pos.get(&id), lin.loops.get(&id)) else {
                missing = Some(op.span);
                return;
            };
            for &r in &op.results {
                def.insert(r, (p, loops.clone(), op.span));
            }
            if let OpKind::For(l) = &op.kind {
                let Some(&(s, e)) = lin.range.get(&id) else {
                    missing = Some(op.span);
                    return;
                };
                let mut inner = loops.clone();
                inner.push(id);
                for &a in &l.args {
                    def.insert(a, (s, inner.clone(), op.span));
                }
                // A loop's results are written at its end.
                for &r in &op.results {
                    def.insert(r, (e, loops.clone(), op.span));
                }
                for &v in &l.inits {
                    uses.entry(v).or_default().push((s, loops.clone()));
                }
                for &v in &l.yields {
                    uses.entry(v).or_default().push((e, inner.clone()));
                }
            } else {
                for v in op.kind.operands() {
                    uses.entry(v).or_default().push((p, loops.clone()));
                }
            }
        });
        match missing {
            Some(span) => Err(Diagnostic::error(
                "internal error: liveness found an op outside the linearised program",
                span,
            )),
            None => Ok(Liveness { lin, def, uses }),
        }
    }

    /// The first and last position at which `v` is live; `None` for a value no
    /// reachable op defines.
    pub fn interval(&self, v: ValueId) -> Option<(u64, u64)> {
        let (d, dloops, _) = self.def.get(&v)?;
        let mut end = *d;
        for (p, uloops) in self.uses.get(&v).map(|u| u.as_slice()).unwrap_or(&[]) {
            end = end.max(*p);
            for l in uloops {
                if !dloops.contains(l) {
                    end = end.max(self.lin.range.get(l).map_or(*p, |r| r.1));
                }
            }
        }
        Some((*d, end))
    }

    /// The loops enclosing `v`'s definition, outermost first (a block argument's own
    /// loop included) and the span of the op that defines it.
    pub fn def_site(&self, v: ValueId) -> Option<(&[OpId], crate::diag::Span)> {
        self.def.get(&v).map(|(_, l, s)| (l.as_slice(), *s))
    }
}

impl crate::ir::slots::Positions for Liveness {
    fn pos(&self, op: OpId) -> Option<u64> {
        self.lin.pos.get(&op).copied()
    }

    fn interval(&self, v: ValueId) -> Option<(u64, u64)> {
        Liveness::interval(self, v)
    }
}
