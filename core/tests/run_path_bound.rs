//! The path bound (`RunResult::path_bound`, `sim::path_bound`): the busiest pipe's work
//! plus the fill and drain the run's data dependences force.

use tilescope::compile::CompileOptions;
use tilescope::isa::Op;
use tilescope::run::{run, RunResult};
use tilescope::sim::path_bound::dataflow_bound;

fn run_on(source: &str, preset: &str) -> RunResult {
    run_with(
        source,
        CompileOptions {
            preset: Some(preset.into()),
            ..CompileOptions::default()
        },
    )
}

fn run_with(source: &str, options: CompileOptions) -> RunResult {
    let r = run(source, &options, Vec::new(), 3);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(r.reference_match && r.sim.races.is_empty());
    r
}

/// The durations of the run's work instructions (syncs left out), in program order.
fn work(r: &RunResult) -> Vec<(tilescope::types::Pipe, u64)> {
    let program = r.compile.program.as_ref().expect("compiled");
    let mut entries: Vec<_> = r
        .sim
        .trace
        .iter()
        .filter(|e| e.pipe != tilescope::types::Pipe::S)
        .filter(|e| {
            !matches!(
                program.instrs[e.index as usize].op,
                Op::SetFlag { .. } | Op::WaitFlag { .. } | Op::Barrier { .. }
            )
        })
        .collect();
    entries.sort_by_key(|e| e.dispatch);
    entries.iter().map(|e| (e.pipe, e.end - e.start)).collect()
}

#[test]
fn a_single_tile_is_one_chain_and_its_path_bound_is_the_chain() {
    // load -> exp -> store of one tile: each step waits for the one before, so no order
    // of these three instructions takes less than their sum, however far below it the
    // busiest pipe's own work is.
    let r = run_on(
        "kernel one(x: f32[16, 64], y: out f32[16, 64]) {
    store y[:, :] = exp(load x[:, :]);
}",
        "a3",
    );
    let chain = work(&r);
    assert_eq!(chain.len(), 3, "{chain:?}");
    let sum: u64 = chain.iter().map(|&(_, d)| d).sum();
    assert_eq!(r.path_bound, Some(sum));
    assert_eq!(dataflow_bound(&r.sim), Some(sum));
    assert!(
        r.bound < sum && sum <= r.sim.cycles,
        "{} {sum} {}",
        r.bound,
        r.sim.cycles
    );
}

/// Sixteen row tiles, each loaded, raised to `exp` and stored.
const ROWS: &str = "kernel rows(x: f32[256, 64], y: out f32[256, 64]) {
    for r in 0..256 step 16 {
        store y[r .. r + 16, :] = exp(load x[r .. r + 16, :]);
    }
}";

#[test]
fn a_pipelined_loop_adds_only_its_fill_and_drain() {
    // A double-buffered loop of 16 tiles keeps MTE2 busy: the path bound adds to the
    // loads only the last tile's exp and store (and, mirrored, nothing before the first
    // load), far less than a tile per iteration.
    let r = run_on(ROWS, "a3");
    let path = r.path_bound.expect("a whole trace");
    let steps = work(&r);
    let last_two: u64 = steps.iter().rev().take(2).map(|&(_, d)| d).sum();
    assert!(path >= r.bound && path <= r.sim.cycles);
    assert!(
        path <= r.bound + 2 * last_two,
        "bound {} path {path} last exp and store {last_two}",
        r.bound
    );
}

#[test]
fn storage_reuse_orders_more_than_the_data_flow() {
    // One slot for every tile: each load waits for the previous tile's exp to read its
    // slot, a write-after-read order the data flow alone does not have.
    let r = run_with(
        ROWS,
        CompileOptions {
            auto_multi_buffer: false,
            ..CompileOptions::default()
        },
    );
    let path = r.path_bound.expect("a whole trace");
    let flow = dataflow_bound(&r.sim).expect("a whole trace").max(r.bound);
    assert!(flow < path, "data flow {flow} path {path}");
}
