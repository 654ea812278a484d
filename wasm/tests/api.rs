//! The JavaScript-facing API, run as wasm under wasm-bindgen-test (Node by default).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn version_is_the_crate_version() {
    assert_eq!(tilescope_wasm::version(), env!("CARGO_PKG_VERSION"));
}
