//! The matrix-vector path: a product with one row (`m = 1`, decode's query) lowers to
//! `mmv`, which computes the bits `mmad` would and is priced at the matrix-vector rate;
//! every other product keeps the tile path.

use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::isa::{Op, Val};
use tilescope::run::{run, RunResult};

const DECODE: &str = include_str!("../../static/examples/decode.tile");

fn simulate(source: &str, preset: &str, sync: SyncStrategy) -> RunResult {
    let options = CompileOptions {
        preset: Some(preset.to_string()),
        sync,
        ..CompileOptions::default()
    };
    run(source, &options, Vec::new(), 7)
}

fn assert_matches(r: &RunResult, what: &str) {
    let diags: Vec<&String> = r.diagnostics.iter().map(|d| &d.message).collect();
    assert!(diags.is_empty(), "{what}: {diags:?}");
    let errors: Vec<&String> = r.sim.errors.iter().map(|e| &e.message).collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
    assert!(r.sim.races.is_empty(), "{what}: {:?}", r.sim.races);
    assert!(r.reference_match, "{what}: max abs err {}", r.max_abs_err);
    assert!(
        r.bound <= r.sim.cycles,
        "{what}: bound {} > {}",
        r.bound,
        r.sim.cycles
    );
}

fn count(r: &RunResult, pred: impl Fn(&Op) -> bool) -> usize {
    let program = r.compile.program.as_ref().expect("a program");
    program.instrs.iter().filter(|i| pred(&i.op)).count()
}

#[test]
fn decode_multiplies_its_query_rows_with_mmv_and_matches_the_reference() {
    for preset in ["a3", "teach"] {
        for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
            let what = format!("decode on {preset} under {sync:?}");
            let r = simulate(DECODE, preset, sync);
            assert_matches(&r, &what);
            let asm = r.compile.asm.as_deref().unwrap_or_default();
            // Both products (scores and the weighted values) of the key-block loop.
            assert_eq!(asm.matches("mmv.f16 ").count(), 2, "{what}:\n{asm}");
            assert!(!asm.contains("mmad"), "{what}:\n{asm}");
            assert_eq!(count(&r, |op| matches!(op, Op::Mmv { .. })), 2, "{what}");
        }
    }
}

#[test]
fn products_of_more_rows_keep_the_tile_path() {
    let source = include_str!("../../static/examples/flash_attention.tile");
    let r = simulate(source, "a3", SyncStrategy::Auto);
    assert_matches(&r, "flash_attention");
    assert_eq!(count(&r, |op| matches!(op, Op::Mmv { .. })), 0);
    assert!(count(&r, |op| matches!(op, Op::Mmad { .. })) > 0);
}

/// One f32 row accumulated in L0C over a K loop: the first `mmv` writes C (`acc` is the
/// loop counter, 0 on the first iteration), later ones add to it, bit for bit the
/// interpreter's `acc + x @ w`.
#[test]
fn a_row_accumulated_over_k_is_bit_exact() {
    let source = "kernel k(x: f32[1, 128], w: f32[128, 48], y: out f32[1, 48]) {
    let acc = zeros(f32[1, 48]);
    for kk in 0..128 step 32 @buffers(2) {
        acc += load x[:, kk .. kk + 32] @ load w[kk .. kk + 32, :];
    }
    store y[:, :] = acc;
}";
    for preset in ["a3", "teach"] {
        for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
            let r = simulate(source, preset, sync);
            assert_matches(&r, &format!("{preset} {sync:?}"));
            assert_eq!(r.max_abs_err, 0.0);
            assert_eq!(
                count(&r, |op| matches!(
                    op,
                    Op::Mmv {
                        acc: Val::Reg(_),
                        ..
                    }
                )),
                1
            );
        }
    }
}

/// The matrix-vector rate is a preset field: at `matvec_block_n = block_n` an `mmv`
/// costs what the tile path charges one row, so decode's M pipe is as busy as before.
#[test]
fn the_matvec_rate_is_the_presets() {
    let busy_m = |machine: tilescope::machine::Machine| {
        let options = CompileOptions {
            machine: Some(machine),
            ..CompileOptions::default()
        };
        let r = run(DECODE, &options, Vec::new(), 7);
        assert_matches(&r, "decode");
        r.sim
            .pipes
            .iter()
            .find(|p| p.pipe == tilescope::types::Pipe::M)
            .map(|p| p.busy)
    };
    let a3 = tilescope::machine::Machine::a3();
    let mut tile_rate = a3.clone();
    tile_rate.costs.matmul.matvec_block_n = tile_rate.costs.matmul.block_n;
    let (fast, slow) = (busy_m(a3), busy_m(tile_rate));
    // 32 products of k = 64, n = 64 in f16: 6 + 4 * 1 cycles at 64 columns, 6 + 4 * 4 at 16.
    assert_eq!(fast.zip(slow).map(|(f, s)| s - f), Some(32 * 12));
}
