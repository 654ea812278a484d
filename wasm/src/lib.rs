//! The JavaScript API over Tilescope's core: compile, run, the optional passes and what
//! leaving each out costs, machine presets, the example gallery and the graded lessons.
//! It returns what the playground's worker computes from core, as the JSON of
//! `tilescope compile --emit json` and `tilescope run --json` has it: core's compile
//! result with insert-sync's report explained as set/wait rows (`sync.pairs`, from
//! `tilescope::explain`), and the run with its trace, outputs as `.npy` bytes and, for a
//! run without sync, the pair `auto` places for each race.
//!
//! ```js
//! import init, { compile, run, examples } from "./tilescope_wasm.js";
//! await init();
//! const source = examples().find((e) => e.name === "softmax").source;
//! const result = compile(source, { preset: "a3", disabled_passes: ["multi-buffer"] });
//! for (const pair of result.sync?.pairs ?? []) console.log(pair.src, "->", pair.dst, pair.kind);
//! const sim = run(source, { sync: "none" }, undefined, 1);
//! console.log(sim.cycles, sim.races.length, sim.race_fixes[0]?.buffer);
//! ```
//!
//! Values are plain objects and arrays (serde-wasm-bindgen): a missing value (`None`)
//! is `null`, a `u64` is a number, maps are objects, and bytes are a `Uint8Array`.
//! Options are a partial `CompileOptions`: a field left out takes its default, and a
//! malformed one (`sync: "sometimes"`) throws. An unknown preset or pass and errors in
//! the kernel do not throw: they are the result's `diagnostics`.
//!
//! The module's `.d.ts` declares every type the functions take and return
//! (`CompileOptions`, `CompileResult`, `RunResult`, `SyncRow`, ...). The declarations
//! are generated from the Rust types by [`typescript::declarations`] (ts-rs, honouring
//! their serde attributes) into `tilescope.d.ts`, and a test fails when that file and
//! the types differ.

use serde::Serialize;
use std::collections::BTreeMap;
use tilescope::compile::{self, CompileOptions, SyncStrategy};
use tilescope::diag::Diagnostic;
use tilescope::explain::{self, RemovedRow, SyncRow};
use tilescope::machine::Machine;
use tilescope::tensor::Tensor;
use ts_rs::TS;
use wasm_bindgen::prelude::*;

pub mod typescript;

#[wasm_bindgen(typescript_custom_section)]
const DECLARATIONS: &str = typescript::DECLARATIONS;

#[wasm_bindgen(start)]
pub fn start() {
    // A panic would otherwise only say "unreachable executed".
    console_error_panic_hook::set_once();
}

/// The core's version, so a page can tell which compiler it talks to.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// What `compile` returns: core's `CompileResult` with insert-sync's report explained
/// (`sync`), as `tilescope compile --emit json` prints it.
#[derive(Clone, Debug, Serialize, TS)]
pub struct CompileResult {
    /// Names of every kernel in the file, in source order.
    pub kernels: Vec<String>,
    /// The kernel compiled.
    pub kernel: Option<String>,
    /// One record per pass that completed, in order; empty on a front-end error.
    pub passes: Vec<tilescope::passes::PassRecord>,
    pub diagnostics: Vec<Diagnostic>,
    /// The step graph, once lower-to-pipes and emit ran.
    pub steps: Option<compile::StepGraph>,
    /// The final program; `asm` is its assembly text.
    pub program: Option<tilescope::isa::Program>,
    pub asm: Option<String>,
    /// plan-memory's on-chip buffer table, once the kernel compiled.
    pub buffers: Vec<compile::BufferInfo>,
    /// Why each sync is there, once the kernel compiled.
    pub sync: Option<SyncExplanation>,
}

impl CompileResult {
    /// `result` (of compiling `source`) as JavaScript receives it. Every field of core's
    /// result is named here, so a field added there does not build until it is here too.
    pub fn new(result: compile::CompileResult, source: &str) -> CompileResult {
        let sync = SyncExplanation::of(&result, source);
        let compile::CompileResult {
            kernels,
            kernel,
            passes,
            diagnostics,
            steps,
            program,
            asm,
            buffers,
            sync: _,
        } = result;
        CompileResult {
            kernels,
            kernel,
            passes,
            diagnostics,
            steps,
            program,
            asm,
            buffers,
            sync,
        }
    }
}

