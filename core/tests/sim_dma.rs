mod sim_support;

use sim_support::*;
use tilescope::types::Pipe;

#[test]
fn dma_round_trip_copies_and_times_by_hand() {
    let p = load("dma_round_trip");
    let r = run(&p);
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    assert!(r.races.is_empty(), "{:#?}", r.races);
    assert_eq!(r.output("y").unwrap().data, r.output("x").unwrap().data);
    // See the comments in dma_round_trip.tasm.
    let spans: Vec<(u32, Pipe, u64, u64)> = r
        .trace
        .iter()
        .map(|e| (e.index, e.pipe, e.start, e.end))
        .collect();
    assert_eq!(
        spans,
        vec![
            (0, Pipe::MTE2, 1, 53),
            (1, Pipe::MTE2, 53, 54),
            (2, Pipe::MTE3, 54, 55),
            (3, Pipe::MTE3, 55, 107)
        ]
    );
    assert_eq!(r.cycles, 107);
    assert_eq!(r.gm_bytes, 2048);
    assert_eq!(r.pipe(Pipe::MTE2).unwrap().busy, 53);
    assert_eq!(r.pipe(Pipe::MTE3).unwrap().instructions, 2);
    assert_eq!(r.flags.len(), 1);
    assert_eq!(
        (r.flags[0].set_cycle, r.flags[0].wait_cycle),
        (54, Some(54))
    );
    assert_eq!(r.trace[0].prov.step, Some(1));
}

#[test]
fn timing_only_mode_matches_functional_timing() {
    let p = load("dma_round_trip");
    let f = run(&p);
    let t = tilescope::sim::simulate(
        &p,
        &tilescope::machine::Machine::teach(),
        vec![],
        tilescope::sim::SimMode {
            functional: false,
            trace: true,
        },
    );
    assert!(t.errors.is_empty(), "{:#?}", t.errors);
    assert_eq!(t.cycles, f.cycles);
    assert_eq!(t.trace, f.trace);
    assert!(t.outputs.is_empty());
}
