//! What each virtual register holds, in source terms, for the comments on spill code:
//! lower-to-pipes names loop variables, iterations and slots (`Lowered::reg_names`);
//! a value computed from named ones by one scalar op is named by that op (`k * 4`).

use super::{regs, Flat};
use crate::dense::DenseMap;
use crate::isa::{AluOp, Op, Reg, Val};

/// Longer derived names are left out: a comment is a hint, not an expression dump.
const MAX_NAME: usize = 40;

pub fn names(flat: &Flat, given: &[(Reg, String)]) -> DenseMap<Reg, String> {
    let mut out: DenseMap<Reg, String> = DenseMap::new();
    // Later entries win: a loop variable equal to its iteration (`0..n step 1`) shares
    // the counter's register, and lowering names the variable after the counter.
    for (r, n) in given {
        out.insert(*r, n.clone());
    }
    // Only a register written once holds one value to name.
    let mut defs: DenseMap<Reg, u32> = DenseMap::new();
    for ins in &flat.instrs {
        for (r, role) in regs::operands(&ins.op) {
            if role == regs::Role::Def {
                *defs.entry(r).or_insert(0) += 1;
            }
        }
    }
    for ins in &flat.instrs {
        let Op::Alu { op, dst, a, b } = ins.op else {
            continue;
        };
        if out.contains_key(&dst) || defs.get(&dst) != Some(&1) {
            continue;
        }
        let operand = |r: Reg| {
            let n = out.get(&r)?;
            Some(if n.contains(' ') {
                format!("({n})")
            } else {
                n.clone()
            })
        };
        let (Some(x), Some(y)) = (
            operand(a),
            match b {
                Val::Imm(i) => Some(i.to_string()),
                Val::Reg(r) => operand(r),
            },
        ) else {
            continue;
        };
        let text = match op {
            AluOp::Add => format!("{x} + {y}"),
            AluOp::Sub => format!("{x} - {y}"),
            AluOp::Mul => format!("{x} * {y}"),
            AluOp::Div => format!("{x} // {y}"),
            AluOp::Rem => format!("{x} % {y}"),
            AluOp::Min => format!("min({x}, {y})"),
            AluOp::Max => format!("max({x}, {y})"),
        };
        if text.len() <= MAX_NAME {
            out.insert(dst, text);
        }
    }
    out
}
