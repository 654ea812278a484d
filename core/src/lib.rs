//! Tilescope: the kernel compiler, the reference interpreter and the machine simulator.
//! This crate is the driver (compile, run, explain, the gallery and the lessons) and
//! the CLI (`bin/tilescope`, feature `cli`); it re-exports the crates below it under
//! one path, `tilescope::…`, for the wasm crate, the tests and the fuzz workspace.
//! ARCHITECTURE.md draws the crates and their direction.

pub use tilescope_base::{affine, dense, diag, limits, npy, tensor, types};
pub use tilescope_compiler::{ir, lowered, passes, steps};
pub use tilescope_machine::{isa, machine, sim};
pub use tilescope_source::{front, interp};

pub mod compile;
pub mod examples;
pub mod explain;
pub mod inputs;
pub mod lesson;
pub mod opt;
pub mod run;
