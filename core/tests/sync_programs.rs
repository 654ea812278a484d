//! insert-sync on hand-built lowered programs, with the simulator as the oracle.

mod sync_support;

use sync_support::programs::*;
use sync_support::*;
use tilescope::compile::SyncStrategy;
use tilescope::isa::Op;
use tilescope::machine::Machine;

fn teach() -> Machine {
    Machine::teach()
}

#[test]
fn single_buffered_stream_is_ordered_and_minimal() {
    let l = streamed_exp(4, 1);
    let (_, report, r) = assert_sync_correct(&l, &teach(), true);
    assert!(report.pair_count() >= 3, "{report:#?}");
    assert!(report.pairs.iter().any(|p| p.loop_carried.is_some()));
    let y = r.output("y").unwrap().to_f32_vec();
    let x = r.output("x").unwrap().to_f32_vec();
    for (a, b) in x.iter().zip(&y) {
        assert!((a.exp() - b).abs() <= 1e-5 * b.abs().max(1.0));
    }
    assert_sync_minimal(&l, &teach());
}

#[test]
fn matmul_chain_accumulates_across_k() {
    let l = matmul_chain(4);
    let (_, report, r) = assert_sync_correct(&l, &teach(), true);
    // MTE2 -> MTE1, MTE1 -> M forward; M -> MTE1 and MTE1 -> MTE2 back edges; M -> FIX.
    let has = |s: &str, d: &str| {
        report
            .pairs
            .iter()
            .any(|p| p.src.name() == s && p.dst.name() == d)
    };
    for (s, d) in [
        ("MTE2", "MTE1"),
        ("MTE1", "M"),
        ("M", "MTE1"),
        ("MTE1", "MTE2"),
        ("M", "FIX"),
    ] {
        assert!(has(s, d), "no {s} -> {d} pair: {report:#?}");
    }
    let a = r.output("a").unwrap().to_f32_vec();
    let b = r.output("b").unwrap().to_f32_vec();
    let y = r.output("y").unwrap().to_f32_vec();
    let k = 64;
    for i in 0..16 {
        for j in 0..16 {
            let want: f32 = (0..k).map(|t| a[i * k + t] * b[t * 16 + j]).sum();
            assert!((y[i * 16 + j] - want).abs() < 1e-4, "y[{i},{j}]");
        }
    }
    assert_sync_minimal(&l, &teach());
}

#[test]
fn nested_loops_are_ordered_and_minimal() {
    let l = nested(2, 3);
    let (_, _, r) = assert_sync_correct(&l, &teach(), true);
    let x = r.output("x").unwrap().to_f32_vec();
    let y = r.output("y").unwrap().to_f32_vec();
    for o in 0..2 {
        for e in 0..512 {
            let want: f32 = (0..3).map(|i| x[(o * 3 + i) * 512 + e]).sum();
            assert!((y[o * 512 + e] - want).abs() < 1e-5);
        }
    }
    assert_sync_minimal(&l, &teach());
}

#[test]
fn zero_trip_loop_neither_deadlocks_nor_leaves_flags() {
    let l = maybe_empty_loop(0);
    let (auto, report, r) = assert_sync_correct(&l, &teach(), true);
    // The loop's back edges are primed and drained outside it.
    assert!(
        report.pairs.iter().any(|p| p.loop_carried.is_some()),
        "{report:#?}"
    );
    let y = r.output("y").unwrap().to_f32_vec();
    assert!(y.iter().all(|&v| v == 1.5));
    // The same sync with trips: the loop result is stored.
    let ran = run(&with_trips(&auto, 3), &teach());
    assert_clean(&ran, "three trips");
    let x = ran.output("x").unwrap().to_f32_vec();
    let y = ran.output("y").unwrap().to_f32_vec();
    assert!(x.iter().zip(&y).all(|(a, b)| a.abs() == *b));
    // Pairs inside a loop that does not run cannot be shown needed by running it.
    assert_sync_minimal(&maybe_empty_loop(2), &teach());
}

#[test]
fn barrier_strategy_uses_only_barriers() {
    let l = streamed_exp(4, 2);
    let (bar, report) = synced(&l, SyncStrategy::Barrier, &teach());
    assert!(report.pairs.is_empty());
    assert!(report.barriers > 0);
    let p = emit_ok(&bar, &teach());
    assert_eq!(
        count_ops(&p, |o| matches!(
            o,
            Op::SetFlag { .. } | Op::WaitFlag { .. }
        )),
        0
    );
    assert_eq!(
        count_ops(&p, |o| matches!(o, Op::Barrier { pipe: None })),
        report.barriers
    );
}

#[test]
fn none_strategy_inserts_nothing() {
    let l = matmul_chain(2);
    let (none, report) = synced(&l, SyncStrategy::None, &teach());
    assert_eq!(none, l);
    assert_eq!(report.pair_count(), 0);
    assert!(!run(&none, &teach()).races.is_empty());
}

#[test]
fn event_id_exhaustion_falls_back_to_fewer_ids_then_barriers() {
    // Four slots need four ids per dynamic pair; with two, the pairs take two each.
    let mut m = teach();
    m.event_ids_per_pair = 2;
    let l = streamed_exp(8, 4);
    let (auto, report) = synced(&l, SyncStrategy::Auto, &m);
    assert!(!report.slot_reductions.is_empty(), "{report:#?}");
    assert!(report
        .slot_reductions
        .iter()
        .all(|r| r.slots == 4 && r.ids <= 2));
    assert!(report.pairs.iter().all(|p| p.ids.iter().all(|&i| i < 2)));
    assert_clean(&run(&auto, &m), "fewer ids");

    // One id per pipe pair: the second MTE2 -> V and V -> MTE3 pairs become barriers.
    m.event_ids_per_pair = 1;
    let l = two_loads();
    let (auto, report) = synced(&l, SyncStrategy::Auto, &m);
    assert!(report.barriers >= 1, "{report:#?}");
    assert!(!report.notes.is_empty());
    let r = run(&auto, &m);
    assert_clean(&r, "barrier fallback");
    let (full, _) = synced(&l, SyncStrategy::Auto, &teach());
    assert_eq!(outputs(&r), outputs(&run(&full, &teach())));
}

#[test]
fn insert_sync_shows_sync_inline() {
    let (auto, _) = synced(&streamed_exp(4, 2), SyncStrategy::Auto, &teach());
    let text = tilescope::lowered::print(&auto).text;
    insta::assert_snapshot!("sync_streamed_exp_2_slots", text);
}
