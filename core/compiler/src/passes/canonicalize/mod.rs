//! Pass 2, `canonicalize`: constant folding, common-subexpression elimination,
//! loop-invariant code motion, fusion of elementwise chains and dead-code elimination,
//! repeated until nothing changes.

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
        canonicalize(cx.ir_mut(self.name())?);
        Ok(())
    }
}

/// Runs the sub-steps to a fixed point; returns whether anything changed.
pub fn canonicalize(k: &mut Kernel) -> bool {
    let mut any = false;
    for _ in 0..MAX_ROUNDS {
        let mut changed = fold::run(k);
        changed |= cse::run(k);
        changed |= licm::run(k);
        changed |= crate::ir::dce::run(k);
        changed |= fuse::run(k);
        changed |= crate::ir::dce::run(k);
        any |= changed;
        if !changed {
            break;
        }
    }
    any
}
