//! Shared by the end-to-end kernel tests: compile, simulate and compare with the
//! reference interpreter.

use tilescope::compile::CompileOptions;
use tilescope::passes::sync::SyncStrategy;
use tilescope::run::{run, RunResult};

/// Asserts that `source` compiles, simulates without errors or races on inputs from
/// `seed`, and matches the reference.
#[allow(dead_code)] // not every test file that includes the module uses it
pub fn check_against_reference(source: &str, seed: u64) {
    let r = run(source, &CompileOptions::default(), Vec::new(), seed);
    let diags: Vec<&String> = r.diagnostics.iter().map(|d| &d.message).collect();
    assert!(diags.is_empty(), "{diags:?}");
    let errors: Vec<&String> = r.sim.errors.iter().map(|e| &e.message).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(r.sim.races.is_empty());
    assert!(r.reference_match, "max abs err {}", r.max_abs_err);
    assert!(r.sim.cycles > 0);
}

/// `source` run on `preset` under `sync`, on the inputs of seed 5.
pub fn run_with(source: &str, preset: &str, sync: SyncStrategy) -> RunResult {
    let options = CompileOptions {
        preset: Some(preset.to_string()),
        sync,
        ..CompileOptions::default()
    };
    run(source, &options, Vec::new(), 5)
}

/// Asserts that `source` matches the reference with no race or simulation error under
/// auto and barrier sync on both presets; returns the cycles (auto, barrier) on `teach`,
/// then on `a3`.
#[allow(dead_code)] // not every test file that includes the module uses it
pub fn check_on_presets(source: &str) -> Vec<(u64, u64)> {
    let mut cycles = Vec::new();
    for preset in ["teach", "a3"] {
        let mut pair = (0, 0);
        for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
            let r = run_with(source, preset, sync);
            let what = format!("{preset}, {sync:?}");
            let diags: Vec<&String> = r.diagnostics.iter().map(|d| &d.message).collect();
            assert!(diags.is_empty(), "{what}: {diags:?}");
            let errors: Vec<&String> = r.sim.errors.iter().map(|e| &e.message).collect();
            assert!(errors.is_empty(), "{what}: {errors:?}");
            assert!(r.sim.races.is_empty(), "{what}: races {:?}", r.sim.races);
            assert!(r.reference_match, "{what}: max abs err {}", r.max_abs_err);
            match sync {
                SyncStrategy::Auto => pair.0 = r.sim.cycles,
                _ => pair.1 = r.sim.cycles,
            }
        }
        cycles.push(pair);
    }
    cycles
}

/// The IR `pass` printed when compiling `source` with the default options.
#[allow(dead_code)] // not every test file that includes the module uses it
pub fn ir_after(source: &str, pass: &str) -> String {
    ir_after_with(source, pass, &CompileOptions::default())
}

/// The IR `pass` printed when compiling `source` with `options`.
#[allow(dead_code)] // not every test file that includes the module uses it
pub fn ir_after_with(source: &str, pass: &str, options: &CompileOptions) -> String {
    let result = tilescope::compile::compile(source, options);
    result
        .passes
        .iter()
        .find(|p| p.name == pass)
        .unwrap_or_else(|| panic!("no {pass} record: {:?}", result.diagnostics))
        .ir
        .clone()
}

/// On both presets, `source` run on `inputs` with automatic multi-buffering takes under
/// 90% of the cycles it takes without, both runs clean and matching the reference, and
/// multi-buffer's IR holds `header` (the loop it buffered).
#[allow(dead_code)] // not every test file that includes the module uses it
pub fn assert_double_buffering_pays(
    source: &str,
    inputs: Vec<(String, tilescope::tensor::Tensor)>,
    header: &str,
) {
    for preset in ["teach", "a3"] {
        let cycles = |auto_multi_buffer: bool| {
            let options = CompileOptions {
                preset: Some(preset.to_string()),
                auto_multi_buffer,
                ..CompileOptions::default()
            };
            let r = run(source, &options, inputs.clone(), 5);
            assert!(r.reference_match && r.sim.races.is_empty(), "{preset}");
            r.sim.cycles
        };
        let (double, single) = (cycles(true), cycles(false));
        assert!(
            double * 10 < single * 9,
            "{preset}: {double} cycles double-buffered, {single} single"
        );
        let options = CompileOptions {
            preset: Some(preset.to_string()),
            ..CompileOptions::default()
        };
        let after = ir_after_with(source, "multi-buffer", &options);
        assert!(after.contains(header), "{preset}:\n{after}");
    }
}

/// The assembly of `source` compiled with the default options (on `a3`).
#[allow(dead_code)] // not every test file that includes the module uses it
pub fn asm(source: &str) -> String {
    let result = tilescope::compile::compile(source, &CompileOptions::default());
    result.asm.expect("assembly")
}
