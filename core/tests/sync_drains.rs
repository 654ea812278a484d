//! A loop-carried pair's drains go as late as the order allows: work of the consumer
//! pipe after the loop that needs none of the loop's last iterations does not wait for
//! them (insert-sync's `sink.rs`), and drains that do order something stay put.

use tilescope::compile::{compile, CompileOptions, SyncStrategy};
use tilescope::run::run;

/// A loop over explicit slots and its epilogue: the epilogue's vector work computes
/// into buffers of its own, so it need not wait for the loop's last store.
const EPILOGUE: &str = "kernel k(x: f32[16, 64], bias: f32[1, 64], y: out f32[16, 64]) {
    let b = load bias[:, :];
    let xb = buffers(f32[4, 64], 2);
    xb[0] = load x[0 .. 4, :];
    for i in 0..3 {
        xb[(i + 1) % 2] = load x[4 * (i + 1) .. 4 * (i + 1) + 4, :];
        store y[4 * i .. 4 * i + 4, :] = relu(tanh(xb[i % 2] / (b + 2.0))) + xb[i % 2] * 0.25;
    }
    store y[12 .. 16, :] = relu(tanh(xb[1] / (b + 2.0))) + xb[1] * 0.25;
}";

fn options(sync: SyncStrategy) -> CompileOptions {
    CompileOptions {
        sync,
        ..CompileOptions::default()
    }
}

#[test]
fn an_epilogue_does_not_wait_for_the_loops_last_store() {
    let asm = compile(EPILOGUE, &options(SyncStrategy::Auto))
        .asm
        .expect("compiles");
    let lines: Vec<&str> = asm.lines().collect();
    let after_loop = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("endloop"))
        .expect("a loop");
    let epilogue_vector = lines[after_loop..]
        .iter()
        .position(|l| l.starts_with("vdiv"))
        .expect("the epilogue's vector work");
    let drain = lines[after_loop..]
        .iter()
        .position(|l| l.starts_with("wait_flag MTE3, V"))
        .expect("the store-to-vector drain");
    assert!(epilogue_vector < drain, "{asm}");
    let (auto, barrier) = (
        run(EPILOGUE, &options(SyncStrategy::Auto), Vec::new(), 1),
        run(EPILOGUE, &options(SyncStrategy::Barrier), Vec::new(), 1),
    );
    assert!(auto.reference_match && auto.sim.races.is_empty() && auto.sim.errors.is_empty());
    // Before the drains sank, the epilogue waited for the last store: 1647 cycles
    // against barriers' 1500.
    assert!(
        auto.sim.cycles <= barrier.sim.cycles,
        "auto {} barrier {}",
        auto.sim.cycles,
        barrier.sim.cycles
    );
}

#[test]
fn a_drain_that_orders_the_next_load_stays_after_its_loop() {
    // The inner loop's vector reads of `w`'s buffer are ordered before the next outer
    // iteration's load of `w` by the drains after the inner loop; sinking them past the
    // load of `scale` would need a pair of its own, so they stay.
    let source = include_str!("../../static/examples/int4_gemv.tile");
    let asm = compile(source, &options(SyncStrategy::Auto))
        .asm
        .expect("compiles");
    let lines: Vec<&str> = asm.lines().map(str::trim_start).collect();
    let inner_end = lines
        .iter()
        .position(|l| l.starts_with("endloop"))
        .expect("the inner loop");
    assert!(
        lines[inner_end + 1].starts_with("wait_flag V, MTE2"),
        "{}",
        lines[inner_end..].join("\n")
    );
}
