//! The pass manager's records and verification, and the compile driver's result.

mod ir_support;

use tilescope::compile::{compile, CompileOptions, CompileResult};
use tilescope::diag::Diagnostics;
use tilescope::ir::lower::lower;
use tilescope::passes::{canonicalize::Canonicalize, Context, Pass, PassManager};

fn context(hir: tilescope::front::hir::Kernel) -> Context {
    let mut cx = Context::new("", None);
    cx.ir = Some(lower(&hir).expect("lowers"));
    cx
}

/// Records the IR as it is: stands in for the `parse` pass with a hand-built kernel.
struct Identity;
impl Pass for Identity {
    type In = tilescope::passes::stage::Tile;
    type Out = tilescope::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "identity"
    }
    fn description(&self) -> &'static str {
        "changes nothing"
    }
    fn run(&self, _: &mut Context) -> Result<(), Diagnostics> {
        Ok(())
    }
}

/// Breaks the IR: drops the loop's yields.
struct Breaker;
impl Pass for Breaker {
    type In = tilescope::passes::stage::Tile;
    type Out = tilescope::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "breaker"
    }
    fn description(&self) -> &'static str {
        "drops loop yields"
    }
    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let k = cx.ir_mut(self.name())?;
        let ids: Vec<_> = k.ops.iter().map(|(id, _)| id).collect();
        for id in ids {
            if let tilescope::ir::OpKind::For(l) = &mut k.ops[id].kind {
                l.yields.clear();
            }
        }
        Ok(())
    }
}

/// Used by one test only (tests run in parallel and share the counter).
fn fake_clock() -> f64 {
    // Each call advances 1.5 ms, so every pass measures 1500 us.
    use std::sync::atomic::{AtomicU64, Ordering};
    static TICKS: AtomicU64 = AtomicU64::new(0);
    TICKS.fetch_add(1, Ordering::SeqCst) as f64 * 1.5
}

#[test]
fn records_every_pass_with_text_spans_change_and_time() {
    let mut cx = context(ir_support::softmax());
    let pm = PassManager::new(
        vec![
            Box::new(Identity),
            Box::new(Canonicalize),
            Box::new(Canonicalize),
        ],
        true,
        Some(fake_clock),
    );
    let (records, outcome) = pm.run(&mut cx);
    assert!(outcome.is_ok());
    let names: Vec<&str> = records.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["identity", "canonicalize", "canonicalize"]);
    assert_eq!(
        records.iter().map(|r| r.changed).collect::<Vec<_>>(),
        [true, true, false]
    );
    assert!(records[1].ir.contains("fused(%t, %m)"));
    for r in &records {
        assert_eq!(r.ir.lines().count(), r.lines.len());
        assert_eq!(r.micros, 1500);
        assert!(!r.description.is_empty());
    }
}

#[test]
fn without_a_clock_durations_are_zero() {
    let mut cx = context(ir_support::matmul());
    let (records, _) = PassManager::new(vec![Box::new(Canonicalize)], true, None).run(&mut cx);
    assert_eq!(records[0].micros, 0);
}

#[test]
fn verifier_failure_is_an_internal_error_naming_the_pass() {
    let mut cx = context(ir_support::colsum_tail());
    let pm = PassManager::new(
        vec![
            Box::new(Canonicalize),
            Box::new(Breaker),
            Box::new(Canonicalize),
        ],
        true,
        None,
    );
    let (records, outcome) = pm.run(&mut cx);
    let diags = outcome.expect_err("broken IR is reported");
    assert!(
        diags[0].message.contains("internal error") && diags[0].message.contains("`breaker`"),
        "{diags:?}"
    );
    assert!(
        diags[0].notes.iter().any(|n| n.contains("arity")),
        "{diags:?}"
    );
    assert_eq!(
        records.len(),
        2,
        "the broken IR is still shown; later passes do not run"
    );
}

/// A pass given no tile IR fails cleanly: the manager refuses to run it at the wrong
/// stage, and run by itself it reports what it needs.
#[test]
fn a_pass_without_ir_fails_cleanly() {
    let mut cx = Context::new("", None);
    let (records, outcome) =
        PassManager::new(vec![Box::new(Canonicalize)], true, None).run(&mut cx);
    assert!(records.is_empty());
    assert_eq!(
        outcome.expect_err("no IR")[0].message,
        "internal error: before pass `canonicalize` the program is the source, not the tile IR"
    );
    let direct = Canonicalize.run(&mut cx).expect_err("no IR");
    assert!(
        direct[0].message.contains("needs the tile IR"),
        "{direct:?}"
    );
}

