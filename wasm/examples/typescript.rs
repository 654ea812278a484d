//! Prints the TypeScript declarations of the API's types, the contents of
//! `wasm/tilescope.d.ts`: `cargo run -p tilescope-wasm --example typescript >
//! wasm/tilescope.d.ts`.

fn main() -> std::process::ExitCode {
    match tilescope_wasm::typescript::declarations() {
        Ok(declarations) => {
            print!("{declarations}");
            std::process::ExitCode::SUCCESS
        }
        Err(clash) => {
            eprintln!("error: {clash}");
            std::process::ExitCode::FAILURE
        }
    }
}
