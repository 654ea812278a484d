//! Explicit multi-buffers (`buffers(TYPE, N)`, `b[s] = e`, `b[s]`) end to end: the
//! gallery's slot kernels match the reference under every sync strategy and race
//! without sync, hazards are per slot (the prefetch overlaps the compute), and each
//! pair's dynamic event id follows the slot of the buffer its hazard is on.

use tilescope::compile::{compile, AliasMode, CompileOptions, SyncStrategy};
use tilescope::explain::{sync_rows, SyncRow};
use tilescope::run::run;

const PREFETCH: &str = include_str!("../../static/examples/prefetch_slots.tile");
const PHASES: &str = include_str!("../../static/examples/slot_phases.tile");

/// Slot kernels off the beaten path: a product into a slot and a slot into a product,
/// a slot read kept while its slot is written again (a copy), slots written from a
/// loop-carried accumulator, slots of two loops at once, a `buffers` tile declared in
/// a loop body, slots written from updates (in place on another tile) in and after a
/// loop, eight slots prefetched in a loop axis-split nests (its pair on `xb` runs out of
/// ids: a barrier in the loop and one after it, where its drains were).
const EDGES: [(&str, &str); 8] = [
    (
        "mm",
        "kernel k(a: f16[16, 32], b: f16[32, 16], y: out f32[16, 16], z: out f32[16, 16]) {
    let s = buffers(f32[16, 16], 2);
    s[0] = load a[:, :] @ load b[:, :];
    s[1] = s[0] * 2.0;
    let w = buffers(f16[16, 32], 2);
    w[1] = load a[:, :];
    store y[:, :] = s[1] + s[0];
    store z[:, :] = (w[1] @ load b[:, :]) + s[1];
}",
    ),
    (
        "overwrite",
        "kernel k(x: f32[32, 16], y: out f32[32, 16]) {
    let b = buffers(f32[16, 16], 2);
    b[0] = load x[0 .. 16, :];
    let old = b[0];
    b[0] = load x[16 .. 32, :];
    store y[0 .. 16, :] = old + b[0];
    b[1] = exp(b[0]);
    b[0] = b[1];
    store y[16 .. 32, :] = b[0] - old;
}",
    ),
    (
        "carried",
        "kernel k(x: f32[64, 16], y: out f32[16, 16]) {
    let b = buffers(f32[16, 16], 2);
    let acc = zeros(f32[16, 16]);
    b[0] = load x[0 .. 16, :];
    for i in 0..3 {
        b[(i + 1) % 2] = load x[16 * i + 16 .. 16 * i + 32, :];
        acc += b[i % 2];
        b[i % 2] = acc;
        acc += b[(i + 1) % 2] * 0.5;
    }
    store y[:, :] = acc + b[1];
}",
    ),
    (
        "nest",
        "kernel k(x: f32[64, 64], y: out f32[64, 64]) {
    let b = buffers(f32[16, 16], 4);
    for i in 0..4 {
        b[i % 4] = load x[16 * i .. 16 * i + 16, 0 .. 16];
        for j in 0..4 {
            b[(i + j) % 4] = load x[16 * i .. 16 * i + 16, 16 * j .. 16 * j + 16];
            store y[16 * j .. 16 * j + 16, 16 * i .. 16 * i + 16] = b[(i + j) % 4] + b[i % 4];
        }
        b[(2 * i + 1) % 4] = b[i % 4] * 3.0;
        store y[16 * i .. 16 * i + 16, 0 .. 16] = b[(2 * i + 1) % 4];
    }
}",
    ),
    (
        "inloop",
        "kernel k(x: f32[64, 16], y: out f32[64, 16]) {
    for i in 0..4 @buffers(2) {
        let b = buffers(f32[16, 16], 2);
        b[0] = load x[16 * i .. 16 * i + 16, :];
        b[1] = relu(b[0]);
        store y[16 * i .. 16 * i + 16, :] = b[1] + b[0];
    }
}",
    ),
    (
        "upd",
        "kernel k(x: f32[32, 16], y: out f32[16, 16]) {
    let b = buffers(f32[16, 16], 2);
    let acc = load x[0 .. 16, :];
    acc += load x[16 .. 32, :];
    b[1] = acc;
    acc *= 3.0;
    b[0] = acc;
    store y[:, :] = b[0] - b[1];
}",
    ),
    (
        "upd2",
        "kernel k(x: f32[32, 16], y: out f32[16, 16]) {
    let b = buffers(f32[16, 16], 2);
    let acc = load x[0 .. 16, :];
    for i in 0..2 {
        acc += load x[16 * i .. 16 * i + 16, :];
    }
    b[1] = acc;
    store y[:, :] = b[1] * 2.0;
}",
    ),
    (
        "eight_slots",
        "kernel k(x: f32[32, 16], y: out f32[32, 16]) {
    let xb = buffers(f32[4, 16], 8);
    let ob = buffers(f32[4, 16], 3);
    xb[0] = load x[0 .. 4, :];
    for r in 0..28 step 4 {
        xb[(r // 4 + 1) % 8] = load x[4 * (r // 4 + 1) .. 4 * (r // 4 + 1) + 4, :];
        store y[4 * (r // 4) .. 4 * (r // 4) + 4, :] = exp(xb[(r // 4) % 8]) * 0.5 + xb[(r // 4 + 0) % 8];
    }
    store y[28 .. 32, :] = exp(xb[7]) * 0.5 + xb[7];
}",
    ),
];

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
                    r.sim.races.is_empty() && r.sim.errors.is_empty(),
                    "{name}: {:?}",
                    r.sim.races
                );
            }
            let r = run(source, &options(SyncStrategy::None, preset), Vec::new(), 3);
            assert!(r.diagnostics.is_empty(), "{name}: {:?}", r.diagnostics);
            assert!(
                !r.sim.races.is_empty(),
                "{name} {preset}: no race without sync"
            );
        }
    }
}

