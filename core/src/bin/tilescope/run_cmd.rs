//! `tilescope run`: compile a kernel and run it on inputs.

use crate::compile_cmd::CompileArgs;
use crate::io::{self, print_json};
use crate::Failed;
use serde_json::json;
use std::path::PathBuf;
use tilescope::{front, inputs, interp, npy};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: CompileArgs,
    /// Bind a kernel parameter to a .npy file (repeatable).
    #[arg(long = "input", value_name = "NAME=FILE.npy", value_parser = io::parse_binding)]
    pub inputs: Vec<(String, PathBuf)>,
    /// Write a parameter's tensor after the run to a .npy file (repeatable).
    #[arg(long = "output", value_name = "NAME=FILE.npy", value_parser = io::parse_binding)]
    pub outputs: Vec<(String, PathBuf)>,
    /// Seed for parameters not given with --input.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write a Chrome Trace Event file of the simulated run.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<(), Failed> {
    let (source, _) = args.common.compile()?;
    let file = &args.common.file;
    let kernel = front::frontend(&source, args.common.kernel.as_deref()).map_err(|d| {
        io::report(&d, file, &source);
        Failed
    })?;
    let provided = io::read_inputs(&args.inputs)?;
    let mut tensors = inputs::prepare(&kernel, provided, args.seed).map_err(|d| {
        io::report(&[d], file, &source);
        Failed
    })?;
    if let Err(d) = interp::run(&kernel, &mut tensors) {
        io::report(&[d], file, &source);
        return Err(Failed);
    }
    for (name, path) in &args.outputs {
        let Some(pos) = kernel.params.iter().position(|p| p.name == *name) else {
            return Err(io::fail(&format!(
                "--output {name}: the kernel has no parameter `{name}`"
            )));
        };
        io::write_bytes(path, &npy::write(&tensors[pos]))?;
    }
    if args.json {
        print_json(&json!({ "executor": "reference", "errors": [] }))?;
    }
    Ok(())
}
