//! Why each sync is there: the rows `--emit sync` prints and the JSON carries, checked
//! by hand on small kernels: a RAW, a WAR on a loop's back edge, ids that follow the
//! slot, the note when event ids run out, and set/wait positions that point at the
//! pair's own instructions in the final program.

use tilescope::compile::{compile, CompileOptions};
use tilescope::explain::{sync_json, sync_rows, sync_table, SyncRow};
use tilescope::isa::Op;
use tilescope::types::Pipe;

const STREAM: &str = "kernel stream(x: f32[256, 16], y: out f32[256, 16]) {
    for r in 0..256 step 8 @buffers(BUF) {
        let t = load x[r .. r + 8, :];
        store y[r .. r + 8, :] = exp(t);
    }
}";

fn rows(source: &str) -> (Vec<SyncRow>, tilescope::compile::CompileResult) {
    let r = compile(source, &CompileOptions::default());
    assert!(r.ok(), "{:?}", r.diagnostics);
    let report = r.sync.as_ref().expect("a sync report");
    (sync_rows(report, r.program.as_ref(), source), r)
}

fn find(rows: &[SyncRow], src: Pipe, dst: Pipe) -> &SyncRow {
    rows.iter()
        .find(|r| r.src == src && r.dst == dst)
        .unwrap_or_else(|| panic!("no {src:?} -> {dst:?} pair in {rows:#?}"))
}

#[test]
fn a_load_then_its_use_is_a_raw_pair_on_the_loaded_tile() {
    let source = STREAM.replace("BUF", "2");
    let (rows, r) = rows(&source);
    assert_eq!(rows.len(), 4, "{rows:#?}");
    let raw = find(&rows, Pipe::MTE2, Pipe::V);
    assert_eq!(raw.kind, "RAW");
    assert_eq!(raw.buffer.as_deref(), Some("t"));
    assert!(!raw.back_edge);
    // The producer is the load on line 3, the consumer the `exp` on line 4.
    assert_eq!((raw.producer.line, raw.producer.col), (Some(3), Some(17)));
    assert_eq!(raw.consumer.line, Some(4));
    // Its set and wait are the pair's own instructions.
    let program = r.program.as_ref().expect("a program");
    let (set, wait) = (raw.set_index.expect("set"), raw.wait_index.expect("wait"));
    assert!(matches!(
        program.instrs[set].op,
        Op::SetFlag {
            src: Pipe::MTE2,
            dst: Pipe::V,
            ..
        }
    ));
    assert!(matches!(
        program.instrs[wait].op,
        Op::WaitFlag {
            src: Pipe::MTE2,
            dst: Pipe::V,
            ..
        }
    ));
    assert!(set < wait);
}

#[test]
fn reusing_a_slot_is_a_war_pair_on_the_back_edge_with_ids_per_slot() {
    let source = STREAM.replace("BUF", "2");
    let (rows, _) = rows(&source);
    let war = find(&rows, Pipe::V, Pipe::MTE2);
    assert_eq!(war.kind, "WAR");
    assert_eq!(war.buffer.as_deref(), Some("t"));
    assert!(war.back_edge);
    // Two slots: the id follows the slot of `t`.
    assert!(war.dynamic);
    assert_eq!(war.events, vec![war.event, war.event + 1]);
    // The hazard is on `t`'s two UB slots of 8 x 16 f32 each, which do not overlap.
    let region = war.region.as_ref().expect("t's bytes");
    assert_eq!(region.space, tilescope::types::MemSpace::UB);
    let [(a0, a1), (b0, b1)] = region.slots[..] else {
        panic!("two slots: {region:?}");
    };
    assert_eq!((a1 - a0, b1 - b0), (512, 512));
    assert!(a1 <= b0 || b1 <= a0, "{region:?}");
    // The wait comes before the next iteration's load, so before its set in the body.
    assert!(war.wait_index < war.set_index);
}

