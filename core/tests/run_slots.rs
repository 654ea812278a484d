//! Explicit multi-buffers (`buffers(TYPE, N)`, `b[s] = e`, `b[s]`) end to end: the
//! gallery's slot kernels match the reference under every sync strategy and race
//! without sync, hazards are per slot (the prefetch overlaps the compute), and each
//! pair's dynamic event id follows the slot of the buffer its hazard is on.

use tilescope::compile::{compile, CompileOptions, SyncStrategy};
use tilescope::explain::{sync_rows, SyncRow};
use tilescope::run::run;

const PREFETCH: &str = include_str!("../../static/examples/prefetch_slots.tile");
const PHASES: &str = include_str!("../../static/examples/slot_phases.tile");

fn options(sync: SyncStrategy, preset: &str) -> CompileOptions {
    CompileOptions {
        sync,
        preset: Some(preset.into()),
        ..CompileOptions::default()
    }
}

#[test]
fn slot_kernels_match_the_reference_and_race_only_without_sync() {
    for (name, source) in [("prefetch_slots", PREFETCH), ("slot_phases", PHASES)] {
        for preset in ["a3", "teach"] {
            for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
                let r = run(source, &options(sync, preset), Vec::new(), 3);
                assert!(r.diagnostics.is_empty(), "{name}: {:?}", r.diagnostics);
                assert!(
                    r.reference_match,
                    "{name} {preset} {sync:?}: {}",
                    r.max_abs_err
                );
                assert!(
                    r.races.is_empty() && r.errors.is_empty(),
                    "{name}: {:?}",
                    r.races
                );
            }
            let r = run(source, &options(SyncStrategy::None, preset), Vec::new(), 3);
            assert!(r.diagnostics.is_empty(), "{name}: {:?}", r.diagnostics);
            assert!(!r.races.is_empty(), "{name} {preset}: no race without sync");
        }
    }
}

#[test]
fn the_prefetch_into_the_other_slot_overlaps_the_compute() {
    let cycles = |sync| run(PREFETCH, &options(sync, "a3"), Vec::new(), 3).cycles;
    let (auto, barrier) = (cycles(SyncStrategy::Auto), cycles(SyncStrategy::Barrier));
    // Per-slot hazards let MTE2 load slot (i + 1) % 2 while V reads slot i % 2.
    assert!(auto * 4 < barrier * 3, "auto {auto} vs barrier {barrier}");
}

fn rows(source: &str) -> Vec<SyncRow> {
    let r = compile(source, &CompileOptions::default());
    assert!(r.ok(), "{:?}", r.diagnostics);
    sync_rows(
        r.sync.as_ref().expect("a sync report"),
        r.program.as_ref(),
        source,
    )
}

#[test]
fn each_dynamic_id_follows_the_slot_of_the_buffer_the_hazard_is_on() {
    let rows = rows(PHASES);
    let on = |buffer: &str| -> Vec<&SyncRow> {
        rows.iter()
            .filter(|r| r.dynamic && r.buffer.as_deref() == Some(buffer))
            .collect()
    };
    // The vector op reads `a` at slots (i + 1) % 3 and i % 3 and writes `b` at i % 2:
    // both of its pairs on `b` take their ids from b's slot index (offset 0, 2 ids),
    // none from a's.
    let b = on("b");
    assert_eq!(b.len(), 2, "{rows:#?}");
    for r in &b {
        assert_eq!(r.slot_offsets, Some([0, 0]), "{r:#?}");
        assert_eq!(r.events.len(), 2, "{r:#?}");
    }
    // The pairs on `a` bind the load's slot (i + 2) % 3 and the reads' phases.
    let a = on("a");
    assert!(
        a.iter().any(|r| r.slot_offsets == Some([2, 1])),
        "no RAW from the prefetch at phase 2 to the read at phase 1: {a:#?}"
    );
    assert!(
        a.iter().any(|r| r.slot_offsets == Some([0, 2])),
        "no WAR from the read at phase 0 to the prefetch at phase 2: {a:#?}"
    );
    assert!(a.iter().all(|r| r.events.len() == 3), "{a:#?}");
}

#[test]
fn the_prefetch_waits_for_the_read_of_its_slot_with_that_slots_id() {
    let rows = rows(PREFETCH);
    let war = rows
        .iter()
        .find(|r| r.kind == "WAR" && r.buffer.as_deref() == Some("xb"))
        .unwrap_or_else(|| panic!("no WAR on xb: {rows:#?}"));
    assert!(war.dynamic && war.back_edge, "{war:#?}");
    // Set after the read of slot i % 2, waited before the write of (i + 1) % 2.
    assert_eq!(war.slot_offsets, Some([0, 1]));
}

#[test]
fn a_slot_read_before_any_write_at_run_time_names_the_read() {
    // The checker cannot see it (the loop writes slot 1), the interpreter can.
    let source = "kernel k(x: f32[8, 16], y: out f32[8, 16]) {
    let b = buffers(f32[8, 16], 2);
    for i in 0..2 {
        b[1] = load x[:, :];
        store y[:, :] = b[0];
    }
}";
    let r = run(source, &CompileOptions::default(), Vec::new(), 3);
    let messages: Vec<&str> = r.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("slot 0 of `b` is read before any statement writes it")),
        "{messages:?}"
    );
}
