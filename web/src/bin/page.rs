//! The page's module: the Yew UI, the editor and its highlighter. It starts the compile
//! worker (the other module, `tilescope-worker`) before anything else, so both
//! download together, then mounts the app.

use tilescope_web::page::components::app::{App, AppProps};
use tilescope_web::page::dom;
use tilescope_web::page::worker_link::WorkerLink;

/// Talc instead of Rust's default dlmalloc: faster to allocate and free, which the
/// page does on every render. The module is single-threaded (no `atomics`).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

fn main() {
    let link = WorkerLink::start();
    let typed = dom::take_boot_editor();
    yew::Renderer::<App>::with_props(AppProps { link, typed }).render();
}
