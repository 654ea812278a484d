//! What the worker runs: core's compiler (and later simulator), converted to the
//! messages the page renders. The only place that knows core's result types.

use crate::options::{CompileOptions, SyncMode};
use crate::protocol::{CompileOutput, PassRecord};
use tilescope::compile::{self, SyncStrategy};

/// The page's options as core's.
fn core_options(options: &CompileOptions) -> compile::CompileOptions {
    compile::CompileOptions {
        kernel: options.kernel.clone(),
        preset: Some(options.preset.name().to_string()),
        sync: match options.sync {
            SyncMode::Auto => SyncStrategy::Auto,
            SyncMode::Barrier => SyncStrategy::Barrier,
            SyncMode::None => SyncStrategy::None,
        },
        auto_multi_buffer: options.multibuffer_auto,
        clock: now_ms(),
        ..compile::CompileOptions::default()
    }
}

/// Pass durations use the browser's clock (`std::time::Instant` does not exist on
/// wasm32-unknown-unknown).
fn now_ms() -> Option<tilescope::passes::Clock> {
    #[cfg(target_arch = "wasm32")]
    {
        fn performance_now() -> f64 {
            js_sys::Reflect::get(&js_sys::global(), &"performance".into())
                .ok()
                .and_then(|p| js_sys::Reflect::get(&p, &"now".into()).ok())
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .and_then(|f| f.call0(&js_sys::global()).ok())
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0)
        }
        use wasm_bindgen::JsCast;
        Some(performance_now)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        tilescope::passes::default_clock()
    }
}

/// Compiles `source` through every pass.
pub fn compile(source: &str, options: &CompileOptions) -> CompileOutput {
    let result = compile::compile(source, &core_options(options));
    let total_micros = result.passes.iter().map(|p| p.micros).sum();
    CompileOutput {
        passes: result
            .passes
            .into_iter()
            .map(|p| PassRecord {
                name: p.name,
                description: p.description,
                ir: p.ir,
                line_spans: p.spans,
                changed: p.changed,
                micros: p.micros,
            })
            .collect(),
        diagnostics: result.diagnostics,
        total_micros,
        ..CompileOutput::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_end_errors_come_back_as_diagnostics() {
        // Holds for the stub front end and for the real one on this broken source.
        let out = compile("kernel (", &CompileOptions::default());
        assert!(out.error_count() > 0);
        assert!(out.passes.is_empty());
    }
}
