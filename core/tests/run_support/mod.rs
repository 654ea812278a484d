//! Shared by the end-to-end kernel tests: compile, simulate and compare with the
//! reference interpreter.

use tilescope::compile::CompileOptions;
use tilescope::run::run;

/// Asserts that `source` compiles, simulates without errors or races on inputs from
/// `seed`, and matches the reference.
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
