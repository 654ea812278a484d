//! relayout: the loads axis-split cannot make affine read a scratch copy laid out in
//! iteration order. The block shuffle of the issue that asked for it (16 iterations,
//! source column `(b + b // 4) % 4`) runs on both presets under every ordering strategy
//! and matches the reference; without sync the copy's store -> load order is a race on
//! the scratch tensor; the IR shows the copy; and the 16 copies' MTE2 -> MTE3 pairs,
//! more than a pipe pair's 8 event ids, reuse ids instead of falling back to barriers.

mod flags_support;

use flags_support::unordered_flag_reuses;
use tilescope::compile::{compile, CompileOptions, SyncStrategy};
use tilescope::isa::Op;
use tilescope::passes::sync::Reason;
use tilescope::run::run;
use tilescope::types::Pipe;

const SHUFFLE: &str = "kernel shuffle(x: f32[64, 64], y: out f32[64, 64]) {
    for b in 0..16 {
        let t = load x[(b // 4) * 16 .. (b // 4) * 16 + 16, ((b + b // 4) % 4) * 16 .. ((b + b // 4) % 4) * 16 + 16];
        store y[(b // 4) * 16 .. (b // 4) * 16 + 16, (b % 4) * 16 .. (b % 4) * 16 + 16] = t;
    }
}
";

fn options(sync: SyncStrategy, preset: &str) -> CompileOptions {
    CompileOptions {
        sync,
        preset: Some(preset.into()),
        verify: true,
        ..CompileOptions::default()
    }
}

#[test]
fn the_shuffle_matches_the_reference_under_auto_and_barrier_on_both_presets() {
    for preset in ["a3", "teach"] {
        for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
            let r = run(SHUFFLE, &options(sync, preset), Vec::new(), 4);
            assert!(
                r.diagnostics.is_empty(),
                "{preset} {sync:?}: {:?}",
                r.diagnostics
            );
            assert!(
                r.sim.errors.is_empty() && r.sim.races.is_empty(),
                "{preset} {sync:?}"
            );
            assert!(
                r.reference_match,
                "{preset} {sync:?}: max abs err {}",
                r.max_abs_err
            );
        }
    }
}

#[test]
fn without_sync_the_copy_races_on_the_scratch_tensor() {
    for preset in ["a3", "teach"] {
        let r = run(SHUFFLE, &options(SyncStrategy::None, preset), Vec::new(), 4);
        assert!(
            r.sim
                .races
                .iter()
                .any(|race| race.message.contains("x_relayout")),
            "{preset}: {:?}",
            r.sim.races.iter().map(|r| &r.message).collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_ir_shows_the_scratch_and_one_copy_per_iteration() {
    let result = compile(SHUFFLE, &CompileOptions::default());
    let ir = &result
        .passes
        .iter()
        .find(|p| p.name == "relayout")
        .expect("a relayout pass")
        .ir;
    assert!(ir.contains("%x_relayout: scratch f32[256, 16]"), "{ir}");
    assert_eq!(ir.matches("store %x_relayout[").count(), 16, "{ir}");
    // Iteration 5 (b0 = 1, b1 = 1) reads column block (1 + 1) % 4 = 2 of row block 1.
    assert!(ir.contains("load %x[16 .. 32, 32 .. 48]"), "{ir}");
    assert!(ir.contains("store %x_relayout[80 .. 96, :]"), "{ir}");
    // The loop reads block b0 * 4 + b1 of the scratch: affine.
    assert!(
        !ir.lines()
            .any(|l| l.contains("load %x_relayout") && (l.contains("//") || l.contains(" % "))),
        "{ir}"
    );
}

/// 16 copies need 16 MTE2 -> MTE3 pairs, more than the 8 ids of a pipe pair, and
/// nothing orders a store before a later load: flag-reuse MTE3 -> MTE2 pairs order the
/// wait of a copy before the set of a copy some ids later, which takes its id. No
/// barrier, no note of ids running out, and every set of a flag happens after the wait
/// of its previous set in the run's trace.
#[test]
fn a_relayout_of_more_copies_than_event_ids_reuses_ids_without_a_barrier() {
    for preset in ["a3", "teach"] {
        let r = run(SHUFFLE, &options(SyncStrategy::Auto, preset), Vec::new(), 4);
        assert!(r.diagnostics.is_empty(), "{preset}: {:?}", r.diagnostics);
        assert!(
            r.sim.errors.is_empty() && r.sim.races.is_empty(),
            "{preset}"
        );
        assert!(r.reference_match, "{preset}: max abs err {}", r.max_abs_err);
        let report = r.compile.sync.as_ref().expect("a sync report");
        let notes = tilescope::explain::notes(report);
        assert!(
            notes.iter().all(|n| !n.contains("ran out")),
            "{preset}: {notes:?}"
        );
        assert_eq!(report.barriers, 0, "{preset}");
        assert!(report.slot_reductions.is_empty(), "{preset}");
        let program = r.compile.program.as_ref().expect("a program");
        assert!(
            !program
                .instrs
                .iter()
                .any(|i| matches!(i.op, Op::Barrier { .. })),
            "{preset}"
        );
        let copies: Vec<_> = report
            .pairs
            .iter()
            .filter(|p| (p.src, p.dst) == (Pipe::MTE2, Pipe::MTE3) && !p.dynamic)
            .collect();
        assert_eq!(copies.len(), 16, "{preset}");
        assert!(copies.iter().all(|p| p.ids.len() == 1 && p.ids[0] < 8));
        assert!(
            report.pairs.iter().any(
                |p| p.reason == Reason::FlagReuse && (p.src, p.dst) == (Pipe::MTE3, Pipe::MTE2)
            ),
            "{preset}"
        );
        let unordered = unordered_flag_reuses(program, &r.sim.trace, &r.sim.flags);
        assert!(unordered.is_empty(), "{preset}: {unordered:#?}");
    }
}
