//! The JavaScript API over Tilescope's core.
use wasm_bindgen::prelude::*;

/// The core's version, so a page can tell which compiler it talks to.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
