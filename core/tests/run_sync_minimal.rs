//! Every set/wait pair `auto` sync inserts into an example is needed: deleting any one
//! of them makes the simulator report a race or a flag error. A redundant pair would mean
//! lowering annotated an access too coarsely (or insert-sync ordered what needs no order).
//!
//! The same check as `sync_support::assert_sync_minimal`, but simulated on the kernel's
//! own seeded inputs, so gathers and scatters get valid indices.

mod examples_support;

use tilescope::compile::{compile_with_context, AliasMode, CompileOptions};
use tilescope::passes::emit::emit;
use tilescope::passes::sync::{without_pair, HazardKind, Reason};
use tilescope::sim::{simulate, SimMode};
use tilescope::types::Pipe;

/// The pairs `auto` inserts into `source` whose deletion leaves the simulation clean,
/// and how many pairs were checked.
fn redundant_pairs(name: &str, source: &str, options: &CompileOptions) -> (usize, Vec<String>) {
    let mut redundant = Vec::new();
    let mut checked = 0;
    let (result, cx) = compile_with_context(source, options);
    assert!(result.ok(), "{name}: {:?}", result.diagnostics);
    let machine = cx.machine();
    let hir = cx.hir.as_ref().expect("checked kernel");
    let inputs = tilescope::inputs::prepare(hir, Vec::new(), 3).expect("inputs");
    let synced = cx.lowered.as_ref().expect("lowered program");
    let report = cx.sync_report.as_ref().expect("sync report");
    let program = emit(synced, &machine).expect("emits");
    let inputs = tilescope::inputs::with_scratch(&program, inputs);
    let whole = simulate(&program, &machine, inputs.clone(), SimMode::FULL);
    assert!(
        whole.races.is_empty() && whole.errors.is_empty(),
        "{name}: auto is not clean"
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
                "{name}: pair {k} ({} -> {}, ids {:?}, {:?})",
                pair.src, pair.dst, pair.ids, pair.reason
            ));
        }
    }
    (checked, redundant)
}

#[test]
fn every_pair_auto_inserts_into_an_example_is_needed() {
    let mut redundant = Vec::new();
    let mut checked = 0;
    for path in examples_support::examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let name = path.display().to_string();
        let (n, r) = redundant_pairs(&name, &source, &CompileOptions::default());
        checked += n;
        redundant.extend(r);
    }
    // Every example but the purely sequential ones has cross-pipe pairs to delete.
    assert!(checked >= 60, "only {checked} pairs checked");
    // insert-sync cannot know which way a branch on data goes; block-sparse attention
    // always keeps key block 0 (`|| j == 0`), and its inputs keep others. Two pairs
    // that order each row block's buffers against the next row block are needed only
    // on a path that skips every key block, which these inputs never take: the output
    // tile's (MTE3 -> V) and the query block's in L1 (MTE1 -> MTE2; on a path that
    // runs a key block, that block's own pairs inside the `if` order it).
    let known = [
        "block_sparse_attention.tile: pair 14 (MTE1 -> MTE2",
        "block_sparse_attention.tile: pair 17 (MTE3 -> V",
    ];
    let (expected, unexpected): (Vec<&String>, Vec<&String>) = redundant
        .iter()
        .partition(|r| known.iter().any(|k| r.contains(k)));
    assert!(
        unexpected.is_empty(),
        "redundant pairs:\n{}",
        unexpected
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(
        expected.len(),
        known.len(),
        "the known redundant pairs changed: {expected:?}"
    );
}

/// FIX writing GM (fix-to-gm) is ordered against the matrix unit refilling L0C and
/// against later stores to the same tensor, and by nothing more: row blocks with a
/// tail, cast to f16, on `teach` (where the direct store is chosen inside loops).
#[test]
fn every_pair_around_stores_from_l0c_is_needed() {
    let source = "kernel k(a: f32[40, 32], w: f32[32, 48], y: out f16[40, 48]) {
    let wt = load w[:, :];
    for i in 0..40 step 16 @buffers(2) {
        let x = load a[i .. i + 16, :];
        store y[i .. i + 16, :] = (x @ wt) as f16;
    }
}";
    let options = CompileOptions {
        preset: Some("teach".into()),
        ..CompileOptions::default()
    };
    let (result, _) = compile_with_context(source, &options);
    let asm = result.asm.unwrap_or_default();
    assert!(asm.contains("fix.f16 y["), "no FIX to GM:\n{asm}");
    let (checked, redundant) = redundant_pairs("row blocks", source, &options);
    assert!(checked >= 2, "only {checked} pairs checked");
    assert!(
        redundant.is_empty(),
        "redundant pairs:\n{}",
        redundant.join("\n")
    );
}

/// A placed pair: (src, dst, kind, buffer, back edge).
type Placed = (Pipe, Pipe, Option<HazardKind>, Option<String>, bool);

/// The pairs of `source` under `auto` (precise aliasing).
fn pairs_of(source: &str) -> Vec<Placed> {
    let (result, _) = compile_with_context(source, &CompileOptions::default());
    assert!(result.ok(), "{:?}", result.diagnostics);
    let report = result.sync.as_ref().expect("sync report");
    report
        .pairs
        .iter()
        .map(|p| {
            (
                p.src,
                p.dst,
                p.hazard,
                p.buffer.clone(),
                p.loop_carried.is_some(),
            )
        })
        .collect()
}

