//! The worker's module: compiler, simulator, reference interpreter, grader and
//! assembler, answering the page's postcard messages (`worker::serve`).

use tilescope_web::worker::{install_panic_reporter, serve};

/// Talc instead of Rust's default dlmalloc: faster to allocate and free, which the
/// compiler and simulator do constantly. The module is single-threaded (no `atomics`).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

fn main() {
    install_panic_reporter(serve::post);
    serve::serve();
}
