//! The front end: source text -> syntax tree (`lexer`, `parser`, `ast`) -> checked
//! kernel (`check`, `hir`).

pub mod ast;
mod check;
pub mod hir;
pub mod lexer;
mod parser;

use crate::diag::{Diagnostic, Diagnostics};
use crate::limits::MAX_SOURCE_BYTES;

/// Parses a whole file, recovering after errors so that several can be reported. The
/// returned tree holds everything that parsed.
pub fn parse(source: &str) -> (ast::File, Diagnostics) {
    if source.len() > MAX_SOURCE_BYTES {
        let message = format!(
            "the source is {} bytes; the limit is {MAX_SOURCE_BYTES} bytes",
            source.len()
        );
        return (ast::File::default(), vec![Diagnostic::global(message)]);
    }
    let (tokens, diags) = lexer::lex(source);
    let (file, mut diags) = parser::parse_file(source, tokens, diags);
    // Lexer and parser errors interleave in the source; report them in its order.
    diags.sort_by_key(|d| d.span.map(|s| s.start));
    (file, diags)
}

/// Checks one kernel of a parsed file (the first when `kernel` is `None`) against every
/// static rule of the language and produces its checked form.
pub fn check(file: &ast::File, kernel: Option<&str>) -> Result<hir::Kernel, Diagnostics> {
    check::check(file, kernel)
}

/// The names of the file's kernels, in source order (for a kernel picker).
pub fn kernel_names(file: &ast::File) -> Vec<String> {
    file.kernels.iter().map(|k| k.name.name.clone()).collect()
}

/// Parse then check: every diagnostic of both stages, or the checked kernel.
pub fn frontend(source: &str, kernel: Option<&str>) -> Result<hir::Kernel, Diagnostics> {
    let (file, diags) = parse(source);
    frontend_parsed(&file, diags, kernel)
}

/// [`frontend`] for a file already parsed, with the parser's diagnostics `diags`: the
/// compile driver parses once, for the kernel list and for the parse pass.
pub fn frontend_parsed(
    file: &ast::File,
    mut diags: Diagnostics,
    kernel: Option<&str>,
) -> Result<hir::Kernel, Diagnostics> {
    if !diags.is_empty() && file.kernels.is_empty() {
        // The kernels failed to parse; "the file has no kernel" would only be noise.
        return Err(diags);
    }
    match check(file, kernel) {
        Ok(k) if diags.is_empty() => Ok(k),
        Ok(_) => Err(diags),
        Err(more) => {
            diags.extend(more);
            Err(diags)
        }
    }
}
