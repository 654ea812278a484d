//! Tilescope's machine: the instruction set of every pipe (`isa`), the machine presets
//! (`machine`) and the functional, timing and race-detecting simulator (`sim`).

// The base's modules, under the paths they have in every crate.
use tilescope_base::{dense, diag, limits, tensor, types};

pub mod isa;
pub mod machine;
pub mod sim;
