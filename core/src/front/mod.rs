//! The front end: source text -> syntax tree (`lexer`, `parser`, `ast`) -> checked
//! kernel (`check`, `hir`).

pub mod ast;
pub mod hir;

use crate::diag::{Diagnostic, Diagnostics};

/// Parses a whole file, recovering after errors so that several can be reported. The
/// returned tree holds everything that parsed.
pub fn parse(_source: &str) -> (ast::File, Diagnostics) {
    (
        ast::File::default(),
        vec![Diagnostic::global("the parser is not built yet")],
    )
}

/// Checks one kernel of a parsed file (the first when `kernel` is `None`) against every
/// static rule of the language and produces its checked form.
pub fn check(_file: &ast::File, _kernel: Option<&str>) -> Result<hir::Kernel, Diagnostics> {
    Err(vec![Diagnostic::global("the checker is not built yet")])
}

/// Parse then check: every diagnostic of both stages, or the checked kernel.
pub fn frontend(source: &str, kernel: Option<&str>) -> Result<hir::Kernel, Diagnostics> {
    let (file, mut diags) = parse(source);
    match check(&file, kernel) {
        Ok(k) if diags.is_empty() => Ok(k),
        Ok(_) => Err(diags),
        Err(more) => {
            diags.extend(more);
            Err(diags)
        }
    }
}
