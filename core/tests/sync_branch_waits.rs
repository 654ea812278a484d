//! A pair whose consumer is inside an `if` goes inside it: the set at the branch's
//! start, the wait before the consumer (insert-sync's `place::site`). The consumer
//! pipe's work that does not need the producer (the branch's own ahead of the consumer,
//! the `else`, what follows the `if`) then overlaps the producer. Before, the wait went
//! before the `if` and held that work back, where a barrier goes inside the branch:
//! auto sync was slower than barriers.

use tilescope::compile::{compile, CompileOptions, SyncStrategy};
use tilescope::run::{auto_sync_limit, run};

/// Loop-carried state updated under an `if`: `exp(c0 * 0.5)` needs only the state,
/// the `+ t` needs this iteration's load.
const UPDATE: &str = "kernel k(x: f32[256, 64], y: out f32[32, 64]) {
    let c0 = load x[0 .. 32, :];
    for a in 0..8 {
        let t = load x[a * 32 .. a * 32 + 32, :];
        if a % 2 == 0 {
            c0 = exp(c0 * 0.5) + t;
        }
    }
    store y[:, :] = c0;
}";

/// An `else if` chain whose branches each start with work on the state alone, and a
/// nested `if` whose consumer sits two regions deep.
const CHAIN: &str = "kernel k(x: f32[256, 64], y: out f32[32, 64]) {
    let c0 = load x[0 .. 32, :];
    for a in 0..8 {
        let t = load x[a * 32 .. a * 32 + 32, :];
        if a % 2 == 0 {
            c0 = exp(c0 * 0.5) + t;
        } else if a % 3 == 0 {
            let u = tanh(c0);
            c0 = u * t;
        } else {
            c0 = sqrt(abs(c0)) - t;
        }
    }
    store y[:, :] = c0;
}";

const NESTED: &str = "kernel k(x: f32[256, 64], y: out f32[32, 64]) {
    let c0 = load x[0 .. 32, :];
    for a in 0..8 {
        let t = load x[a * 32 .. a * 32 + 32, :];
        let s = load x[0 .. 32, :];
        if a < 6 {
            c0 = exp(c0 * 0.5);
            if a % 2 == 0 {
                c0 = tanh(c0) + t;
            }
            c0 = c0 + s;
        }
    }
    store y[:, :] = c0;
}";

/// The branch starts with the consumer, but the `else` and the work after the `if` need
/// nothing loaded (a compile_run fuzzer's kernel, shortened: with the wait before the
/// `if`, 811 cycles against barriers' 681 on a3; now 676).
const ELSE_AFTER: &str = "kernel cr(x: f32[16, 16], y: out f32[8, 16]) {
    let c0 = full(f32[8, 16], 1e-3);
    let c1 = load x[8 .. 16, :];
    for a in 0..1 {
        let t = load x[a * 8 .. a * 8 + 8, :];
        if a >= 4 {
            c0 = c1 * 0.5 + t;
        } else {
            c0 = c0 * 0.5;
        }
        c0 = c0 * 0.5 + c0;
        if a % 2 == 0 {
            c0 = c0 * 0.5 + t;
        }
    }
    store y[:, :] = c0 + c1;
}";

