//! sink-to-use's reorderings run clean, and slabs are not shared when the kernel fits
//! without sharing, so the reordering adds no write-after-read wait on a reused buffer.
//! The orders themselves are checked in `core/filetests/sink-to-use/`.

use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::run::run;

const SCATTER: &str = "kernel scatter(dst: i32[16, 1], upd: f32[16, 64], y: out f32[32, 64]) {
    let idx = load dst[:, :];
    let u = load upd[:, :];
    store y[idx, :] = u + 1.0;
}
";

#[test]
fn the_attention_block_runs_clean_with_its_operand_moved() {
    let source = include_str!("kernels/attention_block.tile");
    let r = run(source, &CompileOptions::default(), Vec::new(), 3);
    assert!(r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty());
}

#[test]
fn the_reordered_scatter_has_no_false_dependence() {
    // Unshared slabs: the index does not overwrite the rows' buffer, so the index load
    // waits for nothing and only the scatter waits for both.
    let auto = run(SCATTER, &CompileOptions::default(), Vec::new(), 1);
    assert!(auto.reference_match && auto.sim.races.is_empty());
    let options = CompileOptions {
        sync: SyncStrategy::Barrier,
        ..CompileOptions::default()
    };
    let barrier = run(SCATTER, &options, Vec::new(), 1);
    assert!(
        auto.sim.cycles <= barrier.sim.cycles,
        "{} > {}",
        auto.sim.cycles,
        barrier.sim.cycles
    );
    assert!(auto.sim.cycles < 700, "{}", auto.sim.cycles);
}

/// Attention over one block of keys and values loaded ahead of the row loop, as a user
/// first writes it: `kt.T` and `vt` each fill L0B whole on the smaller machines.
fn weights_ahead(dtype: &str, keys: u32, dim: u32) -> String {
    format!(
        "kernel k(q: {dtype}[256, {dim}], kk: {dtype}[{keys}, {dim}], v: {dtype}[{keys}, {dim}], o: out f32[256, {dim}]) {{
    let kt = load kk[:, :];
    let vt = load v[:, :];
    for i in 0..256 step 64 {{
        let s = load q[i .. i + 64, :] @ kt.T;
        let p = exp(s) as {dtype};
        store o[i .. i + 64, :] = p @ vt;
    }}
}}
"
    )
}

/// Two L0B tiles that each fit but not together, both ahead of the loop (LICM hoisted
/// `kt.T`, scope-inference put the copy of `vt` at its load): each moves into the loop
/// before its product, lives one iteration, and the kernel fits, where it overflowed
/// L0B (a3: "the plan needs 131072 bytes but a3 has 65536"). Each case runs clean
/// under auto and barrier sync; where one L0B tile at a time fits anyway (a3 with 128
/// keys), the moves stay ahead of the loop.
#[test]
fn operand_moves_enter_the_loop_when_l0b_cannot_hold_them_both() {
    let cases = [
        ("bf16", 256, 128, "a3", true),
        ("bf16", 128, 128, "teach", true),
        ("f16", 128, 128, "teach", true),
        ("bf16", 128, 128, "a3", false),
    ];
    for (dtype, keys, dim, preset, moved) in cases {
        let source = weights_ahead(dtype, keys, dim);
        let what = format!("{dtype}, {keys} keys, {dim} wide, {preset}");
        for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
            let options = CompileOptions {
                preset: Some(preset.to_string()),
                sync,
                ..CompileOptions::default()
            };
            let r = run(&source, &options, Vec::new(), 2);
            assert!(r.diagnostics.is_empty(), "{what}: {:?}", r.diagnostics);
            assert!(
                r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty(),
                "{what}, {sync:?}"
            );
            let ir = &r
                .compile
                .passes
                .iter()
                .find(|p| p.name == "sink-to-use")
                .expect("sink-to-use ran")
                .ir;
            // The loop's lines are indented by four spaces (peel-first's copy of the
            // first iteration, ahead of it, by two: it keeps the moves ahead).
            let in_loop = ir.lines().any(|l| {
                l.starts_with("    %")
                    && l.contains(": l0b")
                    && (l.contains("= copy") || l.contains("= transpose"))
            });
            assert_eq!(in_loop, moved, "{what}:\n{ir}");
        }
    }
}
