mod sim_support;

use sim_support::*;
use tilescope::machine::Machine;
use tilescope::sim::{simulate, SimErrorKind, SimMode, SimResult};
use tilescope::tensor::Tensor;
use tilescope::types::DType;

fn kinds(r: &SimResult) -> Vec<SimErrorKind> {
    r.errors.iter().map(|e| e.kind).collect()
}

const HEAD: &str = ".tensor x f32[8, 64]\n.tensor idx i32[8]\n.tensor y f32[8, 64]\n";

fn run_text(body: &str) -> SimResult {
    run(&parse(&format!("{HEAD}{body}")))
}

#[test]
fn setting_a_set_flag_names_both_sets() {
    let r = run_text("set_flag MTE2, V, 2\nset_flag MTE2, V, 2\nwait_flag MTE2, V, 2\n");
    assert_eq!(kinds(&r), vec![SimErrorKind::FlagAlreadySet]);
    let e = &r.errors[0];
    assert_eq!(e.instr.as_ref().unwrap().index, 1);
    assert_eq!(e.related[0].index, 0);
    assert!(
        e.message.contains("set_flag(MTE2, V, 2) at #1"),
        "{}",
        e.message
    );
}

#[test]
fn flags_left_set_are_reported() {
    let r = run_text("set_flag V, MTE3, 5\n");
    assert_eq!(kinds(&r), vec![SimErrorKind::FlagLeftSet]);
    assert!(
        r.errors[0].message.contains("(V, MTE3, 5) set by #0"),
        "{}",
        r.errors[0].message
    );
    assert_eq!(r.flags[0].wait_cycle, None);
}

#[test]
fn a_wait_nobody_satisfies_is_a_deadlock_not_a_hang() {
    let r = run(&load("deadlock"));
    assert!(
        kinds(&r).contains(&SimErrorKind::Deadlock),
        "{:#?}",
        r.errors
    );
    let e = r
        .errors
        .iter()
        .find(|e| e.kind == SimErrorKind::Deadlock)
        .unwrap();
    assert_eq!(e.instr.as_ref().unwrap().index, 2);
    assert!(
        e.message.contains("V waits at #2 for flag (MTE2, V, 0)"),
        "{}",
        e.message
    );
    // The stray event 1 is also left set.
    assert!(kinds(&r).contains(&SimErrorKind::FlagLeftSet));
}

#[test]
fn a_full_queue_behind_a_blocked_wait_deadlocks_the_scalar_pipe() {
    // teach V queue depth 4: the wait and three vexps fill it; the fourth vexp cannot be
    // dispatched, so the set_flag behind it never is.
    let mut body = String::from("wait_flag MTE2, V, 0\n");
    body.push_str(&"vexp.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}\n".repeat(4));
    body.push_str("set_flag MTE2, V, 0\n");
    let r = run_text(&body);
    let e = r
        .errors
        .iter()
        .find(|e| e.kind == SimErrorKind::Deadlock)
        .expect("deadlock");
    assert!(
        e.message
            .contains("S cannot dispatch #4 because the V queue is full"),
        "{}",
        e.message
    );
    assert_eq!(e.related.len(), 1);
}

#[test]
fn dynamic_event_id_out_of_range() {
    let r = run_text("mov r1, 8\nset_flag MTE2, V, r1\n");
    assert_eq!(kinds(&r), vec![SimErrorKind::EventIdRange]);
    assert_eq!(
        r.errors[0].instr.as_ref().unwrap().text,
        "set_flag MTE2, V, r1"
    );
}

#[test]
fn instruction_cap_ends_a_runaway_loop() {
    let mut m = Machine::teach();
    m.limits.max_instructions = 1000;
    let r = run_on(
        &parse(&format!(
            "{HEAD}mov r3, 1000000000\nloop r1, r3\nadd r2, r2, 1\nendloop\n"
        )),
        &m,
    );
    // The trip count is in a register, so only the running count can stop it (an
    // immediate count is rejected before the run: see tests/adversarial.rs).
    assert_eq!(kinds(&r), vec![SimErrorKind::InstructionLimit]);
    assert!(r.errors[0].message.contains("limits.max_instructions"));
    assert_eq!(r.instructions, 1001);
}

#[test]
fn cycle_cap_ends_a_long_run() {
    let mut m = Machine::teach();
    m.limits.max_cycles = 50;
    let r = run_on(&load("dma_round_trip"), &m);
    assert_eq!(kinds(&r), vec![SimErrorKind::CycleLimit]);
}

