//! Event ids of finished straight-line pairs are recycled: a pair takes the id of an
//! earlier pair of its pipes whose wait happens before its set, so straight-line code
//! with more pairs per pipe pair than the machine has ids needs no barrier. Where no
//! order frees an id, a flag-reuse pair orders one when the program order allows it,
//! and the barrier fallback stays where it does not. Every run is checked against the
//! run's own trace (`flags_support`): each set of a flag happens after the wait of the
//! flag's previous set, whatever the timing.

mod flags_support;
mod sync_support;

use flags_support::unordered_flag_reuses;
use sync_support::programs::{chain, load_tile, loads_first, negate_tile};
use sync_support::*;
use tilescope::isa::Op;
use tilescope::lowered::Lowered;
use tilescope::machine::Machine;
use tilescope::passes::sync::{PairInfo, Reason, SyncReport};
use tilescope::types::{MemSpace, Pipe};

/// `auto` on `l` is clean, computes what `barrier` does, and passes the trace check.
fn synced_and_checked(l: &Lowered, m: &Machine) -> SyncReport {
    let (auto, report, _) = assert_sync_correct(l, m, true);
    let program = emit_ok(&auto, m);
    let r = tilescope::sim::simulate(&program, m, inputs(&program), tilescope::sim::SimMode::FULL);
    assert!(!r.trace_truncated);
    let unordered = unordered_flag_reuses(&program, &r.trace, &r.flags);
    assert!(unordered.is_empty(), "{unordered:#?}");
    report
}

fn of_pipes(report: &SyncReport, src: Pipe, dst: Pipe) -> Vec<&PairInfo> {
    report
        .pairs
        .iter()
        .filter(|p| p.src == src && p.dst == dst)
        .collect()
}

fn ids_of(pairs: &[&PairInfo]) -> Vec<u32> {
    pairs.iter().flat_map(|p| p.ids.iter().copied()).collect()
}

/// The ids of the `src -> dst` pairs, and whether no two of them are equal.
fn distinct_ids(report: &SyncReport, src: Pipe, dst: Pipe) -> (Vec<u32>, bool) {
    let ids = ids_of(&of_pipes(report, src, dst));
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    let distinct = unique.len() == ids.len();
    (ids, distinct)
}

#[test]
fn a_straight_line_chain_longer_than_the_ids_recycles_them() {
    let m = Machine::teach();
    let l = chain(12, true);
    let report = synced_and_checked(&l, &m);
    assert_eq!(report.barriers, 0, "{report:#?}");
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    assert!(report.pairs.iter().all(|p| p.reason == Reason::Hazard));
    let loads = of_pipes(&report, Pipe::MTE2, Pipe::V);
    assert!(loads.len() > 8, "{} MTE2 -> V pairs", loads.len());
    // Each pair's wait happens before the next one's set: one id does for all.
    for (src, dst) in [
        (Pipe::MTE2, Pipe::V),
        (Pipe::V, Pipe::MTE2),
        (Pipe::V, Pipe::MTE3),
        (Pipe::MTE3, Pipe::V),
    ] {
        let ids = ids_of(&of_pipes(&report, src, dst));
        assert!(ids.iter().all(|&i| i == 0), "{src} -> {dst}: {ids:?}");
    }
    assert_sync_minimal(&l, &m);
}

