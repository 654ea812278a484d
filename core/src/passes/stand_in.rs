//! Temporary insert-sync and emit, deliberately simple, until the real passes land:
//! `BarrierSync` puts `pipe_barrier ALL` after every non-scalar instruction (correct and
//! slow: pipes never overlap), and `Emit` flattens the loops and gives each virtual
//! register a physical one by a linear scan over live ranges (no spilling: a kernel that
//! needs more than 32 at once is an error).

use super::{Context, Pass};
use crate::diag::{Diagnostic, Diagnostics};
use crate::isa::{self, Addr, Op, Reg, Tile, VSrc, Val};
use crate::lowered::{Instr, Item, Lowered};
use crate::types::Pipe;
use std::collections::HashMap;

pub struct BarrierSync;

impl Pass for BarrierSync {
    fn name(&self) -> &'static str {
        "insert-sync"
    }

    fn description(&self) -> &'static str {
        "order cross-pipe hazards (stand-in: a pipe_barrier ALL after every pipe instruction)"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        if cx.sync == crate::compile::SyncStrategy::None {
            return Ok(());
        }
        let Some(l) = cx.lowered.as_mut() else {
            return Err(vec![Diagnostic::global(
                "internal error: insert-sync needs the lowered program",
            )]);
        };
        barriers(&mut l.body, 0);
        Ok(())
    }
}

fn barriers(items: &mut Vec<Item>, depth: usize) {
    let mut out = Vec::with_capacity(items.len() * 2);
    for mut item in std::mem::take(items) {
        let after = match &mut item {
            Item::Instr(ins) if ins.pipe() != Pipe::S => Some(Instr {
                op: Op::Barrier { pipe: None },
                prov: ins.prov,
                accesses: Vec::new(),
            }),
            Item::Loop(l) if depth < 64 => {
                barriers(&mut l.body, depth + 1);
                None
            }
            _ => None,
        };
        out.push(item);
        if let Some(b) = after {
            out.push(Item::Instr(b));
        }
    }
    *items = out;
}

pub struct Emit;

impl Pass for Emit {
    fn name(&self) -> &'static str {
        "emit"
    }

    fn description(&self) -> &'static str {
        "allocate scalar registers, flatten loops into hardware loops, produce the assembly"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let Some(l) = cx.lowered.as_ref() else {
            return Err(vec![Diagnostic::global(
                "internal error: emit needs the lowered program",
            )]);
        };
        cx.program = Some(emit(l)?);
        Ok(())
    }
}

pub fn emit(l: &Lowered) -> Result<isa::Program, Diagnostics> {
    let mut instrs = Vec::new();
    flatten(&l.body, &mut instrs, 0);
    let map = allocate(&instrs)?;
    for ins in &mut instrs {
        map_regs(&mut ins.op, &mut |r| map.get(&r.0).map_or(r, |&p| Reg(p)));
    }
    Ok(isa::Program {
        tensors: l.tensors.clone(),
        instrs,
    })
}

fn flatten(items: &[Item], out: &mut Vec<isa::Instr>, depth: usize) {
    for item in items {
        match item {
            Item::Instr(i) => out.push(isa::Instr {
                op: i.op.clone(),
                prov: i.prov,
            }),
            Item::Loop(l) if depth < 64 => {
                let prov = isa::Provenance {
                    span: Some(l.span),
                    step: None,
                };
                out.push(isa::Instr {
                    op: Op::Loop {
                        counter: l.counter,
                        count: l.count,
                    },
                    prov,
                });
                flatten(&l.body, out, depth + 1);
                out.push(isa::Instr {
                    op: Op::EndLoop,
                    prov,
                });
            }
            Item::Loop(_) => {}
        }
    }
}

