//! Every example kernel, compiled through the whole pipeline and simulated, matches the
//! reference interpreter, for every sync strategy that orders its pipes.

use tilescope::compile::{AliasMode, CompileOptions, SyncStrategy};
use tilescope::run::run;
use tilescope::types::MemSpace;

mod examples_support;
mod flags_support;
mod run_support;
use examples_support::examples;
use flags_support::unordered_flag_reuses;
use run_support::run_with;

fn check(sync: SyncStrategy, preset: &str) {
    check_alias(sync, AliasMode::Precise, preset);
}

fn check_alias(sync: SyncStrategy, alias: AliasMode, preset: &str) {
    let mut failures = Vec::new();
    for path in examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let options = CompileOptions {
            sync,
            alias,
            preset: Some(preset.into()),
            ..CompileOptions::default()
        };
        let r = run(&source, &options, Vec::new(), 7);
        // `bound` must be a lower bound of the simulated run, or bound/cycles (the
        // README's figure of merit) would flatter the compiler.
        // Every set of a flag happens after the wait of its previous set, whatever the
        // timing (rebuilt from the trace, independently of insert-sync's ids).
        let unordered = match &r.compile.program {
            Some(program) => unordered_flag_reuses(program, &r.sim.trace, &r.sim.flags),
            None => Vec::new(),
        };
        // Every pipe's busy and idle cycles add up to the run (`stalls`), and its busy
        // part is what the pipe totals say.
        let stalls_add_up = r.sim.stalls.len() == r.sim.pipes.len()
            && r.sim.stalls.iter().zip(&r.sim.pipes).all(|(s, p)| {
                s.pipe == p.pipe
                    && s.total() == r.sim.cycles
                    && s.busy + s.shared_bandwidth == p.busy
            });
        let ok = stalls_add_up
            && r.diagnostics.is_empty()
            && r.sim.errors.is_empty()
            && r.sim.races.is_empty()
            && r.reference_match
            && r.bound <= r.sim.cycles
            // The path bound lies between: it adds fill and drain to the bound, and the
            // run is one of the schedules it ranges over.
            && r.path_bound.is_some_and(|p| r.bound <= p && p <= r.sim.cycles)
            // The roofline is what no program beats, this one's bound included; every
            // example moves data.
            && r.roofline.cycles <= r.bound
            && r.roofline.gm_cycles > 0
            && unordered.is_empty();
        if !ok {
            failures.push(format!(
                "{} on {preset}: stalls add up {stalls_add_up} roofline {:?} bound {} path bound {:?} cycles {} diags {:?} errors {:?} races {} match {} err {} unordered flags {unordered:?} outputs {:?}",
                path.display(),
                r.roofline,
                r.bound,
                r.path_bound,
                r.sim.cycles,
                r.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>(),
                r.sim.errors.iter().map(|e| &e.message).collect::<Vec<_>>(),
                r.sim.races.len(),
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
fn every_example_matches_the_interpreter_with_coarse_aliasing() {
    check_alias(SyncStrategy::Auto, AliasMode::Coarse, "a3");
    check_alias(SyncStrategy::Barrier, AliasMode::Coarse, "a3");
}

/// Coarse aliasing (every buffer of a memory space and every tensor one region) orders
/// more than precise aliasing needs: never a faster kernel. Its pair count is not
/// larger everywhere: where all of UB is one region, one MTE3 -> MTE2 pair (a chain
/// through the other pipes) orders what precise aliasing orders with a pair per slot,
/// and the pipes take turns instead of overlapping.
#[test]
fn coarse_aliasing_is_never_faster_than_precise() {
    let mut slower = Vec::new();
    for path in examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let with = |alias| {
            let options = CompileOptions {
                alias,
                ..CompileOptions::default()
            };
            run(&source, &options, Vec::new(), 7)
        };
        let (precise, coarse) = (with(AliasMode::Precise), with(AliasMode::Coarse));
        for r in [&precise, &coarse] {
            assert!(
                r.diagnostics.is_empty() && r.sim.races.is_empty() && r.sim.errors.is_empty(),
                "{}",
                path.display()
            );
            assert!(r.reference_match, "{}", path.display());
        }
        let alias = |r: &tilescope::run::RunResult| r.compile.sync.as_ref().map(|s| s.alias);
        assert_eq!(alias(&precise), Some(AliasMode::Precise));
        assert_eq!(alias(&coarse), Some(AliasMode::Coarse));
        if coarse.sim.cycles < precise.sim.cycles {
            slower.push(format!(
                "{}: precise {} cycles, coarse {}",
                path.display(),
                precise.sim.cycles,
                coarse.sim.cycles
            ));
        }
    }
    assert!(slower.is_empty(), "{}", slower.join("\n"));
}

/// The read-modify-write of disjoint row blocks: with precise aliasing the load of
/// block i + 1 need not wait for the store of block i, so `auto` beats `barrier` (which
/// treats a GM access as touching its whole tensor) by at least 1.2x on a3.
#[test]
fn precise_aliasing_overlaps_a_read_modify_write_of_disjoint_blocks() {
    let source = include_str!("../../static/examples/rmw.tile");
    let with = |sync, alias| {
        let options = CompileOptions {
            sync,
            alias,
            preset: Some("a3".into()),
            ..CompileOptions::default()
        };
        let r = run(source, &options, Vec::new(), 7);
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        assert!(r.sim.races.is_empty() && r.sim.errors.is_empty());
        assert!(r.reference_match);
        r.sim.cycles
    };
    let precise = with(SyncStrategy::Auto, AliasMode::Precise);
    let coarse = with(SyncStrategy::Auto, AliasMode::Coarse);
    let barrier = with(SyncStrategy::Barrier, AliasMode::Precise);
    assert!(
        barrier as f64 >= 1.2 * precise as f64,
        "auto {precise} vs barrier {barrier}"
    );
    assert!(
        coarse as f64 >= 1.2 * precise as f64,
        "precise {precise} vs coarse {coarse}"
    );
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
    assert!(!r.sim.races.is_empty(), "no races reported without sync");
    assert_eq!(r.sim.syncs, 0);
}

/// A race in on-chip memory names the tile there as the student wrote it, not only its
/// address: every example, run without sync.
#[test]
fn an_on_chip_race_names_its_tile() {
    let options = CompileOptions {
        sync: SyncStrategy::None,
        ..CompileOptions::default()
    };
    let mut unnamed = Vec::new();
    for path in examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let r = run(&source, &options, Vec::new(), 7);
        for race in r.sim.races.iter().filter(|r| r.space != MemSpace::GM) {
            let named = race.buffer.as_deref().filter(|b| {
                !b.is_empty() && !b.starts_with('%') && race.message.contains(&format!("`{b}`"))
            });
            if named.is_none() {
                unnamed.push(format!("{}: {}", path.display(), race.message));
            }
        }
    }
    assert!(unnamed.is_empty(), "{}", unnamed.join("\n"));
    let softmax = include_str!("../../static/examples/softmax.tile");
    let r = run(softmax, &options, Vec::new(), 7);
    let first = r
        .sim
        .races
        .first()
        .map(|r| r.message.as_str())
        .unwrap_or_default();
    assert!(
        first.starts_with("V reads `t` (ub[0x0..0x4000)) at #6 written by MTE2 at #5"),
        "{first}"
    );
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
    assert!(auto.sim.syncs > 0);
    assert!(
        auto.sim.cycles < barrier.sim.cycles,
        "{} vs {}",
        auto.sim.cycles,
        barrier.sim.cycles
    );
    assert!(auto.bound > 0 && auto.bound <= auto.sim.cycles);
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
        "path_bound",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
}

/// Auto sync is never slower than barriers on the gallery, on either preset, except
/// where a few cycles of its own fixed costs show on a short run: each named here with
/// the cycles it loses now, which may shrink and never grow.
/// - `scatter` (teach, 1 cycle): the store waits on two flags, and waits first on the
///   one set later, a cycle a barrier does not spend.
/// - `block_permute` (teach, 6): priming the two store-to-load flags before the loop
///   and draining them after it, where barriers cost nothing.
/// - `silu_and_mul` (teach, 7): the vector pipe, the bottleneck, runs a set or wait
///   per hand-off, where barriers cost the scalar pipe.
#[test]
fn auto_sync_is_never_slower_than_barriers_on_the_gallery() {
    let known = [
        ("scatter", "teach", 1),
        ("block_permute", "teach", 6),
        ("silu_and_mul", "teach", 7),
    ];
    let mut slower = Vec::new();
    for example in tilescope::examples::ALL {
        for preset in ["teach", "a3"] {
            let with = |sync| run_with(example.source, preset, sync).sim.cycles;
            let (auto, barrier) = (with(SyncStrategy::Auto), with(SyncStrategy::Barrier));
            let allowed = known
                .iter()
                .find(|k| (k.0, k.1) == (example.name, preset))
                .map_or(0, |k| k.2);
            if auto > barrier + allowed {
                slower.push(format!(
                    "{} on {preset}: auto {auto}, barrier {barrier}",
                    example.name
                ));
            }
        }
    }
    assert!(slower.is_empty(), "{}", slower.join("\n"));
}