/// insert-sync's report for people (`tilescope::explain`): the JSON `sync` object of
/// the CLI.
#[derive(Clone, Debug, Serialize, TS)]
pub struct SyncExplanation {
    pub strategy: SyncStrategy,
    /// The alias analysis the pairs were placed with.
    pub alias: compile::AliasMode,
    /// Every set/wait pair placed, with the hazard it orders, its buffer, the producer's
    /// and consumer's pipes and source lines, and its `set_flag` / `wait_flag` positions
    /// in `program`.
    pub pairs: Vec<SyncRow>,
    /// Pairs found redundant, each with the pairs (indices into `pairs`) covering it.
    pub removed: Vec<RemovedRow>,
    /// Every event-id reduction and barrier fallback, as sentences.
    pub notes: Vec<String>,
}

impl SyncExplanation {
    fn of(result: &compile::CompileResult, source: &str) -> Option<SyncExplanation> {
        let report = result.sync.as_ref()?;
        Some(SyncExplanation {
            strategy: report.strategy,
            alias: report.alias,
            pairs: explain::sync_rows(report, result.program.as_ref(), source),
            removed: explain::removed_rows(report, source),
            notes: explain::notes(report),
        })
    }
}

/// What `run` returns: core's `RunResult` with the compile result as `compile`
/// returns it, the outputs as `.npy` bytes, and the fixes of the races.
#[derive(Clone, Debug, Serialize, TS)]
pub struct RunResult {
    pub cycles: u64,
    /// Cycle lower bound: the busiest pipe's busy cycles, or the GM transfers at full
    /// rate one after another.
    pub bound: u64,
    /// The bound plus the fill and drain the run's data dependences force (`null` when
    /// the trace was cut short).
    pub path_bound: Option<u64>,
    /// What no program of the kernel beats: its compulsory GM bytes and its products
    /// at the machine's peak rates.
    pub roofline: tilescope::run::Roofline,
    pub pipes: Vec<tilescope::sim::PipeStats>,
    /// Where each pipe's cycles went: busy, or idle and why.
    pub stalls: Vec<tilescope::sim::PipeStalls>,
    /// Set/wait pairs that executed.
    pub syncs: u64,
    pub races: Vec<tilescope::sim::Race>,
    /// For each of `races` of a run with `sync: "none"`, the pair `auto` places that
    /// orders it (`null` when a chain of other pairs does); empty for a run with sync.
    pub race_fixes: Vec<Option<SyncRow>>,
    pub errors: Vec<tilescope::sim::SimError>,
    pub reference_match: bool,
    pub max_abs_err: f64,
    /// Each `out` parameter compared with the reference interpreter.
    pub outputs: Vec<RunOutput>,
    pub trace: Vec<tilescope::sim::TraceEntry>,
    /// On-chip byte ranges `[lo, hi)` each `trace[entry]` read or wrote.
    pub accesses: Vec<tilescope::sim::TraceAccess>,
    pub flags: Vec<tilescope::sim::FlagEvent>,
    pub compile: CompileResult,
    /// Compile, input or interpreter errors (the simulation's are in `errors`).
    pub diagnostics: Vec<Diagnostic>,
}

/// One `out` tensor of a run.
#[derive(Clone, Debug, Serialize, TS)]
pub struct RunOutput {
    pub name: String,
    pub matches: bool,
    pub max_abs_err: f64,
    pub mismatches: usize,
    /// The simulated tensor's element type and shape.
    pub dtype: Option<tilescope::types::DType>,
    pub shape: Vec<u64>,
    /// The simulated tensor as a `.npy` file.
    #[ts(type = "Uint8Array")]
    pub npy: serde_bytes::ByteBuf,
}

