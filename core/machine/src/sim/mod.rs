//! The machine simulator: functional execution, per-pipe timing, flag checking,
//! happens-before race detection and a Chrome trace export.
//!
//! One discrete-event run ([`timing`]) drives everything: the S pipe walks the program and
//! dispatches into bounded per-pipe queues; each pipe starts its queue head when its
//! operands allow and completes it `cost` cycles later. Data effects ([`exec`]) apply
//! atomically at completion, in global time order: an instruction reads its operands as
//! they are when it completes. With correct flags that equals program semantics; without
//! them the result depends on timing and the race detector ([`race`], which does not
//! depend on timing) reports the missing order. With `SimMode { functional: false }` no
//! memory is allocated and only timing, flags and races are computed.
//!
//! Operand addresses, extents and event ids are checked when the S pipe dispatches (the
//! error names the instruction and its provenance); data-dependent gather and scatter
//! indices are checked when they execute (functional mode only).

pub mod exec;
pub mod flags;
pub mod memory;
pub mod path_bound;
pub mod race;
pub mod stalls;
pub mod timing;
pub mod trace;

use crate::isa::{Program, Provenance};
use crate::machine::Machine;
use crate::tensor::Tensor;
use crate::types::{MemSpace, Pipe};
use serde::{Deserialize, Serialize};
pub use stalls::{FlagStall, PipeStalls, Stretch};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimMode {
    /// Execute on data (and produce outputs); `false` computes timing, flags and races only.
    pub functional: bool,
    /// Keep the per-instruction trace (the playground's timeline, `--trace`). Without it
    /// the run is faster; totals, flags, races and errors are still reported.
    pub trace: bool,
}

impl SimMode {
    /// Data, timing and trace: what `run` and the playground use.
    pub const FULL: SimMode = SimMode {
        functional: true,
        trace: true,
    };
    /// Timing with a trace, no data.
    pub const TIMING: SimMode = SimMode {
        functional: false,
        trace: true,
    };
}

/// Trace entries and flag events kept at most (later ones are counted, not stored), so a
/// 10^7-instruction run stays within memory.
pub const TRACE_LIMIT: usize = crate::limits::MAX_TRACE_EVENTS;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PipeStats {
    pub pipe: Pipe,
    /// Cycles the pipe was executing something.
    pub busy: u64,
    pub instructions: u64,
    /// The part of `busy` that GM transfers took longer because MTE2 and MTE3 shared
    /// the bandwidth: it depends on how the schedule overlapped them.
    #[serde(default)]
    pub shared_bandwidth: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind")]
pub enum StallReason {
    /// The S pipe could not dispatch this instruction for `cycles` because its pipe's
    /// queue was full.
    QueueFull { cycles: u64 },
    /// The pipe waited `cycles` for the flag.
    WaitFlag {
        src: Pipe,
        dst: Pipe,
        id: u32,
        cycles: u64,
    },
    /// The transfer took `cycles` longer because MTE2 and MTE3 shared GM bandwidth.
    Bandwidth { cycles: u64 },
    /// `pipe_barrier ALL` held the S pipe `cycles` until every pipe drained.
    Barrier { cycles: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TraceEntry {
    /// Static instruction index into `Program::instrs`.
    pub index: u32,
    pub pipe: Pipe,
    /// When the S pipe handed it to its pipe (equals `start` for S instructions).
    pub dispatch: u64,
    pub start: u64,
    pub end: u64,
    pub stall: Option<StallReason>,
    pub prov: Provenance,
}

/// An on-chip byte range `[lo, hi)` that trace entry `entry` read or wrote (the bounding
/// range, for a strided operand). A side table rather than a `TraceEntry` field keeps
/// the entry small and `Copy`; most entries (S pipe, flags) have none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TraceAccess {
    /// Index into `SimResult::trace`.
    pub entry: u32,
    pub space: MemSpace,
    pub lo: u64,
    pub hi: u64,
    pub write: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FlagEvent {
    pub src: Pipe,
    pub dst: Pipe,
    pub id: u32,
    pub set_cycle: u64,
    /// `None` if no wait consumed it.
    pub wait_cycle: Option<u64>,
    pub set_instr: u32,
    pub wait_instr: Option<u32>,
}

/// How often an `if` region's `loop` ran, and how often its condition held
/// (`Program::branches`, in the same order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BranchCount {
    pub instr: u32,
    pub runs: u64,
    pub taken: u64,
}

/// One decision of an `if`: the S pipe reached its `loop` at `cycle` and ran the body
/// (`taken`) or jumped past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BranchRun {
    pub instr: u32,
    pub cycle: u64,
    pub taken: bool,
}

/// A static instruction named in a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InstrRef {
    pub index: u32,
    pub text: String,
    pub pipe: Pipe,
    pub prov: Provenance,
}

