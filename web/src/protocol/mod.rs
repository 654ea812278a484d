//! Messages between the page and the compile worker, and the result shapes the panels
//! render. Page and worker exchange them through `codec` (postcard), so every type
//! here is plain serde data: externally tagged enums only, no `#[serde(flatten)]`.
//!
//! The shapes are compact views of core's results that `engine` builds in the worker:
//! the step graph already laid out, the program as one line per instruction, the trace
//! as per-pipe lanes sorted for binary search, outputs already encoded as `.npy`. The
//! page only renders them.

use serde::{Deserialize, Serialize};
use tilescope::diag::{Diagnostic, Span};
pub use tilescope::passes::provenance::IrLine;
use tilescope::types::Pipe;

use options::CompileOptions;

pub mod buffers;
pub mod codec;
pub mod options;

/// A comment that makes the worker panic, to test crash recovery (`crate::worker`'s
/// docs and the help overlay's "For developers" note).
pub const DEBUG_PANIC_MARKER: &str = "// tilescope:debug-panic";

/// What the worker posts, as a string, once it listens for requests: the page holds
/// its requests until then.
pub const WORKER_READY: &str = "tilescope-worker-ready";

/// A request id chosen by the page; responses carry it back so stale results (from a
/// compile overtaken by more typing) are dropped.
pub type RequestId = u64;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Compile; when that succeeds, run the simulator with inputs filled from `seed`.
    /// Answered by `Compiled` at once and, if it says `simulating`, `Simulated` later.
    Compile {
        id: RequestId,
        source: String,
        options: CompileOptions,
        seed: u64,
        /// `source` is a hand-written `.tasm` program (an assembly lesson): it is
        /// assembled and simulated, with no passes.
        asm: bool,
    },
    /// Grade `source` for `lesson`; answered by `Graded`. The page holds the lesson
    /// track and sends the lesson, so the worker's module carries no lesson texts.
    Grade {
        id: RequestId,
        lesson: Box<tilescope::lesson::Lesson>,
        source: String,
    },
    /// Compile and simulate under a second option set (the Compare panel); answered by
    /// `Simulated`, whose diagnostics say why when it did not compile.
    Compare {
        id: RequestId,
        source: String,
        options: CompileOptions,
        seed: u64,
    },
    /// Run the kernel without each optional pass in turn; answered by `Ablated`. The
    /// page asks once a result has been on screen for a moment, so it never delays one.
    Ablate {
        id: RequestId,
        source: String,
        options: CompileOptions,
        seed: u64,
    },
    /// The Chrome trace of the newest simulation (kept by the worker, sent on demand
    /// because it is large).
    Trace { id: RequestId },
}

impl Request {
    pub fn id(&self) -> RequestId {
        match self {
            Request::Compile { id, .. }
            | Request::Compare { id, .. }
            | Request::Ablate { id, .. }
            | Request::Trace { id } => *id,
            Request::Grade { id, .. } => *id,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    Compiled {
        id: RequestId,
        output: CompileOutput,
        /// A `Simulated` answer to the same request follows.
        simulating: bool,
    },
    Simulated {
        id: RequestId,
        /// Boxed: a run's figures outweigh every other answer.
        sim: Box<SimOutput>,
    },
    /// Chrome Trace Event JSON (empty when no simulation has run).
    Trace { id: RequestId, json: String },
    /// The grader's verdict on a `Grade` request.
    Graded {
        id: RequestId,
        grade: crate::page::lessons::Grade,
    },
    /// The runs without each optional pass.
    Ablated {
        id: RequestId,
        ablation: Vec<tilescope::run::Ablation>,
    },
    /// The worker panicked while handling `id`; it closes itself after sending this.
    Crashed { id: RequestId, message: String },
}

impl Response {
    pub fn id(&self) -> RequestId {
        match self {
            Response::Compiled { id, .. }
            | Response::Simulated { id, .. }
            | Response::Trace { id, .. }
            | Response::Ablated { id, .. }
            | Response::Crashed { id, .. } => *id,
            Response::Graded { id, .. } => *id,
        }
    }

    /// The answer's kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Response::Compiled { .. } => "Compiled",
            Response::Simulated { .. } => "Simulated",
            Response::Trace { .. } => "Trace",
            Response::Ablated { .. } => "Ablated",
            Response::Crashed { .. } => "Crashed",
            Response::Graded { .. } => "Graded",
        }
    }
}

