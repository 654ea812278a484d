//! Every register operand of an instruction, with whether it is read or written, so the
//! allocator can rename them without knowing each opcode's layout.

use crate::isa::{Addr, Op, Reg, Tile, VSrc, Val};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Use,
    Def,
}

/// Calls `f` on each register operand, uses before defs.
pub fn visit(op: &mut Op, f: &mut dyn FnMut(&mut Reg, Role)) {
    let val = |v: &mut Val, f: &mut dyn FnMut(&mut Reg, Role)| {
        if let Val::Reg(r) = v {
            f(r, Role::Use)
        }
    };
    fn addr(a: &mut Addr, f: &mut dyn FnMut(&mut Reg, Role)) {
        if let Some(r) = &mut a.base {
            f(r, Role::Use)
        }
    }
    fn tile(t: &mut Tile, f: &mut dyn FnMut(&mut Reg, Role)) {
        addr(&mut t.addr, f);
        for v in [&mut t.rows, &mut t.cols] {
            if let Val::Reg(r) = v {
                f(r, Role::Use)
            }
        }
    }
    fn vsrc(s: &mut VSrc, f: &mut dyn FnMut(&mut Reg, Role)) {
        match s {
            VSrc::Tile(t) => tile(t, f),
            VSrc::Reg(r) => f(r, Role::Use),
            VSrc::Float(_) | VSrc::Int(_) => {}
        }
    }
    match op {
        Op::Mov { dst, src } => {
            val(src, f);
            f(dst, Role::Def);
        }
        Op::Alu { dst, a, b, .. } => {
            f(a, Role::Use);
            val(b, f);
            f(dst, Role::Def);
        }
        Op::Sld { dst, .. } => f(dst, Role::Def),
        Op::Sst { src, .. } => f(src, Role::Use),
        Op::Loop { counter, count } => {
            val(count, f);
            f(counter, Role::Def);
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
        Op::Mov2d { dst, src, .. }
        | Op::Fix { dst, src, .. }
        | Op::VUnary { dst, src, .. }
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

/// The distinct registers of an instruction with their roles (a register both read and
/// written appears twice).
pub fn operands(op: &Op) -> Vec<(Reg, Role)> {
    let mut op = op.clone();
    let mut out: Vec<(Reg, Role)> = Vec::new();
    visit(&mut op, &mut |r, role| {
        if !out.contains(&(*r, role)) {
            out.push((*r, role));
        }
    });
    out
}
