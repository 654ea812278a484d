//! sink-to-use's reorderings run clean, and slabs are not shared when the kernel fits
//! without sharing, so the reordering adds no write-after-read wait on a reused buffer.
//! The orders themselves are checked in `core/filetests/sink-to-use/`.

use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::run::run;

const SCATTER: &str = "kernel scatter(dst: i32[16, 1], upd: f32[16, 64], y: out f32[32, 64]) {
    let idx = load dst[:, :];
    let u = load upd[:, :];
    store y[idx, :] = u + 1.0;
}
";

#[test]
fn the_attention_block_runs_clean_with_its_operand_moved() {
    let source = include_str!("kernels/attention_block.tile");
    let r = run(source, &CompileOptions::default(), Vec::new(), 3);
    assert!(r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty());
}

#[test]
fn the_reordered_scatter_has_no_false_dependence() {
    // Unshared slabs: the index does not overwrite the rows' buffer, so the index load
    // waits for nothing and only the scatter waits for both.
    let auto = run(SCATTER, &CompileOptions::default(), Vec::new(), 1);
    assert!(auto.reference_match && auto.sim.races.is_empty());
    let options = CompileOptions {
        sync: SyncStrategy::Barrier,
        ..CompileOptions::default()
    };
    let barrier = run(SCATTER, &options, Vec::new(), 1);
    assert!(
        auto.sim.cycles <= barrier.sim.cycles,
        "{} > {}",
        auto.sim.cycles,
        barrier.sim.cycles
    );
    assert!(auto.sim.cycles < 700, "{}", auto.sim.cycles);
}