/// One compiler pass as the Passes panel shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PassRecord {
    pub name: String,
    /// One line: what the pass does.
    pub description: String,
    /// The IR printed after the pass.
    pub ir: String,
    /// For each line of `ir`, the source span it came from and the final program's
    /// instructions it became (core's provenance).
    pub lines: Vec<IrLine>,
    /// Whether the pass changed the IR.
    pub changed: bool,
    pub micros: u64,
    /// What the pass left as written and why, each `LINE:COL: message` (core's notes).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl PassRecord {
    /// The source span of IR line `line` (0-based), if the printer recorded one.
    pub fn span_of_line(&self, line: usize) -> Option<Span> {
        self.lines.get(line).and_then(|l| l.span)
    }

    /// The final program's instructions IR line `line` (0-based) became.
    pub fn instrs_of_line(&self, line: usize) -> &[u32] {
        self.lines.get(line).map_or(&[], |l| &l.instrs)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StepEdgeKind {
    Data,
    Sync,
    LoopCarried,
}

/// A step (core's node) with its place in the laid-out graph: box centre and size, in
/// SVG units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepNode {
    pub step: tilescope::steps::StepNode,
    pub x: f32,
    pub y: f32,
    pub w: f32,
    pub h: f32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepEdge {
    pub from: u32,
    pub to: u32,
    pub kind: StepEdgeKind,
    /// Sync edges: `MTE2→V #1`, or `#dyn` for an id in a register.
    pub label: Option<String>,
    /// Crosses a loop back edge (drawn curving back).
    pub back: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepGraph {
    pub nodes: Vec<StepNode>,
    pub edges: Vec<StepEdge>,
    pub width: f32,
    pub height: f32,
}

impl StepGraph {
    pub fn node(&self, id: u32) -> Option<&StepNode> {
        self.nodes.iter().find(|n| n.step.id == id)
    }
}

/// One instruction of the final program, as the Assembly panel prints it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AsmLine {
    pub text: String,
    /// Loop nesting depth (indentation).
    pub depth: u16,
    pub pipe: Pipe,
    pub step: Option<u32>,
    pub span: Option<Span>,
    /// For a `set_flag` or `wait_flag` (a loop's primes and drains included), the
    /// index in `CompileOutput::syncs` of the pair it belongs to.
    pub sync: Option<u32>,
    /// For the `loop` of an `if` region, its condition.
    pub branch: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompileOutput {
    pub passes: Vec<PassRecord>,
    pub diagnostics: Vec<Diagnostic>,
    pub steps: Option<StepGraph>,
    /// `.tensor` declarations heading the assembly.
    pub asm_header: Vec<String>,
    /// The final program, instruction `i` at index `i` (the trace refers to these).
    pub asm: Vec<AsmLine>,
    /// Why each set/wait pair is there (insert-sync's record, with the positions of
    /// its `set_flag` and `wait_flag` in `asm`).
    pub syncs: Vec<tilescope::explain::SyncRow>,
    pub total_micros: u64,
}

impl CompileOutput {
    pub fn error_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == tilescope::diag::Severity::Error)
            .count()
    }

    /// The pass whose IR shows steps (what a click on a step switches to).
    pub fn steps_pass(&self) -> Option<&PassRecord> {
        self.passes.iter().find(|p| p.name == STEPS_PASS)
    }

    /// The `set_flag` a sync edge of the step graph stands for: one in step `from`
    /// whose pair waits in step `to` (a click on the edge opens that pair's card).
    pub fn set_flag_of(&self, from: u32, to: u32) -> Option<u32> {
        let step_of = |i: Option<usize>| self.asm.get(i?).and_then(|l| l.step);
        let at = self.asm.iter().enumerate().position(|(i, l)| {
            l.step == Some(from)
                && l.text.starts_with("set_flag")
                && self
                    .sync_of(i as u32)
                    .is_some_and(|r| step_of(r.wait_index) == Some(to))
        })?;
        Some(at as u32)
    }

    /// The `loop` of the innermost `if` region that holds both instructions `a` and
    /// `b`, if one does: a pair set and waited there runs only when the branch does.
    pub fn branch_around(&self, a: usize, b: usize) -> Option<usize> {
        let (lo, hi) = (a.min(b), a.max(b));
        (0..=lo).rev().find(|&l| {
            let Some(line) = self.asm.get(l) else {
                return false;
            };
            // The body: the lines after the loop deeper than it (its `endloop` is not).
            let end = self
                .asm
                .iter()
                .skip(l + 1)
                .position(|x| x.depth <= line.depth)
                .map_or(self.asm.len(), |k| l + 1 + k);
            line.branch.is_some() && l < lo && hi < end
        })
    }

    /// The set/wait pair a `set_flag` or `wait_flag` instruction belongs to.
    pub fn sync_of(&self, instr: u32) -> Option<&tilescope::explain::SyncRow> {
        let row = self.asm.get(instr as usize)?.sync?;
        self.syncs.get(row as usize)
    }
}

