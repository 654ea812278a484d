//! list-schedule: within each straight-line run of the lowered program, issues the
//! instructions in the order their pipes would start them, rather than in the order
//! the steps were written.
//!
//! The scalar pipe dispatches the program in order, and a pipe's queue holds only a few
//! instructions (`queue_depth`). In source order a loop body hands the vector pipe a
//! long chain that waits for a product while the next load, which needs nothing from
//! that chain, sits behind it: the scalar pipe stops at the full vector queue and the
//! load pipe idles ("behind a full queue" in the stalls view). This pass estimates each
//! instruction's start with the simulator's prices (each pipe one instruction at a
//! time, each instruction after the ones it depends on) and emits the run in the order
//! of those starts, so the scalar pipe reaches each instruction about when its pipe
//! can take it.
//!
//! What it keeps: every pipe's own order (a pipe runs its queue in order; only the
//! interleaving of pipes changes), every register's definitions and uses, and the order
//! of any two accesses of one buffer or tensor whose byte ranges may overlap, with a
//! write among them (more cautious than insert-sync's alias view, which also tells
//! slots and GM boxes apart). Instructions never cross a loop. So every
//! dependence the program had holds in the same order, and insert-sync, which runs next,
//! orders them across pipes as before; [`verify`] checks that on the result without
//! trusting the schedule.

use super::{Context, Pass};
use crate::diag::{Diagnostic, Diagnostics};
use crate::isa::operands::{operands, Operand, RegRole};
use crate::isa::{Reg, Val};
use crate::lowered::{Access, Instr, Item, Lowered};
use crate::machine::Machine;
use crate::types::Pipe;
use tilescope_machine::sim::memory::Resolved;

pub struct ListSchedule;

impl Pass for ListSchedule {
    type In = crate::passes::stage::Lowered;
    type Out = crate::passes::stage::Lowered;

    fn name(&self) -> &'static str {
        "list-schedule"
    }

    fn description(&self) -> &'static str {
        "issue each straight-line run in the order its pipes would start it, so a full queue does not hold back independent work"
    }

    fn optional(&self) -> bool {
        true
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        if !cx.auto_sync() {
            // Barriers go at step boundaries in program order: interleaving the steps
            // would only add barriers.
            return Ok(());
        }
        let machine = cx.machine();
        let lowered = cx.lowered_mut(self.name())?;
        schedule(lowered, &machine).map_err(|d| vec![d])
    }
}

/// Schedules every straight-line run of `lowered`, then checks the result against the
/// original order ([`verify`]).
pub fn schedule(lowered: &mut Lowered, machine: &Machine) -> Result<(), Diagnostic> {
    let before = lowered.body.clone();
    block(&mut lowered.body, machine, 0);
    verify(&before, &lowered.body, 0)
}

fn block(items: &mut Vec<Item>, machine: &Machine, depth: usize) {
    // Deeper nests are rejected before lowering; were one here, it would keep its
    // order, and `verify` would report it.
    if depth > crate::limits::MAX_LOWERED_LOOP_DEPTH {
        return;
    }
    let mut out = Vec::with_capacity(items.len());
    let mut run: Vec<Instr> = Vec::new();
    for item in std::mem::take(items) {
        match item {
            Item::Instr(i) => run.push(i),
            Item::Loop(mut l) => {
                out.extend(
                    order(std::mem::take(&mut run), machine)
                        .into_iter()
                        .map(Item::Instr),
                );
                block(&mut l.body, machine, depth + 1);
                out.push(Item::Loop(l));
            }
        }
    }
    out.extend(order(run, machine).into_iter().map(Item::Instr));
    *items = out;
}

/// What one instruction reads and writes, for the dependence test.
struct Footprint {
    pipe: Pipe,
    uses: Vec<Reg>,
    defs: Vec<Reg>,
    accesses: Vec<Access>,
}

fn footprint(i: &Instr) -> Footprint {
    let (mut uses, mut defs) = (Vec::new(), Vec::new());
    operands(&i.op, &mut |o: Operand| {
        o.registers(&mut |r, role| match role {
            RegRole::Use => uses.push(r),
            RegRole::Def => defs.push(r),
        })
    });
    Footprint {
        pipe: i.pipe(),
        uses,
        defs,
        accesses: i.accesses.clone(),
    }
}

/// Whether `b`, after `a` in the original order, must stay after it.
fn depends(a: &Footprint, b: &Footprint) -> bool {
    if a.pipe == b.pipe {
        return true;
    }
    let hits = |x: &[Reg], y: &[Reg]| x.iter().any(|r| y.contains(r));
    if hits(&a.defs, &b.uses) || hits(&a.defs, &b.defs) || hits(&a.uses, &b.defs) {
        return true;
    }
    a.accesses.iter().any(|x| {
        b.accesses
            .iter()
            .any(|y| x.target == y.target && (x.write || y.write) && x.bytes_may_overlap(y))
    })
}

/// The simulator's price of `i`, with the immediates it names and a tile's worth for a
/// size held in a register (a tail's, unknown until the run).
fn estimate(i: &Instr, machine: &Machine) -> u64 {
    let mut r = Resolved::default();
    operands(&i.op, &mut |o: Operand| {
        if let Operand::Scalar { val, slot } = o {
            if let Some(v) = r.val.get_mut(usize::from(slot)) {
                *v = match val {
                    Val::Imm(x) => x,
                    Val::Reg(_) => 16,
                };
            }
        }
    });
    tilescope_machine::sim::timing::cost(machine, &i.op, &r).cycles
}

/// Runs longer than this keep their order: the schedule compares every pair of a run's
/// instructions, and a run this long is unrolled code whose steps already interleave.
const MAX_RUN: usize = 1024;

