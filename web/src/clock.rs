//! The clock both modules read: pass durations in the worker, timings on the page
//! (`std::time::Instant` does not exist on wasm32-unknown-unknown).

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `performance.now()` of whichever global scope runs this, page or worker.
    #[wasm_bindgen(catch, js_namespace = performance, js_name = now)]
    fn global_performance_now() -> Result<f64, wasm_bindgen::JsValue>;
}

/// Milliseconds since the page (or worker) started, or 0 without a clock. Bound to the
/// global `performance` rather than `window.performance` because the compile worker
/// has no `window`, and `now` must be called on `performance` itself (with any other
/// receiver it throws, which once left every pass time at 0).
pub fn now_ms() -> f64 {
    global_performance_now().unwrap_or(0.0)
}
