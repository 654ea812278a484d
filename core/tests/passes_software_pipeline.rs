//! software-pipeline: a short loop that uses the matrix pipes before and after its
//! vector work is unrolled with each iteration's matrix-side prologue issued ahead of
//! the previous iteration's vector work. Checked against the same pipeline without the
//! pass on the simulator, against the reference interpreter, and for the loops it must
//! keep on a unified buffer too small for the unrolled copy; what moved where, and the
//! loops of other shapes it keeps, are `core/filetests/software-pipeline/`.

mod pass_support;

use pass_support::{ir_after_with, options};
use proptest::prelude::*;
use tilescope::compile::SyncStrategy;
use tilescope::isa::Program;
use tilescope::machine::Machine;
use tilescope::passes::{pipeline, Context, PassManager};
use tilescope::run::run;
use tilescope::sim::{simulate, SimMode};

const ATTENTION: &str = include_str!("../../static/examples/attention.tile");

fn after(source: &str, machine: Machine) -> String {
    ir_after_with(
        source,
        &options(machine, SyncStrategy::Auto),
        "software-pipeline",
    )
}

/// `source` compiled for `machine` (automatic multi-buffering on, as `run` does) by the
/// whole pipeline without the pass, if it compiles.
fn compile_without_the_pass(source: &str, machine: &Machine) -> Option<Program> {
    let mut cx = Context::new(source, None);
    cx.machine = Some(machine.clone());
    cx.auto_multi_buffer = true;
    let passes = pipeline()
        .into_iter()
        .filter(|p| p.name() != "software-pipeline")
        .collect();
    let (_, outcome) = PassManager::new(passes, true, None).run(&mut cx);
    outcome.ok()?;
    cx.program
}

/// Simulated cycles of `source` compiled for `machine` by the whole pipeline without
/// the pass; `None` when the loop form does not compile (its slots overflow a memory
/// that the unrolled blocks, reusing each other's space, fit in).
fn cycles_without_the_pass(source: &str, machine: &Machine) -> Option<u64> {
    let program = compile_without_the_pass(source, machine)?;
    let r = simulate(&program, machine, Vec::new(), SimMode::TIMING);
    assert!(r.errors.is_empty() && r.races.is_empty());
    Some(r.cycles)
}

#[test]
fn the_pass_makes_attention_faster_and_stays_correct() {
    let with = run(
        ATTENTION,
        &options(Machine::a3(), SyncStrategy::Auto),
        Vec::new(),
        3,
    );
    assert!(with.diagnostics.is_empty() && with.sim.errors.is_empty() && with.sim.races.is_empty());
    assert!(with.reference_match, "err {}", with.max_abs_err);
    let without = cycles_without_the_pass(ATTENTION, &Machine::a3()).expect("the loop compiles");
    // 5325 cycles as a loop, 4484 unrolled and skewed (the vector unit never idles
    // between blocks).
    assert!(
        with.sim.cycles * 10 < without * 9,
        "{} vs {without}",
        with.sim.cycles
    );
    // The skew keeps every cross-pipe dependence: without sync they race.
    let none = run(
        ATTENTION,
        &options(Machine::a3(), SyncStrategy::None),
        Vec::new(),
        3,
    );
    assert!(!none.sim.races.is_empty() || !none.sim.errors.is_empty());
}

#[test]
fn every_seed_matches_the_reference() {
    for seed in 0..6 {
        let r = run(
            ATTENTION,
            &options(Machine::a3(), SyncStrategy::Auto),
            Vec::new(),
            seed,
        );
        assert!(
            r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty(),
            "seed {seed}"
        );
    }
}