/// A prefetch inside loops of one iteration (`0..1`), as the compile_run fuzzer writes
/// them: the second load (`p1`) overwrites the buffer the vector pipe zeroed before the
/// loop. With the wait before the one-iteration loop the first load waited too (3394
/// cycles against barriers' 2727 on a3); inside it, like a taken branch, 2706.
const ONE_TRIP: &str = "kernel cr(x: bf16[20, 8], y: out bf16[4, 8]) {
    let s0 = zeros(bf16[4, 8]);
    for a in 0..4 {
        let s1 = zeros(bf16[4, 8]);
        for b in 0..1 {
            let c0 = zeros(bf16[4, 8]);
            let m = full(f32[4, 1], -inf);
            let l = zeros(f32[4, 1]);
            for c in 0..1 @buffers(2) {
                let t = load x[(a + b + c) * 4 .. (a + b + c) * 4 + 4, :];
                c0 = c0 * 0.5 + minimum(t, c0) * 0.25;
                let tf0 = t as f32;
                let mn0 = maximum(m, amax(tf0, axis=1));
                l = l * exp(m - mn0) + sum(exp(tf0 - mn0), axis=1);
                m = mn0;
                let p1 = load x[(a + b + c) * 4 + 4 .. (a + b + c) * 4 + 8, :];
                c0 = c0 + c0 * 0.5;
                c0 = p1;
                if a % 2 == 0 {
                    c0 = c0 * 0.5 + t;
                }
            }
            s1 = s1 + c0 * 0.5;
        }
        s0 = s0 + s1 * 0.5;
    }
    store y[:, :] = s0;
}";

/// Single-buffered, as a kernel is without `@buffers` when automatic multi-buffering is
/// off: a slot-following pair stays before the `if` (see `place::site`).
fn options(preset: &str, sync: SyncStrategy) -> CompileOptions {
    CompileOptions {
        preset: Some(preset.to_string()),
        sync,
        auto_multi_buffer: false,
        ..CompileOptions::default()
    }
}

#[test]
fn the_branchs_own_work_runs_before_the_wait_for_the_load() {
    let asm = compile(UPDATE, &options("a3", SyncStrategy::Auto))
        .asm
        .expect("compiles");
    let lines: Vec<&str> = asm.lines().map(str::trim_start).collect();
    let branch = lines
        .iter()
        .position(|l| l.contains("; if a % 2 == 0"))
        .unwrap_or_else(|| panic!("no branch:\n{asm}"));
    // The first line starting with `prefix` inside the branch.
    let at = |prefix: &str| {
        branch
            + lines[branch..]
                .iter()
                .position(|l| l.starts_with(prefix))
                .unwrap_or_else(|| panic!("no {prefix}:\n{asm}"))
    };
    let (set, exp, wait, add) = (
        at("set_flag MTE2, V"),
        at("vexp"),
        at("wait_flag MTE2, V"),
        at("vadd"),
    );
    assert!(set < exp && exp < wait && wait < add, "{asm}");
}

#[test]
fn auto_sync_beats_barriers_on_branches_and_matches_the_reference() {
    for (name, source) in [
        ("update", UPDATE),
        ("chain", CHAIN),
        ("nested", NESTED),
        ("else and after", ELSE_AFTER),
        ("one trip", ONE_TRIP),
    ] {
        for preset in ["a3", "teach"] {
            let auto = run(source, &options(preset, SyncStrategy::Auto), Vec::new(), 3);
            let barrier = run(
                source,
                &options(preset, SyncStrategy::Barrier),
                Vec::new(),
                3,
            );
            assert!(
                auto.diagnostics.is_empty()
                    && auto.reference_match
                    && auto.sim.races.is_empty()
                    && auto.sim.errors.is_empty(),
                "{name} on {preset}: {:?} {:?}",
                auto.diagnostics,
                auto.sim.races
            );
            assert!(
                (auto.sim.cycles as f64) <= auto_sync_limit(&auto.sim, &barrier.sim),
                "{name} on {preset}: auto {} barrier {}",
                auto.sim.cycles,
                barrier.sim.cycles
            );
        }
    }
    // With the wait before the `if`, `update` took 3885 cycles on a3 against barriers'
    // 3877; inside the branch, 2845.
    let auto = run(UPDATE, &options("a3", SyncStrategy::Auto), Vec::new(), 3);
    let barrier = run(UPDATE, &options("a3", SyncStrategy::Barrier), Vec::new(), 3);
    assert!(
        auto.sim.cycles * 10 < barrier.sim.cycles * 8,
        "auto {} barrier {}",
        auto.sim.cycles,
        barrier.sim.cycles
    );
}
