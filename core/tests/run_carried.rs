//! Loop-carried tiles leave SSA correctly: a carried value read after its update, swaps
//! and rotations (a cycle of copies needs a temporary), a manual prefetch, online
//! softmax, nested carried state and an init read after the loop each match the
//! reference under every sync strategy on both presets; out-of-ssa says why each copy
//! is there; and the address-plan verifier catches a plan that shares bytes between
//! values live at the same time (the planner before out-of-ssa, and a plan edited by
//! hand).

use tilescope::compile::{compile, CompileOptions, SyncStrategy};
use tilescope::passes::{self, Context, PassManager};
use tilescope::run::run;

const CARRIED_MAX: &str = "kernel carried(x: f32[64, 16], y: out f32[16, 16]) {
    let m = zeros(f32[16, 16]);
    let d = zeros(f32[16, 16]);
    for i in 0..64 step 16 {
        let t = load x[i .. i + 16, :];
        let mn = maximum(m, t);
        d = d + (mn - m);
        m = mn;
    }
    store y[:, :] = d;
}";

const SWAP: &str = "kernel swap(x: f32[64, 16], y: out f32[16, 16], z: out f32[16, 16]) {
    let a = zeros(f32[16, 16]);
    let b = full(f32[16, 16], 1.0);
    for i in 0..64 step 16 {
        let t = load x[i .. i + 16, :];
        let n = a + b * t;
        a = b;
        b = n;
    }
    store y[:, :] = a;
    store z[:, :] = b;
}";

/// A pure exchange: the back edge's two copies form a cycle.
const EXCHANGE: &str = "kernel exchange(x: f32[48, 16], y: out f32[16, 16], z: out f32[16, 16]) {
    let a = load x[0 .. 16, :];
    let b = full(f32[16, 16], 2.0);
    for i in 0..3 {
        let t = a;
        a = b;
        b = t;
    }
    store y[:, :] = a * 1.5;
    store z[:, :] = b;
}";

/// A rotation of three carried tiles with work between.
const ROTATE: &str =
    "kernel rotate(x: f32[64, 8], y: out f32[8, 8], z: out f32[8, 8], w: out f32[8, 8]) {
    let a = zeros(f32[8, 8]);
    let b = full(f32[8, 8], 1.0);
    let c = full(f32[8, 8], 2.0);
    for i in 0..64 step 8 @buffers(2) {
        let t = load x[i .. i + 8, :];
        let s = a;
        a = b + t;
        b = c;
        c = s * 0.5;
    }
    store y[:, :] = a;
    store z[:, :] = b;
    store w[:, :] = c;
}";

const PREFETCH: &str = "kernel prefetch(x: f32[80, 16], y: out f32[64, 16]) {
    let cur = load x[0 .. 16, :];
    for r in 0..64 step 16 {
        let nxt = load x[r + 16 .. r + 32, :];
        store y[r .. r + 16, :] = exp(cur);
        cur = nxt;
    }
}";

/// Carried state at two levels, and an init that is read again after the loop.
const NESTED: &str = "kernel nested(x: f32[96, 16], y: out f32[16, 16], z: out f32[16, 16]) {
    let base = full(f32[16, 16], 0.5);
    let s = base;
    for o in 0..2 {
        let m = full(f32[16, 16], -inf);
        for i in 0..3 {
            let t = load x[(o * 3 + i) * 16 .. (o * 3 + i) * 16 + 16, :];
            let mn = maximum(m, t);
            s = s + (mn - m) * 0.25;
            m = mn;
        }
        s = s + m;
    }
    store y[:, :] = s;
    store z[:, :] = base + 1.0;
}";