#[test]
fn out_of_bounds_and_misaligned_addresses_name_the_instruction() {
    let r = run_text("dma.f32 ub[130048], x[0], [512, 1, 1] !step 4\n");
    assert_eq!(kinds(&r), vec![SimErrorKind::Memory]);
    let e = &r.errors[0];
    assert!(e.message.contains("out of bounds"), "{}", e.message);
    assert_eq!(e.instr.as_ref().unwrap().prov.step, Some(4));
    let r = run_text("vexp.f32 ub[4]{1, 8, 8}, ub[64]{1, 8, 8}\n");
    assert!(
        r.errors[0].message.contains("not aligned to 32"),
        "{}",
        r.errors[0].message
    );
    let r = run_text("dma.f32 ub[0], x[2040], [8, 1, 1]\n");
    assert!(
        r.errors[0]
            .message
            .contains("x[0x7f8..0x818) is out of bounds"),
        "{}",
        r.errors[0].message
    );
    let r = run_text("mov r1, -64\nvexp.f32 ub[r1]{1, 8, 8}, ub[0]{1, 8, 8}\n");
    assert!(
        r.errors[0].message.contains("negative address"),
        "{}",
        r.errors[0].message
    );
}

#[test]
fn gather_and_scatter_check_their_indices() {
    let gather = "\
dma.i32 ub[0], idx[0], [8, 1, 1]
set_flag MTE2, V, 0
wait_flag MTE2, V, 0
vmul.i32 ub[0]{1, 8, 8}, ub[0]{1, 8, 8}, MULT
set_flag V, MTE2, 0
wait_flag V, MTE2, 0
gather.f32 ub[256], x[0], ub[0], rows=8, len=64, sstride=64, dstride=64
set_flag MTE2, MTE3, 0
wait_flag MTE2, MTE3, 0
scatter.f32 y[0], ub[256], ub[0], rows=8, len=64, sstride=64, dstride=64
";
    // idx = k: an identity gather and scatter ...
    let r = run_text(&gather.replace("MULT", "1"));
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    assert_eq!(r.output("y").unwrap().data, r.output("x").unwrap().data);
    // ... and k * 2, which reaches row 14 of an 8-row tensor.
    let r = run_text(&gather.replace("MULT", "2"));
    assert_eq!(kinds(&r), vec![SimErrorKind::Index]);
    let e = &r.errors[0];
    assert!(
        e.message
            .contains("gather index 8 (element 4 of the index tile) is out of range 0..8 for `x`"),
        "{}",
        e.message
    );
    assert_eq!(e.instr.as_ref().unwrap().index, 6);
}

#[test]
fn scalar_division_by_zero_is_an_error() {
    let r = run_text("mov r1, 0\ndiv r2, r2, r1\n");
    assert_eq!(kinds(&r), vec![SimErrorKind::Scalar]);
    assert!(r.errors[0].message.contains("division by zero"));
}

#[test]
fn zero_trip_loops_skip_their_body() {
    let r = run_text("mov r3, 0\nloop r1, r3\n  add r2, r2, 1\n  set_flag V, MTE3, 0\nendloop\nloop r1, -2\nendloop\n");
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    // mov, then each loop jumps past its endloop.
    assert_eq!(r.instructions, 3);
}

#[test]
fn input_binding_mismatches_are_errors() {
    let p = load("dma_round_trip");
    let r = simulate(&p, &Machine::teach(), vec![], SimMode::FULL);
    assert_eq!(kinds(&r), vec![SimErrorKind::Invalid]);
    let bad = vec![
        Tensor::zeros(DType::F16, vec![16, 16]),
        Tensor::zeros(DType::F32, vec![16, 16]),
    ];
    let r = simulate(&p, &Machine::teach(), bad, SimMode::FULL);
    assert!(
        r.errors[0].message.contains("input `x` is f16"),
        "{}",
        r.errors[0].message
    );
}

#[test]
fn dma_dimensions_beyond_the_machine_are_rejected() {
    let r = run_text("dma.f32 ub[0], x[0], [2, 256, 256], [2, 128, 128], [64, 1, 1]\n");
    assert_eq!(kinds(&r), vec![SimErrorKind::Invalid]);
    assert!(
        r.errors[0].message.contains("at most 2"),
        "{}",
        r.errors[0].message
    );
}

#[test]
fn a_register_past_the_machine_s_file_is_rejected() {
    // teach has 8 scalar registers: r8 does not exist there, though the ISA encodes it.
    let p = parse(&format!("{HEAD}mov r8, 1\n"));
    let r = run_on(&p, &Machine::teach());
    assert_eq!(kinds(&r), vec![SimErrorKind::Invalid]);
    assert!(
        r.errors[0]
            .message
            .contains("names r8; teach has 8 scalar registers (scalar_regs)"),
        "{}",
        r.errors[0].message
    );
    assert!(run_on(&p, &Machine::a3()).errors.is_empty());
}
