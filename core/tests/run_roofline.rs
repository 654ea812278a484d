//! The roofline (`RunResult::roofline`): the bytes the reference loaded and stored, each
//! element once, and its products' multiply-accumulates, at the machine's peak rates.

use tilescope::compile::CompileOptions;
use tilescope::machine::Machine;
use tilescope::run::{run, RunResult};
use tilescope::tensor::Tensor;
use tilescope::types::DType;

fn run_on(source: &str, preset: &str) -> RunResult {
    run_with(source, preset, Vec::new())
}

fn run_with(source: &str, preset: &str, provided: Vec<(String, Tensor)>) -> RunResult {
    let options = CompileOptions {
        preset: Some(preset.into()),
        ..CompileOptions::default()
    };
    let r = run(source, &options, provided, 3);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(
        r.reference_match && r.sim.races.is_empty(),
        "{:?}",
        r.sim.errors
    );
    assert!(r.roofline.cycles <= r.bound && r.bound <= r.sim.cycles);
    r
}

#[test]
fn an_elementwise_kernel_is_its_bytes_at_the_fastest_paths() {
    // Two passes over x read each element twice; the roofline counts it once.
    let r = run_on(
        "kernel twice(x: f32[64, 128], y: out f32[64, 128]) {
    for i in 0..64 step 16 {
        let a = load x[i .. i + 16, :];
        let b = load x[i .. i + 16, :];
        store y[i .. i + 16, :] = a + b;
    }
}",
        "a3",
    );
    let bytes = 64 * 128 * 4;
    let bw = Machine::a3().costs.bandwidth;
    let want = (bytes as f64 / bw.gm_ub.max(bw.gm_l1) + bytes as f64 / bw.ub_gm).ceil() as u64;
    let f = &r.roofline;
    assert_eq!(
        (f.gm_read_bytes, f.gm_write_bytes, f.macs),
        (bytes, bytes, 0)
    );
    assert_eq!((f.gm_cycles, f.matrix_cycles, f.cycles), (want, 0, want));
}

#[test]
fn a_gather_counts_the_rows_it_read_and_a_product_its_valid_extents() {
    // Rows 0, 2, 2, 5: three distinct rows of 64 f32 are read, plus the index tile.
    let mut idx = Tensor::zeros(DType::I32, vec![4]);
    for (k, row) in [0, 2, 2, 5].into_iter().enumerate() {
        idx.set_i32(k, row);
    }
    let r = run_with(
        "kernel pick(x: f32[8, 64], idx: i32[4], y: out f32[4, 64]) {
    let i = load idx[:];
    store y[:, :] = load x[i, :];
}",
        "teach",
        vec![("idx".into(), idx)],
    );
    assert_eq!(r.roofline.gm_read_bytes, 3 * 64 * 4 + 4 * 4);
    assert_eq!(r.roofline.gm_write_bytes, 4 * 64 * 4);
    // A product whose K runs 40 of a 48-wide tile: 16 x 40 x 32 multiply-accumulates.
    let r = run_on(
        "kernel tail(a: f16[16, 40], b: f16[40, 32], c: out f32[16, 32]) {
    let acc = zeros(f32[16, 32]);
    for k in 0..40 step 24 {
        acc += load a[:, k .. k + 24] @ load b[k .. k + 24, :];
    }
    store c[:, :] = acc;
}",
        "a3",
    );
    let f = &r.roofline;
    assert_eq!(f.macs, 16 * 40 * 32);
    assert_eq!(f.gm_read_bytes, (16 * 40 + 40 * 32) * 2);
    assert_eq!(f.gm_write_bytes, 16 * 32 * 4);
    let mm = Machine::a3().costs.matmul;
    let per_cycle = mm.block_m * (mm.k_block_bytes / 2) * mm.block_n;
    assert_eq!(f.matrix_cycles, f.macs.div_ceil(per_cycle));
}
