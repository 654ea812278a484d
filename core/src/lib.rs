//! Tilescope core: the kernel compiler, the reference interpreter and the machine
//! simulator. Pure Rust with no I/O in the compiler or simulator; the CLI (`main.rs`,
//! feature `cli`) and the wasm crate are thin shells around this library.

pub mod affine;
pub mod compile;
pub mod dense;
pub mod diag;
pub mod examples;
pub mod explain;
pub mod front;
pub mod inputs;
pub mod interp;
pub mod ir;
pub mod isa;
pub mod lesson;
pub mod limits;
pub mod lowered;
pub mod machine;
pub mod npy;
pub mod passes;
pub mod run;
pub mod sim;
pub mod steps;
pub mod tensor;
pub mod types;
