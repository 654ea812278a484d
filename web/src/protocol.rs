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

#[cfg(test)]
mod tests {
    use super::*;
    use tilescope::diag::Diagnostic;

    /// gloo-worker moves messages with bincode, which cannot represent some serde
    /// attributes (`flatten`, `skip_serializing_if`, internal tags): every message
    /// shape must survive it.
    #[test]
    fn messages_round_trip_through_the_worker_codec() {
        let compile = CompileOutput {
            passes: vec![PassRecord {
                name: "canonicalize".into(),
                description: "fold".into(),
                ir: "%0 = add %a, %b\n".into(),
                line_spans: vec![Some(Span::new(3, 9)), None],
                changed: true,
                micros: 12,
            }],
            diagnostics: vec![Diagnostic::error("bad", Span::new(1, 2))
                .with_label(Span::new(0, 1), "here")
                .with_note("n")],
            steps: Some(StepGraph {
                nodes: vec![StepNode {
                    id: 0,
                    label: "load x".into(),
                    span: None,
                }],
                edges: vec![StepEdge {
                    from: 0,
                    to: 0,
                    kind: StepEdgeKind::LoopCarried,
                }],
            }),
            asm: Some("MTE2 copy_gm_to_ub".into()),
            total_micros: 40,
        };
        let sim = SimOutput {
            cycles: 900,
            slices: vec![TraceSlice {
                pipe: Pipe::MTE2,
                start: 0,
                end: 200,
                label: "copy".into(),
                step: Some(0),
                span: Some(Span::new(5, 6)),
                stall: None,
            }],
            flags: vec![FlagEvent {
                src: Pipe::MTE2,
                dst: Pipe::V,
                event: 1,
                set_cycle: 200,
                wait_cycle: None,
            }],
            races: vec![Race {
                message: "RAW".into(),
                first: None,
                second: Some(Span::new(1, 1)),
            }],
            errors: vec![Diagnostic::global("deadlock")],
            outputs: vec![OutputTensor {
                name: "y".into(),
                shape: vec![2, 2],
                dtype: "f32".into(),
                npy: vec![0x93, b'N'],
            }],
            trace_json: "{}".into(),
        };
        let messages = vec![
            Response::Compiled {
                id: 1,
                output: compile.clone(),
            },
            Response::Simulated {
                id: 2,
                compile,
                sim: Some(sim),
            },
            Response::Crashed {
                id: 3,
                message: "boom".into(),
            },
        ];
        for message in messages {
            let bytes = bincode::serialize(&message).expect("serialise");
            let back: Response = bincode::deserialize(&bytes).expect("deserialise");
            assert_eq!(back, message);
        }
        let request = Request::Simulate {
            id: 9,
            source: "k".into(),
            options: CompileOptions::default(),
            seed: 3,
        };
        let bytes = bincode::serialize(&request).expect("serialise");
        assert_eq!(
            bincode::deserialize::<Request>(&bytes).expect("deserialise"),
            request
        );
        assert_eq!(request.id(), 9);
    }
}