#[test]
fn a_chain_recycles_with_a_single_id_per_pipe_pair() {
    let mut m = Machine::teach();
    m.event_ids_per_pair = 1;
    let report = synced_and_checked(&chain(9, true), &m);
    assert_eq!(report.barriers, 0, "{report:#?}");
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

#[test]
fn without_an_order_between_pairs_their_ids_are_not_shared() {
    let m = Machine::teach();
    let report = synced_and_checked(&chain(8, false), &m);
    let (ids, distinct) = distinct_ids(&report, Pipe::MTE2, Pipe::V);
    assert_eq!(ids.len(), 8, "{report:#?}");
    assert!(distinct, "a shared id: {report:#?}");
    assert!(report.pairs.iter().all(|p| p.reason == Reason::Hazard));
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

/// Nine tiles through buffers of their own: nothing orders a V wait before a later MTE2
/// set, so the ninth MTE2 -> V pair takes the id of the first only behind a flag-reuse
/// V -> MTE2 pair from the first negate's wait to its own set. No barrier.
#[test]
fn a_reuse_nothing_orders_gets_a_flag_reuse_pair() {
    let m = Machine::teach();
    let l = chain(9, false);
    let report = synced_and_checked(&l, &m);
    assert_eq!(report.barriers, 0, "{report:#?}");
    let reuse: Vec<_> = report
        .pairs
        .iter()
        .filter(|p| p.reason == Reason::FlagReuse)
        .collect();
    assert!(!reuse.is_empty(), "{report:#?}");
    assert!(reuse
        .iter()
        .all(|p| p.hazard.is_none() && p.buffer.is_none() && p.loop_carried.is_none()));
    assert!(
        report.notes.iter().all(|n| !n.contains("ran out")),
        "{:?}",
        report.notes
    );
    assert!(
        report.notes.iter().any(|n| n.contains("flag-reuse")),
        "{:?}",
        report.notes
    );
    assert!(report.pairs.iter().all(|p| p.ids.iter().all(|&i| i < 8)));
    assert_sync_minimal(&l, &m);
}

/// The MTE2 -> V ids of nine loads that all come before the first negate stay live
/// together, and no order can free one without deadlock: the barrier fallback stays,
/// with its note, and the live pairs keep ids of their own.
#[test]
fn ids_that_stay_live_together_still_fall_back_to_a_barrier() {
    let m = Machine::teach();
    let report = synced_and_checked(&loads_first(9), &m);
    assert!(report.barriers >= 1, "{report:#?}");
    assert!(
        report.notes.iter().any(|n| n.contains("MTE2 -> V ran out")),
        "{:?}",
        report.notes
    );
    let (_, distinct) = distinct_ids(&report, Pipe::MTE2, Pipe::V);
    assert!(distinct, "a shared id: {report:#?}");
    // Eight fit: no fallback.
    let report = synced_and_checked(&loads_first(8), &m);
    assert_eq!(report.barriers, 0, "{report:#?}");
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

/// The trace check sees what the run's timing hides: MTE2 sets flag 0 twice, and the V
/// wait for the first set happens to run before the second set (V is idle), but nothing
/// orders it so: the simulator reports no error, the check does.
#[test]
fn the_trace_check_finds_a_reuse_only_timing_orders() {
    let m = Machine::teach();
    let mut b = Builder::new();
    let x = b.tensor("x", &[16, 64]);
    let y = b.tensor("y", &[16, 64]);
    let t0 = b.buffer("t0", MemSpace::UB, 2048, &[0], None);
    let t1 = b.buffer("t1", MemSpace::UB, 2048, &[2048], None);
    let flag = |set: bool| {
        let (src, dst, id) = (Pipe::MTE2, Pipe::V, tilescope::isa::Val::Imm(0));
        if set {
            Op::SetFlag { src, dst, id }
        } else {
            Op::WaitFlag { src, dst, id }
        }
    };
    for (k, t) in [t0, t1].into_iter().enumerate() {
        let off = 2048 * k as i64;
        load_tile(&mut b, x, (t, off), off);
        b.push(flag(true), vec![]);
        b.push(flag(false), vec![]);
        negate_tile(&mut b, (t, off));
    }
    b.push(
        dma(gm(y, None, 0), at(MemSpace::UB, None, 0), 1024),
        vec![rd(t0), rd(t1), wr_gm(y)],
    );
    let program = emit_ok(&b.finish(), &m);
    let r = tilescope::sim::simulate(
        &program,
        &m,
        inputs(&program),
        tilescope::sim::SimMode::FULL,
    );
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    let unordered = unordered_flag_reuses(&program, &r.trace, &r.flags);
    assert_eq!(unordered.len(), 1, "{unordered:#?}");
    assert!(
        unordered[0].contains("set_flag(MTE2, V, 0)"),
        "{unordered:?}"
    );
}