impl RunResult {
    fn new(result: tilescope::run::RunResult, options: &CompileOptions, source: &str) -> RunResult {
        let tilescope::run::RunResult {
            sim:
                tilescope::sim::SimResult {
                    cycles,
                    pipes,
                    stalls,
                    syncs,
                    races,
                    errors,
                    trace,
                    accesses,
                    flags,
                    ..
                },
            reference_match,
            max_abs_err,
            bound,
            path_bound,
            roofline,
            outputs,
            compile,
            diagnostics,
        } = result;
        let race_fixes = explain::race_fixes(options, source, &races);
        let outputs = outputs
            .into_iter()
            .map(|o| RunOutput {
                dtype: o.tensor.as_ref().map(|t| t.dtype),
                shape: o
                    .tensor
                    .as_ref()
                    .map(|t| t.shape.clone())
                    .unwrap_or_default(),
                npy: serde_bytes::ByteBuf::from(
                    o.tensor
                        .as_ref()
                        .map(tilescope::npy::write)
                        .unwrap_or_default(),
                ),
                name: o.name,
                matches: o.matches,
                max_abs_err: o.max_abs_err,
                mismatches: o.mismatches,
            })
            .collect();
        RunResult {
            cycles,
            bound,
            path_bound,
            roofline,
            pipes,
            stalls,
            syncs,
            races,
            race_fixes,
            errors,
            reference_match,
            max_abs_err,
            outputs,
            trace,
            accesses,
            flags,
            compile: CompileResult::new(compile, source),
            diagnostics,
        }
    }
}

/// A kernel of the example gallery.
#[derive(Clone, Debug, Serialize, TS)]
pub struct Example {
    /// File stem: `softmax` for `softmax.tile`.
    pub name: String,
    pub title: String,
    /// The teaching text of the comment lines the kernel starts with.
    pub description: String,
    pub source: String,
}

fn to_js(value: &impl Serialize) -> Result<JsValue, JsError> {
    // As the declarations say (`T | null`, objects for maps): the CLI's JSON shape.
    let serializer = serde_wasm_bindgen::Serializer::new()
        .serialize_maps_as_objects(true)
        .serialize_missing_as_null(true);
    value
        .serialize(&serializer)
        .map_err(|e| JsError::new(&e.to_string()))
}

fn options(value: JsValue) -> Result<CompileOptions, JsError> {
    let mut options: CompileOptions = if value.is_undefined() || value.is_null() {
        CompileOptions::default()
    } else {
        serde_wasm_bindgen::from_value(value).map_err(|e| JsError::new(&format!("options: {e}")))?
    };
    options.clock = tilescope::compile::PassClock(Some(now_ms));
    Ok(options)
}

/// `inputs` (parameter name -> `.npy` bytes) as tensors.
fn inputs(value: JsValue) -> Result<Vec<(String, Tensor)>, JsError> {
    let files: BTreeMap<String, serde_bytes::ByteBuf> = if value.is_undefined() || value.is_null() {
        BTreeMap::new()
    } else {
        serde_wasm_bindgen::from_value(value).map_err(|e| JsError::new(&format!("inputs: {e}")))?
    };
    files
        .into_iter()
        .map(|(name, bytes)| {
            let tensor = tilescope::npy::read(&bytes)
                .map_err(|e| JsError::new(&format!("input `{name}`: {e}")))?;
            Ok((name, tensor))
        })
        .collect()
}

/// Milliseconds from the JavaScript global's `performance.now()` (a window or a worker);
/// 0 where there is none (`std::time::Instant` does not exist on wasm32-unknown-unknown).
fn now_ms() -> f64 {
    js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .and_then(|p| p.dyn_into::<web_sys_performance::Performance>().ok())
        .map_or(0.0, |p| p.now())
}

/// A minimal binding of `Performance.now`, to avoid web-sys for one method.
mod web_sys_performance {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        pub type Performance;
        #[wasm_bindgen(method)]
        pub fn now(this: &Performance) -> f64;
    }
}

/// Compiles `source` through every pass. Errors in the kernel are in the result's
/// `diagnostics`; only malformed options throw.
#[wasm_bindgen(unchecked_return_type = "CompileResult")]
pub fn compile(
    source: &str,
    #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompileOptions> | null")]
    options: JsValue,
) -> Result<JsValue, JsError> {
    let result = compile::compile(source, &self::options(options)?);
    to_js(&CompileResult::new(result, source))
}