/// The run in the order of its estimated starts; among instructions that could start
/// at the same time, the one with the longest chain of work after it first (which gave
/// attention on `teach` 23 cycles, moe_router and swiglu a few), then the original
/// order.
///
/// Scalar instructions (address arithmetic) are scheduled like the others, so they go
/// as early as their registers allow. Pulling each in only just before the first
/// instruction that needs it, to hold its registers for less time, was measured: it
/// gave up `spills`' gain on `teach` (47950 cycles against 52029 unscheduled) and cost
/// int4_gemv 7 cycles there, and no example spilled more with them early.
fn order(run: Vec<Instr>, machine: &Machine) -> Vec<Instr> {
    let n = run.len();
    if !(3..=MAX_RUN).contains(&n) {
        return run;
    }
    let prints: Vec<Footprint> = run.iter().map(footprint).collect();
    let cost: Vec<u64> = run.iter().map(|i| estimate(i, machine)).collect();
    // succs[i]: the later instructions that must follow i; waiting[j]: how many of
    // j's predecessors are not yet placed; ready[j]: when the last placed one ends.
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting = vec![0usize; n];
    for j in 0..n {
        for i in 0..j {
            if depends(&prints[i], &prints[j]) {
                succs[i].push(j);
                waiting[j] += 1;
            }
        }
    }
    // tail[i]: the longest chain of costs from i to the end of the run.
    let mut tail = vec![0u64; n];
    for i in (0..n).rev() {
        tail[i] = cost[i] + succs[i].iter().map(|&k| tail[k]).max().unwrap_or(0);
    }
    let mut ready = vec![0u64; n];
    let mut free = [0u64; 7];
    let mut done = vec![false; n];
    let mut picked = Vec::with_capacity(n);
    for _ in 0..n {
        let start = |j: usize| ready[j].max(free[prints[j].pipe.index()]);
        let Some(j) = (0..n)
            .filter(|&j| !done[j] && waiting[j] == 0)
            .min_by_key(|&j| (start(j), std::cmp::Reverse(tail[j]), j))
        else {
            break;
        };
        let finish = start(j) + cost[j];
        free[prints[j].pipe.index()] = finish;
        done[j] = true;
        picked.push(j);
        for &k in &succs[j] {
            waiting[k] -= 1;
            ready[k] = ready[k].max(finish);
        }
    }
    let mut slots: Vec<Option<Instr>> = run.into_iter().map(Some).collect();
    picked
        .into_iter()
        .filter_map(|j| slots.get_mut(j).and_then(Option::take))
        .collect()
}

/// Checks that `after` is `before` with each straight-line run permuted so that every
/// dependence ([`depends`]) keeps its order, without trusting the scheduler: runs are
/// matched by position between loops, instructions by identity.
pub fn verify(before: &[Item], after: &[Item], depth: usize) -> Result<(), Diagnostic> {
    let fail = |what: &str| {
        Err(Diagnostic::global(format!(
            "internal error: list-schedule: {what}"
        )))
    };
    if depth > crate::limits::MAX_LOWERED_LOOP_DEPTH {
        return fail("loops nested too deep");
    }
    let runs = |items: &[Item]| -> Vec<Result<Vec<usize>, usize>> {
        let mut out = Vec::new();
        let mut run = Vec::new();
        for (k, item) in items.iter().enumerate() {
            match item {
                Item::Instr(_) => run.push(k),
                Item::Loop(_) => {
                    out.push(Ok(std::mem::take(&mut run)));
                    out.push(Err(k));
                }
            }
        }
        out.push(Ok(run));
        out
    };
    let (rb, ra) = (runs(before), runs(after));
    if rb.len() != ra.len() {
        return fail("a loop moved");
    }
    for (b, a) in rb.iter().zip(&ra) {
        match (b, a) {
            (Err(kb), Err(ka)) => {
                let (Some(Item::Loop(lb)), Some(Item::Loop(la))) =
                    (before.get(*kb), after.get(*ka))
                else {
                    return fail("a loop vanished");
                };
                if lb.id != la.id {
                    return fail("loops changed places");
                }
                verify(&lb.body, &la.body, depth + 1)?;
            }
            (Ok(b), Ok(a)) => {
                let ib: Vec<&Instr> = b.iter().filter_map(|&k| instr_at(before, k)).collect();
                let ia: Vec<&Instr> = a.iter().filter_map(|&k| instr_at(after, k)).collect();
                if ib.len() != ia.len() {
                    return fail("a run changed length");
                }
                if ib == ia {
                    continue;
                }
                // Where each original instruction went: the k-th instruction of a pipe
                // in `before` is the k-th of that pipe in `after`, and must equal it.
                let mut of_pipe: [Vec<usize>; 7] = Default::default();
                for (p, x) in ia.iter().enumerate() {
                    of_pipe[x.pipe().index()].push(p);
                }
                let mut next = [0usize; 7];
                let mut to = Vec::with_capacity(ib.len());
                for x in &ib {
                    let k = x.pipe().index();
                    let p = of_pipe[k].get(next[k]).copied();
                    next[k] += 1;
                    match p {
                        Some(p) if ia[p] == *x => to.push(p),
                        _ => return fail("an instruction changed, or a pipe's order"),
                    }
                }
                let prints: Vec<Footprint> = ib.iter().map(|i| footprint(i)).collect();
                for j in 0..ib.len() {
                    for i in 0..j {
                        if to[i] > to[j] && depends(&prints[i], &prints[j]) {
                            return fail("a dependence was reordered");
                        }
                    }
                }
            }
            _ => return fail("a run became a loop"),
        }
    }
    Ok(())
}

fn instr_at(items: &[Item], k: usize) -> Option<&Instr> {
    match items.get(k) {
        Some(Item::Instr(i)) => Some(i),
        _ => None,
    }
}
