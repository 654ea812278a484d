//! sink-to-use: loads and matrix-operand moves run in the order they are consumed, and
//! slabs are not shared when the kernel fits without sharing, so the reordering adds
//! no write-after-read wait on a reused buffer.

mod pass_support;

use pass_support::ir_after;
use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::run::run;

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` not in\n{text}"))
}

const SCATTER: &str = "kernel scatter(dst: i32[16, 1], upd: f32[16, 64], y: out f32[32, 64]) {
    let idx = load dst[:, :];
    let u = load upd[:, :];
    store y[idx, :] = u + 1.0;
}
";

#[test]
fn the_rows_load_before_the_index_only_the_scatter_reads() {
    let ir = ir_after(SCATTER, "sink-to-use");
    assert!(
        line_of(&ir, "load %upd") < line_of(&ir, "load %dst"),
        "{ir}"
    );
    assert!(line_of(&ir, "add %u") < line_of(&ir, "load %dst"), "{ir}");
}

#[test]
fn a_matrix_operand_moves_next_to_its_product() {
    let source = include_str!("kernels/attention_block.tile");
    let ir = ir_after(source, "sink-to-use");
    // `v` feeds only the second product: its move into L0B follows the first product.
    assert!(
        line_of(&ir, "transpose %kt") < line_of(&ir, "copy %vt"),
        "{ir}"
    );
    assert!(line_of(&ir, "= matmul") < line_of(&ir, "copy %vt"), "{ir}");
    let r = run(source, &CompileOptions::default(), Vec::new(), 3);
    assert!(r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty());
}

#[test]
fn loads_for_a_loop_keep_the_order_the_body_uses_them() {
    let source = "kernel k(a: f16[64, 32], w: f16[32, 64], b: f32[1, 64], y: out f32[64, 64]) {
    let wt = load w[:, :];
    let bv = load b[:, :];
    for i in 0..64 step 32 {
        let x = load a[i .. i + 32, :];
        store y[i .. i + 32, :] = x @ wt + bv;
    }
}
";
    let ir = ir_after(source, "sink-to-use");
    assert!(line_of(&ir, "load %w") < line_of(&ir, "load %b"), "{ir}");
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
