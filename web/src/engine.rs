//! What the worker runs: core's compiler (and later simulator), converted to the
//! messages the page renders. The only place that knows core's result types.

use std::fmt::Write;

use crate::options::CompileOptions;
use crate::protocol::{CompileOutput, PassRecord};

/// Compiles `source`. Today core has only the front end, so a successful check shows
/// as a single pass holding the checked kernel; this becomes a conversion of core's
/// `CompileResult` (one `PassRecord` per pass) when the compile driver lands.
pub fn compile(source: &str, options: &CompileOptions) -> CompileOutput {
    match tilescope::front::frontend(source, options.kernel.as_deref()) {
        Err(diagnostics) => CompileOutput {
            diagnostics,
            ..CompileOutput::default()
        },
        Ok(kernel) => {
            let mut ir = String::new();
            // Writing to a String cannot fail.
            let _ = write!(ir, "{kernel:#?}");
            let lines = ir.lines().count();
            CompileOutput {
                passes: vec![PassRecord {
                    name: "check".into(),
                    description: "parse and type-check the source".into(),
                    ir,
                    line_spans: vec![None; lines],
                    changed: true,
                    micros: 0,
                }],
                ..CompileOutput::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_end_errors_come_back_as_diagnostics() {
        // Holds for the stub front end and for the real one on this broken source.
        let out = compile("kernel (", &CompileOptions::default());
        assert!(out.error_count() > 0);
        assert!(out.passes.is_empty());
    }
}
