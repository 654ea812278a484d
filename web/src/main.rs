//! Entry point of the playground: one wasm module serves both the page and its compile
//! worker, so the browser downloads the standard library, serde and the wasm-bindgen
//! glue once rather than once per module. Trunk builds this bin as
//! `data-type="worker"` (stable name `tilescope-web.js`, no-modules glue); index.html
//! starts it on the page, and the page spawns the same script as its worker.

use gloo::worker::Registrable;
use tilescope_web::codec::Postcard;
use tilescope_web::worker::{install_panic_reporter, CompileWorker};
use wasm_bindgen::JsCast;

/// Talc instead of Rust's default dlmalloc: about 3 KB less gzip in a
/// module with a gzip budget, and faster. The module is single-threaded (no `atomics`).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

fn main() {
    if js_sys::global().is_instance_of::<web_sys::DedicatedWorkerGlobalScope>() {
        install_panic_reporter();
        CompileWorker::registrar().encoding::<Postcard>().register();
    } else {
        yew::Renderer::<tilescope_web::components::app::App>::new().render();
    }
}