/// Carried tiles of each dtype, including an i32 tile filled with a non-zero constant.
const DTYPES: &str = "kernel dtypes(x: f16[32, 16], u: bf16[32, 16], n: i32[32, 16], y: out f16[8, 16], z: out bf16[8, 16], w: out i32[8, 16]) {
    let a = zeros(f16[8, 16]);
    let b = full(bf16[8, 16], 1.0);
    let c = full(i32[8, 16], 7);
    for i in 0..32 step 8 {
        let na = maximum(a, load x[i .. i + 8, :]);
        b = b * 0.5 + (na - a) as bf16;
        a = na;
        let nc = c + load n[i .. i + 8, :];
        c = nc - c + nc;
    }
    store y[:, :] = a;
    store z[:, :] = b;
    store w[:, :] = c;
}";

/// `=` in a loop with a tail: the masked lanes keep the old value, which is read again
/// after the update, so the update's result has a buffer of its own and the old tile
/// is copied into it first.
const TAIL_SET: &str = "kernel k(x: f32[8, 100], y: out f32[8, 32]) {
    let acc = full(f32[8, 32], 1.0);
    let d = zeros(f32[8, 32]);
    for c in 0..100 step 32 {
        let t = load x[:, c .. c + 32];
        let prev = acc;
        acc = t;
        d = d + prev;
    }
    store y[:, :] = d + acc;
}";

fn flash_attention() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../static/examples/flash_attention.tile"
    ))
    .expect("the flash attention example")
}

