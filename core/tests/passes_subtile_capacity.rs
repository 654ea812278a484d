//! subtile-matmul splits a product along K when its operand tiles do not fit L0A or
//! L0B whole, whatever the cost model says, and prints why on the loop; what no K split
//! helps (an accumulator larger than L0C) stays plan-memory's located capacity error.
//! The splits are checked in `core/filetests/subtile-matmul/`, the capacity errors in
//! `core/filetests/plan-memory/`; here the split kernels run.

mod pass_support;

use pass_support::options;
use tilescope::compile::SyncStrategy;
use tilescope::machine::Machine;
use tilescope::run::run;

const GEMM: &str = include_str!("../../static/examples/gemm_l0.tile");

/// Runs `source` on teach under `auto` and `barrier` sync: it must compile, run without
/// errors or races, and match the reference.
fn assert_clean_on_teach(source: &str) {
    for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
        let r = run(source, &options(Machine::teach(), sync), Vec::new(), 5);
        assert!(r.diagnostics.is_empty(), "{sync:?}: {:?}", r.diagnostics);
        assert!(r.sim.errors.is_empty(), "{sync:?}: {:?}", r.sim.errors);
        assert!(
            r.sim.races.is_empty(),
            "{sync:?}: {} races",
            r.sim.races.len()
        );
        assert!(r.reference_match, "{sync:?}: err {}", r.max_abs_err);
    }
}

#[test]
fn the_gemm_compiles_on_teach_matches_and_has_no_race_under_auto_and_barrier() {
    assert_clean_on_teach(GEMM);
}

#[test]
fn a_top_level_product_split_until_it_fits_matches_the_reference() {
    // 128 x 256 bf16 is 64 KiB: neither operand fits teach's 32 KiB L0A / L0B whole.
    let source = "kernel k(x: bf16[128, 256], w: bf16[128, 256], y: out f32[128, 128]) {
    let a = load x[:, :];
    let b = load w[:, :];
    store y[:, :] = a @ b.T;
}";
    assert_clean_on_teach(source);
}
