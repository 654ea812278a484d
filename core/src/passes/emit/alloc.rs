//! Linear-scan register allocation (Poletto and Sarkar) over the flattened program,
//! written here because it has to know the hardware loops: a value live across a loop
//! boundary (used in a loop but defined before it, defined in it and used after it, or
//! read before it is written in the body) is live for the whole loop and always stays
//! in a register, as do loop counters. Only values whose whole life lies between two loop
//! boundaries may spill: they then live in one of the 64 spill slots, reloaded into a
//! scratch register (`sld`) before each instruction that reads them and stored (`sst`)
//! after each that writes them. Scratch registers are reserved only when something
//! spills.

use super::regs::{self, Role};
use super::Flat;
use crate::dense::DenseMap;
use crate::diag::Diagnostic;
use crate::isa::{self, Op, Reg, NUM_REGS, SPILL_SLOTS};

#[derive(Clone, Copy, Debug)]
struct Interval {
    vreg: Reg,
    start: usize,
    end: usize,
    spillable: bool,
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
    crate::order::sort_by_key(&mut loops, |&(s, e)| (e.saturating_sub(s) as u64, 0, 0));
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
    let boundaries: Vec<usize> = flat.loops.iter().flat_map(|&(s, e)| [s, e]).collect();
    let mut out: Vec<Interval> = span
        .into_iter()
        .map(|(vreg, (start, end))| Interval {
            vreg,
            start,
            end,
            spillable: !counters.contains_key(&vreg)
                && !boundaries.iter().any(|&b| start < b && b < end),
        })
        .collect();
    crate::order::sort_by_key(&mut out, |iv| {
        (iv.start as u64, iv.end as u64, u64::from(iv.vreg.0))
    });
    out
}

fn too_many(what: &str) -> Diagnostic {
    Diagnostic::global(format!(
        "emit: too many scalar values {what} (the machine has {NUM_REGS} registers and {SPILL_SLOTS} spill slots)"
    ))
}

/// Assigns each interval a register or (when `allow_spill`) a spill slot, using
/// registers `0..regs`.
fn scan(ivs: &[Interval], regs: u16, allow_spill: bool) -> Result<DenseMap<Reg, Home>, Diagnostic> {
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
            return Err(too_many("live at once"));
        }
        let victim = active
            .iter()
            .enumerate()
            .filter(|(_, a)| a.spillable)
            .max_by_key(|(_, a)| a.end)
            .map(|(k, a)| (k, *a));
        match victim {
            Some((k, v)) if v.end > iv.end || !iv.spillable => {
                let r = home.get(&v.vreg).copied();
                active.remove(k);
                spilled.push(v);
                if let Some(h) = r {
                    home.insert(iv.vreg, h);
                }
                active.push(*iv);
            }
            _ if iv.spillable => spilled.push(*iv),
            _ => return Err(too_many("live across loops")),
        }
    }
    // Spill slots by the same scan over the spilled intervals.
    crate::order::sort_by_key(&mut spilled, |iv| (iv.start as u64, iv.end as u64, 0));
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
        let s = free_slots.pop().ok_or_else(|| too_many("to spill"))?;
        live.push((iv.end, s));
        home.insert(iv.vreg, Home::Slot(s));
    }
    Ok(home)
}

/// The allocated instruction list: physical registers, spill code inserted.
pub fn allocate(flat: Flat) -> Result<Vec<isa::Instr>, Diagnostic> {
    let ivs = intervals(&flat);
    let (home, scratch) = match scan(&ivs, NUM_REGS, false) {
        Ok(h) => (h, 0),
        Err(_) => {
            let scratch = flat
                .instrs
                .iter()
                .map(|i| {
                    let mut rs: Vec<Reg> = regs::operands(&i.op).into_iter().map(|x| x.0).collect();
                    rs.dedup();
                    crate::order::sort_by_key(&mut rs, |r| (r.0.into(), 0, 0));
                    rs.dedup();
                    rs.len() as u16
                })
                .max()
                .unwrap_or(0);
            if scratch >= NUM_REGS {
                return Err(too_many("in one instruction"));
            }
            (scan(&ivs, NUM_REGS - scratch, true)?, scratch)
        }
    };
    let first_scratch = NUM_REGS - scratch;
    let mut out = Vec::with_capacity(flat.instrs.len());
    for ins in flat.instrs {
        let mut op = ins.op;
        let mut temps: Vec<(Reg, u16, u32)> = Vec::new();
        let mut loads = Vec::new();
        let mut stores = Vec::new();
        let mut failed = false;
        regs::visit(&mut op, &mut |r, role| match home.get(r) {
            Some(Home::Reg(p)) => *r = Reg(*p),
            Some(Home::Slot(s)) => {
                let t = match temps.iter().find(|t| t.0 == *r) {
                    Some(t) => t.1,
                    None => {
                        let t = first_scratch + temps.len() as u16;
                        temps.push((*r, t, *s));
                        if role == Role::Use {
                            loads.push((t, *s));
                        }
                        t
                    }
                };
                if role == Role::Def && !stores.contains(&(t, *s)) {
                    stores.push((t, *s));
                }
                *r = Reg(t);
            }
            None => failed = true,
        });
        if failed || temps.len() as u16 > scratch {
            return Err(Diagnostic::global(
                "internal error: emit: a register was not allocated",
            ));
        }
        for (t, s) in loads {
            out.push(isa::Instr {
                op: Op::Sld {
                    dst: Reg(t),
                    slot: s,
                },
                prov: ins.prov,
            });
        }
        out.push(isa::Instr { op, prov: ins.prov });
        for (t, s) in stores {
            out.push(isa::Instr {
                op: Op::Sst {
                    src: Reg(t),
                    slot: s,
                },
                prov: ins.prov,
            });
        }
    }
    Ok(out)
}
