mod sim_support;

use sim_support::*;
use tilescope::sim::{AccessKind, StallReason};
use tilescope::types::{MemSpace, Pipe};

#[test]
fn matmul_matches_reference_and_hand_timing() {
    let p = load("matmul");
    let r = run(&p);
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    assert!(r.races.is_empty(), "{:#?}", r.races);
    let x = r.output("x").unwrap().to_f32_vec();
    let w = r.output("w").unwrap().to_f32_vec();
    let want: Vec<f32> = (0..256)
        .map(|ij| {
            (0..32).fold(0.0f32, |acc, k| {
                acc + x[(ij / 16) * 32 + k] * w[k * 16 + ij % 16]
            })
        })
        .collect();
    assert_close(&r.output("y").unwrap().to_f32_vec(), &want, 1e-5);
    let ends: Vec<(Pipe, u64, u64)> = r.trace.iter().map(|e| (e.pipe, e.start, e.end)).collect();
    assert_eq!(ends[8], (Pipe::M, 149, 157));
    assert_eq!(ends[11], (Pipe::FIX, 159, 211));
    assert_eq!(r.cycles, 211);
}

#[test]
fn transposing_move_gives_the_same_product() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/asm/matmul.tasm",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    // Load w transposed ([16, 32]) and let MTE1 transpose it back.
    let text = text
        .replace(".tensor w f16[32, 16]", ".tensor w f16[16, 32]")
        .replace(
            "l0b[0]{32, 16, 16}, l1[1024]{32, 16, 16}",
            "l0b[0]{32, 16, 16}, l1[1024]{16, 32, 32}, trans",
        );
    // Without the edit the test would check the plain move.
    assert!(
        text.contains(", trans") && text.contains(".tensor w f16[16, 32]"),
        "matmul.tasm changed; update the edit"
    );
    let r = run(&parse(&text));
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    let x = r.output("x").unwrap().to_f32_vec();
    let wt = r.output("w").unwrap().to_f32_vec();
    let want: Vec<f32> = (0..256)
        .map(|ij| {
            (0..32).fold(0.0f32, |acc, k| {
                acc + x[(ij / 16) * 32 + k] * wt[(ij % 16) * 32 + k]
            })
        })
        .collect();
    assert_close(&r.output("y").unwrap().to_f32_vec(), &want, 1e-5);
}

#[test]
fn double_buffered_loop_overlaps_load_and_compute_without_races() {
    let p = load("double_buffer");
    let r = run(&p);
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    assert!(r.races.is_empty(), "{:#?}", r.races);
    let x = r.output("x").unwrap().to_f32_vec();
    let want: Vec<f32> = x.iter().map(|v| v.exp()).collect();
    assert_close(&r.output("y").unwrap().to_f32_vec(), &want, 1e-6);

    let of = |step: u32| -> Vec<(u64, u64)> {
        r.trace
            .iter()
            .filter(|e| e.prov.step == Some(step))
            .map(|e| (e.start, e.end))
            .collect()
    };
    let (loads, computes, stores) = (of(1), of(2), of(3));
    assert_eq!((loads.len(), computes.len(), stores.len()), (4, 4, 4));
    // teach: load of 2 KiB = 20 + 2048/32 = 84 cycles, plus what sharing GM bandwidth
    // with a concurrent store added; vexp = ceil(512/16*4) + 8 = 136.
    let shared: Vec<u64> = r
        .trace
        .iter()
        .filter(|e| e.prov.step == Some(1))
        .map(|e| match e.stall {
            Some(StallReason::Bandwidth { cycles }) => cycles,
            _ => 0,
        })
        .collect();
    assert!(loads.iter().zip(&shared).all(|((s, e), b)| e - s == 84 + b));
    assert!(shared.iter().any(|&b| b > 0), "no load overlapped a store");
    assert!(computes.iter().all(|(s, e)| e - s == 136));
    // The consumer of tile i runs while the producer loads tile i + 1.
    for i in 0..3 {
        let (c, l) = (computes[i], loads[i + 1]);
        assert!(
            l.0 < c.1 && c.0 < l.1,
            "compute {i} {c:?} does not overlap load {} {l:?}",
            i + 1
        );
    }
    // Dynamic event ids alternate with the slot.
    let ids: Vec<u32> = r
        .flags
        .iter()
        .filter(|f| f.src == Pipe::MTE2 && f.dst == Pipe::V)
        .map(|f| f.id)
        .collect();
    assert_eq!(ids, vec![0, 1, 0, 1]);
    assert!(r
        .flags
        .iter()
        .all(|f| f.wait_cycle.is_some_and(|w| w >= f.set_cycle)));
    // V waited for the loads: stall recorded with the flag.
    assert!(r.trace.iter().any(|e| matches!(
        e.stall,
        Some(StallReason::WaitFlag {
            src: Pipe::MTE2,
            dst: Pipe::V,
            ..
        })
    )));
    let serial: u64 = loads
        .iter()
        .chain(&computes)
        .chain(&stores)
        .map(|(s, e)| e - s)
        .sum();
    assert!(
        r.cycles < serial,
        "{} cycles is no better than serial {serial}",
        r.cycles
    );
}

