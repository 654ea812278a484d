//! Tilescope's source layer: the `.tile` language's lexer, parser and checker, the
//! checked kernel (`front::hir`) they produce, and the reference interpreter that runs
//! it (the oracle every compiled program is compared with).

// The base's modules, under the paths they have in every crate.
use tilescope_base::{affine, diag, limits, tensor, types};

pub mod front;
pub mod interp;
