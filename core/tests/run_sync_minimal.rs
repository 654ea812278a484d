//! Every set/wait pair `auto` sync inserts into an example is needed: deleting any one
//! of them makes the simulator report a race or a flag error. A redundant pair would mean
//! lowering annotated an access too coarsely (or insert-sync ordered what needs no order).
//!
//! The same check as `sync_support::assert_sync_minimal`, but simulated on the kernel's
//! own seeded inputs, so gathers and scatters get valid indices.

mod examples_support;

use tilescope::compile::{compile_with_context, CompileOptions};
use tilescope::passes::emit::emit;
use tilescope::passes::sync::{without_pair, Reason};
use tilescope::sim::{simulate, SimMode};

#[test]
fn every_pair_auto_inserts_into_an_example_is_needed() {
    let mut redundant = Vec::new();
    let mut checked = 0;
    for path in examples_support::examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let (result, cx) = compile_with_context(&source, &CompileOptions::default());
        assert!(result.ok(), "{}: {:?}", path.display(), result.diagnostics);
        let machine = cx.machine();
        let hir = cx.hir.as_ref().expect("checked kernel");
        let inputs = tilescope::inputs::prepare(hir, Vec::new(), 3).expect("inputs");
        let synced = cx.lowered.as_ref().expect("lowered program");
        let report = cx.sync_report.as_ref().expect("sync report");
        let program = emit(synced, &machine).expect("emits");
        let whole = simulate(&program, &machine, inputs.clone(), SimMode::FULL);
        assert!(
            whole.races.is_empty() && whole.errors.is_empty(),
            "{}: auto is not clean",
            path.display()
        );
        for (k, pair) in report.pairs.iter().enumerate() {
            // Pairs that only keep a pipe from setting a flag before the previous wait
            // matter by timing, which the race detector does not see.
            if pair.reason == Reason::FlagReuse {
                continue;
            }
            checked += 1;
            let cut = emit(&without_pair(synced, pair), &machine).expect("emits");
            let r = simulate(&cut, &machine, inputs.clone(), SimMode::FULL);
            if r.races.is_empty() && r.errors.is_empty() {
                redundant.push(format!(
                    "{}: pair {k} ({} -> {}, ids {:?}, {:?})",
                    path.display(),
                    pair.src,
                    pair.dst,
                    pair.ids,
                    pair.reason
                ));
            }
        }
    }
    // Every example but the purely sequential ones has cross-pipe pairs to delete.
    assert!(checked >= 60, "only {checked} pairs checked");
    assert!(
        redundant.is_empty(),
        "redundant pairs:\n{}",
        redundant.join("\n")
    );
}
