//! The compile driver: source text and options in, a serialisable result out. This is
//! what the wasm API hands the playground and what `tilescope compile` prints, so the
//! result never panics and stays backward compatible: every field has a serde default,
//! and later outputs (step graph, program, simulation) are added as optional fields.

use crate::diag::{Diagnostic, Diagnostics};
use crate::front;
use crate::isa::Program;
use crate::machine::Machine;
use crate::passes::{self, Clock, Context, PassManager, PassRecord};
use crate::types::MemSpace;
use serde::{Deserialize, Serialize};

pub use crate::steps::{step_graph, steps_dot, StepEdge, StepEdgeKind, StepGraph, StepNode};

pub use crate::machine::default_machine;
pub use crate::passes::sync::{AliasMode, SyncStrategy};

/// The machine `options` select, or an error naming the unknown preset.
pub fn resolve_machine(options: &CompileOptions) -> Result<Machine, Diagnostic> {
    if let Some(m) = &options.machine {
        m.validate()
            .map_err(|e| Diagnostic::global(format!("invalid machine: {e}")))?;
        return Ok(m.clone());
    }
    match options.preset.as_deref() {
        None => Ok(default_machine()),
        Some(name) => Machine::preset(name).ok_or_else(|| {
            Diagnostic::global(format!(
                "unknown machine preset `{name}` (presets: {})",
                Machine::preset_names().join(", ")
            ))
        }),
    }
}

/// What a compile is asked to do: one type for the CLI's flags, the wasm API's JSON and
/// the playground's toolbar and worker requests (the playground has its own defaults
/// and share-link field names).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct CompileOptions {
    /// The kernel to compile; the first in the file when `None`.
    pub kernel: Option<String>,
    /// Verify the IR after every pass (always done in debug builds).
    pub verify: bool,
    /// Machine preset name (`teach`, `a3`); `None` for the default preset (`a3`).
    pub preset: Option<String>,
    /// A full machine description (e.g. read from a JSON preset file); takes precedence
    /// over `preset`.
    pub machine: Option<Machine>,
    pub sync: SyncStrategy,
    /// How insert-sync decides that two accesses may overlap (JSON `"alias"`).
    pub alias: AliasMode,
    /// Let the compiler choose multi-buffering for loops without `@buffers`.
    pub auto_multi_buffer: bool,
    /// Optional passes to leave out (`--disable-pass`), to see what each one buys.
    pub disabled_passes: Vec<String>,
    /// Milliseconds clock for pass durations; not serialised. Defaults to `Instant`
    /// natively and to none (durations 0) on wasm32.
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub clock: PassClock,
}

/// The clock that times the passes, as an option: never serialised, and never what
/// makes two option sets differ, since it changes no compiled program (only the
/// durations recorded).
#[derive(Clone, Copy, Debug)]
pub struct PassClock(pub Option<Clock>);

impl PassClock {
    /// No clock: every pass records 0 µs, so results compare equal run to run.
    pub const NONE: PassClock = PassClock(None);
}

impl Default for PassClock {
    fn default() -> Self {
        PassClock(passes::default_clock())
    }
}

