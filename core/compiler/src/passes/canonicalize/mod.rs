//! Pass 2, `canonicalize`: constant folding, common-subexpression elimination,
//! loop-invariant code motion, fusion of elementwise chains and dead-code elimination,
//! repeated until nothing changes. A hoisted value stays live across its loop, so the
//! hoists are kept only where the rest of the pipeline still places every tile
//! (a `Trial` up to plan-memory, run only when something was hoisted); otherwise the
//! pass runs again without hoisting and says so in a note.

pub mod cse;
pub mod fold;
pub mod fuse;
pub mod licm;

use super::{Context, Pass};
use crate::diag::Diagnostics;
use crate::ir::Kernel;

/// Each round either changes nothing or shrinks or simplifies the kernel; the cap only
/// guards against a rewrite that undoes another.
const MAX_ROUNDS: usize = 8;

pub struct Canonicalize;

impl Pass for Canonicalize {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "canonicalize"
    }

    fn description(&self) -> &'static str {
        "fold constants, merge common subexpressions, hoist loop-invariant work, fuse elementwise chains, drop dead code"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let before = cx.ir_mut(self.name())?.clone();
        let k = cx.ir_mut(self.name())?;
        let (_, hoisted) = rounds(k, true);
        if !hoisted {
            return Ok(());
        }
        // A hoisted value stays live across its whole loop, where it was live only
        // from its computation to its last use: hoisting may turn a kernel whose tiles
        // fit into one whose tiles do not. Keep it only where the passes after this
        // one, up to and including plan-memory, still place every tile; otherwise
        // leave the loop-invariant work in its loops, if that fits.
        let hoisted = k.clone();
        let trial = super::Trial::new(cx, self.name(), "lower-to-pipes")?;
        if trial.succeeds(hoisted) {
            return Ok(());
        }
        let mut unhoisted = before;
        rounds(&mut unhoisted, false);
        if !trial.succeeds(unhoisted.clone()) {
            // Neither fits: plan-memory reports the overflow of the usual form.
            return Ok(());
        }
        let at = first_loop(&unhoisted);
        *cx.ir_mut(self.name())? = unhoisted;
        if let Some(span) = at {
            cx.note(
                span,
                "loop-invariant work is left in its loops: hoisted, the values it computes would stay live across each loop, and the tiles would not fit on chip",
            );
        }
        Ok(())
    }
}

/// The span of the kernel's first loop, in program order.
fn first_loop(k: &Kernel) -> Option<crate::diag::Span> {
    let mut found = None;
    k.walk_ops(|_, op| {
        if found.is_none() && matches!(op.kind, crate::ir::OpKind::For(_)) {
            found = Some(op.span);
        }
    });
    found
}

/// Runs the sub-steps to a fixed point; returns whether anything changed.
pub fn canonicalize(k: &mut Kernel) -> bool {
    rounds(k, true).0
}

/// The sub-steps to a fixed point, loop-invariant code motion only when `hoist`;
/// returns whether anything changed and whether anything was hoisted.
fn rounds(k: &mut Kernel, hoist: bool) -> (bool, bool) {
    let (mut any, mut hoisted) = (false, false);
    for _ in 0..MAX_ROUNDS {
        let mut changed = fold::run(k);
        changed |= cse::run(k);
        if hoist && licm::run(k) {
            changed = true;
            hoisted = true;
        }
        changed |= crate::ir::dce::run(k);
        changed |= fuse::run(k);
        changed |= crate::ir::dce::run(k);
        any |= changed;
        if !changed {
            break;
        }
    }
    (any, hoisted)
}