/// Compiles and runs `source` on the simulator and the reference interpreter. `inputs`
/// maps parameter names to `.npy` file bytes; parameters left out are filled from
/// `seed` (default 0).
#[wasm_bindgen(unchecked_return_type = "RunResult")]
pub fn run(
    source: &str,
    #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompileOptions> | null")]
    options: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Record<string, Uint8Array> | null")]
    inputs: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "number | null")] seed: Option<u32>,
) -> Result<JsValue, JsError> {
    let options = self::options(options)?;
    let provided = self::inputs(inputs)?;
    let result = tilescope::run::run(source, &options, provided, u64::from(seed.unwrap_or(0)));
    to_js(&RunResult::new(result, &options, source))
}

/// The optional passes, the names `disabled_passes` takes.
#[wasm_bindgen(unchecked_return_type = "string[]")]
pub fn optional_passes() -> Result<JsValue, JsError> {
    to_js(&tilescope::passes::optional_passes())
}

/// What each optional pass buys: `source` run once without each optional pass that
/// `options` leaves in (core's `run::ablate`, as `tilescope run --ablate` and the
/// playground's pass switches report it).
#[wasm_bindgen(unchecked_return_type = "Ablation[]")]
pub fn ablate(
    source: &str,
    #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompileOptions> | null")]
    options: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Record<string, Uint8Array> | null")]
    inputs: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "number | null")] seed: Option<u32>,
) -> Result<JsValue, JsError> {
    let options = self::options(options)?;
    let provided = self::inputs(inputs)?;
    to_js(&tilescope::run::ablate(
        source,
        &options,
        &provided,
        u64::from(seed.unwrap_or(0)),
    ))
}

/// A machine preset by name (`teach`, `a3`); throws for an unknown name.
#[wasm_bindgen(unchecked_return_type = "Machine")]
pub fn machine(preset: &str) -> Result<JsValue, JsError> {
    let m = Machine::preset(preset).ok_or_else(|| {
        JsError::new(&format!(
            "unknown preset `{preset}`: {}",
            Machine::preset_names().join(", ")
        ))
    })?;
    to_js(&m)
}

/// The example gallery, in teaching order.
#[wasm_bindgen(unchecked_return_type = "Example[]")]
pub fn examples() -> Result<JsValue, JsError> {
    let list: Vec<Example> = tilescope::examples::ALL
        .iter()
        .map(|e| Example {
            name: e.name.to_string(),
            title: e.title.to_string(),
            description: e.description(),
            source: e.source.to_string(),
        })
        .collect();
    to_js(&list)
}

fn all_lessons() -> Result<Vec<tilescope::lesson::Lesson>, JsError> {
    tilescope::lesson::all().map_err(|e| JsError::new(&e))
}

/// The lesson track, in order.
#[wasm_bindgen(unchecked_return_type = "Lesson[]")]
pub fn lessons() -> Result<JsValue, JsError> {
    to_js(&all_lessons()?)
}

/// Grades `source` for the lesson with id `lesson` (`01-load-store`) with core's grader,
/// as `tilescope lesson check` and the playground do; throws for an unknown lesson.
#[wasm_bindgen(unchecked_return_type = "Grade")]
pub fn grade(lesson: &str, source: &str) -> Result<JsValue, JsError> {
    let lessons = all_lessons()?;
    let found = lessons.iter().find(|l| l.id == lesson).ok_or_else(|| {
        let ids: Vec<&str> = lessons.iter().map(|l| l.id.as_str()).collect();
        JsError::new(&format!("unknown lesson `{lesson}`: {}", ids.join(", ")))
    })?;
    to_js(&tilescope::lesson::grade(found, source))
}

/// The compile result's step graph as Graphviz DOT, or an empty string.
#[wasm_bindgen]
pub fn steps_dot(
    source: &str,
    #[wasm_bindgen(unchecked_optional_param_type = "Partial<CompileOptions> | null")]
    options: JsValue,
) -> Result<String, JsError> {
    let result = compile::compile(source, &self::options(options)?);
    Ok(result
        .steps
        .as_ref()
        .map(compile::steps_dot)
        .unwrap_or_default())
}