/// The pass that forms steps.
pub const STEPS_PASS: &str = "form-steps";

/// Why an instruction waited, and the cycles `[from, to)` it waited on `pipe`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    pub pipe: Pipe,
    pub from: u64,
    pub to: u64,
    pub reason: String,
}

/// One execution of an instruction (`instr` indexes `CompileOutput::asm`, which holds
/// its text, step and span).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceSlice {
    pub instr: u32,
    pub start: u64,
    pub end: u64,
    pub step: Option<u32>,
    pub stall: Option<Stall>,
}

/// One pipe's slices sorted by start; `reach[i]` is the largest end among
/// `slices[..=i]`, so the first slice visible after a cycle is a binary search even
/// where a pipe overlaps instructions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lane {
    pub pipe: Pipe,
    pub slices: Vec<TraceSlice>,
    pub reach: Vec<u64>,
    pub busy: u64,
    pub instructions: u64,
    /// The part of `busy` stretched by MTE2 and MTE3 sharing GM bandwidth.
    pub shared_bandwidth: u64,
}

/// A set/wait pair of one event flag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlagEvent {
    pub src: Pipe,
    pub dst: Pipe,
    pub event: u32,
    pub set_cycle: u64,
    pub wait_cycle: Option<u64>,
    pub set_instr: u32,
    pub wait_instr: Option<u32>,
}

/// An instruction a race or an error names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstrRef {
    pub index: u32,
    pub text: String,
    pub pipe: Pipe,
    pub span: Option<Span>,
    /// `read` / `write` for race accesses.
    pub access: Option<String>,
    /// The first cycle it started in the trace, for jumping to it on the timeline.
    pub first_cycle: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Race {
    pub message: String,
    pub first: InstrRef,
    pub second: InstrRef,
    /// Memory space or tensor name.
    pub place: String,
    pub count: u64,
    /// In a run without sync: the pair `auto` places that orders these two accesses.
    pub fix: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimProblem {
    pub kind: String,
    pub message: String,
    pub instr: Option<InstrRef>,
    pub related: Vec<InstrRef>,
    pub cycle: u64,
}

/// An output tensor, already encoded as `.npy` for download.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputTensor {
    pub name: String,
    pub shape: Vec<u64>,
    pub dtype: String,
    pub matches: bool,
    pub max_abs_err: f64,
    pub mismatches: u64,
    /// The first values, formatted.
    pub preview: Vec<String>,
    pub npy: Vec<u8>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimOutput {
    pub cycles: u64,
    /// Lower bound: busiest pipe or GM traffic over bandwidth.
    pub bound: u64,
    /// The bound plus the fill and drain the data dependences force (core's
    /// `RunResult::path_bound`; `None` when the trace was cut short).
    pub path_bound: Option<u64>,
    pub syncs: u64,
    pub reference_match: bool,
    pub max_abs_err: f64,
    /// Only pipes that executed something, in `Pipe::ALL` order.
    pub lanes: Vec<Lane>,
    /// Every slice start, sorted and deduplicated: the stops of "step by instruction".
    pub stops: Vec<u64>,
    /// Slices the simulator produced; more than are kept in `lanes` when capped.
    pub total_slices: u64,
    pub capped: bool,
    pub flags: Vec<FlagEvent>,
    /// Every `if` (its `loop` in `CompileOutput::asm`), how often it ran and was taken.
    pub branches: Vec<tilescope::sim::BranchCount>,
    /// Each decision of an `if`, in order (capped with the trace).
    pub branch_runs: Vec<tilescope::sim::BranchRun>,
    pub races: Vec<Race>,
    pub errors: Vec<SimProblem>,
    /// Input preparation or reference interpreter errors.
    pub diagnostics: Vec<Diagnostic>,
    pub outputs: Vec<OutputTensor>,
    /// Every on-chip buffer slot and when it held a live value.
    pub buffers: Vec<buffers::BufferSlot>,
    /// What no program of the kernel beats (core's `RunResult::roofline`).
    pub roofline: tilescope::run::Roofline,
    /// Where each pipe's cycles went (core's `SimResult::stalls`), every pipe.
    pub stalls: Vec<tilescope::sim::PipeStalls>,
    /// The `wait_flag`s that held their pipes longest, longest first (at most
    /// [`FLAG_WAITS`]).
    pub flag_waits: Vec<FlagWait>,
}

/// The flag waits the Output panel lists.
pub const FLAG_WAITS: usize = 5;

/// One `wait_flag` and what it cost its pipe over the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlagWait {
    pub wait: InstrRef,
    pub src: Pipe,
    pub dst: Pipe,
    pub event: u32,
    pub cycles: u64,
    pub times: u64,
    /// Where its longest wait began, for the timeline.
    pub longest_from: u64,
}