#[test]
fn running_out_of_event_ids_is_a_note() {
    let source = STREAM.replace("BUF", "16");
    let r = compile(&source, &CompileOptions::default());
    let json = sync_json(&r, &source);
    let notes = json["notes"].as_array().expect("notes");
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.contains("event ids ran out") && n.contains("8 ids for 16 slots"))),
        "{notes:?}"
    );
    assert_eq!(json["pairs"][0]["events"].as_array().map(Vec::len), Some(8));
    let table = sync_table(&r, &source, "stream.tile");
    assert!(table.contains("note: event ids ran out"), "{table}");
    assert!(table.contains("stream.tile:3:17"), "{table}");
}

#[test]
fn every_example_explains_every_pair_it_places() {
    for e in tilescope::examples::ALL {
        let r = compile(e.source, &CompileOptions::default());
        let report = r.sync.as_ref().expect("a sync report");
        let rows = sync_rows(report, r.program.as_ref(), e.source);
        for row in &rows {
            assert!(
                row.set_index.is_some() && row.wait_index.is_some(),
                "{}: {row:?}",
                e.name
            );
            assert!(
                row.kind == "flag-reuse" || row.buffer.is_some(),
                "{}: a hazard without its buffer {row:?}",
                e.name
            );
        }
        // The positions are all different instructions.
        let mut at: Vec<usize> = rows
            .iter()
            .flat_map(|r| [r.set_index, r.wait_index])
            .flatten()
            .collect();
        let n = at.len();
        at.sort_unstable();
        at.dedup();
        assert_eq!(at.len(), n, "{}: two rows claim one instruction", e.name);
    }
}

