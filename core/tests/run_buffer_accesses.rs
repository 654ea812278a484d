//! The buffer table a compile reports and the on-chip accesses a run records per trace
//! entry: on a double-buffered stream the loads alternate between the two slots of the
//! loaded tile, and every access lies inside a buffer slot of its space.

use tilescope::compile::{BufferInfo, CompileOptions};
use tilescope::run::{run, RunResult};
use tilescope::sim::TraceAccess;
use tilescope::types::{MemSpace, Pipe};

const STREAM: &str = "\
kernel stream(x: f32[128, 64], y: out f32[128, 64]) {
    for r in 0..128 step 16 @buffers(2) {
        let t = load x[r .. r + 16, :];
        store y[r .. r + 16, :] = exp(t);
    }
}
";

fn slot_of(buffers: &[BufferInfo], a: &TraceAccess) -> Option<(usize, usize)> {
    buffers.iter().enumerate().find_map(|(b, info)| {
        let slot = info
            .addrs
            .iter()
            .position(|&addr| info.space == a.space && addr <= a.lo && a.hi <= addr + info.bytes)?;
        Some((b, slot))
    })
}

fn streamed() -> RunResult {
    let r = run(STREAM, &CompileOptions::default(), Vec::new(), 1);
    assert!(
        r.diagnostics.is_empty() && r.sim.errors.is_empty() && r.reference_match,
        "{:?} {:?}",
        r.diagnostics,
        r.sim.errors
    );
    r
}

#[test]
fn the_buffer_table_lists_the_double_buffered_tile_with_two_disjoint_slots() {
    let r = streamed();
    let buffers = &r.compile.buffers;
    let t = buffers
        .iter()
        .find(|b| b.name == "t")
        .unwrap_or_else(|| panic!("no buffer `t` in {buffers:?}"));
    assert_eq!(t.space, MemSpace::UB);
    assert_eq!(t.bytes, 16 * 64 * 4);
    assert_eq!(t.addrs.len(), 2, "{t:?}");
    let (a, b) = (t.addrs[0].min(t.addrs[1]), t.addrs[0].max(t.addrs[1]));
    assert!(a + t.bytes <= b, "slots overlap: {t:?}");
}

#[test]
fn accesses_fall_inside_slots_and_the_loads_alternate_between_them() {
    let r = streamed();
    assert!(!r.sim.accesses.is_empty());
    assert!(r.sim.accesses.windows(2).all(|w| w[0].entry <= w[1].entry));
    for a in &r.sim.accesses {
        assert!(a.lo < a.hi && a.space != MemSpace::GM, "{a:?}");
        assert!(
            slot_of(&r.compile.buffers, a).is_some(),
            "{a:?} outside every slot of {:?}",
            r.compile.buffers
        );
    }
    let t = r.compile.buffers.iter().position(|b| b.name == "t");
    let load_slots: Vec<usize> = r
        .sim
        .accesses
        .iter()
        .filter(|a| a.write && r.sim.trace[a.entry as usize].pipe == Pipe::MTE2)
        .filter_map(|a| slot_of(&r.compile.buffers, a))
        .filter(|&(b, _)| Some(b) == t)
        .map(|(_, slot)| slot)
        .collect();
    assert_eq!(load_slots.len(), 8, "one load per iteration");
    for (i, slot) in load_slots.iter().enumerate() {
        assert_eq!(*slot, load_slots[0] ^ (i % 2), "loads {load_slots:?}");
    }
    // The V pipe's flags touch no memory; each of its 8 exps reads and writes UB.
    let of = |i: usize| r.sim.accesses.iter().filter(move |a| a.entry as usize == i);
    let exps: Vec<usize> = (0..r.sim.trace.len())
        .filter(|&i| r.sim.trace[i].pipe == Pipe::V && of(i).next().is_some())
        .collect();
    assert_eq!(exps.len(), 8);
    for i in exps {
        assert!(of(i).any(|a| a.write) && of(i).any(|a| !a.write));
    }
}

#[test]
fn results_without_the_new_fields_still_read() {
    let old: RunResult = serde_json::from_str(r#"{"cycles": 5, "compile": {"kernels": ["k"]}}"#)
        .expect("older JSON reads");
    assert!(old.sim.accesses.is_empty() && old.compile.buffers.is_empty());
    let r = streamed();
    let back: RunResult =
        serde_json::from_str(&serde_json::to_string(&r).expect("serialises")).expect("reads");
    assert_eq!(back.sim.accesses, r.sim.accesses);
    assert_eq!(back.compile.buffers, r.compile.buffers);
}
