//! Tilescope's compiler: the tile IR (`ir`) and its analyses and verifiers, the lowered
//! per-pipe program (`lowered`), the step graph (`steps`) and the pass manager with
//! every pass (`passes`), from the checked kernel to the final program.

// The lower crates' modules, under the paths they have in every crate.
use tilescope_base::{affine, dense, diag, limits, types};
use tilescope_machine::{isa, machine};
use tilescope_source::front;

pub mod ir;
pub mod lowered;
pub mod passes;
pub mod steps;
