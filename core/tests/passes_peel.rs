//! peel-first: a loop whose body needs a loop-invariant load only late gets its first
//! iteration peeled, with that load moved to its first use in the copy, so the first
//! iteration's own load is issued first. It happens where the cost model says it gains,
//! not elsewhere; the peeled kernel matches the reference interpreter with no race and
//! runs in fewer cycles than the same pipeline without the pass. Where it peels and
//! what it leaves alone is checked in `core/filetests/peel-first/`.

use tilescope::compile::{compile, CompileOptions};
use tilescope::passes::{pipeline, Context, PassManager};
use tilescope::run::run;
use tilescope::sim::{simulate, SimMode};

fn example(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../static/examples/{name}.tile",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the example")
}

fn record(source: &str, pass: &str) -> tilescope::passes::PassRecord {
    let result = compile(source, &CompileOptions::default());
    assert!(result.diagnostics.is_empty(), "{:#?}", result.diagnostics);
    result
        .passes
        .into_iter()
        .find(|p| p.name == pass)
        .expect("the pass ran")
}

/// Runs `source` under `auto` sync and asserts it matches the reference with no race
/// and no simulation error.
fn clean_run(source: &str, seed: u64) -> tilescope::run::RunResult {
    let r = run(source, &CompileOptions::default(), Vec::new(), seed);
    assert!(
        r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty(),
        "{source}\n{:?} {:?} {:?}",
        r.diagnostics,
        r.sim.races,
        r.sim.errors
    );
    r
}

/// Simulated cycles of `source` compiled by the default pipeline, with or without
/// peel-first; asserts the run is clean and matches the reference.
fn cycles(source: &str, peel: bool) -> u64 {
    if peel {
        return clean_run(source, 5).sim.cycles;
    }
    let mut cx = Context::new(source, None);
    cx.auto_multi_buffer = CompileOptions::default().auto_multi_buffer;
    let passes = pipeline()
        .into_iter()
        .filter(|p| p.name() != "peel-first")
        .collect();
    let (_, outcome) = PassManager::new(passes, true, None).run(&mut cx);
    assert!(outcome.is_ok(), "{outcome:?}");
    let machine = cx.machine();
    let hir = cx.hir.as_ref().expect("checked kernel");
    let inputs = tilescope::inputs::prepare(hir, Vec::new(), 5).expect("inputs");
    let program = cx.program.as_ref().expect("a program");
    let sim = simulate(program, &machine, inputs, SimMode::FULL);
    assert!(sim.races.is_empty() && sim.errors.is_empty());
    sim.cycles
}

#[test]
fn peeling_wins_where_it_is_made() {
    for name in ["rmsnorm", "matmul_bias_gelu", "layernorm"] {
        let source = example(name);
        assert!(record(&source, "peel-first").changed, "{name}");
        let (with, without) = (cycles(&source, true), cycles(&source, false));
        assert!(
            with < without,
            "{name}: {with} cycles peeled, {without} not"
        );
    }
}

#[test]
fn loops_with_carried_values_or_one_iteration_match_the_reference() {
    // peel-first leaves both loops alone (core/filetests/peel-first/).
    let carried = "kernel k(x: f32[32, 512], w: f32[1, 512], y: out f32[1, 512]) {
    let wt = load w[:, :];
    let acc = zeros(f32[1, 512]);
    for r in 0..32 step 8 {
        let t = load x[r .. r + 8, :];
        acc += sum(exp(t) * 2.0, axis=0) * wt;
    }
    store y[:, :] = acc;
}
";
    let one = "kernel k(x: f32[8, 512], w: f32[1, 512], y: out f32[8, 512]) {
    let wt = load w[:, :];
    for r in 0..8 step 8 {
        let t = load x[r .. r + 8, :];
        store y[r .. r + 8, :] = exp(exp(t)) * wt;
    }
}
";
    for source in [carried, one] {
        assert!(run(source, &CompileOptions::default(), Vec::new(), 1).reference_match);
    }
}

