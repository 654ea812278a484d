//! Hard limits of SPEC 1.4 and the front end's own guards. They keep the browser
//! responsive: every input either fits them or is rejected with a clear diagnostic, so
//! no kernel can make the compiler or the simulator hang or exhaust memory.

/// Largest source file the front end accepts, in bytes. Spans are `u32`, and a kernel
/// this size is already far past anything a person writes.
pub const MAX_SOURCE_BYTES: usize = 4 << 20;

/// Most elements of one kernel tensor (SPEC 1.4: 2^24).
pub const MAX_TENSOR_ELEMENTS: u64 = 1 << 24;

/// Most elements of one tile (SPEC 1.4: 2^20).
pub const MAX_TILE_ELEMENTS: u64 = 1 << 20;

/// Most loop iterations of one kernel (SPEC 1.4: 10^6), counted as the sum over loops
/// of the product of the trip counts of the loop and all loops around it.
pub const MAX_LOOP_ITERATIONS: u64 = 1_000_000;

/// Default cap on simulated instructions (SPEC 1.4: 10^7); the CLI may change it.
pub const DEFAULT_MAX_SIM_INSTRUCTIONS: u64 = 10_000_000;

/// Deepest nesting of expressions and blocks the parser and checker recurse into. Each
/// level costs a few stack frames; this bound keeps the stack well under the 1 MiB of a
/// browser's wasm stack while leaving room for any hand-written kernel.
pub const MAX_NESTING_DEPTH: usize = 128;

/// Deepest nesting of `for` loops in one kernel.
pub const MAX_LOOP_NESTING: usize = 16;

/// Diagnostics reported by one stage before it stops, so a file of garbage produces a
/// readable list rather than one error per byte.
pub const MAX_DIAGNOSTICS: usize = 100;
