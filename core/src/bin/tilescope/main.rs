//! `tilescope`: the command-line face of the core. Parses arguments, reads and writes
//! files, and renders results; all compiling and simulating happens in the library.

mod compile_cmd;
mod io;
mod lesson_cmd;
mod machine_cmd;
mod opt_cmd;
mod report;
mod run_cmd;
mod sim_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "tilescope",
    version,
    about = "Kernel compiler and pipe-level simulator for a tile accelerator"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile a kernel and print its passes, assembly, step graph or JSON result.
    Compile(compile_cmd::Args),
    /// Compile and run a kernel on inputs from .npy files or a seed.
    Run(run_cmd::Args),
    /// Run passes on tile-IR text (a section of `compile --emit passes`) and print
    /// each one's IR.
    Opt(opt_cmd::Args),
    /// Run a hand-written assembly program on the simulator.
    Sim(sim_cmd::Args),
    /// Print a machine preset.
    Machine(machine_cmd::Args),
    /// The lesson track: list the lessons, show one, grade a solution.
    Lesson(lesson_cmd::Args),
}

/// How a command failed: the message is already printed; the code is the exit status.
pub struct Failed;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Compile(args) => compile_cmd::run(args),
        Command::Run(args) => run_cmd::run(args),
        Command::Opt(args) => opt_cmd::run(args),
        Command::Sim(args) => sim_cmd::run(args),
        Command::Machine(args) => machine_cmd::run(args),
        Command::Lesson(args) => lesson_cmd::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failed) => ExitCode::from(1),
    }
}
