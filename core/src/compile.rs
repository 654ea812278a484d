//! The compile driver: source text and options in, a serialisable result out. This is
//! what the wasm API hands the playground and what `tilescope compile` prints, so the
//! result never panics and stays backward compatible: every field has a serde default,
//! and later outputs (step graph, program, simulation) are added as optional fields.

use crate::diag::{Diagnostic, Diagnostics};
use crate::front;
use crate::passes::{self, Clock, Context, PassManager, PassRecord};
use serde::{Deserialize, Serialize};

/// How `insert-sync` orders cross-pipe hazards (SPEC 3, pass 10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncStrategy {
    #[default]
    Auto,
    Barrier,
    None,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct CompileOptions {
    /// The kernel to compile; the first in the file when `None`.
    pub kernel: Option<String>,
    /// Verify the IR after every pass (always done in debug builds).
    pub verify: bool,
    /// Machine preset name (`teach`, `a3`); `None` for the default preset.
    pub preset: Option<String>,
    pub sync: SyncStrategy,
    /// Let the compiler choose multi-buffering for loops without `@buffers`.
    pub auto_multi_buffer: bool,
    /// Milliseconds clock for pass durations; not serialised. Defaults to `Instant`
    /// natively and to none (durations 0) on wasm32.
    #[serde(skip, default = "passes::default_clock")]
    pub clock: Option<Clock>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            kernel: None,
            verify: false,
            preset: None,
            sync: SyncStrategy::Auto,
            auto_multi_buffer: true,
            clock: passes::default_clock(),
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

pub fn compile(source: &str, options: &CompileOptions) -> CompileResult {
    let (file, _) = front::parse(source);
    let kernels: Vec<String> = file.kernels.iter().map(|k| k.name.name.clone()).collect();
    let kernel = options.kernel.clone().or_else(|| kernels.first().cloned());
    let mut cx = Context::new(source, options.kernel.clone());
    let manager = PassManager::new(passes::pipeline(), options.verify, options.clock);
    let (passes, outcome) = manager.run(&mut cx);
    let diagnostics: Diagnostics = outcome.err().unwrap_or_default();
    let kernel = cx.hir.as_ref().map(|k| k.name.clone()).or(kernel);
    CompileResult {
        kernels,
        kernel,
        passes,
        diagnostics,
    }
}
