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

/// `dmapad` (Ascend's DataCopyPad): each row of the tile is `left` lanes of the fill,
/// `len` source elements, then the fill to `width` lanes. Here rows 1 and 2 of an i32
/// tensor whose elements are their flat indices, shifted right by 3 lanes with two lanes
/// of -1 after; then a row of f16 that is all fill (`len=0`).
#[test]
fn dmapad_fills_both_sides_of_each_row() {
    let p = parse(
        ".tensor m i32[4, 8]
.tensor y i32[2, 8]
.tensor h f16[2, 8]
.tensor yh f16[1, 8]
dmapad.i32 ub[0], m[32], rows=2, len=3, left=3, width=8, sstride=8, dstride=8, value=-1
set_flag MTE2, MTE3, 0
wait_flag MTE2, MTE3, 0
dma.i32 y[0], ub[0], [16, 1, 1]
dmapad.f16 ub[256], h[0], rows=1, len=0, left=8, width=8, sstride=8, dstride=8, value=-inf
set_flag MTE2, MTE3, 1
wait_flag MTE2, MTE3, 1
dma.f16 yh[0], ub[256], [8, 1, 1]
",
    );
    let r = run(&p);
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    assert!(r.races.is_empty(), "{:#?}", r.races);
    let y = r.output("y").unwrap();
    let got: Vec<i32> = (0..16).map(|i| y.get_i32(i)).collect();
    assert_eq!(
        got,
        vec![-1, -1, -1, 8, 9, 10, -1, -1, -1, -1, -1, 16, 17, 18, -1, -1]
    );
    let yh = r.output("yh").unwrap();
    assert!((0..8).all(|i| yh.get(i) == f32::NEG_INFINITY));
    // Rows of fill only read nothing, so their source may lie past the tensor (the
    // rows a padded load fills below it): rows 4 and 5 of `m` do not exist.
    let below = parse(
        ".tensor m i32[4, 8]
.tensor y i32[2, 8]
dmapad.i32 ub[0], m[32], rows=2, len=0, left=0, width=8, sstride=8, dstride=8, value=7
set_flag MTE2, MTE3, 0
wait_flag MTE2, MTE3, 0
dma.i32 y[0], ub[0], [16, 1, 1]
",
    );
    let r = run(&below);
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    let y = r.output("y").unwrap();
    assert!((0..16).all(|i| y.get_i32(i) == 7));
    // A row that would overflow its width is a simulation error, not a silent clip.
    let bad = parse(
        ".tensor m i32[4, 8]
dmapad.i32 ub[0], m[0], rows=1, len=6, left=3, width=8, sstride=8, dstride=8, value=0
",
    );
    let r = run(&bad);
    assert!(
        r.errors
            .iter()
            .any(|e| e.message.contains("fills 3 lanes and copies 6")),
        "{:#?}",
        r.errors
    );
}
