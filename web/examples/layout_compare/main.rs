//! `cargo run --release -p tilescope-web --example layout_compare`: the step graph's
//! layout measured on the gallery (`compare.rs`; docs/step-graph-layout.md). A native
//! tool: it times with `std::time` and compares against the `dagre` crate, a native
//! dev-dependency, so a wasm32 build of the examples gets an empty one.

#[cfg(not(target_arch = "wasm32"))]
mod compare;

fn main() {
    #[cfg(not(target_arch = "wasm32"))]
    compare::main();
}
