//! The JavaScript API over Tilescope's core: compile, run, machine presets and the example
//! gallery. Results are core's serde types converted by serde-wasm-bindgen, so JavaScript
//! sees plain objects whose fields are documented in the TypeScript section below.
//!
//! ```js
//! import init, { compile, run, examples } from "./tilescope_wasm.js";
//! await init();
//! const result = compile(examples()[0].source, { preset: "a3", sync: "auto" });
//! for (const pass of result.passes) console.log(pass.name, pass.changed);
//! ```

use serde::Serialize;
use std::collections::BTreeMap;
use tilescope::compile::{self, CompileOptions};
use tilescope::machine::Machine;
use tilescope::tensor::Tensor;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** Options of `compile` and `run`; every field may be left out. */
export interface CompileOptions {
  /** The kernel to compile when the file holds several (default: the first). */
  kernel?: string;
  /** Machine preset name: "teach" or "a3". */
  preset?: string;
  /** A whole machine description (as `machine()` returns), overriding `preset`. */
  machine?: object;
  /** How the compiler orders the pipes. */
  sync?: "auto" | "barrier" | "none";
  /** What insert-sync knows about aliasing: "precise" (default) or "coarse" (every
      buffer of a memory space and every tensor one region, the ablation). */
  alias?: "precise" | "coarse";
  /** Double-buffer loops without `@buffers` when memory allows. */
  auto_multi_buffer?: boolean;
  /** Verify the IR after every pass. */
  verify?: boolean;
}
export interface Span { start: number; end: number }
export interface Diagnostic {
  severity: "error" | "warning" | "note";
  message: string;
  span: Span | null;
  labels: { span: Span; message: string }[];
  notes: string[];
}
export interface PassRecord {
  name: string;
  description: string;
  /** The IR printed after the pass. */
  ir: string;
  /** Per line of `ir`, the source span of what it shows. */
  spans: (Span | null)[];
  changed: boolean;
  micros: number;
}
export interface CompileResult {
  kernels: string[];
  kernel: string | null;
  passes: PassRecord[];
  diagnostics: Diagnostic[];
  steps: object | null;
  program: object | null;
  asm: string | null;
  /** On-chip buffers: one address per slot. */
  buffers: { name: string; space: string; bytes: number; addrs: number[] }[];
}
export interface RunOutput {
  name: string;
  matches: boolean;
  max_abs_err: number;
  mismatches: number;
  /** The simulated tensor as a .npy file. */
  npy: Uint8Array;
}
export interface RunResult {
  cycles: number;
  bound: number;
  pipes: { pipe: string; busy: number; instructions: number }[];
  syncs: number;
  races: object[];
  errors: object[];
  reference_match: boolean;
  max_abs_err: number;
  trace: object[];
  /** On-chip byte ranges `[lo, hi)` each `trace[entry]` read or wrote. */
  accesses: { entry: number; space: string; lo: number; hi: number; write: boolean }[];
  flags: object[];
  compile: CompileResult;
  diagnostics: Diagnostic[];
  outputs: RunOutput[];
}
export interface Example { name: string; title: string; description: string; source: string }
"#;

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

fn to_js(value: &impl Serialize) -> Result<JsValue, JsError> {
    // Maps become plain objects, which is what the TypeScript section promises.
    let serializer = serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true);
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
    options.clock = Some(now_ms);
    Ok(options)
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
    #[wasm_bindgen(unchecked_param_type = "CompileOptions | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    to_js(&compile::compile(source, &self::options(options)?))
}

#[derive(Serialize)]
struct RunOutputJs {
    name: String,
    matches: bool,
    max_abs_err: f64,
    mismatches: usize,
    npy: serde_bytes::ByteBuf,
}

#[derive(Serialize)]
struct RunResultJs {
    #[serde(flatten)]
    result: tilescope::run::RunResult,
    #[serde(rename = "outputs")]
    outputs_npy: Vec<RunOutputJs>,
}

/// Compiles and runs `source` on the simulator and the reference interpreter. `inputs`
/// maps parameter names to `.npy` file bytes; parameters left out are filled from
/// `seed`.
#[wasm_bindgen(unchecked_return_type = "RunResult")]
pub fn run(
    source: &str,
    #[wasm_bindgen(unchecked_param_type = "CompileOptions | undefined")] options: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Record<string, Uint8Array> | undefined")]
    inputs: JsValue,
    seed: Option<u32>,
) -> Result<JsValue, JsError> {
    let options = self::options(options)?;
    let files: BTreeMap<String, serde_bytes::ByteBuf> = if inputs.is_undefined() || inputs.is_null()
    {
        BTreeMap::new()
    } else {
        serde_wasm_bindgen::from_value(inputs).map_err(|e| JsError::new(&format!("inputs: {e}")))?
    };
    let mut provided: Vec<(String, Tensor)> = Vec::new();
    for (name, bytes) in files {
        let tensor = tilescope::npy::read(&bytes)
            .map_err(|e| JsError::new(&format!("input `{name}`: {e}")))?;
        provided.push((name, tensor));
    }
    let mut result = tilescope::run::run(source, &options, provided, u64::from(seed.unwrap_or(0)));
    let outputs_npy = std::mem::take(&mut result.outputs)
        .into_iter()
        .map(|o| RunOutputJs {
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
    to_js(&RunResultJs {
        result,
        outputs_npy,
    })
}

/// A machine preset by name (`teach`, `a3`); throws for an unknown name.
#[wasm_bindgen(unchecked_return_type = "object")]
pub fn machine(preset: &str) -> Result<JsValue, JsError> {
    let m = Machine::preset(preset).ok_or_else(|| {
        JsError::new(&format!(
            "unknown preset `{preset}`: {}",
            Machine::preset_names().join(", ")
        ))
    })?;
    to_js(&m)
}

#[derive(Serialize)]
struct ExampleJs {
    name: &'static str,
    title: &'static str,
    description: String,
    source: &'static str,
}

/// The example gallery, in teaching order.
#[wasm_bindgen(unchecked_return_type = "Example[]")]
pub fn examples() -> Result<JsValue, JsError> {
    let list: Vec<ExampleJs> = tilescope::examples::ALL
        .iter()
        .map(|e| ExampleJs {
            name: e.name,
            title: e.title,
            description: e.description(),
            source: e.source,
        })
        .collect();
    to_js(&list)
}

/// The compile result's step graph as Graphviz DOT, or an empty string.
#[wasm_bindgen]
pub fn steps_dot(
    source: &str,
    #[wasm_bindgen(unchecked_param_type = "CompileOptions | undefined")] options: JsValue,
) -> Result<String, JsError> {
    let result = compile::compile(source, &self::options(options)?);
    Ok(result
        .steps
        .as_ref()
        .map(compile::steps_dot)
        .unwrap_or_default())
}