/// Virtual -> physical registers by linear scan. A register live into a loop stays live
/// to the loop's end, since the next iteration reads it again.
fn allocate(instrs: &[isa::Instr]) -> Result<HashMap<u16, u16>, Diagnostics> {
    let mut range: HashMap<u16, (usize, usize)> = HashMap::new();
    for (i, ins) in instrs.iter().enumerate() {
        let mut op = ins.op.clone();
        map_regs(&mut op, &mut |r| {
            let e = range.entry(r.0).or_insert((i, i));
            e.1 = i;
            r
        });
    }
    let mut open = Vec::new();
    for (i, ins) in instrs.iter().enumerate() {
        match ins.op {
            Op::Loop { .. } => open.push(i),
            Op::EndLoop => {
                if let Some(start) = open.pop() {
                    for r in range.values_mut() {
                        if r.0 <= start && r.1 > start && r.1 < i {
                            r.1 = i;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut order: Vec<(u16, (usize, usize))> = range.into_iter().collect();
    order.sort_by_key(|(r, (s, _))| (*s, *r));
    let mut free: Vec<u16> = (0..isa::NUM_REGS).rev().collect();
    let mut active: Vec<(usize, u16)> = Vec::new();
    let mut map = HashMap::new();
    for (v, (start, end)) in order {
        active.retain(|&(e, p)| {
            if e < start {
                free.push(p);
                false
            } else {
                true
            }
        });
        let Some(p) = free.pop() else {
            return Err(vec![Diagnostic::global(format!(
                "emit: more than {} scalar registers are live at once (spilling is not implemented yet)",
                isa::NUM_REGS
            ))]);
        };
        map.insert(v, p);
        active.push((end, p));
    }
    Ok(map)
}

/// Applies `f` to every register operand of `op`.
pub fn map_regs(op: &mut Op, f: &mut dyn FnMut(Reg) -> Reg) {
    fn val(v: &mut Val, f: &mut dyn FnMut(Reg) -> Reg) {
        if let Val::Reg(r) = v {
            *r = f(*r);
        }
    }
    fn addr(a: &mut Addr, f: &mut dyn FnMut(Reg) -> Reg) {
        if let Some(r) = &mut a.base {
            *r = f(*r);
        }
    }
    fn tile(t: &mut Tile, f: &mut dyn FnMut(Reg) -> Reg) {
        addr(&mut t.addr, f);
        val(&mut t.rows, f);
        val(&mut t.cols, f);
    }
    fn vsrc(s: &mut VSrc, f: &mut dyn FnMut(Reg) -> Reg) {
        match s {
            VSrc::Tile(t) => tile(t, f),
            VSrc::Reg(r) => *r = f(*r),
            VSrc::Float(_) | VSrc::Int(_) => {}
        }
    }
    match op {
        Op::Mov { dst, src } => {
            *dst = f(*dst);
            val(src, f);
        }
        Op::Alu { dst, a, b, .. } => {
            *dst = f(*dst);
            *a = f(*a);
            val(b, f);
        }
        Op::Sld { dst: r, .. } | Op::Sst { src: r, .. } => *r = f(*r),
        Op::Loop { counter, count } => {
            *counter = f(*counter);
            val(count, f);
        }
        Op::EndLoop | Op::Barrier { .. } => {}
        Op::Dma { dst, src, dims, .. } => {
            addr(dst, f);
            addr(src, f);
            for d in dims {
                val(&mut d.extent, f);
            }
        }
        Op::Gather {
            dst,
            src,
            index,
            rows,
            len,
            ..
        }
        | Op::Scatter {
            dst,
            src,
            index,
            rows,
            len,
            ..
        } => {
            addr(dst, f);
            addr(src, f);
            addr(index, f);
            val(rows, f);
            val(len, f);
        }
        Op::Mov2d { dst, src, .. } | Op::Fix { dst, src, .. } => {
            tile(dst, f);
            tile(src, f);
        }
        Op::Mmad {
            c,
            a,
            b,
            m,
            k,
            n,
            acc,
            ..
        } => {
            addr(c, f);
            addr(a, f);
            addr(b, f);
            for v in [m, k, n, acc] {
                val(v, f);
            }
        }
        Op::VUnary { dst, src, .. }
        | Op::VReduce { dst, src, .. }
        | Op::VCast { dst, src, .. }
        | Op::VCopy { dst, src, .. } => {
            tile(dst, f);
            tile(src, f);
        }
        Op::VBinary { dst, a, b, .. } => {
            tile(dst, f);
            vsrc(a, f);
            vsrc(b, f);
        }
        Op::VDup { dst, value, .. } => {
            tile(dst, f);
            vsrc(value, f);
        }
        Op::SetFlag { id, .. } | Op::WaitFlag { id, .. } => val(id, f),
    }
}
