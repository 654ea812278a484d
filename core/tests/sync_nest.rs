//! Nest-wide slot rotation: the slot flags of a multi-buffered loop that is the inner
//! loop of a perfect nest are primed once before the outermost loop and drained once
//! after it, so the rotation runs over the flattened iteration space instead of
//! stalling at every outer iteration.

mod sync_support;

use sync_support::programs::nested_stream;
use sync_support::*;
use tilescope::compile::{compile_with_context, CompileOptions, SyncStrategy};
use tilescope::lowered::{LoopId, Lowered};
use tilescope::machine::Machine;
use tilescope::passes::sync::{PairInfo, Reason, SyncReport};

const OUTER: Option<LoopId> = Some(LoopId(0));
const INNER: Option<LoopId> = Some(LoopId(1));

fn carried(report: &SyncReport) -> Vec<&PairInfo> {
    report
        .pairs
        .iter()
        .filter(|p| p.loop_carried.is_some())
        .collect()
}

/// y = -x, and the synced program is race-free, agrees with barriers and is minimal.
fn assert_negates(l: &Lowered, m: &Machine) -> (Lowered, SyncReport) {
    let (auto, report, r) = assert_sync_correct(l, m, true);
    let x = r.output("x").expect("x").to_f32_vec();
    let y = r.output("y").expect("y").to_f32_vec();
    assert!(x.iter().zip(&y).all(|(a, b)| *b == -*a), "y is not -x");
    assert_sync_minimal(l, m);
    (auto, report)
}

#[test]
fn multi_buffered_inner_loop_rotates_across_the_nest() {
    let m = Machine::teach();
    // Slots reused within a run (two slots over runs of four), or only by the next run
    // (four slots over runs of four or of two).
    for (outer, inner, slots) in [(3, 4, 2), (3, 4, 4), (3, 2, 4)] {
        let what = format!("{outer} x {inner} / {slots}");
        let (_, report) = assert_negates(&nested_stream(outer, inner, slots, false), &m);
        let rotating = carried(&report);
        assert!(!rotating.is_empty(), "{what}: {report:#?}");
        for p in &rotating {
            assert!(p.dynamic && p.ids.len() == slots as usize, "{what}: {p:#?}");
            assert_eq!(
                (p.loop_carried, p.rotates_with),
                (OUTER, INNER),
                "{what}: {p:#?}"
            );
            // Primes and drains at the top level (one index), the set and wait in the
            // inner body (three): nothing between the two loops.
            let depths: Vec<usize> = p.paths.iter().map(Vec::len).collect();
            let top = depths.iter().filter(|&&d| d == 1).count();
            assert_eq!(top, 2 * slots as usize, "{what}: {p:#?}");
            assert!(depths.iter().all(|&d| d == 1 || d == 3), "{what}: {p:#?}");
        }
        // Nothing re-primes a flag between runs of the inner loop, so no reuse pairs.
        assert!(report.pairs.iter().all(|p| p.reason == Reason::Hazard));
    }
}

#[test]
fn rotation_is_correct_when_runs_do_not_fill_the_slots_evenly() {
    let m = Machine::teach();
    // Odd runs restart the slots at 0 after slot 0; runs shorter than the slots; three
    // slots over runs of four; a run longer than the analysis unrolls, ending on the
    // other slot than the unrolled run would.
    for (outer, inner, slots) in [(3, 3, 2), (4, 1, 2), (3, 4, 3), (2, 5, 3), (2, 7, 2)] {
        let (_, report) = assert_negates(&nested_stream(outer, inner, slots, false), &m);
        assert!(
            carried(&report).iter().all(|p| p.loop_carried == OUTER),
            "{outer} x {inner} / {slots}: {report:#?}"
        );
    }
}

#[test]
fn register_counted_inner_loop_may_run_zero_or_any_times() {
    let m = Machine::teach();
    let (auto, report) = assert_negates(&nested_stream(2, 3, 2, true), &m);
    assert!(
        carried(&report).iter().all(|p| p.loop_carried == OUTER),
        "{report:#?}"
    );
    // The same sync with the inner loop empty, or longer than the analysis unrolls it.
    assert_clean(&run(&with_trips(&auto, 0), &m), "zero trips");
    let (zero, _) = synced(&nested_stream(2, 0, 2, true), SyncStrategy::Auto, &m);
    assert_clean(&run(&zero, &m), "compiled for zero trips");
    // Sync inserted for three trips, run with seven (on tensors large enough): the
    // flags still follow the slots.
    let mut seven = with_trips(&auto, 7);
    seven.tensors = nested_stream(2, 7, 2, true).tensors;
    assert_clean(&run(&seven, &m), "seven trips");
}

#[test]
fn short_event_ids_rotate_per_run_instead() {
    // Three slots with two ids per pipe pair: the flags cannot follow the slots, so the
    // rotation restarts at every run of the inner loop, which stays correct.
    let mut m = Machine::teach();
    m.event_ids_per_pair = 2;
    let l = nested_stream(3, 4, 3, false);
    let (auto, report) = synced(&l, SyncStrategy::Auto, &m);
    assert!(!report.slot_reductions.is_empty(), "{report:#?}");
    let rotating: Vec<_> = carried(&report)
        .into_iter()
        .filter(|p| p.reason == Reason::Hazard)
        .collect();
    assert!(!rotating.is_empty(), "{report:#?}");
    assert!(
        rotating.iter().all(|p| p.loop_carried == INNER),
        "{report:#?}"
    );
    assert_clean(&run(&auto, &m), "fewer ids");
    let (full, _) = synced(&l, SyncStrategy::Auto, &Machine::teach());
    assert_eq!(
        outputs(&run(&auto, &m)),
        outputs(&run(&full, &Machine::teach()))
    );
}

#[test]
fn block_permute_rotates_across_its_split_loop_and_beats_barriers() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../static/examples/block_permute.tile"
    ))
    .expect("example");
    let (result, cx) = compile_with_context(&source, &CompileOptions::default());
    assert!(result.ok(), "{:?}", result.diagnostics);
    let report = cx.sync_report.as_ref().expect("sync report");
    let rotating = carried(report);
    assert!(!rotating.is_empty(), "{report:#?}");
    assert!(
        rotating.iter().all(|p| p.loop_carried == OUTER),
        "{report:#?}"
    );
    let cycles = |sync| {
        let options = CompileOptions {
            sync,
            ..CompileOptions::default()
        };
        let r = tilescope::run::run(&source, &options, Vec::new(), 3);
        assert!(r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty());
        (r.sim.cycles, r.bound)
    };
    let ((auto, bound), (barrier, _)) = (cycles(SyncStrategy::Auto), cycles(SyncStrategy::Barrier));
    // Every block is a 200-cycle GM startup on MTE2 and on MTE3 around a few cycles of
    // data, and the two share GM bandwidth: rotating slots overlaps the startups, so
    // auto beats barriers and stays within 10% of the bound.
    assert!(auto < barrier, "auto {auto}, barrier {barrier}");
    assert!(auto * 10 <= bound * 11, "auto {auto}, bound {bound}");
}
