//! fix-to-gm: a stored matrix product, cast or not, goes from L0C to GM in one FIX
//! instruction when the cost model says that is not slower, and only when nothing but
//! the store reads it; the result still matches the reference interpreter. The pass's
//! decisions in the IR are checked in `core/filetests/fix-to-gm/`; here the kernels run
//! and the assembly shows where the product went.

mod pass_support;

use pass_support::pass_ir;
use tilescope::compile::{compile, CompileOptions, CompileResult};
use tilescope::run::run;

fn options(preset: &str) -> CompileOptions {
    CompileOptions {
        preset: Some(preset.into()),
        ..CompileOptions::default()
    }
}

fn compiled(source: &str, preset: &str) -> CompileResult {
    let result = compile(source, &options(preset));
    assert!(result.diagnostics.is_empty(), "{:#?}", result.diagnostics);
    result
}

/// Whether the assembly of `source` on `preset` stores a product from L0C to GM, after
/// checking that the compiled kernel runs without races and matches the interpreter
/// either way.
fn stores_from_l0c(source: &str, preset: &str) -> bool {
    stores_from_l0c_with(source, &options(preset))
}

fn stores_from_l0c_with(source: &str, options: &CompileOptions) -> bool {
    let r = run(source, options, Vec::new(), 3);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert!(r.sim.errors.is_empty(), "{:?}", r.sim.errors);
    assert!(r.sim.races.is_empty(), "{} races", r.sim.races.len());
    assert!(r.reference_match, "max abs err {}", r.max_abs_err);
    let result = compile(source, options);
    assert!(result.diagnostics.is_empty(), "{:#?}", result.diagnostics);
    let asm = result.asm.unwrap_or_default();
    // `fix.DT DST{..}, l0c[..]{..}`: a destination other than UB is a tensor in GM.
    asm.lines()
        .filter_map(|l| l.trim_start().strip_prefix("fix."))
        .any(|rest| {
            rest.split_once(' ')
                .is_some_and(|(_, dst)| !dst.starts_with("ub["))
        })
}

const CAST_PRODUCT: &str = "kernel k(a: f16[32, 64], b: f16[64, 64], y: out f16[32, 64]) {
    let x = load a[:, :];
    let w = load b[:, :];
    store y[:, :] = (x @ w) as f16;
}";

#[test]
fn a_cast_product_is_stored_by_fix_without_the_vector_cast() {
    assert!(stores_from_l0c(CAST_PRODUCT, "a3"));
    let asm = compiled(CAST_PRODUCT, "a3").asm.unwrap_or_default();
    assert!(!asm.contains("vcast") && !asm.contains("ub["), "{asm}");
}

#[test]
fn a_product_a_vector_op_also_reads_goes_through_ub() {
    let shared =
        "kernel k(a: f16[32, 64], b: f16[64, 64], y: out f32[32, 64], z: out f32[32, 64]) {
    let x = load a[:, :];
    let w = load b[:, :];
    let m = x @ w;
    store y[:, :] = m;
    store z[:, :] = relu(m);
}";
    assert!(!stores_from_l0c(shared, "a3"));
    assert!(!stores_from_l0c(shared, "teach"));
    let epilogue = "kernel k(a: f16[32, 64], b: f16[64, 64], y: out f16[32, 64]) {
    let x = load a[:, :];
    let w = load b[:, :];
    store y[:, :] = relu(x @ w) as f16;
}";
    assert!(!stores_from_l0c(epilogue, "a3"));
    assert!(!stores_from_l0c(epilogue, "teach"));
}

#[test]
fn the_cost_model_decides_per_machine() {
    // On a3 a 64x64 f32 tile moves faster as L0C -> UB at 140 B/cycle plus UB -> GM at
    // 188 than L0C -> GM at 70; on teach the direct move is as fast as the second leg.
    let tiled = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../static/examples/matmul_tiled.tile"
    ))
    .expect("the matmul_tiled example");
    assert!(!stores_from_l0c(&tiled, "a3"));
    assert!(stores_from_l0c(&tiled, "teach"));
}

#[test]
fn inside_a_loop_the_round_trip_stays_where_its_pipes_overlap_faster() {
    let rows = "kernel k(a: f32[40, 32], w: f32[32, 48], y: out f16[40, 48]) {
    let wt = load w[:, :];
    for i in 0..40 step 16 @buffers(2) {
        let x = load a[i .. i + 16, :];
        store y[i .. i + 16, :] = (x @ wt) as f16;
    }
}";
    // a3: FIX to GM (200 + 1536 / 70 cycles) is slower than MTE3's leg (200 + 1536 /
    // 188) once iterations overlap; teach prices both legs alike.
    assert!(!stores_from_l0c(rows, "a3"));
    assert!(stores_from_l0c(rows, "teach"));
}

#[test]
fn blocks_of_a_wider_matrix_store_with_its_row_stride_and_tails() {
    let halves = "kernel k(a: f16[64, 64], b: f16[64, 128], y: out f16[64, 128]) {
    let x = load a[:, :];
    let w0 = load b[:, 0 .. 64];
    let w1 = load b[:, 64 .. 128];
    store y[:, 0 .. 64] = (x @ w0) as f16;
    store y[:, 64 .. 128] = (x @ w1) as f16;
}";
    assert!(stores_from_l0c(halves, "a3"));
    // Column blocks with a tail (100 = 64 + 36), cast to bf16.
    let tail = "kernel k(a: f32[48, 32], b: f32[32, 100], y: out bf16[48, 100]) {
    let x = load a[:, :];
    for j in 0..100 step 64 {
        let w = load b[:, j .. j + 64];
        store y[:, j .. j + 64] = (x @ w) as bf16;
    }
}";
    assert!(stores_from_l0c(tail, "teach"));
}

#[test]
fn a_machine_with_one_dma_dimension_still_stores_blocks_of_a_wider_matrix() {
    // FIX moves a 2-D tile whatever DMA descriptors allow; the rows peeled for the DMA
    // path must not make the direct store fail or mis-store.
    let mut machine = tilescope::machine::Machine::teach();
    machine.dma_max_dims = 1;
    let options = CompileOptions {
        machine: Some(machine),
        ..CompileOptions::default()
    };
    let source = "kernel k(a: f16[16, 64], b: f16[64, 128], y: out f16[16, 128]) {
    let x = load a[:, :];
    for j in 0..128 step 64 {
        let w = load b[:, j .. j + 64];
        store y[:, j .. j + 64] = (x @ w) as f16;
    }
}";
    assert!(stores_from_l0c_with(source, &options));
    // The load of `w`'s column block is peeled into row DMAs; the store is not.
    let ir = pass_ir(&compile(source, &options), "decompose-transfer");
    let store = ir
        .lines()
        .find(|l| l.contains("store "))
        .unwrap_or_default();
    assert!(
        store.contains("via fix.f16 gm[16, 128, 64][64, 1, 1]"),
        "{ir}"
    );
    assert!(ir.contains("loop["), "{ir}");
}
