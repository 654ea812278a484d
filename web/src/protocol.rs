//! Messages between the page and the compile worker, and the result shapes the panels
//! render. The worker serialises them with bincode (gloo-worker's codec), so every type
//! here is plain serde data: externally tagged enums only, no `#[serde(flatten)]`.
//!
//! `CompileOutput` mirrors what core's compile driver will return (pass records with
//! printed IR and per-line spans, diagnostics, step graph, assembly); `SimOutput` mirrors
//! the simulator's trace. When core's types land, the worker converts them here (or the
//! fields become core's types) without changing the page.

use serde::{Deserialize, Serialize};
use tilescope::diag::{Diagnostic, Span};
use tilescope::types::Pipe;

use crate::options::CompileOptions;

/// A request id chosen by the page; responses carry it back so stale results (from a
/// compile overtaken by more typing) are dropped.
pub type RequestId = u64;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Request {
    Compile {
        id: RequestId,
        source: String,
        options: CompileOptions,
    },
    /// Compile, then run the simulator with inputs filled from `seed`.
    Simulate {
        id: RequestId,
        source: String,
        options: CompileOptions,
        seed: u64,
    },
}

impl Request {
    pub fn id(&self) -> RequestId {
        match self {
            Request::Compile { id, .. } | Request::Simulate { id, .. } => *id,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    Compiled {
        id: RequestId,
        output: CompileOutput,
    },
    Simulated {
        id: RequestId,
        compile: CompileOutput,
        sim: Option<SimOutput>,
    },
    /// The worker panicked while handling `id`; it closes itself after sending this.
    Crashed { id: RequestId, message: String },
}

/// One compiler pass as the Passes panel shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PassRecord {
    pub name: String,
    /// One line: what the pass does.
    pub description: String,
    /// The IR printed after the pass.
    pub ir: String,
    /// For each line of `ir`, the source span it came from (if any).
    pub line_spans: Vec<Option<Span>>,
    /// Whether the pass changed the IR.
    pub changed: bool,
    pub micros: u64,
}

impl PassRecord {
    /// The source span of IR line `line` (0-based), if the printer recorded one.
    pub fn span_of_line(&self, line: usize) -> Option<Span> {
        self.line_spans.get(line).copied().flatten()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StepEdgeKind {
    Data,
    Sync,
    LoopCarried,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepNode {
    pub id: u32,
    pub label: String,
    pub span: Option<Span>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepEdge {
    pub from: u32,
    pub to: u32,
    pub kind: StepEdgeKind,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepGraph {
    pub nodes: Vec<StepNode>,
    pub edges: Vec<StepEdge>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompileOutput {
    pub passes: Vec<PassRecord>,
    pub diagnostics: Vec<Diagnostic>,
    pub steps: Option<StepGraph>,
    /// The final assembly text, when the compile got that far.
    pub asm: Option<String>,
    pub total_micros: u64,
}

impl CompileOutput {
    pub fn error_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == tilescope::diag::Severity::Error)
            .count()
    }
}

/// One instruction's execution on one pipe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceSlice {
    pub pipe: Pipe,
    pub start: u64,
    pub end: u64,
    pub label: String,
    pub step: Option<u32>,
    pub span: Option<Span>,
    /// Why the instruction waited before `start`, if it did.
    pub stall: Option<String>,
}

/// A set/wait pair of one event flag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlagEvent {
    pub src: Pipe,
    pub dst: Pipe,
    pub event: u32,
    pub set_cycle: u64,
    pub wait_cycle: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Race {
    pub message: String,
    pub first: Option<Span>,
    pub second: Option<Span>,
}

/// An output tensor, already encoded as `.npy` for download.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputTensor {
    pub name: String,
    pub shape: Vec<u64>,
    pub dtype: String,
    pub npy: Vec<u8>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimOutput {
    pub cycles: u64,
    pub slices: Vec<TraceSlice>,
    pub flags: Vec<FlagEvent>,
    pub races: Vec<Race>,
    pub errors: Vec<Diagnostic>,
    pub outputs: Vec<OutputTensor>,
    /// Chrome Trace Event JSON, for the Download trace button.
    pub trace_json: String,
}