impl PartialEq for PassClock {
    fn eq(&self, _: &PassClock) -> bool {
        true
    }
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            kernel: None,
            verify: false,
            preset: None,
            machine: None,
            sync: SyncStrategy::Auto,
            alias: AliasMode::Precise,
            auto_multi_buffer: true,
            disabled_passes: Vec::new(),
            clock: PassClock::default(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CompileResult {
    /// Names of every kernel in the file, in source order.
    pub kernels: Vec<String>,
    /// The kernel compiled.
    pub kernel: Option<String>,
    /// One record per pass that completed, in order; empty on a front-end error.
    pub passes: Vec<PassRecord>,
    pub diagnostics: Vec<Diagnostic>,
    /// The step graph, once lower-to-pipes and emit ran.
    pub steps: Option<StepGraph>,
    /// The final program and its assembly text.
    pub program: Option<Program>,
    pub asm: Option<String>,
    /// plan-memory's on-chip buffer table, once the kernel compiled.
    pub buffers: Vec<BufferInfo>,
    /// What insert-sync placed and why, once the kernel compiled (`explain` renders it).
    pub sync: Option<crate::passes::sync::SyncReport>,
}

/// One on-chip buffer of the compiled kernel: what the playground lists at the cursor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BufferInfo {
    /// The tile's printed IR name.
    pub name: String,
    pub space: MemSpace,
    /// Bytes of one slot.
    pub bytes: u64,
    /// Byte address of each slot in `space` (two or more when multi-buffered).
    pub addrs: Vec<u64>,
    /// Where its first tile is defined (`lowered::Buffer::span`).
    #[serde(default)]
    pub span: Option<crate::diag::Span>,
}

impl BufferInfo {
    fn of(b: &crate::lowered::Buffer) -> BufferInfo {
        BufferInfo {
            name: b.name.clone(),
            space: b.space,
            bytes: b.bytes,
            addrs: b.addrs.clone(),
            span: b.span,
        }
    }
}

impl CompileResult {
    /// True when no error was reported.
    pub fn ok(&self) -> bool {
        !self
            .diagnostics
            .iter()
            .any(|d| d.severity == crate::diag::Severity::Error)
    }
}

/// Pass records as `--emit passes` prints them: each pass's IR under `=== after NAME
/// ===`, its notes (`; note: LINE:COL: ...`), then a blank line (what `tilescope opt`
/// prints too).
pub fn passes_text(records: &[PassRecord]) -> String {
    let mut out = String::new();
    for pass in records {
        out.push_str(&format!("=== after {} ===\n{}", pass.name, pass.ir));
        if !pass.ir.ends_with('\n') {
            out.push('\n');
        }
        for n in &pass.notes {
            out.push_str(&format!("; note: {}: {}\n", n.at, n.message));
        }
        out.push('\n');
    }
    out
}

impl CompileOptions {
    /// Gives `cx` the options passes read (all but the machine, which
    /// [`resolve_machine`] checks first): the compile and `tilescope opt` set up their
    /// contexts through this one place.
    pub fn configure(&self, cx: &mut Context) {
        cx.sync = self.sync;
        cx.alias = self.alias;
        cx.auto_multi_buffer = self.auto_multi_buffer;
        cx.disabled_passes = self.disabled_passes.clone();
    }
}

pub fn compile(source: &str, options: &CompileOptions) -> CompileResult {
    compile_with_context(source, options).0
}

/// Compiles and also returns the pass context (the checked kernel, the IR, the lowered
/// and final programs), for `run` and for tests.
pub fn compile_with_context(source: &str, options: &CompileOptions) -> (CompileResult, Context) {
    let parsed = front::parse(source);
    let kernels: Vec<String> = parsed
        .0
        .kernels
        .iter()
        .map(|k| k.name.name.clone())
        .collect();
    let kernel = options.kernel.clone().or_else(|| kernels.first().cloned());
    let mut cx = Context::new(source, options.kernel.clone());
    cx.parsed = Some(parsed);
    options.configure(&mut cx);
    // The machine and the pass list come from the options: either can be wrong before a
    // pass runs.
    let setup = resolve_machine(options).and_then(|m| {
        cx.machine = Some(m);
        passes::pipeline_without(&options.disabled_passes)
    });
    let pipeline = match setup {
        Ok(p) => p,
        Err(d) => {
            let result = CompileResult {
                kernels,
                kernel,
                diagnostics: vec![d],
                ..CompileResult::default()
            };
            return (result, cx);
        }
    };
    let manager = PassManager::new(pipeline, options.verify, options.clock.0);
    let (passes, outcome) = manager.run(&mut cx);
    let diagnostics: Diagnostics = outcome.err().unwrap_or_default();
    let kernel = cx.hir.as_ref().map(|k| k.name.clone()).or(kernel);
    let ok = diagnostics.is_empty();
    let program = cx.program.clone().filter(|_| ok);
    let asm = program
        .as_ref()
        .map(|p| crate::isa::asm::print_located(p, source));
    let steps = match (&cx.ir, &program) {
        (Some(ir), Some(p)) => Some(step_graph(ir, cx.lowered.as_ref(), p)),
        _ => None,
    };
    let buffers = match (&cx.lowered, &program) {
        (Some(l), Some(_)) => l.buffers.iter().map(BufferInfo::of).collect(),
        _ => Vec::new(),
    };
    let sync = cx.sync_report.clone().filter(|_| ok);
    let result = CompileResult {
        kernels,
        kernel,
        passes,
        diagnostics,
        steps,
        program,
        asm,
        buffers,
        sync,
    };
    (result, cx)
}