/// The JSON option `"alias"` selects the alias analysis, and the sync object echoes it.
#[test]
fn the_alias_option_reads_from_json_and_the_sync_object_echoes_it() {
    use tilescope::compile::AliasMode;
    let options: CompileOptions =
        serde_json::from_str(r#"{ "alias": "coarse" }"#).expect("options parse");
    assert_eq!(options.alias, AliasMode::Coarse);
    let default: CompileOptions = serde_json::from_str("{}").expect("options parse");
    assert_eq!(default.alias, AliasMode::Precise);
    assert!(serde_json::from_str::<CompileOptions>(r#"{ "alias": "fuzzy" }"#).is_err());
    let source = STREAM.replace("BUF", "2");
    for (alias, name) in [
        (AliasMode::Precise, "precise"),
        (AliasMode::Coarse, "coarse"),
    ] {
        let r = compile(
            &source,
            &CompileOptions {
                alias,
                ..CompileOptions::default()
            },
        );
        assert!(r.ok(), "{:?}", r.diagnostics);
        let json = sync_json(&r, &source);
        assert_eq!(json["alias"], name);
        assert!(sync_table(&r, &source, "k.tile").contains(&format!("{name} aliasing")));
    }
}

/// Five double-buffered loops want two ids each for their slot-following MTE2 -> V and
/// V -> MTE3 pairs, ten of the 8 per pipe pair (ids of pairs in loops are not
/// recycled). The pairs reduced to one id then let a set come before the wait of its
/// flag's previous use, which the walk with the allocated ids sees: the pass falls back
/// to barriers and says why (it reported an internal error before).
#[test]
fn ids_too_few_to_order_the_program_fall_back_to_barriers_with_a_note() {
    let mut source = String::from("kernel k(x: f32[40, 16], y: out f32[40, 16]) {\n");
    for l in 0..5 {
        source.push_str(&format!(
            "    for i in 0..2 {{\n        store y[{0} + 4 * i .. {0} + 4 * i + 4, :] = exp(load x[{0} + 4 * i .. {0} + 4 * i + 4, :]) * 0.5;\n    }}\n",
            8 * l
        ));
    }
    source.push('}');
    let r = tilescope::run::run(&source, &CompileOptions::default(), Vec::new(), 1);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty());
    let notes = r
        .compile
        .sync
        .as_ref()
        .expect("a sync report")
        .notes
        .join("\n");
    let why = "event ids ran out (8 per pipe pair) and the ids left do not order the program";
    assert!(
        notes.contains(&format!("{why}; used barriers instead")),
        "{notes}"
    );
}

/// A two-slot loop and seven straight-line load-compute-store chains want more than 8
/// ids on MTE2 -> V and V -> MTE3; this fell back to barriers, as above, before
/// straight-line pairs reused ids. Now an id of a chain whose wait comes first is
/// reused behind a flag-reuse pair, and the notes say so without a fallback.
#[test]
fn straight_line_chains_after_a_loop_reuse_ids_instead_of_falling_back() {
    let mut source = String::from(
        "kernel k(x: f32[36, 16], y: out f32[36, 16]) {\n    for i in 0..2 {\n        store y[4 * i .. 4 * i + 4, :] = exp(load x[4 * i .. 4 * i + 4, :]) * 0.5;\n    }\n",
    );
    for t in 2..9 {
        source.push_str(&format!(
            "    store y[{0} .. {1}, :] = exp(load x[{0} .. {1}, :]) * 0.5;\n",
            4 * t,
            4 * t + 4
        ));
    }
    source.push('}');
    let r = tilescope::run::run(&source, &CompileOptions::default(), Vec::new(), 1);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty());
    let report = r.compile.sync.as_ref().expect("a sync report");
    let notes = tilescope::explain::notes(report);
    assert!(notes.iter().all(|n| !n.contains("ran out")), "{notes:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("event ids for MTE2 -> V are reused")),
        "{notes:?}"
    );
    assert_eq!(report.barriers, 0);
    let table = sync_table(&r.compile, &source, "k.tile");
    assert!(table.contains("flag-reuse"), "{table}");
}

#[test]
fn a_temporary_goes_by_the_expression_that_made_it() {
    // `exp(t)` is a tile with no name of its own: the V -> MTE3 pair is on it, and the
    // row says which tile in the student's words, not the IR's `%0`.
    let source = STREAM.replace("BUF", "2");
    let (rows, _) = rows(&source);
    let store = find(&rows, Pipe::V, Pipe::MTE3);
    assert_eq!(store.buffer.as_deref(), Some("exp(t)"), "{store:#?}");
    assert!(rows
        .iter()
        .all(|r| !r.buffer.as_deref().unwrap_or("").starts_with('%')));
    assert_eq!(
        find(&rows, Pipe::MTE2, Pipe::V).buffer.as_deref(),
        Some("t")
    );
}

/// A pair whose ends run only inside an `if` names their steps, and the step graph
/// gives those steps the branch's condition (what the playground's sync card shows).
#[test]
fn the_ends_of_a_pair_inside_a_branch_name_steps_with_its_condition() {
    let source = "kernel k(x: f32[64, 64], y: out f32[64, 64]) {
    for i in 0..64 step 16 {
        let t = load x[i .. i + 16, :];
        if i < 32 || i == 48 {
            store y[i .. i + 16, :] = exp(t);
        } else {
            store y[i .. i + 16, :] = t;
        }
    }
}";
    let (rows, r) = rows(source);
    let graph = r.steps.as_ref().expect("a step graph");
    let branch = |step: Option<u32>| {
        let step = step?;
        graph.nodes.iter().find(|n| n.id == step)?.branch.clone()
    };
    let out = find(&rows, Pipe::V, Pipe::MTE3);
    assert_eq!(
        branch(out.producer_step).as_deref(),
        Some("i < 32 || i == 48")
    );
    assert_eq!(
        branch(out.consumer_step).as_deref(),
        Some("i < 32 || i == 48")
    );
    // The load runs on every path.
    let load = find(&rows, Pipe::MTE2, Pipe::V);
    assert_eq!(branch(load.producer_step), None);
    assert_eq!(
        branch(load.consumer_step).as_deref(),
        Some("i < 32 || i == 48")
    );
}
