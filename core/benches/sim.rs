//! Simulator throughput on a long timing-only program: about a million dynamic
//! instructions of a double-buffered load / compute / store loop.
//!
//! `cargo bench -p tilescope --bench sim` prints the time per run; the instructions and
//! simulated cycles per run are printed first, so throughput is their ratio.

use tilescope::isa::{asm, Program};
use tilescope::machine::Machine;
use tilescope::sim::{simulate, SimMode};

/// 14 dynamic instructions per iteration (13 in the body plus `endloop`).
const ITERATIONS: u64 = 71_428;

fn program() -> Program {
    let text = format!(
        "\
.tensor x f32[64, 64]
.tensor y f32[64, 64]
set_flag MTE3, MTE2, 0
set_flag MTE3, MTE2, 1
loop r1, {ITERATIONS}
  rem r2, r1, 2
  mul r3, r2, 2048
  rem r4, r1, 8
  mul r4, r4, 2048
  wait_flag MTE3, MTE2, r2
  dma.f32 ub[r3], x[r4], [512, 1, 1]
  set_flag MTE2, V, r2
  wait_flag MTE2, V, r2
  vexp.f32 ub[r3]{{8, 64, 64}}, ub[r3]{{8, 64, 64}}
  set_flag V, MTE3, r2
  wait_flag V, MTE3, r2
  dma.f32 y[r4], ub[r3], [512, 1, 1]
  set_flag MTE3, MTE2, r2
endloop
wait_flag MTE3, MTE2, 0
wait_flag MTE3, MTE2, 1
"
    );
    match asm::parse(&text) {
        Ok(p) => p,
        Err(e) => panic!("benchmark program does not parse: {e:?}"),
    }
}

fn main() {
    let p = program();
    let r = simulate(
        &p,
        &Machine::a3(),
        vec![],
        SimMode {
            functional: false,
            trace: true,
        },
    );
    assert!(r.errors.is_empty(), "{:?}", r.errors.first());
    println!(
        "per run: {} instructions, {} simulated cycles",
        r.instructions, r.cycles
    );
    divan::main();
}

#[divan::bench(sample_count = 5)]
fn timing_only_1m(bencher: divan::Bencher) {
    let p = program();
    let m = Machine::a3();
    bencher.bench(|| {
        simulate(
            divan::black_box(&p),
            &m,
            vec![],
            SimMode {
                functional: false,
                trace: true,
            },
        )
        .cycles
    });
}

/// The same program without keeping the per-instruction trace: the simulator's own speed.
#[divan::bench(sample_count = 5)]
fn timing_only_1m_no_trace(bencher: divan::Bencher) {
    let p = program();
    let m = Machine::a3();
    bencher.bench(|| {
        simulate(
            divan::black_box(&p),
            &m,
            vec![],
            SimMode {
                functional: false,
                trace: false,
            },
        )
        .cycles
    });
}
