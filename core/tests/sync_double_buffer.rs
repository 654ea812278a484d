//! Double buffering: slot-following event ids let the load of tile i + 1 overlap the
//! compute of tile i, which barriers cannot.

mod sync_support;

use sync_support::programs::streamed_exp;
use sync_support::*;
use tilescope::compile::SyncStrategy;
use tilescope::isa::{Op, Val};
use tilescope::machine::Machine;
use tilescope::types::Pipe;

#[test]
fn double_buffered_loop_uses_dynamic_ids_and_beats_barriers() {
    let m = Machine::teach();
    let l = streamed_exp(8, 2);
    let (auto, report, ra) = assert_sync_correct(&l, &m, true);
    assert!(
        report.pairs.iter().any(|p| p.dynamic && p.ids.len() == 2),
        "{report:#?}"
    );
    let p = emit_ok(&auto, &m);
    let dynamic = count_ops(&p, |o| {
        matches!(
            o,
            Op::SetFlag {
                id: Val::Reg(_),
                ..
            } | Op::WaitFlag {
                id: Val::Reg(_),
                ..
            }
        )
    });
    assert!(dynamic >= 4, "{}", tilescope::isa::asm::print(&p));

    let (bar, _) = synced(&l, SyncStrategy::Barrier, &m);
    let rb = run(&bar, &m);
    assert!(
        ra.cycles * 4 < rb.cycles * 3,
        "auto {} cycles, barrier {}",
        ra.cycles,
        rb.cycles
    );

    // Some load (MTE2) runs while an exp (V) runs.
    let spans = |pipe: Pipe| -> Vec<(u64, u64)> {
        ra.trace
            .iter()
            .filter(|e| e.pipe == pipe && p.instrs[e.index as usize].op.pipe() == pipe)
            .filter(|e| {
                matches!(
                    p.instrs[e.index as usize].op,
                    Op::Dma { .. } | Op::VUnary { .. }
                )
            })
            .map(|e| (e.start, e.end))
            .collect()
    };
    let (loads, exps) = (spans(Pipe::MTE2), spans(Pipe::V));
    assert_eq!((loads.len(), exps.len()), (8, 8));
    let overlapped = exps
        .iter()
        .filter(|(vs, ve)| loads.iter().any(|(ls, le)| ls < ve && vs < le))
        .count();
    assert!(overlapped >= 4, "loads {loads:?} exps {exps:?}");
}

#[test]
fn double_buffered_sync_is_minimal() {
    assert_sync_minimal(&streamed_exp(8, 2), &Machine::teach());
    assert_sync_minimal(&streamed_exp(9, 3), &Machine::teach());
}

#[test]
fn single_buffer_barrier_and_auto_agree_on_a3() {
    let m = Machine::a3();
    assert_sync_correct(&streamed_exp(3, 1), &m, true);
    assert_sync_minimal(&streamed_exp(3, 1), &m);
}
