//! `tilescope sim`: run a hand-written assembly program on the simulator.

use crate::io::{self, print_json};
use crate::{report, Failed};
use std::path::PathBuf;
use tilescope::isa::asm;
use tilescope::sim::{self, SimMode};
use tilescope::tensor::Tensor;

#[derive(clap::Args)]
pub struct Args {
    /// The assembly program (`.tasm`).
    pub file: PathBuf,
    /// Machine preset name (`teach`, `a3`) or a JSON machine file.
    #[arg(long, default_value = "a3")]
    pub preset: String,
    #[command(flatten)]
    pub io: io::SimArgs,
    /// Timing, flags and races only: no data is computed.
    #[arg(long)]
    pub timing_only: bool,
}

pub fn run(args: Args) -> Result<(), Failed> {
    let text = io::read_source(&args.file)?;
    let program = asm::parse(&text).map_err(|d| {
        io::report(&d, &args.file, &text);
        Failed
    })?;
    let machine = io::machine(&args.preset)?;
    let mut provided = io::read_inputs(&args.io.inputs)?;
    let mut inputs = Vec::with_capacity(program.tensors.len());
    for (stream, decl) in program.tensors.iter().enumerate() {
        let tensor = match provided.iter().position(|(n, _)| *n == decl.name) {
            Some(i) => provided.swap_remove(i).1,
            None => io::checked_generate(decl.dtype, &decl.shape, args.io.seed, stream as u64)?,
        };
        inputs.push(tensor);
    }
    if let Some((name, _)) = provided.first() {
        return Err(io::fail(&format!(
            "--input {name}: the program declares no tensor `{name}`"
        )));
    }
    let result = sim::simulate(
        &program,
        &machine,
        inputs,
        SimMode {
            functional: !args.timing_only,
            trace: args.io.trace.is_some(),
        },
    );
    if let Some(path) = &args.io.trace {
        let trace = sim::trace::chrome_trace(&program, &result);
        io::write_bytes(path, trace.to_string().as_bytes())?;
    }
    for (name, path) in &args.io.outputs {
        let tensor: &Tensor = result
            .output(name)
            .ok_or_else(|| io::fail(&format!("--output {name}: no such tensor in the result")))?;
        io::write_bytes(path, &tilescope::npy::write(tensor))?;
    }
    if args.io.json {
        print_json(&report::sim_json(&result))?;
    } else {
        print!(
            "{}",
            report::sim_text(&result, Some(&program), &|_| None, &[])
        );
    }
    if result.errors.is_empty() {
        Ok(())
    } else {
        Err(Failed)
    }
}
