//! `tilescope compile`.

use crate::io::{self, print_json};
use crate::Failed;
use clap::ValueEnum;
use std::path::PathBuf;
use tilescope::compile::{
    compile, passes_text, AliasMode, CompileOptions, CompileResult, SyncStrategy,
};

/// Options shared by `compile` and `run`.
#[derive(clap::Args)]
pub struct CompileArgs {
    /// The kernel source (`.tile`).
    pub file: PathBuf,
    /// Machine preset name (`teach`, `a3`) or a JSON machine file.
    #[arg(long, default_value = "a3")]
    pub preset: String,
    /// How the compiler orders the pipes.
    #[arg(long, value_enum, default_value_t = SyncStrategy::Auto)]
    pub sync: SyncStrategy,
    /// What insert-sync knows about aliasing.
    #[arg(long, value_enum, default_value_t = AliasMode::Precise)]
    pub alias: AliasMode,
    /// The kernel to compile when the file holds several (default: the first).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Do not double-buffer loops without `@buffers` automatically.
    #[arg(long)]
    pub no_auto_buffers: bool,
    /// Run the verifiers after every pass (the IR verifier, and from plan-memory on the
    /// address-plan verifier), as tests and debug builds always do.
    #[arg(long)]
    pub verify: bool,
    /// Leave out an optional pass, to see what it buys (repeatable; naming a required
    /// pass lists the optional ones).
    #[arg(long = "disable-pass", value_name = "NAME")]
    pub disable_pass: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum, Default)]
pub enum Emit {
    /// Every pass's IR under a `=== after PASS ===` header.
    #[default]
    Passes,
    /// The final assembly.
    Asm,
    /// The step graph as Graphviz DOT.
    Steps,
    /// The whole compile result as JSON.
    Json,
    /// Every set/wait pair insert-sync placed: the hazard it orders, the buffer, the
    /// producer and consumer lines, the event ids, back edges; then the id notes.
    Sync,
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: CompileArgs,
    #[arg(long, value_enum, default_value_t = Emit::Passes)]
    pub emit: Emit,
}

impl CompileArgs {
    pub fn options(&self) -> Result<CompileOptions, Failed> {
        let machine = io::machine(&self.preset)?;
        Ok(CompileOptions {
            kernel: self.kernel.clone(),
            preset: Some(machine.name.clone()),
            machine: Some(machine),
            sync: self.sync,
            alias: self.alias,
            auto_multi_buffer: !self.no_auto_buffers,
            verify: self.verify,
            disabled_passes: self.disable_pass.clone(),
            ..CompileOptions::default()
        })
    }
}

pub fn run(args: Args) -> Result<(), Failed> {
    let source = io::read_source(&args.common.file)?;
    let options = args.common.options()?;
    let result = compile(&source, &options);
    match args.emit {
        // JSON consumers get the diagnostics inside the result, and the exit code.
        Emit::Json => {
            let mut value = serde_json::to_value(&result)
                .map_err(|e| io::fail(&format!("the result does not serialise: {e}")))?;
            if let Some(map) = value.as_object_mut() {
                map.insert(
                    "sync".into(),
                    tilescope::explain::sync_json(&result, &source),
                );
            }
            print_json(&value)?;
        }
        // Every pass that ran, then the errors: a compile that fails in plan-memory still
        // shows the IR that overflowed.
        Emit::Passes => {
            print_passes(&result, &options);
            if !result.ok() {
                io::report(&result.diagnostics, &args.common.file, &source);
            }
        }
        _ if !result.ok() => io::report(&result.diagnostics, &args.common.file, &source),
        Emit::Asm => print!("{}", result.asm.as_deref().unwrap_or_default()),
        Emit::Sync => {
            let file = args.common.file.display().to_string();
            print!(
                "{}",
                tilescope::explain::sync_table(&result, &source, &file)
            );
        }
        Emit::Steps => {
            let graph = result
                .steps
                .as_ref()
                .ok_or_else(|| io::fail("the compile produced no step graph"))?;
            print!("{}", tilescope::compile::steps_dot(graph));
        }
    }
    if result.ok() {
        Ok(())
    } else {
        Err(Failed)
    }
}

/// The options line (what `tilescope opt` reads back), then every pass's IR.
fn print_passes(result: &CompileResult, options: &CompileOptions) {
    print!("{}", tilescope::opt::header(options));
    print!("{}", passes_text(&result.passes));
}