fn check_everywhere(name: &str, source: &str) {
    let mut failures = Vec::new();
    for preset in ["a3", "teach"] {
        for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
            let options = CompileOptions {
                preset: Some(preset.into()),
                sync,
                verify: true,
                ..CompileOptions::default()
            };
            let r = run(source, &options, Vec::new(), 11);
            let ok = r.diagnostics.is_empty()
                && r.sim.errors.is_empty()
                && r.sim.races.is_empty()
                && r.reference_match;
            if !ok {
                failures.push(format!(
                    "{name} on {preset} {sync:?}: diags {:?} errors {:?} races {} max abs err {}",
                    r.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>(),
                    r.sim.errors.iter().map(|e| &e.message).collect::<Vec<_>>(),
                    r.sim.races.len(),
                    r.max_abs_err
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_carried_value_read_after_its_update_matches() {
    check_everywhere("carried max", CARRIED_MAX);
}

#[test]
fn swaps_exchanges_and_rotations_match() {
    check_everywhere("swap", SWAP);
    check_everywhere("exchange", EXCHANGE);
    check_everywhere("rotate", ROTATE);
}

#[test]
fn a_manual_prefetch_by_copy_matches() {
    check_everywhere("prefetch", PREFETCH);
}

#[test]
fn online_softmax_attention_matches() {
    check_everywhere("flash attention", &flash_attention());
}

#[test]
fn nested_carried_state_and_a_reused_init_match() {
    check_everywhere("nested", NESTED);
}

#[test]
fn a_masked_update_whose_old_value_is_read_later_matches() {
    check_everywhere("tail set", TAIL_SET);
}

#[test]
fn carried_tiles_of_every_dtype_match() {
    check_everywhere("dtypes", DTYPES);
}

/// The IR after out-of-ssa.
fn after_out_of_ssa(source: &str) -> String {
    let r = compile(source, &CompileOptions::default());
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    r.passes
        .iter()
        .find(|p| p.name == "out-of-ssa")
        .map(|p| p.ir.clone())
        .expect("an out-of-ssa pass record")
}

#[test]
fn every_copy_says_why_it_is_there() {
    let ir = after_out_of_ssa(CARRIED_MAX);
    // The old max is read (for `d`) after the new one is defined: one copy on the back
    // edge, `d` updated in place.
    assert!(
        ir.contains(
            "%m.2 = copy %mn : ub f32[16, 16] !at 4:5  // copy: %m.1 is read after %mn is defined"
        ),
        "{ir}"
    );
    assert_eq!(ir.matches("// copy").count(), 1, "{ir}");

    let ir = after_out_of_ssa(EXCHANGE);
    assert!(
        ir.contains("// copy: temporary breaking a cycle of the back edge's copies"),
        "{ir}"
    );
    assert_eq!(ir.matches("// copy").count(), 3, "{ir}");
}

#[test]
fn an_accumulation_needs_no_copy() {
    let ir = after_out_of_ssa(include_str!("../../static/examples/matmul_tiled.tile"));
    assert!(!ir.contains("// copy"), "{ir}");
    let ir = after_out_of_ssa(include_str!("../../static/examples/tail_reduction.tile"));
    assert!(!ir.contains("// copy"), "{ir}");
}

/// Runs the pipeline up to and including plan-memory, without the passes named in
/// `skip`, verifying after every pass; returns the context and the outcome.
fn plan(source: &str, skip: &[&str]) -> (Context, Result<(), Vec<tilescope::diag::Diagnostic>>) {
    let passes: Vec<Box<dyn passes::AnyPass>> = passes::pipeline()
        .into_iter()
        .filter(|p| !skip.contains(&p.name()))
        .take_while(|p| p.name() != "lower-to-pipes")
        .collect();
    let mut cx = Context::new(source, None);
    cx.auto_multi_buffer = true;
    let (_, outcome) = PassManager::new(passes, true, None).run(&mut cx);
    (cx, outcome)
}

fn messages(d: &[tilescope::diag::Diagnostic]) -> String {
    d.iter()
        .flat_map(|d| std::iter::once(d.message.clone()).chain(d.notes.iter().cloned()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_plan_verifier_catches_the_planner_without_out_of_ssa() {
    // Without out-of-ssa, plan-memory puts the old and new running max in one buffer,
    // the bug that made this kernel compute zeros.
    let (_, outcome) = plan(CARRIED_MAX, &["out-of-ssa"]);
    let err = messages(&outcome.expect_err("the verifier rejects the plan"));
    assert!(
        err.contains("after pass `plan-memory` does not verify"),
        "{err}"
    );
    assert!(err.contains("overlapping bytes of UB"), "{err}");
    assert!(err.contains("while both are live"), "{err}");
    assert!(err.contains("%mn (line 6:"), "{err}");
    // With it, the same plan verifies.
    let (_, outcome) = plan(CARRIED_MAX, &[]);
    assert!(outcome.is_ok(), "{}", messages(&outcome.unwrap_err()));
}

#[test]
fn the_plan_verifier_catches_a_plan_edited_to_overlap() {
    let (mut cx, outcome) = plan(SOFTMAX_LIKE, &[]);
    assert!(outcome.is_ok(), "{}", messages(&outcome.unwrap_err()));
    let machine = cx.machine();
    let k = cx.ir.as_mut().expect("the tile IR");
    let find = |k: &tilescope::ir::Kernel, name: &str| {
        k.values
            .iter()
            .find(|(_, v)| v.name.as_deref() == Some(name))
            .map(|(id, _)| id)
            .expect("a value of that name")
    };
    let (e, s) = (find(k, "e"), find(k, "s"));
    // `e` is still read (by the division) after `s` is defined: give `s` `e`'s bytes.
    let addr = k.values[e].attrs.addresses.clone();
    k.values[s].attrs.addresses = addr.into_iter().take(1).collect();
    let source = cx.source.clone();
    let err = tilescope::ir::verify_plan::verify_plan(
        cx.ir.as_ref().expect("the tile IR"),
        &machine,
        &source,
    )
    .expect_err("an overlapping plan");
    let text: Vec<String> = err.iter().map(ToString::to_string).collect();
    let text = text.join("\n");
    // Located at the later tile, whose definition's span it carries.
    assert!(
        err.iter().any(
            |e| e.location == tilescope::diag::Location::Value("%s".into()) && e.span.is_some()
        ),
        "{err:?}"
    );
    assert!(text.contains("%e (line 4:"), "{text}");
    assert!(text.contains("%s (line 5:"), "{text}");
    assert!(text.contains("while both are live"), "{text}");
}

const SOFTMAX_LIKE: &str = "kernel k(x: f32[16, 64], y: out f32[16, 64]) {
    for r in 0..16 step 8 {
        let t = load x[r .. r + 8, :];
        let e = exp(t);
        let s = sum(e, axis=1);
        store y[r .. r + 8, :] = e / s;
    }
}";
