//! Hard limits of the language (`docs/language.md`) and the guards of every stage. They
//! keep the browser responsive: every input either fits them or is rejected with an
//! error that names the limit, so no kernel, assembly file or machine description can
//! make the compiler or the simulator hang or exhaust memory (`tests/adversarial.rs`
//! probes each one).
//!
//! Limits kept next to their data: a machine's `limits.max_instructions` and
//! `limits.max_cycles` (per preset, at most [`MAX_SIM_INSTRUCTIONS_CEILING`]), the
//! `.npy` header caps in `npy.rs`, and the share-link caps in the web crate's
//! `share.rs`.

/// Largest source file the front end accepts, in bytes. Spans are `u32`, and a kernel
/// this size is already far past anything a person writes.
pub const MAX_SOURCE_BYTES: usize = 4 << 20;

/// Most elements of one kernel tensor (2^24).
pub const MAX_TENSOR_ELEMENTS: u64 = 1 << 24;

/// Most elements of one tile (2^20).
pub const MAX_TILE_ELEMENTS: u64 = 1 << 20;

/// Most loop iterations of one kernel (10^6), counted as the sum over loops
/// of the product of the trip counts of the loop and all loops around it.
pub const MAX_LOOP_ITERATIONS: u64 = 1_000_000;

/// Default cap on simulated instructions (10^7), the presets'
/// `limits.max_instructions`; a machine description may change it.
pub const DEFAULT_MAX_SIM_INSTRUCTIONS: u64 = 10_000_000;

/// The largest `limits.max_instructions` a machine description may ask for: about a
/// minute of simulation natively, so even a hand-edited machine cannot make a run
/// endless.
pub const MAX_SIM_INSTRUCTIONS_CEILING: u64 = 1_000_000_000;

/// Deepest nesting of expressions and blocks the parser and checker recurse into; each
/// operator of a left-deep chain (`a + b + c`, `t.T.T`) counts as a level, since it
/// deepens the tree the later stages walk. A level costs about a dozen stack frames in
/// the parser (one per precedence level), some 14 KiB in a debug build (measured with
/// the comparison level and slot reads in the grammar): 48 levels, about 700 KiB, stay
/// under the 1 MiB of a browser's wasm stack even unoptimised (`tests/adversarial.rs`
/// checks this on a 1 MiB thread) while leaving room for any hand-written kernel.
pub const MAX_NESTING_DEPTH: usize = 48;

/// Loops deeper than this are rejected by the passes that walk the loop tree and the
/// lowered program (the front end's `MAX_LOOP_NESTING` keeps real kernels far below
/// it); it bounds every recursion over loops after lowering.
pub const MAX_LOWERED_LOOP_DEPTH: usize = 64;

/// Deepest nesting of `for` loops in one kernel.
pub const MAX_LOOP_NESTING: usize = 16;

/// Diagnostics reported by one stage before it stops, so a file of garbage produces a
/// readable list rather than one error per byte.
pub const MAX_DIAGNOSTICS: usize = 100;

/// Work units (instruction instances walked times hazard-log entries compared) that
/// `insert-sync` may spend on one kernel, summed over all its walks of the program. The
/// analysis walks once per pair it inserts or tries to remove, so its cost grows about
/// with the cube of the program's size; the shipped examples spend a few thousand, a
/// kernel of a hundred stores about four million (a third of a second unoptimised).
/// Past this the pass stops with an error rather than freeze the page.
pub const SYNC_ANALYSIS_BUDGET: u64 = 20_000_000;

/// Most instructions (static, loops not unrolled) of one compiled or assembled program.
/// The shipped examples need under a hundred; the cap keeps the assembly listing, the
/// step graph and every later pass small enough for the page.
pub const MAX_PROGRAM_INSTRUCTIONS: usize = 1 << 14;

/// Most ops of a kernel's tile IR. Every op becomes at least one instruction and some
/// passes cost more than linear time in the op count, so a kernel far over the
/// instruction cap is stopped right after parsing rather than after most passes.
pub const MAX_IR_OPS: usize = MAX_PROGRAM_INSTRUCTIONS / 2;

/// Loops the automatic multi-buffering tries (in program order). Each try plans the
/// memory of the whole kernel, so without a bound a kernel of many loops costs time
/// quadratic in its size; the loops past this stay single-buffered unless they carry
/// an explicit `@buffers`.
pub const MAX_AUTO_MULTI_BUFFER_LOOPS: usize = 16;

/// Largest printed IR kept for one pass in the pass list. A longer dump is cut at a
/// line boundary and ends with a marker line naming this limit.
pub const MAX_PASS_DUMP_BYTES: usize = 256 << 10;

/// Trace entries and flag events the simulator keeps (later ones are counted, not
/// stored). About a hundred bytes each, so a 10^7-instruction run stays within some
/// tens of MiB in the browser.
pub const MAX_TRACE_EVENTS: usize = 1 << 18;

/// Largest JSON document read (a machine description); serde_json itself bounds the
/// nesting at 128 levels.
pub const MAX_JSON_BYTES: usize = 1 << 20;

/// Most elements one simulated tile operand or transfer may touch, checked when an
/// instruction dispatches (hand-written assembly is not bound by the front end's
/// limits). Equal to the tensor limit: no legal transfer moves more.
pub const MAX_SIM_OPERAND_ELEMENTS: i64 = MAX_TENSOR_ELEMENTS as i64;

/// Most nodes in a `fused` op's expression: fusion stops growing a tree past it, which
/// bounds the depth every recursion over the expression reaches.
pub const MAX_FUSED_NODES: usize = 32;
