//! Every example kernel, compiled through the whole pipeline and simulated, matches the
//! reference interpreter, for every sync strategy that orders its pipes.

use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::run::run;

mod examples_support;
use examples_support::examples;

fn check(sync: SyncStrategy, preset: &str) {
    let mut failures = Vec::new();
    for path in examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let options = CompileOptions {
            sync,
            preset: Some(preset.into()),
            ..CompileOptions::default()
        };
        let r = run(&source, &options, Vec::new(), 7);
        // `bound` must be a lower bound of the simulated run, or bound/cycles (the
        // README's figure of merit) would flatter the compiler.
        let ok = r.diagnostics.is_empty()
            && r.errors.is_empty()
            && r.races.is_empty()
            && r.reference_match
            && r.bound <= r.cycles;
        if !ok {
            failures.push(format!(
                "{} on {preset}: bound {} cycles {} diags {:?} errors {:?} races {} match {} err {} outputs {:?}",
                path.display(),
                r.bound,
                r.cycles,
                r.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>(),
                r.errors.iter().map(|e| &e.message).collect::<Vec<_>>(),
                r.races.len(),
                r.reference_match,
                r.max_abs_err,
                r.outputs
                    .iter()
                    .map(|o| (&o.name, o.matches, o.mismatches))
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_example_matches_the_interpreter_with_barrier_sync() {
    check(SyncStrategy::Barrier, "a3");
}

#[test]
fn every_example_matches_the_interpreter_with_auto_sync() {
    check(SyncStrategy::Auto, "a3");
}

#[test]
fn every_example_matches_the_interpreter_on_teach() {
    check(SyncStrategy::Auto, "teach");
    check(SyncStrategy::Barrier, "teach");
}

#[test]
fn without_sync_a_pipelined_example_shows_its_races() {
    let source = include_str!("../../static/examples/softmax.tile");
    let options = CompileOptions {
        sync: SyncStrategy::None,
        ..CompileOptions::default()
    };
    let r = run(source, &options, Vec::new(), 7);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(!r.races.is_empty(), "no races reported without sync");
    assert_eq!(r.syncs, 0);
}

#[test]
fn auto_sync_pairs_are_counted_and_beat_barriers() {
    let source = include_str!("../../static/examples/multibuffer.tile");
    let with = |sync| {
        let options = CompileOptions {
            sync,
            ..CompileOptions::default()
        };
        run(source, &options, Vec::new(), 7)
    };
    let (auto, barrier) = (with(SyncStrategy::Auto), with(SyncStrategy::Barrier));
    assert!(auto.syncs > 0);
    assert!(
        auto.cycles < barrier.cycles,
        "{} vs {}",
        auto.cycles,
        barrier.cycles
    );
    assert!(auto.bound > 0 && auto.bound <= auto.cycles);
    let json = serde_json::to_value(&auto).expect("serialises");
    for key in [
        "cycles",
        "pipes",
        "syncs",
        "races",
        "errors",
        "reference_match",
        "max_abs_err",
        "bound",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
}