#[test]
fn front_end_error_gives_diagnostics_and_no_passes() {
    // Not a valid kernel whatever the parser's state: an unterminated kernel.
    let result = compile("kernel k(x: f32[4]) {", &CompileOptions::default());
    assert!(result.passes.is_empty());
    assert!(!result.diagnostics.is_empty());
    assert!(!result.ok());
}

#[test]
fn compile_result_round_trips_through_json() {
    let mut cx = context(ir_support::softmax());
    let (passes, _) =
        PassManager::new(vec![Box::new(Identity), Box::new(Canonicalize)], true, None).run(&mut cx);
    let result = CompileResult {
        kernels: vec!["softmax".into(), "other".into()],
        kernel: Some("softmax".into()),
        passes,
        diagnostics: vec![tilescope::diag::Diagnostic::error(
            "example",
            tilescope::diag::Span::new(3, 9),
        )],
        ..CompileResult::default()
    };
    let json = serde_json::to_string(&result).expect("serialises");
    let back: CompileResult = serde_json::from_str(&json).expect("deserialises");
    assert_eq!(back, result);
    // Consumers written against fewer fields still read it, and missing fields default.
    let sparse: CompileResult = serde_json::from_str(r#"{"kernels": ["k"]}"#).expect("defaults");
    assert_eq!(sparse.kernels, ["k"]);
    assert!(sparse.passes.is_empty());
}

#[test]
fn options_deserialise_with_defaults() {
    let o: CompileOptions =
        serde_json::from_str(r#"{"kernel": "k", "sync": "barrier"}"#).expect("options");
    assert_eq!(o.kernel.as_deref(), Some("k"));
    assert_eq!(o.sync, tilescope::compile::SyncStrategy::Barrier);
    assert!(o.auto_multi_buffer);
    assert!(o.clock.0.is_some(), "native default clock");
}

/// A pass that runs part of the pipeline again asks for the range by name, and gets
/// the passes the compile runs: without the disabled ones, never an empty range for a
/// name that is not there.
#[test]
fn a_range_of_the_pipeline_is_the_compile_s_own() {
    let names = |disabled: &[&str]| {
        let disabled: Vec<String> = disabled.iter().map(|d| d.to_string()).collect();
        tilescope::passes::between("software-pipeline", "lower-to-pipes", &disabled)
            .map(|ps| ps.iter().map(|p| p.name()).collect::<Vec<_>>())
    };
    let all = names(&[]).expect("a range");
    assert_eq!(all.first(), Some(&"peel-first"));
    assert_eq!(all.last(), Some(&"plan-memory"));
    let without = names(&["peel-first"]).expect("a range");
    assert_eq!(without.first(), Some(&"sink-to-use"));
    assert_eq!(without.len() + 1, all.len());
    let swapped = tilescope::passes::between("lower-to-pipes", "software-pipeline", &[]);
    assert!(swapped.is_err());
    let unknown = tilescope::passes::between("software-pipeline", "no-such-pass", &[]);
    assert!(unknown.is_err());
}

/// Every pass names the stage it reads and leaves; the pipeline's order holds (it is
/// built by `Chain`, and checked again here), and only passes that keep the stage may
/// be turned off, so no `--disable-pass` list can break the order.
#[test]
fn passes_run_in_stage_order_and_only_stage_keeping_ones_are_optional() {
    use tilescope::passes::{stage, Stage};
    let all = tilescope::passes::pipeline();
    assert_eq!(stage::check_order(&all, Stage::Source), Ok(Stage::Final));
    for pass in all.iter().filter(|p| p.optional()) {
        assert_eq!(pass.needs(), pass.makes(), "{}", pass.name());
    }
    // A list out of order is refused before anything runs, naming the pass.
    let wrong: Vec<Box<dyn tilescope::passes::AnyPass>> = vec![
        Box::new(tilescope::passes::ParsePass),
        Box::new(tilescope::passes::emit::Emit),
    ];
    let err = stage::check_order(&wrong, Stage::Source).expect_err("emit cannot follow parse");
    assert_eq!(
        err.message,
        "pass `emit` reads the lowered program, but after `parse` the program is the tile IR"
    );
}