fn assert_needed(name: &str, source: &str) {
    let (checked, redundant) = redundant_pairs(name, source, &CompileOptions::default());
    assert!(checked >= 1, "{name}: no pair checked");
    assert!(
        redundant.is_empty(),
        "redundant pairs:\n{}",
        redundant.join("\n")
    );
}

/// Precise aliasing compares the rows each GM access touches per iteration: the load and
/// the store of the same rows in one iteration overlap, so the write after read on `y`
/// keeps its own MTE2 -> MTE3 pair (the store's value `c` was loaded before the loop,
/// so no data dependence orders them), and deleting it is a race.
#[test]
fn a_load_then_a_store_of_the_same_rows_in_one_iteration_keeps_its_pair() {
    let source = "kernel k(x: f32[16, 32], y: out f32[64, 32], z: out f32[64, 32]) {
    let c = load x[:, :];
    for r in 0..64 step 16 {
        let t = load y[r .. r + 16, :];
        store y[r .. r + 16, :] = c;
        store z[r .. r + 16, :] = t;
    }
}";
    let pairs = pairs_of(source);
    assert!(
        pairs.iter().any(|(s, d, k, b, _)| *s == Pipe::MTE2
            && *d == Pipe::MTE3
            && *k == Some(HazardKind::War)
            && b.as_deref() == Some("y")),
        "no WAR pair on y: {pairs:#?}"
    );
    assert_needed("same rows in one iteration", source);
}

/// Rows stored by one iteration and loaded by the next (`y[r + 16]` from `y[r]`) overlap
/// across the back edge: the read after write keeps a loop-carried MTE3 -> MTE2 pair.
#[test]
fn a_store_read_by_the_next_iteration_keeps_its_back_edge_pair() {
    let source = "kernel k(x: f32[80, 32], y: out f32[80, 32]) {
    for r in 0..64 step 16 @buffers(2) {
        let t = load y[r .. r + 16, :];
        let u = load x[r .. r + 16, :];
        store y[r + 16 .. r + 32, :] = t + u;
    }
}";
    let pairs = pairs_of(source);
    assert!(
        pairs.iter().any(|(s, d, k, b, carried)| *s == Pipe::MTE3
            && *d == Pipe::MTE2
            && *k == Some(HazardKind::Raw)
            && b.as_deref() == Some("y")
            && *carried),
        "no loop-carried RAW pair on y: {pairs:#?}"
    );
    assert_needed("rows read by the next iteration", source);
}

/// The gallery's read-modify-write: disjoint row blocks across iterations need no
/// MTE3 -> MTE2 pair on `y` (coarse aliasing places one).
#[test]
fn disjoint_row_blocks_across_iterations_need_no_pair() {
    let source = include_str!("../../static/examples/rmw.tile");
    let on_y = |pairs: &[Placed]| {
        pairs.iter().any(|(s, d, _, b, _)| {
            *s == Pipe::MTE3 && *d == Pipe::MTE2 && b.as_deref() == Some("y")
        })
    };
    assert!(!on_y(&pairs_of(source)), "{:#?}", pairs_of(source));
    let coarse = CompileOptions {
        alias: AliasMode::Coarse,
        ..CompileOptions::default()
    };
    let (result, _) = compile_with_context(source, &coarse);
    let report = result.sync.as_ref().expect("sync report");
    assert!(
        report
            .pairs
            .iter()
            .any(|p| p.src == Pipe::MTE3 && p.dst == Pipe::MTE2),
        "coarse has no MTE3 -> MTE2 pair: {:#?}",
        report.pairs
    );
    assert_needed("rmw", source);
}

/// Inner loops whose bounds depend on the outer loop run zero times on some outer
/// iterations (the first loop at `i = 0`, the second at `i = 48`): each pair auto
/// inserts is still needed, on the paths where the loop runs and where it does not.
#[test]
fn every_pair_around_loops_that_may_run_zero_times_is_needed() {
    let source = include_str!("kernels/triangular.tile");
    assert_needed("triangular loops", source);
}

/// Branches on the loop variables run on some iterations and not others: an `else if`
/// chain, and causal attention that masks only the key blocks crossing the diagonal.
/// Each pair auto inserts is needed on the paths the iterations take.
///
/// Not every branching kernel passes this: insert-sync does not know which way each
/// branch goes, so a pair needed only on paths the inputs never take stays (a branch
/// that always runs between two runs of another orders them by its own pairs), as in
/// `kernels/branches.tile`.
#[test]
fn every_pair_around_branches_is_needed() {
    assert_needed("branch chain", include_str!("kernels/branch_chain.tile"));
    let keep =
        "            let keep = iota(i32[BQ, BK], axis=0) + i >= iota(i32[BQ, BK], axis=1) + j;\n";
    let select = "            let sm = where(keep, s, -inf);\n";
    let causal = include_str!("../../static/examples/causal_attention.tile");
    let diagonal = causal.replace(
        &format!("{keep}{select}"),
        &format!(
            "            let sm = s;\n            if j + BK > i + 1 {{\n    {keep}                sm = where(keep, s, -inf);\n            }}\n"
        ),
    );
    assert_ne!(causal, diagonal);
    assert_needed("causal attention masked on the diagonal", &diagonal);
}