impl InstrRef {
    pub fn new(prog: &Program, index: u32) -> InstrRef {
        let ins = prog.instrs.get(index as usize);
        InstrRef {
            index,
            text: prog.instr_text(index as usize),
            pipe: ins.map_or(Pipe::S, |i| i.op.pipe()),
            prov: ins.map(|i| i.prov).unwrap_or_default(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum AccessKind {
    Read,
    Write,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RaceAccess {
    pub instr: InstrRef,
    pub kind: AccessKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Race {
    pub first: RaceAccess,
    pub second: RaceAccess,
    pub space: MemSpace,
    /// Overlapping bytes `[start, end)` (of the tensor, for GM).
    pub overlap: (u64, u64),
    /// The GM tensor's name, when the race is in GM; for an on-chip race in a compiled
    /// kernel's run, the tile there as its source names it.
    pub buffer: Option<String>,
    pub message: String,
    /// How many dynamic instances of this pair of static instructions raced.
    pub count: u64,
}

impl Race {
    /// The race as a sentence, naming the memory as `memory` (`ub[0x0..0x400)`, or the
    /// tile a compiled kernel keeps there).
    pub fn describe(&self, memory: &str) -> String {
        let (fp, sp) = (self.first.instr.pipe, self.second.instr.pipe);
        let verb = |k: AccessKind| {
            if k == AccessKind::Write {
                "writes"
            } else {
                "reads"
            }
        };
        let past = |k: AccessKind| {
            if k == AccessKind::Write {
                "written"
            } else {
                "read"
            }
        };
        format!(
            "{sp} {} {memory} at #{} {} by {fp} at #{} with no set_flag({fp}, {sp}) / wait_flag({fp}, {sp}) between them",
            verb(self.second.kind),
            self.second.instr.index,
            past(self.first.kind),
            self.first.instr.index,
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum SimErrorKind {
    /// The program or the inputs do not fit the machine (bad binding, malformed program).
    Invalid,
    /// Out-of-bounds, misaligned or malformed operand.
    Memory,
    /// Gather or scatter index out of range.
    Index,
    /// Division by zero or overflow in scalar arithmetic.
    Scalar,
    FlagAlreadySet,
    FlagLeftSet,
    EventIdRange,
    Deadlock,
    InstructionLimit,
    CycleLimit,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SimError {
    pub kind: SimErrorKind,
    pub message: String,
    pub instr: Option<InstrRef>,
    /// Other instructions involved (the earlier set, the blocked waits).
    pub related: Vec<InstrRef>,
    pub cycle: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub name: String,
    pub tensor: Tensor,
}

/// What a run of the simulator returns. Every field reads with its default when a JSON
/// result lacks it (a result from an older version, or one nested in `run::RunResult`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SimResult {
    /// Cycle at which the last pipe finished.
    pub cycles: u64,
    pub pipes: Vec<PipeStats>,
    /// Dynamic instructions executed (S walked), loop control included.
    pub instructions: u64,
    /// Bytes moved to or from GM.
    pub gm_bytes: u64,
    /// Cycles MTE2 and MTE3 spend moving GM data, each transfer timed at its full rate.
    /// The two share GM bandwidth, so no run of the program is shorter.
    #[serde(default)]
    pub gm_transfer_cycles: u64,
    /// Set/wait pairs that met: every one, counted past the trace's cap (`flags` keeps
    /// only the first [`TRACE_LIMIT`]).
    #[serde(default)]
    pub syncs: u64,
    pub trace: Vec<TraceEntry>,
    /// The on-chip accesses of the kept trace entries, in entry order (kept with the
    /// trace only).
    #[serde(default)]
    pub accesses: Vec<TraceAccess>,
    /// True when the trace or flag list hit [`TRACE_LIMIT`].
    pub trace_truncated: bool,
    pub flags: Vec<FlagEvent>,
    /// Where each pipe's cycles went: busy, or idle and why (in pipe order; every
    /// pipe's parts add up to `cycles`).
    #[serde(default)]
    pub stalls: Vec<PipeStalls>,
    /// Every `if` of the program, with how often it ran and was taken (counted past the
    /// trace's cap).
    #[serde(default)]
    pub branches: Vec<BranchCount>,
    /// Each decision of an `if`, in order (kept with the trace, at most [`TRACE_LIMIT`]).
    #[serde(default)]
    pub branch_runs: Vec<BranchRun>,
    pub races: Vec<Race>,
    pub errors: Vec<SimError>,
    /// Every GM tensor after the run, in declaration order (functional mode only; not
    /// serialised: write them as `.npy`).
    #[serde(skip)]
    pub outputs: Vec<Output>,
}

impl SimResult {
    pub fn pipe(&self, pipe: Pipe) -> Option<&PipeStats> {
        self.pipes.iter().find(|p| p.pipe == pipe)
    }

    pub fn output(&self, name: &str) -> Option<&Tensor> {
        self.outputs
            .iter()
            .find(|o| o.name == name)
            .map(|o| &o.tensor)
    }
}

fn invalid(message: String) -> SimResult {
    SimResult {
        errors: vec![SimError {
            kind: SimErrorKind::Invalid,
            message,
            instr: None,
            related: Vec::new(),
            cycle: 0,
        }],
        ..SimResult::default()
    }
}

/// Runs `program` on `machine`. `inputs` bind to `program.tensors` in order (dtype and
/// shape must match); in timing-only mode they may be empty. Every problem is a value in
/// `SimResult::errors`; this never panics or runs unbounded.
pub fn simulate(
    program: &Program,
    machine: &Machine,
    inputs: Vec<Tensor>,
    mode: SimMode,
) -> SimResult {
    if let Err(e) = machine.validate() {
        return invalid(format!("invalid machine: {e}"));
    }
    if let Err(errs) = program.validate() {
        let errs: Vec<String> = errs.iter().map(ToString::to_string).collect();
        return invalid(format!("invalid program: {}", errs.join("; ")));
    }
    for (i, ins) in program.instrs.iter().enumerate() {
        let mut past = None;
        crate::isa::operands::registers(&ins.op, &mut |r, _| {
            if u32::from(r.0) >= machine.scalar_regs {
                past = Some(r.0);
            }
        });
        if let Some(r) = past {
            return invalid(format!(
                "#{i} `{}` names r{r}; {} has {} scalar registers (scalar_regs)",
                program.instr_text(i),
                machine.name,
                machine.scalar_regs
            ));
        }
        if let crate::isa::Op::Dma { dims, .. } = &ins.op {
            if dims.len() > machine.dma_max_dims as usize {
                return invalid(format!(
                    "#{i} `{}` has {} dimensions; {} allows at most {}",
                    program.instr_text(i),
                    dims.len(),
                    machine.name,
                    machine.dma_max_dims
                ));
            }
        }
    }
    let bound = static_instruction_count(program);
    let limit = machine.limits.max_instructions;
    if bound > limit {
        let mut r = invalid(format!(
            "the program runs {bound} instructions to its end, over the limit of {limit} \
             simulated instructions (limits.max_instructions)"
        ));
        for e in &mut r.errors {
            e.kind = SimErrorKind::InstructionLimit;
        }
        return r;
    }
    let mut gm = Vec::new();
    if mode.functional || !inputs.is_empty() {
        if inputs.len() != program.tensors.len() {
            return invalid(format!(
                "the program declares {} tensors but {} inputs were given",
                program.tensors.len(),
                inputs.len()
            ));
        }
        for (decl, t) in program.tensors.iter().zip(&inputs) {
            if decl.dtype != t.dtype || decl.shape != t.shape {
                return invalid(format!(
                    "input `{}` is {}{:?} but the program declares {}{:?}",
                    decl.name, t.dtype, t.shape, decl.dtype, decl.shape
                ));
            }
            if t.data.len() as u64 != decl.bytes() {
                return invalid(format!(
                    "input `{}` holds {} bytes, expected {}",
                    decl.name,
                    t.data.len(),
                    decl.bytes()
                ));
            }
        }
    }
    let memory = if mode.functional {
        gm.extend(inputs.into_iter().map(|t| t.data));
        memory::Memory::new(machine, gm)
    } else {
        memory::Memory::empty()
    };
    let mut result = timing::Engine::new(program, machine, memory, mode).run();
    result.pipes.sort_by_key(|p| p.pipe);
    result.stalls.sort_by_key(|p| p.pipe);
    result
}

/// Dynamic instructions of a run to the end, counting loops with immediate trip counts
/// (a loop whose count is a register counts once): a lower bound that rejects a
/// billion-iteration loop before it starts instead of after 10^7 simulated steps.
pub fn static_instruction_count(program: &Program) -> u64 {
    work(program).instructions
}

/// What a run of a program costs before it runs (`work`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Dynamic instructions to the end (`static_instruction_count`).
    pub instructions: u64,
    /// Elements those instructions touch, each counted by its largest memory operand
    /// (extents in registers count as 1): what a functional run costs beyond the
    /// instruction count, since a vector instruction over a big tile is as much work as
    /// thousands of small ones.
    pub elements: u64,
    /// The outermost loop that runs the most of them, if any.
    pub heaviest_loop: Option<LoopWork>,
}

/// One outermost loop's share of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopWork {
    /// Its `loop` instruction.
    pub instr: usize,
    /// Iterations of its body, nested loops' iterations included.
    pub iterations: u64,
    /// Dynamic instructions it runs, itself included.
    pub instructions: u64,
}

/// The dynamic instructions of `program` run to its end, and where most of them are.
pub fn work(program: &Program) -> Work {
    // `factors` holds the trip-count product at each open loop; `validate` has checked
    // that loops and endloops match, and an extra `endloop` leaves the outer product.
    let mut factors = vec![1u64];
    let mut total = 0u64;
    let mut elements = 0u64;
    let mut heaviest: Option<LoopWork> = None;
    // The outermost loop open now: its instruction, iterations and the total before it.
    let mut open: Option<(usize, u64, u64)> = None;
    for (i, ins) in program.instrs.iter().enumerate() {
        let here = factors.last().copied().unwrap_or(1);
        total = total.saturating_add(here);
        elements = elements.saturating_add(here.saturating_mul(static_elements(&ins.op)));
        match ins.op {
            crate::isa::Op::Loop { count, .. } => {
                let trips = match count {
                    crate::isa::Val::Imm(n) => u64::try_from(n).unwrap_or(0),
                    crate::isa::Val::Reg(_) => 1,
                };
                if factors.len() == 1 {
                    open = Some((i, trips, total.saturating_sub(here)));
                } else if let Some(o) = open.as_mut() {
                    // Nested loops multiply the outer one's iterations.
                    o.1 = o.1.max(here.saturating_mul(trips));
                }
                factors.push(here.saturating_mul(trips));
            }
            crate::isa::Op::EndLoop if factors.len() > 1 => {
                factors.pop();
                if factors.len() == 1 {
                    if let Some((instr, iterations, before)) = open.take() {
                        let this = LoopWork {
                            instr,
                            iterations,
                            instructions: total.saturating_sub(before),
                        };
                        if heaviest.is_none_or(|h| this.instructions > h.instructions) {
                            heaviest = Some(this);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Work {
        instructions: total,
        elements,
        heaviest_loop: heaviest,
    }
}

/// The elements of `op`'s largest memory operand, with extents given in registers
/// counted as 1 (a lower bound, like a register trip count).
fn static_elements(op: &crate::isa::Op) -> u64 {
    use crate::isa::operands::{operands, Dim, Extent, Operand};
    let mut vals = [1i64; 8];
    let mut mems = Vec::new();
    operands(op, &mut |o| match o {
        Operand::Scalar {
            val: crate::isa::Val::Imm(v),
            slot,
        } => {
            if let Some(x) = vals.get_mut(usize::from(slot)) {
                *x = v;
            }
        }
        Operand::Mem(m) => mems.push(m),
        _ => {}
    });
    let dim = |d: Dim| -> u64 {
        let v = match d {
            Dim::Imm(i) => i,
            Dim::Slot(s) => vals.get(usize::from(s)).copied().unwrap_or(1),
        };
        u64::try_from(v).unwrap_or(0)
    };
    mems.iter()
        .map(|m| match m.extent {
            Extent::Tile { rows, cols, .. } => dim(rows).saturating_mul(dim(cols)),
            Extent::Strided { dims, .. } => vals
                .iter()
                .take(usize::from(dims))
                .map(|&v| u64::try_from(v).unwrap_or(0))
                .fold(1u64, u64::saturating_mul),
            Extent::Indexed { rows, len, .. } => dim(rows).saturating_mul(dim(len)),
        })
        .max()
        .unwrap_or(0)
}