#[test]
fn missing_flags_are_reported_as_races_naming_both_instructions() {
    let p = load("no_flags");
    let r = run(&p);
    assert_eq!(r.races.len(), 2, "{:#?}", r.races);
    let first = &r.races[0];
    assert_eq!((first.first.instr.index, first.second.instr.index), (0, 1));
    assert_eq!(
        (first.first.kind, first.second.kind),
        (AccessKind::Write, AccessKind::Read)
    );
    assert_eq!(first.space, MemSpace::UB);
    assert_eq!(first.overlap, (0, 0x800));
    assert_eq!(
        first.second.instr.prov.span.map(|s| (s.start, s.end)),
        Some((70, 80))
    );
    assert!(
        first.message.contains("V reads ub[0x0..0x800) at #1"),
        "{}",
        first.message
    );
    assert!(
        first
            .message
            .contains("no set_flag(MTE2, V) / wait_flag(MTE2, V)"),
        "{}",
        first.message
    );
    assert!(first.first.instr.text.starts_with("dma.f32 ub[0], x[0]"));
    let second = &r.races[1];
    assert_eq!(
        (second.first.instr.pipe, second.second.instr.pipe),
        (Pipe::V, Pipe::MTE3)
    );
}

#[test]
fn races_in_a_loop_are_reported_once_with_a_count() {
    let text = "\
.tensor x f32[8, 64]
loop r1, 5
  dma.f32 ub[0], x[0], [512, 1, 1]
  vexp.f32 ub[2048]{8, 64, 64}, ub[0]{8, 64, 64}
endloop
";
    let r = simulate_timing(text);
    let pair: Vec<_> = r
        .races
        .iter()
        .filter(|x| x.first.instr.index == 1 && x.second.instr.index == 2)
        .collect();
    assert_eq!(pair.len(), 1, "{:#?}", r.races);
    assert!(pair[0].count >= 4, "{:#?}", pair[0]);
}

#[test]
fn disjoint_slots_do_not_race() {
    let text = "\
.tensor x f32[8, 64]
dma.f32 ub[0], x[0], [512, 1, 1]
vdup.f32 ub[2048]{8, 64, 64}, 1.0
dma.f32 ub[4096], x[0], [8, 64, 128], [32, 1, 1]
vdup.f32 ub[4224]{8, 32, 64}, 2.0
";
    // The last two interleave column halves of the same rows: row-exact footprints.
    let r = simulate_timing(text);
    assert!(r.races.is_empty(), "{:#?}", r.races);
}

#[test]
fn full_queue_stalls_the_scalar_pipe() {
    // teach V queue depth 4: five 136-cycle vexps; the fifth waits for the first to start.
    let mut text = String::from(".tensor x f32[8, 64]\n");
    for _ in 0..6 {
        text.push_str("vexp.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}\n");
    }
    let r = simulate_timing(&text);
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    let stalled: Vec<_> = r
        .trace
        .iter()
        .filter(|e| matches!(e.stall, Some(StallReason::QueueFull { .. })))
        .collect();
    assert!(!stalled.is_empty());
    // Dispatch 5 happens when vexp 0 leaves the queue at cycle 1: no stall; dispatch 6
    // (index 5) waits until vexp 1 starts at 137.
    let e = r.trace.iter().find(|e| e.index == 5).unwrap();
    assert_eq!(e.dispatch, 138);
    assert_eq!(e.stall, Some(StallReason::QueueFull { cycles: 137 - 5 }));
}

fn simulate_timing(text: &str) -> tilescope::sim::SimResult {
    tilescope::sim::simulate(
        &parse(text),
        &tilescope::machine::Machine::teach(),
        vec![],
        tilescope::sim::SimMode {
            functional: false,
            trace: true,
        },
    )
}

#[test]
fn concurrent_gm_transfers_share_bandwidth() {
    // teach: each 2 KiB transfer alone is 20 + 2048/32 = 84 cycles. The load runs from 1
    // and moves GM data from 21; the store starts at 2 and moves from 22. From 22 both
    // move at half rate: the load's last 63 cycles of data take 126, so it ends at 148;
    // by then the store has moved 63 of its 64 and ends at 149. Both are 63 late, and
    // GM moved 128 cycles of data in the 128 cycles from 21 to 149.
    let text = "\
.tensor x f32[8, 64]
.tensor y f32[8, 64]
dma.f32 ub[0], x[0], [512, 1, 1]
dma.f32 y[0], ub[4096], [512, 1, 1]
";
    let r = simulate_timing(text);
    assert!(r.errors.is_empty() && r.races.is_empty(), "{r:#?}");
    let spans: Vec<(u64, u64, Option<StallReason>)> =
        r.trace.iter().map(|e| (e.start, e.end, e.stall)).collect();
    assert_eq!(
        spans,
        vec![
            (1, 148, Some(StallReason::Bandwidth { cycles: 63 })),
            (2, 149, Some(StallReason::Bandwidth { cycles: 63 }))
        ]
    );
    assert_eq!(r.gm_bytes, 4096);
    assert_eq!(r.gm_transfer_cycles, 128);
    let shared = |p: Pipe| r.pipe(p).map(|s| (s.busy, s.shared_bandwidth));
    assert_eq!(shared(Pipe::MTE2), Some((147, 63)));
    assert_eq!(shared(Pipe::MTE3), Some((147, 63)));
}

