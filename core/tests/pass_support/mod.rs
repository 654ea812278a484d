//! Shared by the tests of single passes: the IR a pass printed when compiling a source.

use tilescope::compile::{compile, CompileOptions};

/// The printed IR after `pass`, compiling `source` with the default options; the
/// compile must succeed.
pub fn ir_after(source: &str, pass: &str) -> String {
    let result = compile(source, &CompileOptions::default());
    assert!(result.diagnostics.is_empty(), "{:#?}", result.diagnostics);
    result
        .passes
        .iter()
        .find(|p| p.name == pass)
        .map(|p| p.ir.clone())
        .unwrap_or_else(|| panic!("no pass `{pass}`"))
}
