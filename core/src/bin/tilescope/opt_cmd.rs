//! `tilescope opt`: passes run on tile-IR text.

use crate::io;
use crate::Failed;
use std::path::PathBuf;
use tilescope::compile::passes_text;

#[derive(clap::Args)]
pub struct Args {
    /// The tile IR (`.tir`): a kernel as `--emit passes` prints it, with or without its
    /// `; options:` line and `=== after PASS ===` header.
    pub file: PathBuf,
    /// A pass to run (repeatable, in order).
    #[arg(long = "pass", value_name = "NAME", required = true)]
    pub passes: Vec<String>,
    /// The kernel source the IR's `!at LINE:COL` positions refer to, so diagnostics
    /// show its lines (without it they show the positions only).
    #[arg(long, value_name = "FILE.tile")]
    pub source: Option<PathBuf>,
    /// Machine preset name or JSON machine file (default: the options line's, else a3).
    #[arg(long)]
    pub preset: Option<String>,
}

pub fn run(args: Args) -> Result<(), Failed> {
    let text = io::read_source(&args.file)?;
    let source = args.source.as_deref().map(io::read_source).transpose()?;
    let machine = args.preset.as_deref().map(io::machine).transpose()?;
    let result = tilescope::opt::opt(&text, &args.passes, source.as_deref(), machine);
    print!("{}", passes_text(&result.passes));
    if result.diagnostics.is_empty() {
        return Ok(());
    }
    if result.in_text {
        io::report(&result.diagnostics, &args.file, &text);
    } else {
        let path = args
            .source
            .clone()
            .unwrap_or_else(|| PathBuf::from("<kernel source>"));
        io::report(&result.diagnostics, &path, &result.source);
    }
    Err(Failed)
}
