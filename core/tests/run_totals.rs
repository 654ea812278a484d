//! A run's totals count the whole run, not what the trace keeps: the simulator stores at
//! most `limits::MAX_TRACE_EVENTS` trace entries and flag events, and a long loop passes
//! that.

use tilescope::compile::CompileOptions;
use tilescope::limits::MAX_TRACE_EVENTS;
use tilescope::run::run;

#[test]
fn a_long_loop_counts_every_set_wait_pair_past_the_trace_cap() {
    let iterations = 80_000u64;
    let source = format!(
        "kernel long(x: f32[16, 16], y: out f32[16, 16]) {{\n\
         for i in 0..{iterations} {{\n\
         let t = load x[:, :];\n\
         store y[:, :] = t * 2.0 + 1.0;\n\
         }}\n}}\n"
    );
    let r = run(&source, &CompileOptions::default(), Vec::new(), 1);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(
        r.sim.errors.is_empty() && r.sim.races.is_empty(),
        "{:?}",
        r.sim.errors
    );
    assert!(r.sim.flags.len() <= MAX_TRACE_EVENTS && r.sim.trace.len() <= MAX_TRACE_EVENTS);
    // Each iteration orders load -> compute -> store and hands its buffers back, so it
    // meets several pairs; the kept flag events stop at the cap.
    assert!(
        r.sim.syncs >= 3 * iterations && r.sim.syncs > MAX_TRACE_EVENTS as u64,
        "syncs {} for {iterations} iterations",
        r.sim.syncs
    );
    let executed: u64 = r.sim.pipes.iter().map(|p| p.instructions).sum();
    assert!(executed > MAX_TRACE_EVENTS as u64, "{executed}");
}

#[test]
fn a_run_past_the_limit_is_refused_before_it_starts_naming_the_loop() {
    // 10^6 iterations of load, compute and store: some 10^7 instructions, past a3's
    // limit. Refused before the simulator or the reference interpreter start (either
    // would take seconds), at the loop.
    let source = "kernel long(x: f32[16, 16], y: out f32[16, 16]) {
    for i in 0..1000000 {
        let t = load x[:, :];
        store y[:, :] = t * 2.0 + 1.0;
    }
}
";
    let r = run(source, &CompileOptions::default(), Vec::new(), 1);
    let d = r.diagnostics.first().expect("a diagnostic");
    assert!(
        d.message
            .contains("over the limit of 10000000 simulated instructions on a3"),
        "{}",
        d.message
    );
    let span = d.span.expect("at the loop");
    assert!(
        source[span.start as usize..].starts_with("for i in 0..1000000"),
        "{span:?}"
    );
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("this loop runs 1000000 iterations")),
        "{:?}",
        d.notes
    );
    // Nothing ran: no cycles, no trace, no reference outputs.
    assert!(r.sim.trace.is_empty() && r.sim.cycles == 0 && r.outputs.is_empty());
}
