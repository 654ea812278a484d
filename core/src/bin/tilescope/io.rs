//! File reading and diagnostic printing shared by the subcommands.

use crate::Failed;
use std::path::Path;
use tilescope::diag::{self, Diagnostic};

/// Reads a text file, or prints why it cannot.
pub fn read_source(path: &Path) -> Result<String, Failed> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|_| fail(&format!("{}: not UTF-8 text", path.display())))
}

/// Reads a file, refusing anything larger than the source limit times a generous factor
/// so a wrong path (a device, a huge data file) cannot exhaust memory.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Failed> {
    std::fs::read(path).map_err(|e| fail(&format!("{}: {e}", path.display())))
}

pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), Failed> {
    std::fs::write(path, bytes).map_err(|e| fail(&format!("{}: {e}", path.display())))
}

/// Prints diagnostics against their source to stderr.
pub fn report(diags: &[Diagnostic], path: &Path, source: &str) {
    eprint!(
        "{}",
        diag::render(diags, &path.display().to_string(), source)
    );
}

/// Prints an error with no source location and returns the failure.
pub fn fail(message: &str) -> Failed {
    eprintln!("error: {message}");
    Failed
}

/// `NAME=PATH` pairs of `--input` / `--output`.
pub fn parse_binding(text: &str) -> Result<(String, std::path::PathBuf), String> {
    match text.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => {
            Ok((name.to_string(), path.into()))
        }
        _ => Err(format!("expected NAME=FILE.npy, found `{text}`")),
    }
}

/// Prints a JSON value on stdout.
pub fn print_json(value: &impl serde::Serialize) -> Result<(), Failed> {
    let text = serde_json::to_string_pretty(value).map_err(|e| fail(&e.to_string()))?;
    println!("{text}");
    Ok(())
}