/// Loops of other shapes, which the pass leaves as loops
/// (`core/filetests/software-pipeline/*-keep*-loop.tir`), still match the reference.
#[test]
fn loops_of_other_shapes_match_the_reference() {
    let cases = [
        // No matrix pipe after the vector work (the linear layer): multi-buffering
        // already overlaps everything.
        include_str!("../../static/examples/matmul_bias_gelu.tile").to_string(),
        // Too many iterations to unroll.
        ATTENTION
            .replace("q: f16[64, D]", "q: f16[256, D]")
            .replace("o: out f32[64, D]", "o: out f32[256, D]")
            .replace("0..64 step 16", "0..256 step 16"),
        // A tail iteration.
        ATTENTION
            .replace("q: f16[64, D]", "q: f16[60, D]")
            .replace("o: out f32[64, D]", "o: out f32[60, D]")
            .replace("0..64 step 16", "0..60 step 16"),
        // Stage A loads what the loop stores.
        "kernel k(x: f16[64, 64], w: f16[64, 64], y: out f16[64, 64]) {
    let wt = load w[:, :];
    for i in 0..64 step 16 {
        let t = load y[i .. i + 16, :];
        let s = exp(t @ wt);
        store y[i .. i + 16, :] = (s as f16 @ wt) as f16;
    }
}"
        .to_string(),
    ];
    for source in &cases {
        let r = run(
            source,
            &options(Machine::a3(), SyncStrategy::Auto),
            Vec::new(),
            1,
        );
        assert!(r.reference_match && r.sim.races.is_empty(), "{source}");
    }
}

#[test]
fn an_unrolled_copy_that_would_not_fit_keeps_the_loop() {
    // Attention as a single-buffered loop: each block's tiles reuse the last block's
    // space, while the unrolled blocks overlap one stage and need more. Shrink teach's
    // unified buffer step by step: where only the loop fits, the pass keeps it and the
    // kernel compiles; with the full 128 KiB it unrolls.
    let source = ATTENTION.replace(" @buffers(2)", "");
    let opts = |kib: u64| {
        let mut m = Machine::teach();
        m.memories.ub.size = Some(kib * 1024);
        let mut o = options(m, SyncStrategy::Auto);
        o.auto_multi_buffer = false;
        o
    };
    let compiles = |kib: u64| {
        let r = run(&source, &opts(kib), Vec::new(), 1);
        r.diagnostics.is_empty() && r.reference_match && r.sim.races.is_empty()
    };
    let unrolled =
        |kib: u64| !ir_after_with(&source, &opts(kib), "software-pipeline").contains("for %i");
    assert!(unrolled(128));
    let kept = (8..128)
        .step_by(4)
        .filter(|&kib| compiles(kib) && !unrolled(kib))
        .count();
    assert!(kept > 0, "no UB size where only the loop fits");
}

/// Attention-shaped loops: a product, vector work, a second product, over `trips`
/// blocks, optionally multi-buffered, on either preset.
fn two_product_loops() -> impl Strategy<Value = (String, &'static str)> {
    let vector = prop::sample::select(vec![
        "exp(s - amax(s, axis=1)) / sum(exp(s - amax(s, axis=1)), axis=1)",
        "sigmoid(s)",
        "tanh(s * 0.125)",
        "s * 0.125 + 1.0",
    ]);
    (
        1u64..=10,
        prop::sample::select(vec![16u64, 32]),
        prop::sample::select(vec![32u64, 64]),
        prop::sample::select(vec![32u64, 64, 128]),
        prop::sample::select(vec![32u64, 64]),
        vector,
        prop::sample::select(vec!["", " @buffers(2)", " @buffers(3)"]),
        prop::sample::select(vec!["a3", "teach"]),
        any::<bool>(),
    )
        .prop_map(|(trips, b, d, n, e, vector, buffers, preset, carry)| {
            let r = trips * b;
            // With `carry`, each block's output also feeds a running state the next
            // block reads after its product (as an online softmax's sum does).
            let (init, out) = if carry {
                (
                    format!("\n    let acc = zeros(f32[{b}, {e}]);"),
                    "acc = acc * 0.5 + (p as f16) @ vt;\n        store o[i .. i + {b}, :] = acc;"
                        .replace("{b}", &b.to_string()),
                )
            } else {
                (String::new(), format!("store o[i .. i + {b}, :] = (p as f16) @ vt;"))
            };
            let src = format!(
                "kernel k(q: f16[{r}, {d}], kk: f16[{n}, {d}], v: f16[{n}, {e}], o: out f32[{r}, {e}]) {{
    let kt = load kk[:, :];
    let vt = load v[:, :];{init}
    for i in 0..{r} step {b}{buffers} {{
        let qt = load q[i .. i + {b}, :];
        let s = qt @ kt.T;
        let p = {vector};
        {out}
    }}
}}"
            );
            (src, preset)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Unrolled or not, the kernel matches the reference with no race, and where the
    /// pass unrolls it is not slower than the loop it replaced (within 1%).
    #[test]
    fn two_product_loops_match_and_never_slow_down((src, preset) in two_product_loops()) {
        let machine = Machine::preset(preset).expect("a preset");
        let r = run(&src, &options(machine.clone(), SyncStrategy::Auto), Vec::new(), 11);
        // Large blocks with slots may not fit teach at all, loop or not.
        prop_assume!(!r.diagnostics.iter().any(|d| d.message.contains("overflows")));
        prop_assert!(r.diagnostics.is_empty(), "{src}\n{:?}", r.diagnostics);
        prop_assert!(r.sim.errors.is_empty() && r.sim.races.is_empty(), "{src}");
        prop_assert!(r.reference_match, "{src}\nerr {}", r.max_abs_err);
        let unrolled = !after(&src, machine.clone()).contains("for %i");
        if let Some(without) = unrolled.then(|| cycles_without_the_pass(&src, &machine)).flatten() {
            // Where the skew gains nothing (transfer-bound shapes) the copies may cost a
            // scalar cycle or two; anything beyond 1% is a wrong decision.
            prop_assert!(r.sim.cycles * 100 <= without * 101, "{src}\n{} > {without}", r.sim.cycles);
        }
    }
}

