//! emit: flattening, linear-scan register allocation with spilling, validation.

mod sync_support;

use sync_support::programs::{matmul_chain, streamed_exp};
use sync_support::*;
use tilescope::compile::{compile, CompileOptions, SyncStrategy};
use tilescope::isa::operands::RegRole;
use tilescope::isa::{AluOp, Op, VSrc, Val, NUM_REGS};
use tilescope::machine::Machine;
use tilescope::types::{DType, MemSpace};

/// `n` values live at once, summed into one (in a loop of two iterations when
/// `in_loop`, the values defined before it), broadcast into a tile and stored.
fn many_values(n: i64, in_loop: bool) -> tilescope::lowered::Lowered {
    let mut b = Builder::new();
    let y = b.tensor("y", &[8, 8]);
    let t = b.buffer("t", MemSpace::UB, 256, &[0], None);
    let vals: Vec<_> = (1..=n).map(|k| b.mov(k)).collect();
    if in_loop {
        b.begin_loop(Val::Imm(2), 1);
    }
    let mut acc = b.mov(0);
    for v in &vals {
        acc = b.alu(AluOp::Add, acc, Val::Reg(*v));
    }
    if in_loop {
        b.end_loop();
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
    let l = many_values(40, false);
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
    // a3 has 32 registers.
    let m = Machine::a3();
    let (auto, _) = synced(&many_values(20, false), SyncStrategy::Auto, &m);
    let p = emit_ok(&auto, &m);
    assert_eq!(
        count_ops(&p, |o| matches!(o, Op::Sld { .. } | Op::Sst { .. })),
        0
    );
}

#[test]
fn values_live_across_a_loop_spill_once_before_it_and_reload_inside() {
    let m = Machine::teach();
    let (auto, _) = synced(
        &many_values(NUM_REGS as i64 + 4, true),
        SyncStrategy::Auto,
        &m,
    );
    let p = emit_ok(&auto, &m);
    let start = p
        .instrs
        .iter()
        .position(|i| matches!(i.op, Op::Loop { .. }))
        .expect("the loop");
    let end = p
        .instrs
        .iter()
        .position(|i| matches!(i.op, Op::EndLoop))
        .expect("its end");
    let slot_ops = |range: std::ops::Range<usize>, store: bool| -> Vec<u32> {
        p.instrs[range]
            .iter()
            .filter_map(|i| match i.op {
                Op::Sst { slot, .. } if store => Some(slot),
                Op::Sld { slot, .. } if !store => Some(slot),
                _ => None,
            })
            .collect()
    };
    // A value defined before the loop is stored once, before it, and reloaded in it;
    // the loop stores nothing to its slot.
    let before = slot_ops(0..start, true);
    let reloaded = slot_ops(start..end, false);
    let stored_inside = slot_ops(start..end, true);
    let carried: Vec<u32> = before
        .iter()
        .copied()
        .filter(|s| reloaded.contains(s) && !stored_inside.contains(s))
        .collect();
    assert!(!carried.is_empty(), "{p}");
    let r = run(&auto, &m);
    assert_clean(&r, "spilled across a loop");
    let want = ((NUM_REGS as i64 + 4) * (NUM_REGS as i64 + 5) / 2) as f32;
    let y = r.output("y").unwrap().to_f32_vec();
    assert!(y.iter().all(|&v| v == want), "{y:?}");
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

/// `teach` with `regs` scalar registers.
fn teach_with(regs: u32) -> Machine {
    Machine {
        scalar_regs: regs,
        ..Machine::teach()
    }
}

fn options(machine: Machine) -> CompileOptions {
    CompileOptions {
        machine: Some(machine),
        ..CompileOptions::default()
    }
}

fn spills_source() -> &'static str {
    tilescope::examples::Example::find("spills")
        .expect("the spills example")
        .source
}

#[test]
fn the_spills_example_spills_on_teach_and_matches_the_reference() {
    let teach = CompileOptions {
        preset: Some("teach".into()),
        ..CompileOptions::default()
    };
    let r = tilescope::run::run(spills_source(), &teach, Vec::new(), 1);
    assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
    assert!(
        r.sim.errors.is_empty() && r.sim.races.is_empty(),
        "{:#?}",
        r.sim.errors
    );
    assert!(r.reference_match, "max abs err {}", r.max_abs_err);
    assert!(r.bound <= r.sim.cycles);
    let p = r.compile.program.as_ref().expect("compiled");
    assert!(count_ops(p, |o| matches!(o, Op::Sst { .. })) > 0);
    assert!(count_ops(p, |o| matches!(o, Op::Sld { .. })) > 0);
    // With registers enough nothing spills, and the S pipe does less.
    let roomy = tilescope::run::run(spills_source(), &options(teach_with(32)), Vec::new(), 1);
    assert!(roomy.reference_match);
    let q = roomy.compile.program.as_ref().expect("compiled");
    assert_eq!(
        count_ops(q, |o| matches!(o, Op::Sld { .. } | Op::Sst { .. })),
        0
    );
    assert!(
        roomy.sim.cycles < r.sim.cycles,
        "{} vs {}",
        roomy.sim.cycles,
        r.sim.cycles
    );
}

/// The assembly students read: the loop variable `r` stored once per iteration of its
/// loop, before the inner loops, and reloaded where an address uses it.
#[test]
fn the_emit_dump_names_each_spilled_value() {
    let teach = CompileOptions {
        preset: Some("teach".into()),
        ..CompileOptions::default()
    };
    let result = compile(spills_source(), &teach);
    let asm = result.asm.expect("compiled");
    let lines: Vec<&str> = asm.lines().collect();
    let store_r = lines
        .iter()
        .position(|l| l.trim_start().starts_with("sst ") && l.ends_with("; spill r"))
        .expect("r is spilled");
    let inner_loop = lines
        .iter()
        .position(|l| l.trim_start().starts_with("loop r") && l.contains("!at 13:"))
        .expect("the c loop");
    assert!(store_r < inner_loop, "{asm}");
    assert!(
        lines[inner_loop..]
            .iter()
            .any(|l| l.trim_start().starts_with("sld ") && l.ends_with("; reload r")),
        "{asm}"
    );
    // Every spill instruction says what it moves.
    for l in &lines {
        let t = l.trim_start();
        if t.starts_with("sst ") {
            assert!(l.contains(" ; spill "), "{l}");
        }
        if t.starts_with("sld ") {
            assert!(l.contains(" ; reload "), "{l}");
        }
    }
    let emit_ir = &result.passes.last().expect("passes").ir;
    assert_eq!(emit_ir.trim_end(), asm.trim_end());
    insta::assert_snapshot!("emit_spills_teach", asm);
}

/// A loop counter keeps its register for the whole loop: nothing in the body writes it
/// (`endloop` does) and no spill names it, however few registers there are.
#[test]
fn pinned_loop_counters_never_spill() {
    for e in tilescope::examples::ALL {
        let Some((regs, result)) = (1..=32).find_map(|k| {
            let r = compile(e.source, &options(teach_with(k)));
            r.diagnostics.is_empty().then_some((k, r))
        }) else {
            panic!("{} compiles on no register count", e.name);
        };
        let p = result.program.expect("compiled");
        let mut open: Vec<(tilescope::isa::Reg, usize)> = Vec::new();
        for (i, ins) in p.instrs.iter().enumerate() {
            for (r, role) in registers_of(&ins.op) {
                let pinned = open.iter().any(|&(c, _)| c == r);
                assert!(
                    !(pinned && role == RegRole::Def),
                    "{} with {regs} registers: #{i} writes a loop counter\n{p}",
                    e.name
                );
            }
            match ins.op {
                Op::Loop { counter, .. } => open.push((counter, i)),
                Op::EndLoop => {
                    open.pop();
                }
                _ => {}
            }
        }
        for (_, note) in &p.notes {
            assert!(
                !note.starts_with("spill iteration of"),
                "{}: {note}",
                e.name
            );
        }
        let run = tilescope::run::run(e.source, &options(teach_with(regs)), Vec::new(), 1);
        assert!(
            run.reference_match && run.sim.errors.is_empty() && run.sim.races.is_empty(),
            "{} with {regs} registers: {:?}",
            e.name,
            run.sim.errors
        );
        assert!(run.bound <= run.sim.cycles, "{}", e.name);
    }
}

fn registers_of(op: &Op) -> Vec<(tilescope::isa::Reg, RegRole)> {
    let mut out = Vec::new();
    tilescope::isa::operands::registers(op, &mut |r, role| out.push((r, role)));
    out
}

#[test]
fn too_few_registers_for_the_loop_counters_is_a_located_diagnostic() {
    let source = "kernel k(x: f32[2, 2, 2, 16], y: out f32[2, 2, 2, 16]) {
    for a in 0..2 {
        for b in 0..2 {
            for c in 0..2 {
                store y[a, b, c, :] = load x[a, b, c, :];
            }
        }
    }
}";
    // Three counters fill four registers; reloading `a * 256 + b * 128` and `c * 64`
    // for one add needs two more.
    let r = compile(source, &options(teach_with(4)));
    assert_eq!(r.diagnostics.len(), 1, "{:#?}", r.diagnostics);
    let d = &r.diagnostics[0];
    assert!(
        d.message.contains("keep 3 loop counters")
            && d.message.contains("needs 2 more")
            && d.message.contains("has 4 scalar registers (scalar_regs)"),
        "{}",
        d.message
    );
    let span = d.span.expect("located");
    assert!(
        source[span.start as usize..].starts_with("for "),
        "{span:?}"
    );
    // One register more is enough.
    let ok = tilescope::run::run(source, &options(teach_with(5)), Vec::new(), 1);
    assert!(ok.diagnostics.is_empty(), "{:#?}", ok.diagnostics);
    assert!(ok.reference_match);
}
