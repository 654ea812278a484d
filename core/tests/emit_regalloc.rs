//! emit: flattening, linear-scan register allocation with spilling, validation.

mod sync_support;

use sync_support::programs::{matmul_chain, streamed_exp};
use sync_support::*;
use tilescope::compile::SyncStrategy;
use tilescope::isa::{AluOp, Op, VSrc, Val, NUM_REGS};
use tilescope::machine::Machine;
use tilescope::passes::emit::emit;
use tilescope::types::{DType, MemSpace};

/// 40 values live at once, summed into one, broadcast into a tile and stored.
fn many_values(n: i64) -> tilescope::lowered::Lowered {
    let mut b = Builder::new();
    let y = b.tensor("y", &[8, 8]);
    let t = b.buffer("t", MemSpace::UB, 256, &[0], None);
    let vals: Vec<_> = (1..=n).map(|k| b.mov(k)).collect();
    let mut acc = b.mov(0);
    for v in &vals {
        acc = b.alu(AluOp::Add, acc, Val::Reg(*v));
    }
    let tt = tile(at(MemSpace::UB, None, 0), 8, 8);
    b.push(
        Op::VDup {
            dtype: DType::F32,
            dst: tt,
            value: VSrc::Reg(acc),
        },
        vec![wr(t)],
    );
    b.push(
        dma(gm(y, None, 0), at(MemSpace::UB, None, 0), 64),
        vec![rd(t), wr_gm(y)],
    );
    b.finish()
}

#[test]
fn more_live_values_than_registers_spill_and_compute_the_same() {
    let m = Machine::teach();
    let l = many_values(40);
    let (auto, _) = synced(&l, SyncStrategy::Auto, &m);
    let p = emit_ok(&auto, &m);
    assert!(p.validate().is_ok());
    assert!(count_ops(&p, |o| matches!(o, Op::Sst { .. })) > 0);
    assert!(count_ops(&p, |o| matches!(o, Op::Sld { .. })) > 0);
    let r = run(&auto, &m);
    assert_clean(&r, "spilled");
    let want = (40 * 41 / 2) as f32;
    assert!(r
        .output("y")
        .unwrap()
        .to_f32_vec()
        .iter()
        .all(|&v| v == want));
}

#[test]
fn few_values_do_not_spill() {
    let m = Machine::teach();
    let (auto, _) = synced(&many_values(20), SyncStrategy::Auto, &m);
    let p = emit_ok(&auto, &m);
    assert_eq!(
        count_ops(&p, |o| matches!(o, Op::Sld { .. } | Op::Sst { .. })),
        0
    );
}

#[test]
fn too_many_values_live_across_a_loop_is_a_diagnostic() {
    let mut b = Builder::new();
    let vals: Vec<_> = (0..NUM_REGS as i64 + 4).map(|k| b.mov(k)).collect();
    b.begin_loop(Val::Imm(2), 1);
    let mut acc = b.mov(0);
    for v in &vals {
        acc = b.alu(AluOp::Add, acc, Val::Reg(*v));
    }
    b.end_loop();
    let l = b.finish();
    let err = emit(&l, &Machine::teach()).unwrap_err();
    assert!(err[0].message.contains("live across loops"), "{err:#?}");
}

#[test]
fn values_used_in_a_loop_stay_in_registers_for_the_whole_loop() {
    // A value defined before the loop and read in it must keep its register even though
    // body-local values are allocated after its last use.
    let m = Machine::teach();
    let l = matmul_chain(3);
    let (auto, _) = synced(&l, SyncStrategy::Auto, &m);
    let p = emit_ok(&auto, &m);
    assert!(p.validate().is_ok());
    assert_clean(&run(&auto, &m), "matmul");
}

#[test]
fn emitted_double_buffered_program() {
    let m = Machine::teach();
    let (auto, _) = synced(&streamed_exp(4, 2), SyncStrategy::Auto, &m);
    let p = emit_ok(&auto, &m);
    // The loop's slot register is defined by emit at the top of the body.
    let text = tilescope::isa::asm::print(&p);
    assert!(text.contains("rem "), "{text}");
    // The text parses back to the same program.
    let back = tilescope::isa::asm::parse(&text).unwrap();
    assert_eq!(back.instrs.len(), p.instrs.len());
    insta::assert_snapshot!("emit_streamed_exp_2_slots", text);
}
