//! `tilescope run`: compile a kernel, run it on the simulator, and check it against the
//! reference interpreter.

use crate::compile_cmd::CompileArgs;
use crate::io::{self, print_json};
use crate::{report, Failed};
use serde_json::json;

use tilescope::explain::{race_fix_text, Site};
use tilescope::npy;
use tilescope::run::{run as run_kernel, RunResult};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: CompileArgs,
    #[command(flatten)]
    pub io: io::SimArgs,
    /// Also run with each optional pass left out in turn, and report what each buys
    /// (cycles, syncs, on-chip bytes, whether the result still matches).
    #[arg(long)]
    pub ablate: bool,
}

pub fn run(args: Args) -> Result<(), Failed> {
    let file = &args.common.file;
    let source = io::read_source(file)?;
    let provided = io::read_inputs(&args.io.inputs)?;
    let options = args.common.options()?;
    let result = run_kernel(&source, &options, provided.clone(), args.io.seed);
    if !result.diagnostics.is_empty() {
        io::report(&result.diagnostics, file, &source);
        if args.io.json {
            print_json(&summary(&result, &source))?;
        }
        return Err(Failed);
    }
    if let (Some(path), Some(program)) = (&args.io.trace, &result.compile.program) {
        let trace =
            tilescope::sim::trace::chrome_trace_located(program, &result.sim, Some(&source));
        io::write_bytes(path, trace.to_string().as_bytes())?;
    }
    for (name, path) in &args.io.outputs {
        let tensor = result
            .outputs
            .iter()
            .find(|o| o.name == *name)
            .and_then(|o| o.tensor.as_ref())
            .ok_or_else(|| {
                io::fail(&format!(
                    "--output {name}: the kernel has no parameter `{name}`"
                ))
            })?;
        io::write_bytes(path, &npy::write(tensor))?;
    }
    let fixes = tilescope::explain::race_fixes(&options, &source, &result.sim.races);
    let ablation = args
        .ablate
        .then(|| tilescope::run::ablate(&source, &options, &provided, args.io.seed));
    if args.io.json {
        let mut value = summary(&result, &source);
        if let Some(map) = value.as_object_mut() {
            if let Some(a) = &ablation {
                map.insert("ablation".into(), json!(a));
            }
            if !fixes.is_empty() {
                map.insert("race_fixes".into(), json!(fixes));
            }
        }
        print_json(&value)?;
    } else {
        let locate = |span| io::locate(file, &source, span);
        let at = |site: &Site| match (site.line, site.col) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", file.display()),
            _ => "-".to_string(),
        };
        let fixes: Vec<String> = fixes
            .iter()
            .map(|fix| race_fix_text(fix.as_ref(), &at))
            .collect();
        print!("{}", text(&result, &locate, &fixes));
        for a in ablation.iter().flatten() {
            println!(
                "without {:<18} {:>8} cycles ({:+}), {} syncs, {} on-chip bytes{}",
                a.pass,
                a.cycles,
                a.cycles as i64 - result.sim.cycles as i64,
                a.syncs,
                a.peak_bytes,
                match (&a.error, a.matches_reference) {
                    (Some(e), _) => format!(", fails: {e}"),
                    (None, false) => ", DIFFERS from the reference".to_string(),
                    (None, true) => String::new(),
                }
            );
        }
    }
    if result.sim.errors.is_empty() {
        Ok(())
    } else {
        Err(Failed)
    }
}

/// The JSON of `run --json`: the run's figures without the per-instruction trace.
fn summary(r: &RunResult, source: &str) -> serde_json::Value {
    let pipes = report::pipes_json(&r.sim.pipes);
    json!({
        "kernel": r.compile.kernel,
        "cycles": r.sim.cycles,
        "bound": r.bound,
        "path_bound": r.path_bound,
        "roofline": r.roofline,
        "pipes": pipes,
        "stalls": r.sim.stalls,
        "syncs": r.sim.syncs,
        "branches": r.compile.program.as_ref().map(|p| report::branches_json(p, &r.sim)),
        "races": r.sim.races,
        "errors": r.sim.errors,
        "reference_match": r.reference_match,
        "max_abs_err": r.max_abs_err,
        "outputs": r.outputs,
        "diagnostics": r.diagnostics,
        "sync": tilescope::explain::sync_json(&r.compile, source),
    })
}

fn text(r: &RunResult, locate: report::Locate, fixes: &[String]) -> String {
    let mut s = report::sim_text(&r.sim, r.compile.program.as_ref(), locate, fixes);
    if let Some(program) = &r.compile.program {
        s.push_str(&report::branches_text(program, &r.sim, locate));
    }
    if let Some(sync) = &r.compile.sync {
        s.push_str(&format!(
            "sync: {:?}, {} aliasing\n",
            sync.strategy,
            sync.alias.name()
        ));
    }
    // A kernel with nothing to run (its loops all empty) takes 0 cycles, its bound.
    let ratio = if r.sim.cycles == 0 {
        1.0
    } else {
        r.bound as f64 / r.sim.cycles as f64
    };
    s.push_str(&format!(
        "bound: {} cycles ({:.0}% of the lower bound reached)\n",
        r.bound,
        100.0 * ratio
    ));
    if let Some(path) = r.path_bound.filter(|_| r.sim.cycles > 0) {
        s.push_str(&format!(
            "path bound: {path} cycles ({:.0}% reached): the bound plus the fill and drain the data dependences force\n",
            100.0 * path as f64 / r.sim.cycles as f64
        ));
    }
    let f = &r.roofline;
    if f.cycles > 0 && r.sim.cycles > 0 {
        s.push_str(&format!(
            "roofline: {} cycles ({:.0}% of the machine's peak): {} GM bytes in {} cycles, {} multiply-accumulates in {}\n",
            f.cycles,
            100.0 * f.cycles as f64 / r.sim.cycles as f64,
            f.gm_read_bytes + f.gm_write_bytes,
            f.gm_cycles,
            f.macs,
            f.matrix_cycles
        ));
    }
    for o in &r.outputs {
        s.push_str(&format!(
            "output {}: {} the reference (max abs error {:.3e})\n",
            o.name,
            if o.matches { "matches" } else { "DIFFERS from" },
            o.max_abs_err
        ));
    }
    s
}
