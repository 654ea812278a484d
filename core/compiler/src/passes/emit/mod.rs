//! `emit`, the last pass: flattens the lowered loops into `loop`/`endloop`, defines
//! each multi-buffered loop's slot register, allocates the scalar registers ([`alloc`])
//! and produces the final `isa::Program`, which must validate.
//!
//! The slot register of a loop with `slots: Some((n, r))` is defined by emit
//! (`rem r, counter, n` at the top of the body) unless an instruction of the body
//! already writes it.

pub mod alloc;
mod names;
pub mod regs;

use super::{Context, Pass};
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::LineItem;
use crate::isa::{self, AluOp, Op, Provenance, Val};
use crate::lowered::{Item, Lowered};
use crate::machine::Machine;

pub struct Emit;

impl Pass for Emit {
    type In = crate::passes::stage::Lowered;
    type Out = crate::passes::stage::Final;

    fn name(&self) -> &'static str {
        "emit"
    }

    fn description(&self) -> &'static str {
        "allocate scalar registers (spilling when they run out), flatten loops, emit the program"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        let lowered = cx.lowered_mut(self.name())?;
        let (program, origin) = emit_with_origin(lowered, &machine)?;
        cx.program = Some(program);
        cx.program_origin = origin;
        Ok(())
    }
}

/// A flattened instruction list with the span of each loop (`loop` and `endloop`
/// indices), registers still virtual.
pub struct Flat {
    pub instrs: Vec<isa::Instr>,
    pub loops: Vec<(usize, usize)>,
    /// For each instruction, the lowered item it came from, numbered in print order
    /// as `lowered::print` numbers them (`LineItem::Lowered`).
    pub origin: Vec<LineItem>,
    /// The condition of each `if` region's `loop`, by instruction index.
    pub branches: Vec<(usize, String)>,
    next_item: u32,
}

impl Flat {
    fn push(&mut self, instr: isa::Instr, index: u32, end: bool) {
        self.instrs.push(instr);
        self.origin.push(LineItem::Lowered { index, end });
    }
}

pub fn flatten(items: &[Item]) -> Result<Flat, Diagnostic> {
    let mut flat = Flat {
        instrs: Vec::new(),
        loops: Vec::new(),
        origin: Vec::new(),
        branches: Vec::new(),
        next_item: 0,
    };
    flatten_into(items, &mut flat, 0)?;
    Ok(flat)
}

fn writes(items: &[Item], r: isa::Reg) -> bool {
    items.iter().any(|i| match i {
        Item::Instr(ins) => regs::operands(&ins.op).contains(&(r, regs::Role::Def)),
        Item::Loop(l) => l.counter == r || writes(&l.body, r),
    })
}

fn flatten_into(items: &[Item], flat: &mut Flat, depth: usize) -> Result<(), Diagnostic> {
    if depth > crate::limits::MAX_LOWERED_LOOP_DEPTH {
        return Err(Diagnostic::global(
            "internal error: emit: loops nest too deeply",
        ));
    }
    for item in items {
        let index = flat.next_item;
        flat.next_item += 1;
        match item {
            Item::Instr(i) => flat.push(
                isa::Instr {
                    op: i.op.clone(),
                    prov: i.prov,
                },
                index,
                false,
            ),
            Item::Loop(l) => {
                let prov = Provenance {
                    span: Some(l.span),
                    step: None,
                    op: None,
                };
                let start = flat.instrs.len();
                if let Some(cond) = &l.branch {
                    flat.branches.push((start, cond.clone()));
                }
                flat.push(
                    isa::Instr {
                        op: Op::Loop {
                            counter: l.counter,
                            count: l.count,
                        },
                        prov,
                    },
                    index,
                    false,
                );
                if let Some((n, r)) = l.slots {
                    if !writes(&l.body, r) {
                        flat.push(
                            isa::Instr {
                                op: Op::Alu {
                                    op: AluOp::Rem,
                                    dst: r,
                                    a: l.counter,
                                    b: Val::Imm(n.max(1) as i64),
                                },
                                prov,
                            },
                            index,
                            false,
                        );
                    }
                }
                flatten_into(&l.body, flat, depth + 1)?;
                flat.loops.push((start, flat.instrs.len()));
                flat.push(
                    isa::Instr {
                        op: Op::EndLoop,
                        prov,
                    },
                    index,
                    true,
                );
            }
        }
    }
    Ok(())
}

/// The final program of `lowered`: loops flattened, registers allocated.
pub fn emit(lowered: &Lowered, machine: &Machine) -> Result<isa::Program, Diagnostics> {
    emit_with_origin(lowered, machine).map(|(program, _)| program)
}

/// The final program and, for each of its instructions, the item of `lowered` it came
/// from (`Flat::origin`).
fn emit_with_origin(
    lowered: &Lowered,
    machine: &Machine,
) -> Result<(isa::Program, Vec<LineItem>), Diagnostics> {
    let flat = flatten(&lowered.body).map_err(|d| vec![d])?;
    crate::lowered::check_program_size(flat.instrs.len(), "emit").map_err(|d| vec![d])?;
    let names = names::names(&flat, &lowered.reg_names);
    let alloc::Allocated {
        instrs,
        notes,
        branches,
        origin,
    } = alloc::allocate(flat, machine, &names).map_err(|d| vec![d])?;
    // Spill code adds instructions.
    crate::lowered::check_program_size(instrs.len(), "emit").map_err(|d| vec![d])?;
    let program = isa::Program {
        tensors: lowered.tensors.clone(),
        instrs,
        notes,
        branches,
    };
    program.validate().map_err(|errs| {
        vec![errs.into_iter().fold(
            Diagnostic::global("internal error: emit produced an invalid program"),
            |d, e| d.with_note(e.to_string()),
        )]
    })?;
    Ok((program, origin))
}
