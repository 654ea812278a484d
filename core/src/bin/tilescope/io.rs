//! File reading and diagnostic printing shared by the subcommands.

use crate::Failed;
use std::path::{Path, PathBuf};
use tilescope::diag::{self, Diagnostic};
use tilescope::machine::Machine;
use tilescope::tensor::Tensor;
use tilescope::types::DType;
use tilescope::{inputs, limits, npy};

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

/// A preset by name, or a machine read from a JSON file.
pub fn machine(preset: &str) -> Result<Machine, Failed> {
    if let Some(m) = Machine::preset(preset) {
        return Ok(m);
    }
    let path = Path::new(preset);
    if path.extension().is_some_and(|e| e == "json") || path.exists() {
        let text = read_source(path)?;
        return Machine::from_json(&text).map_err(|e| fail(&format!("{}: {e}", path.display())));
    }
    Err(fail(&format!(
        "unknown preset `{preset}`: use one of {} or a JSON machine file",
        Machine::preset_names().join(", ")
    )))
}

/// Reads `--input NAME=FILE.npy` bindings.
pub fn read_inputs(bindings: &[(String, PathBuf)]) -> Result<Vec<(String, Tensor)>, Failed> {
    let mut out = Vec::new();
    for (name, path) in bindings {
        let bytes = read_bytes(path)?;
        let tensor = npy::read(&bytes)
            .map_err(|e| fail(&format!("--input {name}={}: {e}", path.display())))?;
        out.push((name.clone(), tensor));
    }
    Ok(out)
}

/// Seeded data for a declared tensor, refusing sizes past the tensor limit so a typo in
/// a declaration cannot exhaust memory.
pub fn checked_generate(
    dtype: DType,
    shape: &[u64],
    seed: u64,
    stream: u64,
) -> Result<Tensor, Failed> {
    let elements = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    match elements {
        Some(n) if n <= limits::MAX_TENSOR_ELEMENTS => {
            Ok(inputs::generate(dtype, shape.to_vec(), seed, stream))
        }
        _ => Err(fail(&format!(
            "a tensor of shape {shape:?} exceeds the limit of {} elements",
            limits::MAX_TENSOR_ELEMENTS
        ))),
    }
}

/// The data and output options shared by `run` and `sim`.
#[derive(clap::Args)]
pub struct SimArgs {
    /// Bind a kernel parameter or declared tensor to a .npy file (repeatable).
    #[arg(long = "input", value_name = "NAME=FILE.npy", value_parser = parse_binding)]
    pub inputs: Vec<(String, PathBuf)>,
    /// Write a tensor after the run to a .npy file (repeatable).
    #[arg(long = "output", value_name = "NAME=FILE.npy", value_parser = parse_binding)]
    pub outputs: Vec<(String, PathBuf)>,
    /// Seed for tensors not given with --input.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write a Chrome Trace Event file of the simulated run (opens in Perfetto and
    /// chrome://tracing).
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `file:line:col: the line's text` for a span of `source` (1-based, the column in
/// characters), as diagnostics print positions.
pub fn locate(file: &Path, source: &str, span: diag::Span) -> Option<String> {
    let at = span.line_col(source);
    Some(format!(
        "{}:{at}: {}",
        file.display(),
        at.line_text(source).trim()
    ))
}
