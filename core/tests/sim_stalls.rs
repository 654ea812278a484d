//! Where each pipe's cycles go (`SimResult::stalls`): on hand-written programs whose
//! stretches the trace pins down, every idle cycle lands on its cause, and busy plus
//! idle is the run's cycles on every pipe.

mod sim_support;

use sim_support::*;
use tilescope::machine::Machine;
use tilescope::sim::{simulate, PipeStalls, SimMode, SimResult, TraceEntry};
use tilescope::types::Pipe;

fn timing(text: &str) -> SimResult {
    let r = simulate(&parse(text), &Machine::teach(), vec![], SimMode::TIMING);
    assert!(r.errors.is_empty() && r.races.is_empty(), "{r:#?}");
    for s in &r.stalls {
        assert_eq!(s.total(), r.cycles, "{s:#?}");
    }
    r
}

fn pipe(r: &SimResult, pipe: Pipe) -> &PipeStalls {
    r.stalls
        .iter()
        .find(|s| s.pipe == pipe)
        .expect("every pipe")
}

fn entry(r: &SimResult, index: u32) -> TraceEntry {
    *r.trace.iter().find(|e| e.index == index).expect("traced")
}

#[test]
fn a_flag_wait_and_a_barrier_are_booked_on_the_pipes_they_hold() {
    let r = timing(
        "\
.tensor x f32[8, 64]
dma.f32 ub[0], x[0], [512, 1, 1]
set_flag MTE2, V, 0
wait_flag MTE2, V, 0
vexp.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
pipe_barrier ALL
vexp.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
",
    );
    let (load, set, wait, first, second) = (
        entry(&r, 0),
        entry(&r, 1),
        entry(&r, 2),
        entry(&r, 3),
        entry(&r, 5),
    );
    // V: handed the wait at cycle 3, it waits until the set ends, then runs the first
    // vexp; the barrier holds the S pipe until V drains, and the second vexp reaches
    // V two cycles later (the barrier's cycle and its dispatch).
    let v = pipe(&r, Pipe::V);
    assert_eq!(wait.dispatch, 3);
    assert_eq!(wait.start, set.end);
    assert_eq!(v.flag_wait, set.end - 3);
    assert_eq!(v.flags.len(), 1);
    assert_eq!((v.flags[0].wait_instr, v.flags[0].cycles), (2, set.end - 3));
    assert_eq!(v.flags[0].longest.from, 3);
    assert_eq!(second.start, first.end + 2);
    assert_eq!(v.not_issued, 3 + 2);
    assert_eq!(v.barrier, 0);
    // MTE2 runs the load and the set, then sits out the barrier (the S pipe held from
    // cycle 4 to V's drain) and the second vexp.
    let mte2 = pipe(&r, Pipe::MTE2);
    assert_eq!(mte2.busy, load.end - load.start + 1);
    assert_eq!(mte2.barrier, first.end - set.end);
    assert_eq!(mte2.not_issued, 1 + (r.cycles - first.end));
    // The S pipe: four dispatches, held from 4 to the drain, the barrier, a dispatch.
    let s = pipe(&r, Pipe::S);
    assert_eq!(s.busy, 6);
    assert_eq!(s.barrier, first.end - 4);
    assert_eq!(s.not_issued, r.cycles - (first.end + 2));
    assert_eq!(s.longest_idle.map(|l| l.from), Some(4));
    // A pipe given nothing is idle for the whole run, at the barrier as well.
    let m = pipe(&r, Pipe::M);
    assert_eq!((m.barrier, m.not_issued), (s.barrier, r.cycles - s.barrier));
}

#[test]
fn a_full_queue_idles_the_pipes_the_scalar_pipe_cannot_feed() {
    // teach's V queue holds four: the sixth vexp waits until the second starts, and
    // the store behind it waits with it while MTE3 has nothing to do.
    let mut text = String::from(".tensor x f32[8, 64]\n");
    for _ in 0..6 {
        text.push_str("vexp.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}\n");
    }
    text.push_str("dma.f32 x[0], ub[4096], [512, 1, 1]\n");
    let r = timing(&text);
    let sixth = entry(&r, 5);
    let store = entry(&r, 6);
    let s = pipe(&r, Pipe::S);
    let blocked = sixth.dispatch - 1 - 5;
    assert!(blocked > 100, "{blocked}");
    assert_eq!(s.queue_full, blocked);
    let mte3 = pipe(&r, Pipe::MTE3);
    assert_eq!(mte3.queue_full, blocked);
    assert_eq!(
        mte3.not_issued,
        store.start - blocked + (r.cycles - store.end)
    );
    assert_eq!(pipe(&r, Pipe::V).idle(), 1);
}

#[test]
fn shared_bandwidth_is_its_own_part_of_a_transfer() {
    let r = timing(
        "\
.tensor x f32[8, 64]
.tensor y f32[8, 64]
dma.f32 ub[0], x[0], [512, 1, 1]
dma.f32 y[0], ub[4096], [512, 1, 1]
",
    );
    // Each alone is 84 cycles; together each is 63 longer (sim_pipeline.rs).
    for p in [Pipe::MTE2, Pipe::MTE3] {
        let s = pipe(&r, p);
        assert_eq!((s.busy, s.shared_bandwidth), (84, 63), "{s:#?}");
    }
}
