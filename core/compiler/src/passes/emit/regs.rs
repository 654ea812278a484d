//! Every register operand of an instruction, with whether it is read or written, so the
//! allocator can rename them without knowing each opcode's layout (the layout is
//! described once, in `isa::operands`).

use crate::isa::operands::{registers, registers_mut};
use crate::isa::{Op, Reg};

pub use crate::isa::operands::RegRole as Role;

/// Calls `f` on each register operand, uses before defs.
pub fn visit(op: &mut Op, f: &mut dyn FnMut(&mut Reg, Role)) {
    registers_mut(op, &mut |r, role| f(r, role));
}

/// The distinct registers of an instruction with their roles (a register both read and
/// written appears twice).
pub fn operands(op: &Op) -> Vec<(Reg, Role)> {
    let mut out: Vec<(Reg, Role)> = Vec::new();
    registers(op, &mut |r, role| {
        if !out.contains(&(r, role)) {
            out.push((r, role));
        }
    });
    out
}
