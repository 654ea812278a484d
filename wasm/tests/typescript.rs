//! The module's TypeScript declarations are the Rust types' (ts-rs): `tilescope.d.ts`
//! is what `typescript::declarations` generates, so a change to a type the API passes
//! fails here until the file is regenerated.
#![cfg(target_arch = "wasm32")]

use tilescope_wasm::typescript::{declarations, DECLARATIONS};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn the_declarations_file_is_generated_from_the_types() {
    assert!(
        declarations().as_deref() == Ok(DECLARATIONS),
        "wasm/tilescope.d.ts differs from the Rust types; regenerate it with \
         `cargo run -p tilescope-wasm --example typescript > wasm/tilescope.d.ts`"
    );
}

/// The declaration of `name` (declarations are a blank line apart).
fn declaration(name: &str) -> &'static str {
    let start = DECLARATIONS
        .find(&format!("export type {name} = "))
        .unwrap_or_else(|| panic!("no declaration of {name}"));
    let rest = &DECLARATIONS[start..];
    &rest[..rest.find("\n\n").unwrap_or(rest.len())]
}

#[wasm_bindgen_test]
fn the_declarations_have_what_the_api_returns() {
    let options = declaration("CompileOptions");
    for field in [
        "disabled_passes",
        "sync",
        "alias",
        "auto_multi_buffer",
        "preset",
    ] {
        assert!(
            options.contains(&format!("{field}: ")),
            "{field}: {options}"
        );
    }
    assert!(!options.contains("clock"), "{options}");
    let compile = declaration("CompileResult");
    assert!(
        compile.contains("sync: SyncExplanation | null"),
        "{compile}"
    );
    assert!(declaration("SyncExplanation").contains("pairs: Array<SyncRow>"));
    let row = declaration("SyncRow");
    for field in [
        "src: Pipe",
        "dst: Pipe",
        "kind: string",
        "producer: Site",
        "set_index: number | null",
    ] {
        assert!(row.contains(field), "{field}: {row}");
    }
    let run = declaration("RunResult");
    assert!(run.contains("race_fixes: Array<SyncRow | null>"), "{run}");
    assert!(run.contains("compile: CompileResult"), "{run}");
    assert!(declaration("RunOutput").contains("npy: Uint8Array"));
    // serde's representations: renamed variants, an internally tagged enum.
    assert!(declaration("SyncStrategy").contains(r#""auto" | "barrier" | "none""#));
    assert!(declaration("StallReason").contains(r#""kind": "QueueFull""#));
}