#[test]
fn the_capacity_check_sees_the_slots_of_later_loops() {
    // Attention's blocks plus a streaming loop after them, on a unified buffer where the
    // unrolled blocks fit beside one slot of the stream's tiles but not beside three.
    // The check runs the later passes on the unrolled copy, so it sees the slots
    // multi-buffer gives the stream; whatever it decides, the kernel compiles.
    let with_stream = |buffers: &str| {
        ATTENTION
            .replace(
                "o: out f32[64, D]) {",
                "o: out f32[64, D], x: f32[64, 256], y: out f32[64, 256]) {",
            )
            .replace(
                "        store o[i .. i + 16, :] = (w as f16) @ vt;\n    }",
                &format!(
                    "        store o[i .. i + 16, :] = (w as f16) @ vt;\n    }}\n    for r in 0..64 step 16{buffers} {{\n        let t = load x[r .. r + 16, :];\n        let u = load y[r .. r + 16, :];\n        store y[r .. r + 16, :] = t * 2.0 + u;\n    }}"
                ),
            )
    };
    let mut checked = 0;
    for buffers in ["", " @buffers(2)", " @buffers(3)"] {
        let source = with_stream(buffers);
        // The edit must have happened, or this test checks plain attention.
        assert!(
            source.contains("for r in 0..64 step 16") && source.contains("x: f32[64, 256]"),
            "the attention example changed; update the edit:\n{source}"
        );
        for kib in (16..=128).step_by(8) {
            let mut m = Machine::teach();
            m.memories.ub.size = Some(kib * 1024);
            let r = run(
                &source,
                &options(m.clone(), SyncStrategy::Auto),
                Vec::new(),
                2,
            );
            // Whatever the pass decides, it never turns a kernel that fits as loops into
            // a capacity error.
            if compile_without_the_pass(&source, &m).is_some() {
                checked += 1;
                assert!(
                    r.diagnostics.is_empty() && r.reference_match && r.sim.races.is_empty(),
                    "UB {kib} KiB{buffers}: {:?}",
                    r.diagnostics
                );
            }
        }
    }
    // Some sizes must fit as loops, or the assertion above never ran.
    assert!(checked > 0, "no UB size fits the kernel as loops");
}

