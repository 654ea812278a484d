//! Prints the TypeScript declarations of the API's types, the contents of
//! `wasm/tilescope.d.ts`: `cargo run -p tilescope-wasm --example typescript >
//! wasm/tilescope.d.ts`.

fn main() {
    print!("{}", tilescope_wasm::typescript::declarations());
}