#[test]
fn a_peeled_body_with_a_nested_loop_matches_the_reference() {
    // The copy gets its own nested loop (a fresh loop variable and carried value):
    // core/filetests/peel-first/peeled-body-copies-its-nested-loop.tir.
    let source =
        "kernel k(x: f32[32, 256], w: f32[1, 256], y: out f32[32, 256], s: out f32[32, 1]) {
    let wt = load w[:, :];
    for r in 0..32 step 8 {
        let t = load x[r .. r + 8, :];
        let m = amax(t, axis=1);
        store y[r .. r + 8, :] = exp(t - m) * wt;
        let acc = zeros(f32[8, 1]);
        for c in 0..2 {
            let p = load x[r .. r + 8, c * 128 .. c * 128 + 128];
            acc += sum(p, axis=1);
        }
        store s[r .. r + 8, :] = acc;
    }
}
";
    clean_run(source, 4);
}

#[test]
fn peeled_kernels_match_the_reference() {
    let kernels = [
        // A tail iteration, an index computed from the loop variable, and a nested loop.
        "kernel k(x: f32[36, 256], w: f32[1, 256], y: out f32[36, 256]) {
    let wt = load w[:, :];
    for r in 0..36 step 8 {
        let t = load x[r .. r + 8, :];
        let m = amax(t, axis=1);
        store y[r .. r + 8, :] = exp(t - m) * wt;
    }
}
",
        "kernel k(x: f32[128, 256], w: f32[1, 256], y: out f32[128, 256]) {
    let wt = load w[:, :];
    for b in 0..4 {
        for r in 0..32 step 8 {
            let t = load x[b * 32 + r .. b * 32 + r + 8, :];
            let s = sum(t * t, axis=1);
            store y[b * 32 + r .. b * 32 + r + 8, :] = t * rsqrt(s + 1.0) * wt;
        }
    }
}
",
        // The loop stores to the tensor the invariant load reads: the load may not
        // move past the peeled store.
        "kernel k(x: f32[32, 256], w: out f32[8, 256]) {
    let wt = load w[0 .. 1, :];
    for r in 0..32 step 8 {
        let t = load x[r .. r + 8, :];
        store w[:, :] = exp(exp(t)) + wt;
    }
}
",
    ];
    for source in kernels {
        clean_run(source, 2);
    }
}

/// A loop peel-first would peel but whose trip count depends on an outer loop is left
/// as written, and the pass says so at the loop; the same loop with a constant count
/// is peeled with no note.
#[test]
fn a_loop_whose_count_varies_keeps_its_first_iteration_with_a_note() {
    let kernel = |range: &str| {
        format!(
            "kernel rmsnorm(x: f16[32, 512], w: f16[1, 512], y: out f16[32, 512]) {{
    for c in 0..2 {{
        let wt = load w[:, :] as f32;
        for r in {range} step 8 {{
            let t = load x[r .. r + 8, :] as f32;
            let ms = mean(t * t, axis=1);
            store y[r .. r + 8, :] = (t * rsqrt(ms + 1e-6) * wt) as f16;
        }}
    }}
}}"
        )
    };
    let varying = kernel("16 * c .. 8 * c + 24");
    let pass = record(&varying, "peel-first");
    let notes: Vec<String> = pass
        .notes
        .iter()
        .map(|n| format!("{}: {}", n.at, n.message))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("4:9: loop `r_k` keeps its first iteration")
            && notes[0].contains("depends on an outer loop"),
        "{notes:?}"
    );
    assert!(!pass.changed);
    clean_run(&varying, 3);
    // `16 * c .. 16 * c + 16` runs twice on every entry: a constant loop.
    let constant = record(&kernel("16 * c .. 16 * c + 16"), "peel-first");
    assert!(
        constant.changed && constant.notes.is_empty(),
        "{:?}",
        constant.notes
    );
}