/// Attention whose row loop runs a number of times that depends on an outer loop is
/// left as written, with a note at the loop; with a count that is the same on every
/// entry (`32 * c .. 32 * c + 32`) the loop is constant and unrolled, with no note.
#[test]
fn a_loop_whose_count_varies_is_left_as_written_with_a_note() {
    let kernel = |range: &str| {
        format!(
            "kernel k(q: f16[64, 64], k: f16[128, 64], v: f16[128, 64], o: out f32[64, 64]) {{
    let kt = load k[:, :];
    let vt = load v[:, :];
    for c in 0..2 {{
        for i in {range} step 16 {{
            let s = (load q[i .. i + 16, :] @ kt.T) * 0.125;
            let p = exp(s - amax(s, axis=1));
            store o[i .. i + 16, :] = ((p / sum(p, axis=1)) as f16) @ vt;
        }}
    }}
}}"
        )
    };
    let record = |source: &str| {
        let r = tilescope::compile::compile(source, &options(Machine::a3(), SyncStrategy::Auto));
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        r.passes
            .into_iter()
            .find(|p| p.name == "software-pipeline")
            .expect("the pass ran")
    };
    let varying = record(&kernel("0 .. 32 * c + 32"));
    assert!(!varying.changed);
    let notes: Vec<String> = varying
        .notes
        .iter()
        .map(|n| format!("{}: {}", n.at, n.message))
        .collect();
    assert_eq!(
        notes,
        ["5:9: loop `i` is left as written: it would be unrolled with each product issued ahead, but how many times it runs depends on an outer loop"]
    );
    let constant = record(&kernel("32 * c .. 32 * c + 32"));
    assert!(
        constant.changed && constant.notes.is_empty(),
        "{:?}",
        constant.notes
    );
}

/// Row blocks of attention against resident keys and values, whose outputs also feed a
/// running state (`acc`) that each block rescales and adds to.
const CARRIED: &str =
    "kernel carried(q: f16[64, 64], kk: f16[64, 64], v: f16[64, 64], o: out f32[64, 64]) {
    let kt = load kk[:, :];
    let vt = load v[:, :];
    let acc = zeros(f32[16, 64]);
    for i in 0..64 step 16 {
        let qt = load q[i .. i + 16, :];
        let s = qt @ kt.T;
        let p = exp(s - amax(s, axis=1)) / sum(exp(s - amax(s, axis=1)), axis=1);
        acc = acc * 0.5 + (p as f16) @ vt;
        store o[i .. i + 16, :] = acc;
    }
}";

/// A loop that carries state is unrolled too: each iteration reads what the one before
/// yielded, and the next block's scores product, which reads none of it, goes ahead of
/// this block's softmax.
#[test]
fn a_loop_carrying_state_is_skewed_and_stays_correct() {
    let ir = after(CARRIED, Machine::teach());
    assert!(!ir.contains("for %i"), "{ir}");
    // The second block's query load comes before the first block's update of `acc`.
    let second_load = ir.find("%q[16 .. 32, :]").expect("the second query block");
    let first_update = ir.find("%acc,").expect("the first block's update");
    assert!(second_load < first_update, "{ir}");
    for machine in [Machine::teach(), Machine::a3()] {
        let with = run(
            CARRIED,
            &options(machine.clone(), SyncStrategy::Auto),
            Vec::new(),
            3,
        );
        assert!(
            with.diagnostics.is_empty() && with.sim.errors.is_empty() && with.sim.races.is_empty()
        );
        assert!(with.reference_match, "err {}", with.max_abs_err);
        let without = cycles_without_the_pass(CARRIED, &machine).expect("the loop compiles");
        // teach: 5476 cycles as a loop, 5193 skewed; a3: 4231 and 3935.
        assert!(
            with.sim.cycles < without,
            "{}: {} vs {without}",
            machine.name,
            with.sim.cycles
        );
    }
}

/// Flash attention loads a k and a v block in each key block: four unrolled copies
/// would take every MTE2 -> MTE1 event id and more, so insert-sync would turn a pair
/// into a barrier. Its key loop stays a loop.
#[test]
fn a_loop_whose_copies_would_take_every_event_id_stays_a_loop() {
    let source = include_str!("../../static/examples/flash_attention.tile");
    for machine in [Machine::teach(), Machine::a3()] {
        let ir = after(source, machine);
        assert!(ir.contains("for %j"), "{ir}");
    }
}