impl SimOutput {
    pub fn lane(&self, pipe: Pipe) -> Option<&Lane> {
        self.lanes.iter().find(|l| l.pipe == pipe)
    }

    pub fn problem_count(&self) -> usize {
        self.races.len() + self.errors.len() + self.diagnostics.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::codec;

    fn first_lesson() -> &'static tilescope::lesson::Lesson {
        crate::catalog::lesson("01-load-store").expect("lesson 1")
    }

    /// Page and worker move messages with postcard, which cannot represent some serde
    /// attributes (`flatten`, `skip_serializing_if`, internal tags): every message
    /// shape must survive it. The real shapes come from compiling and simulating an
    /// example.
    #[test]
    fn messages_round_trip_through_the_worker_codec() {
        let example = crate::catalog::find("matmul_tiled").map_or("", |e| e.source);
        let (compile, sim) =
            crate::worker::engine::run(example, &crate::protocol::options::playground(), 1);
        let sim = sim.map(|(s, _)| s).unwrap_or_default();
        assert!(!sim.lanes.is_empty() && compile.steps.is_some());
        let messages = vec![
            Response::Compiled {
                id: 1,
                output: compile,
                simulating: true,
            },
            Response::Simulated {
                id: 1,
                sim: Box::new(sim),
            },
            Response::Trace {
                id: 2,
                json: "{}".into(),
            },
            Response::Crashed {
                id: 3,
                message: "boom".into(),
            },
            Response::Ablated {
                id: 5,
                ablation: crate::worker::engine::ablate(
                    example,
                    &crate::protocol::options::playground(),
                    1,
                ),
            },
            Response::Graded {
                id: 4,
                grade: tilescope::lesson::grade(first_lesson(), "kernel k() {}"),
            },
        ];
        for message in messages {
            let bytes = codec::to_bytes(&message).expect("serialise");
            let back: Response = codec::from_bytes(&bytes).expect("deserialise");
            assert_eq!(back, message);
        }
        for request in [
            Request::Compile {
                id: 9,
                source: "k".into(),
                options: crate::protocol::options::playground(),
                seed: 3,
                asm: true,
            },
            Request::Grade {
                id: 11,
                lesson: Box::new(first_lesson().clone()),
                source: "k".into(),
            },
            Request::Trace { id: 10 },
            Request::Ablate {
                id: 12,
                source: "k".into(),
                options: crate::protocol::options::playground(),
                seed: 0,
            },
        ] {
            let bytes = codec::to_bytes(&request).expect("serialise");
            assert_eq!(
                codec::from_bytes::<Request>(&bytes).expect("deserialise"),
                request
            );
        }
    }
}