#[test]
fn a_shorter_running_transfer_finishes_first_and_the_other_then_runs_alone() {
    // The 1 KiB load moves from 21 to 53 alone; the 2 KiB store moves from 22. Sharing
    // from 22, the load's last 31 cycles of data take 62 (ends 84, 31 late); the store
    // has then moved 31 of 64 and moves the other 33 alone (ends 2 + 84 + 31 = 117).
    let text = "\
.tensor x f32[4, 64]
.tensor y f32[8, 64]
dma.f32 ub[0], x[0], [256, 1, 1]
dma.f32 y[0], ub[4096], [512, 1, 1]
";
    let r = simulate_timing(text);
    assert!(r.errors.is_empty() && r.races.is_empty(), "{r:#?}");
    let spans: Vec<(u64, u64)> = r.trace.iter().map(|e| (e.start, e.end)).collect();
    assert_eq!(spans, vec![(1, 84), (2, 117)]);
    assert_eq!(r.gm_transfer_cycles, 32 + 64);
}

#[test]
fn pipe_barrier_all_orders_everything_before_it() {
    // The load runs 1..85; S waits at the barrier from 1 to 85 (stall 84), runs it
    // 85..86, dispatches vexp 86..87, and V runs it 87..223 (136 cycles).
    let text = "\
.tensor x f32[8, 64]
dma.f32 ub[0], x[0], [512, 1, 1]
pipe_barrier ALL
vexp.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
";
    let r = simulate_timing(text);
    assert!(r.errors.is_empty() && r.races.is_empty(), "{r:#?}");
    let spans: Vec<(Pipe, u64, u64)> = r.trace.iter().map(|e| (e.pipe, e.start, e.end)).collect();
    assert_eq!(
        spans,
        vec![(Pipe::MTE2, 1, 85), (Pipe::S, 85, 86), (Pipe::V, 87, 223)]
    );
    assert_eq!(r.trace[1].stall, Some(StallReason::Barrier { cycles: 84 }));
    assert_eq!(r.cycles, 223);
}

/// `x @ w` of one row, as `matvec.tasm` computes it.
fn row_product(x: &[f32], w: &[f32]) -> Vec<f32> {
    (0..64)
        .map(|j| (0..32).fold(0.0f32, |acc, k| acc + x[k] * w[k * 64 + j]))
        .collect()
}

#[test]
fn matvec_matches_the_product_and_hand_timing() {
    let r = run(&load("matvec"));
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    assert!(r.races.is_empty(), "{:#?}", r.races);
    let x = r.output("x").unwrap().to_f32_vec();
    let w = r.output("w").unwrap().to_f32_vec();
    assert_close(
        &r.output("y").unwrap().to_f32_vec(),
        &row_product(&x, &w),
        1e-5,
    );
    let ends: Vec<(Pipe, u64, u64)> = r.trace.iter().map(|e| (e.pipe, e.start, e.end)).collect();
    assert_eq!(ends[8], (Pipe::M, 248, 256));
    assert_eq!(ends[11], (Pipe::FIX, 258, 286));
    assert_eq!(r.cycles, 286);
}

#[test]
fn matvec_gives_the_bits_of_a_one_row_mmad_in_fewer_cycles() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/asm/matvec.tasm",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mv = "mmv.f16 l0c[0], l0a[0], l0b[0], k=32, n=64, acc=0";
    assert!(text.contains(mv), "matvec.tasm changed; update the edit");
    let tile = text.replace(
        mv,
        "mmad.f16 l0c[0], l0a[0], l0b[0], m=1, k=32, n=64, acc=0",
    );
    let (a, b) = (run(&load("matvec")), run(&parse(&tile)));
    assert!(b.errors.is_empty(), "{:#?}", b.errors);
    let bits = |r: &tilescope::sim::SimResult| -> Vec<u32> {
        let y = r.output("y").unwrap().to_f32_vec();
        y.iter().map(|v| v.to_bits()).collect()
    };
    assert_eq!(bits(&a), bits(&b));
    let m_cycles = |r: &tilescope::sim::SimResult| {
        r.trace
            .iter()
            .find(|e| e.pipe == Pipe::M && e.end - e.start > 1)
            .map(|e| e.end - e.start)
    };
    assert_eq!((m_cycles(&a), m_cycles(&b)), (Some(8), Some(14)));
}