#[test]
fn the_prefetch_into_the_other_slot_overlaps_the_compute() {
    let cycles = |sync| {
        run(PREFETCH, &options(sync, "a3"), Vec::new(), 3)
            .sim
            .cycles
    };
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

#[test]
fn slot_kernels_off_the_beaten_path_match_under_every_strategy() {
    for (name, source) in EDGES {
        for preset in ["a3", "teach"] {
            for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
                for alias in [AliasMode::Precise, AliasMode::Coarse] {
                    let options = CompileOptions {
                        alias,
                        verify: true,
                        ..options(sync, preset)
                    };
                    let r = run(source, &options, Vec::new(), 5);
                    assert!(r.diagnostics.is_empty(), "{name}: {:?}", r.diagnostics);
                    assert!(r.reference_match, "{name} {preset} {sync:?} {alias:?}");
                    assert!(r.sim.races.is_empty() && r.sim.errors.is_empty(), "{name}");
                }
            }
        }
    }
}

/// Three loops of four-slot explicit buffers want 12 ids per pipe pair: pairs whose
/// set and wait are at two slot phases cannot do with fewer ids than slots, so they
/// become `pipe_barrier ALL`, said in the notes, and the kernel stays right.
#[test]
fn explicit_slots_out_of_event_ids_fall_back_to_barriers_with_a_note() {
    let source = "kernel k(x: f32[128, 16], y0: out f32[128, 16], y1: out f32[128, 16], y2: out f32[128, 16]) {
    let a0 = buffers(f32[8, 16], 4);
    let a1 = buffers(f32[8, 16], 4);
    let a2 = buffers(f32[8, 16], 4);
    a0[0] = load x[0 .. 8, :];
    for i in 0..15 {
        a0[(i + 1) % 4] = load x[8 * i + 8 .. 8 * i + 16, :];
        store y0[8 * i .. 8 * i + 8, :] = exp(a0[i % 4]);
    }
    store y0[120 .. 128, :] = exp(a0[3]);
    a1[0] = load x[0 .. 8, :];
    for i in 0..15 {
        a1[(i + 1) % 4] = load x[8 * i + 8 .. 8 * i + 16, :];
        store y1[8 * i .. 8 * i + 8, :] = exp(a1[i % 4]);
    }
    store y1[120 .. 128, :] = exp(a1[3]);
    a2[0] = load x[0 .. 8, :];
    for i in 0..15 {
        a2[(i + 1) % 4] = load x[8 * i + 8 .. 8 * i + 16, :];
        store y2[8 * i .. 8 * i + 8, :] = exp(a2[i % 4]);
    }
    store y2[120 .. 128, :] = exp(a2[3]);
}";
    let r = run(source, &options(SyncStrategy::Auto, "a3"), Vec::new(), 5);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty());
    let notes = &r.compile.sync.as_ref().expect("a sync report").notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("a pair on explicit slots became pipe_barrier ALL")),
        "{notes:?}"
    );
}
