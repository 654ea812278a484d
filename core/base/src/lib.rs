//! Tilescope's base, under every other crate: spans and diagnostics, the dtypes and tile
//! types, the hard limits, small dense sets and maps, host tensors and `.npy` files, and
//! affine forms of index expressions.

pub mod affine;
pub mod dense;
pub mod diag;
pub mod limits;
pub mod npy;
pub mod tensor;
pub mod types;
