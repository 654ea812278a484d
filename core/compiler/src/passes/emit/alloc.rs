//! Linear-scan register allocation (Poletto and Sarkar) over the flattened program,
//! written here because it has to know the hardware loops: a value live across a loop
//! boundary (used in a loop but defined before it, defined in it and used after it, or
//! read before it is written in the body) is live for the whole loop. The machine has
//! `scalar_regs` registers. Loop counters are pinned: `endloop` writes them, so they
//! never spill. Any other value may spill when registers run out, the one live longest
//! first, as PLENA spills a loop-carried scalar: it then lives in one of the 64 spill
//! slots for its whole (loop-extended) life, is stored (`sst`) after each instruction
//! that writes it (once, before the loop, for a value defined there) and reloaded
//! (`sld`) into a scratch register before each that reads it. Scratch registers are
//! reserved only when something spills, as few as the instruction reading the most
//! spilled values needs. Each `sst` / `sld` carries a note naming the value.

use super::regs::{self, Role};
use super::Flat;
use crate::dense::DenseMap;
use crate::diag::Diagnostic;
use crate::isa::{self, Op, Reg, NUM_REGS, SPILL_SLOTS};
use crate::machine::Machine;

#[derive(Clone, Copy, Debug)]
struct Interval {
    vreg: Reg,
    start: usize,
    end: usize,
    /// A loop counter (its interval starts at its `loop`).
    pinned: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Home {
    Reg(u16),
    Slot(u32),
}

fn intervals(flat: &Flat) -> Vec<Interval> {
    let mut span: DenseMap<Reg, (usize, usize)> = DenseMap::new();
    let mut first_def: DenseMap<Reg, Vec<usize>> = DenseMap::new();
    let mut uses: DenseMap<Reg, Vec<usize>> = DenseMap::new();
    let mut counters: DenseMap<Reg, Vec<(usize, usize)>> = DenseMap::new();
    let loop_end: DenseMap<usize, usize> = flat.loops.iter().copied().collect();
    for (i, ins) in flat.instrs.iter().enumerate() {
        for (r, role) in regs::operands(&ins.op) {
            let e = span.entry(r).or_insert((i, i));
            e.0 = e.0.min(i);
            e.1 = e.1.max(i);
            match role {
                Role::Def => first_def.entry(r).or_default().push(i),
                Role::Use => uses.entry(r).or_default().push(i),
            }
        }
        if let Op::Loop { counter, .. } = ins.op {
            if let Some(&end) = loop_end.get(&i) {
                counters.entry(counter).or_default().push((i, end));
            }
        }
    }
    // Counters hold the iteration until `endloop`.
    for (r, ls) in &counters {
        if let Some(e) = span.get_mut(&r) {
            for &(_, end) in ls {
                e.1 = e.1.max(end);
            }
        }
    }
    // Innermost loops first, so an extension can trigger the enclosing loop's.
    let mut loops = flat.loops.clone();
    loops.sort_by_key(|&(s, e)| e.saturating_sub(s));
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds <= loops.len() {
        changed = false;
        rounds += 1;
        for (r, (start, end)) in span.iter_mut() {
            for &(ls, le) in &loops {
                if *end < ls || *start > le || (*start <= ls && *end >= le) {
                    continue;
                }
                let inside = |p: &usize| (ls..=le).contains(p);
                let first_def_in = first_def.get(&r).and_then(|d| d.iter().find(|p| inside(p)));
                let first_use_in = uses.get(&r).and_then(|u| u.iter().find(|p| inside(p)));
                let carried = match (first_use_in, first_def_in) {
                    (Some(u), Some(d)) => u <= d,
                    (Some(_), None) => true,
                    _ => false,
                };
                if *start < ls || *end > le || carried {
                    *start = (*start).min(ls);
                    *end = (*end).max(le);
                    changed = true;
                }
            }
        }
    }
    let mut out: Vec<Interval> = span
        .into_iter()
        .map(|(vreg, (start, end))| Interval {
            vreg,
            start,
            end,
            pinned: counters.contains_key(&vreg),
        })
        .collect();
    out.sort_by_key(|iv| (iv.start, iv.end, iv.vreg.0));
    out
}

/// Why a scan failed.
enum Full {
    /// Without spilling, more values are live at once than there are registers.
    Registers,
    /// Every register holds a loop counter when the counter of the loop starting at
    /// instruction `at` needs one: `live` counters in all.
    Counters {
        at: usize,
        live: usize,
    },
    Slots,
}

/// Assigns each interval a register or (when `allow_spill`) a spill slot, using
/// registers `0..regs`.
fn scan(ivs: &[Interval], regs: u16, allow_spill: bool) -> Result<DenseMap<Reg, Home>, Full> {
    let mut home: DenseMap<Reg, Home> = DenseMap::new();
    let mut free: Vec<u16> = (0..regs).rev().collect();
    let mut active: Vec<Interval> = Vec::new();
    let mut spilled: Vec<Interval> = Vec::new();
    for iv in ivs {
        active.retain(|a| {
            if a.end < iv.start {
                if let Some(Home::Reg(r)) = home.get(&a.vreg) {
                    free.push(*r);
                }
                false
            } else {
                true
            }
        });
        if let Some(r) = free.pop() {
            home.insert(iv.vreg, Home::Reg(r));
            active.push(*iv);
            continue;
        }
        if !allow_spill {
            return Err(Full::Registers);
        }
        let victim = active
            .iter()
            .enumerate()
            .filter(|(_, a)| !a.pinned)
            .max_by_key(|(_, a)| a.end)
            .map(|(k, a)| (k, *a));
        match victim {
            Some((k, v)) if v.end > iv.end || iv.pinned => {
                let r = home.get(&v.vreg).copied();
                active.remove(k);
                spilled.push(v);
                if let Some(h) = r {
                    home.insert(iv.vreg, h);
                }
                active.push(*iv);
            }
            _ if !iv.pinned => spilled.push(*iv),
            _ => {
                return Err(Full::Counters {
                    at: iv.start,
                    live: active.len() + 1,
                })
            }
        }
    }
    // Spill slots by the same scan over the spilled intervals.
    spilled.sort_by_key(|iv| (iv.start, iv.end));
    let mut free_slots: Vec<u32> = (0..SPILL_SLOTS).rev().collect();
    let mut live: Vec<(usize, u32)> = Vec::new();
    for iv in &spilled {
        live.retain(|&(end, s)| {
            if end < iv.start {
                free_slots.push(s);
                false
            } else {
                true
            }
        });
        let s = free_slots.pop().ok_or(Full::Slots)?;
        live.push((iv.end, s));
        home.insert(iv.vreg, Home::Slot(s));
    }
    Ok(home)
}

/// The scratch registers `op` needs: one per distinct spilled value it reads, and one
/// per spilled value it writes, which may reuse a reloaded one's (only scalar
/// instructions write registers, and they read their operands first).
fn spilled_operands(op: &Op, home: &DenseMap<Reg, Home>) -> usize {
    let (mut uses, mut defs) = (0, 0);
    for (r, role) in regs::operands(op) {
        if matches!(home.get(&r), Some(Home::Slot(_))) {
            match role {
                Role::Use => uses += 1,
                Role::Def => defs += 1,
            }
        }
    }
    uses.max(defs)
}

/// Homes for every register and the number of scratch registers (the last ones).
fn assign(
    flat: &Flat,
    ivs: &[Interval],
    machine: &Machine,
) -> Result<(DenseMap<Reg, Home>, u16), Diagnostic> {
    let total = machine.scalar_regs.min(u32::from(NUM_REGS)) as u16;
    let limit = |what: String| {
        format!(
            "emit: {what}, but machine `{}` has {total} scalar registers (scalar_regs)",
            machine.name
        )
    };
    if let Ok(h) = scan(ivs, total, false) {
        return Ok((h, 0));
    }
    // More scratch registers leave fewer for values, which may spill more; stop at the
    // first count that covers the instruction reading the most spilled values.
    let mut most = 0;
    for scratch in 1..=total {
        let home = match scan(ivs, total - scratch, true) {
            Ok(h) => h,
            Err(Full::Counters { at, live }) => {
                let msg = limit(format!(
                    "the loops nested here keep {live} loop counters in registers (a counter \
                     never spills) and reloading spilled values needs {scratch} more"
                ));
                let span = flat.instrs.get(at).and_then(|i| i.prov.span);
                return Err(match span {
                    Some(sp) => Diagnostic::error(msg, sp),
                    None => Diagnostic::global(msg),
                });
            }
            Err(Full::Slots) => {
                return Err(Diagnostic::global(format!(
                    "emit: more than {SPILL_SLOTS} spilled scalar values are live at once \
                     (the spill slots)"
                )))
            }
            Err(Full::Registers) => {
                return Err(Diagnostic::global(
                    "internal error: emit: a scan that may spill ran out of registers",
                ))
            }
        };
        // The most spilled values one instruction reads; a program without instructions
        // reads none, so the fold starts at 0 (not a missing value).
        let need = flat
            .instrs
            .iter()
            .map(|i| spilled_operands(&i.op, &home))
            .fold(0, usize::max);
        if need <= usize::from(scratch) {
            return Ok((home, scratch));
        }
        most = most.max(need);
    }
    Err(Diagnostic::global(limit(format!(
        "an instruction reads {most} spilled values, each reloaded into a register of its own"
    ))))
}

/// The allocated program.
pub struct Allocated {
    pub instrs: Vec<isa::Instr>,
    /// The notes of `isa::Program`.
    pub notes: Vec<(u32, String)>,
    /// The branches of `isa::Program`.
    pub branches: Vec<isa::Branch>,
    /// For each instruction, the lowered item it came from (`Flat::origin`; spill code
    /// comes from the instruction it serves).
    pub origin: Vec<crate::ir::LineItem>,
}

/// The allocated instruction list (physical registers, spill code inserted) and the
/// notes naming what each `sst` / `sld` moves.
pub fn allocate(
    flat: Flat,
    machine: &Machine,
    names: &DenseMap<Reg, String>,
) -> Result<Allocated, Diagnostic> {
    let ivs = intervals(&flat);
    let (home, scratch) = assign(&flat, &ivs, machine)?;
    let first_scratch = machine.scalar_regs.min(u32::from(NUM_REGS)) as u16 - scratch;
    let name = |r: &Reg| names.get(r).cloned().unwrap_or_else(|| format!("v{}", r.0));
    let mut out = Vec::with_capacity(flat.instrs.len());
    let mut notes = Vec::new();
    let mut origin = Vec::with_capacity(flat.instrs.len());
    let mut branches = Vec::new();
    // `flatten` pushed the branches in instruction order.
    let mut flat_branches = flat.branches.into_iter().peekable();
    for (at, (ins, from)) in flat.instrs.into_iter().zip(flat.origin).enumerate() {
        let mut op = ins.op;
        // (value, scratch register, slot) of the reloads, then of the stores.
        let mut loads: Vec<(Reg, u16, u32)> = Vec::new();
        let mut stores: Vec<(Reg, u16, u32)> = Vec::new();
        let mut failed = false;
        regs::visit(&mut op, &mut |r, role| match home.get(r) {
            Some(Home::Reg(p)) => *r = Reg(*p),
            Some(Home::Slot(s)) => {
                let (list, other) = match role {
                    Role::Use => (&mut loads, &stores),
                    Role::Def => (&mut stores, &loads),
                };
                let t = match list.iter().chain(other).find(|t| t.0 == *r) {
                    Some(t) => t.1,
                    // With no free scratch register, u16::MAX is past `top`, which
                    // the check below reports as an internal error.
                    None => (first_scratch..u16::MAX)
                        .find(|t| !list.iter().any(|x| x.1 == *t))
                        .unwrap_or(u16::MAX),
                };
                if !list.iter().any(|x| x.0 == *r) {
                    list.push((*r, t, *s));
                }
                *r = Reg(t);
            }
            None => failed = true,
        });
        let top = first_scratch + scratch;
        if failed || loads.iter().chain(&stores).any(|x| x.1 >= top) {
            return Err(Diagnostic::global(
                "internal error: emit: a register was not allocated",
            ));
        }
        for &(v, t, slot) in &loads {
            notes.push((out.len() as u32, format!("reload {}", name(&v))));
            out.push(isa::Instr {
                op: Op::Sld { dst: Reg(t), slot },
                prov: ins.prov,
            });
        }
        while let Some((_, cond)) = flat_branches.next_if(|(i, _)| *i == at) {
            branches.push(isa::Branch {
                instr: out.len() as u32,
                cond,
            });
        }
        out.push(isa::Instr { op, prov: ins.prov });
        for &(v, t, slot) in &stores {
            notes.push((out.len() as u32, format!("spill {}", name(&v))));
            out.push(isa::Instr {
                op: Op::Sst { src: Reg(t), slot },
                prov: ins.prov,
            });
        }
        origin.resize(out.len(), from);
    }
    Ok(Allocated {
        instrs: out,
        notes,
        branches,
        origin,
    })
}
