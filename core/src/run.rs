//! End to end: compile, prepare inputs, run the reference interpreter and the simulator,
//! compare every `out` tensor, and report the fields of `tilescope run --json`. Never
//! panics: every failure is a diagnostic or a simulation error in the result.

use crate::compile::{compile_with_context, resolve_machine, CompileOptions, CompileResult};
use crate::diag::Diagnostic;
use crate::isa::Program;
use crate::machine::Machine;
use crate::passes::Context;
use crate::sim::{self, SimMode, SimResult};
use crate::tensor::{compare, Tensor};
use crate::types::MemSpace;
use serde::{Deserialize, Serialize};

/// One output tensor and how it compares with the reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputReport {
    pub name: String,
    pub matches: bool,
    pub max_abs_err: f64,
    pub mismatches: usize,
    /// The simulated tensor (not serialised: written as `.npy`).
    #[serde(skip)]
    pub tensor: Option<Tensor>,
    #[serde(skip)]
    pub reference: Option<Tensor>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunResult {
    /// The simulation as the simulator returned it: totals, trace, flags, races and
    /// errors (the default when the kernel did not run). Held, not copied; its fields
    /// stay at the top level of the JSON.
    #[serde(flatten)]
    pub sim: SimResult,
    pub reference_match: bool,
    pub max_abs_err: f64,
    /// Cycle lower bound: the busiest pipe's busy cycles (without the stretch of shared
    /// GM bandwidth), or the GM transfers of MTE2 and MTE3 at full rate one after another
    /// (they share the bandwidth).
    pub bound: u64,
    /// `bound` plus the fill and drain no order of these instructions avoids: the work
    /// the busiest pipe must wait for before it can start and that must follow its
    /// end, along the run's data dependences (`sim::path_bound`). `None` when the
    /// trace was cut short.
    pub path_bound: Option<u64>,
    /// The distance to the machine: what no program of this kernel can beat (the
    /// default when the reference did not run).
    pub roofline: Roofline,
    pub outputs: Vec<OutputReport>,
    pub compile: CompileResult,
    /// Compile, input or interpreter errors (the simulation's are in `errors`).
    pub diagnostics: Vec<Diagnostic>,
}

/// How much slower than barriers auto sync may be: 2% and 10 cycles. Every set and wait
/// is an instruction the scalar pipe dispatches (a slot-following flag id takes a
/// register too), and priming, draining and the order of several waits cost a few
/// cycles of their own; the extra scalar work is allowed on top, since on a kernel the
/// scalar pipe bounds no placement of the pairs hides it.
pub const AUTO_SYNC_SLACK: (f64, u64) = (0.02, 10);

/// The cycles the `auto` run of a kernel may take at most, given its `barrier` run: the
/// promise the property tests and the fuzzer hold auto sync to
/// ([`AUTO_SYNC_SLACK`] plus the scalar pipe's extra busy cycles).
pub fn auto_sync_limit(auto: &SimResult, barrier: &SimResult) -> f64 {
    let scalar = |r: &SimResult| r.pipe(crate::types::Pipe::S).map_or(0, |p| p.busy);
    let extra_scalar = scalar(auto).saturating_sub(scalar(barrier));
    barrier.cycles as f64 * (1.0 + AUTO_SYNC_SLACK.0)
        + AUTO_SYNC_SLACK.1.saturating_add(extra_scalar) as f64
}

/// The kernel's roofline: the cycles its compulsory GM traffic and its products take at
/// the machine's peak rates. Beside `bound`, which judges the schedule of the program
/// the compiler emitted, it says how far the kernel is from the machine itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct Roofline {
    /// Each element the reference loaded from an input, once.
    pub gm_read_bytes: u64,
    /// Each element the reference stored to an output, once.
    pub gm_write_bytes: u64,
    /// Those bytes at the fastest GM paths: reads and writes through MTE2 and MTE3
    /// share GM bandwidth, and a kernel with products may write some of its outputs
    /// through FIX beside them.
    pub gm_cycles: u64,
    /// The multiply-accumulates of the kernel's products (`@`) over their valid extents.
    pub macs: u64,
    /// Those at the matrix unit's peak rate (a full `block_m x K block x block_n` block
    /// per cycle, `f32_factor` times slower for f32).
    pub matrix_cycles: u64,
    /// The larger of the two.
    pub cycles: u64,
}

impl Roofline {
    /// The roofline of a kernel that computed `counts` with parameters `params`, on
    /// `machine`.
    pub fn new(
        counts: &crate::interp::Counts,
        params: &[crate::front::hir::Param],
        machine: &Machine,
    ) -> Roofline {
        let bytes = |elems: &[u64]| -> u64 {
            params
                .iter()
                .zip(elems)
                .map(|(p, &n)| n.saturating_mul(p.ty.dtype.bytes()))
                .sum()
        };
        let (gm_read_bytes, gm_write_bytes) = (bytes(&counts.read), bytes(&counts.written));
        let bw = &machine.costs.bandwidth;
        let reads = gm_read_bytes as f64 / bw.gm_ub.max(bw.gm_l1);
        let writes = gm_write_bytes as f64;
        // MTE2 and MTE3 share GM bandwidth; FIX writes a product's accumulator to GM
        // beside them. With products, any share `x` of the writes may take that path:
        // the best split ends both paths together (or sends every write through FIX).
        let gm_cycles = if counts.macs.is_empty() {
            reads + writes / bw.ub_gm
        } else if reads >= writes / bw.l0c_gm {
            reads
        } else {
            let x = (reads + writes / bw.ub_gm) / (1.0 / bw.ub_gm + 1.0 / bw.l0c_gm);
            x / bw.l0c_gm
        }
        .ceil();
        let mm = &machine.costs.matmul;
        let mut matrix = 0.0;
        let mut macs = 0u64;
        for &(dtype, n) in &counts.macs {
            let k_block = (mm.k_block_bytes / dtype.bytes()).max(1);
            let factor = if dtype == crate::types::DType::F32 {
                mm.f32_factor
            } else {
                1
            };
            let per_cycle = (mm.block_m * k_block * mm.block_n) as f64 / factor.max(1) as f64;
            matrix += n as f64 / per_cycle;
            macs = macs.saturating_add(n);
        }
        // Both are finite and below 2^64 cycles for any kernel the limits admit.
        let (gm_cycles, matrix_cycles) = (gm_cycles as u64, matrix.ceil() as u64);
        Roofline {
            gm_read_bytes,
            gm_write_bytes,
            gm_cycles,
            macs,
            matrix_cycles,
            cycles: gm_cycles.max(matrix_cycles),
        }
    }
}

/// Compiles `source` and runs it on inputs `provided` (by parameter name; the rest filled
/// from `seed`, `out` tensors zeroed).
pub fn run(
    source: &str,
    options: &CompileOptions,
    provided: Vec<(String, Tensor)>,
    seed: u64,
) -> RunResult {
    let (compile, cx) = compile_with_context(source, options);
    run_compiled(options, compile, &cx, provided, seed)
}

/// `run` for a kernel already compiled with `compile_with_context(source, options)`:
/// the playground shows the compile result first and then simulates it, and compiling
/// once instead of twice keeps an edit's round trip short.
pub fn run_compiled(
    options: &CompileOptions,
    compile: CompileResult,
    cx: &Context,
    provided: Vec<(String, Tensor)>,
    seed: u64,
) -> RunResult {
    let mut result = RunResult {
        diagnostics: compile.diagnostics.clone(),
        ..RunResult::default()
    };
    let (Some(hir), Some(program)) = (cx.hir.as_ref(), compile.program.clone()) else {
        result.compile = compile;
        return result;
    };
    let machine = match resolve_machine(options) {
        Ok(m) => m,
        Err(d) => {
            result.diagnostics.push(d);
            result.compile = compile;
            return result;
        }
    };
    // A run past the machine's limit is refused before it starts, and before the
    // reference interpreter spends as long on the same loops.
    let work = sim::work(&program);
    if work.instructions > machine.limits.max_instructions {
        result.diagnostics.push(too_long(&program, &machine, work));
        result.compile = compile;
        return result;
    }
    let inputs = match crate::inputs::prepare(hir, provided, seed) {
        Ok(t) => t,
        Err(d) => {
            result.diagnostics.push(d);
            result.compile = compile;
            return result;
        }
    };
    let mut reference = inputs.clone();
    let interp = crate::interp::run_counting(hir, &mut reference);
    let inputs = crate::inputs::with_scratch(&program, inputs);
    let mut sim = sim::simulate(&program, &machine, inputs, SimMode::FULL);
    name_race_tiles(&mut sim.races, &compile.buffers, &cx.source);
    match interp {
        Err(d) => {
            result.diagnostics.push(d);
        }
        Ok(counts) => {
            result.roofline = Roofline::new(&counts, &hir.params, &machine);
            let mut all = sim.errors.is_empty();
            for (i, p) in hir.params.iter().enumerate() {
                if !p.is_out {
                    continue;
                }
                let expected = reference.get(i);
                let actual = sim.outputs.get(i).map(|o| &o.tensor);
                let (matches, err, mism) = match (expected, actual) {
                    (Some(e), Some(a)) => {
                        let c = compare(e, a);
                        (c.matches, c.max_abs_err, c.mismatches)
                    }
                    _ => (false, f64::INFINITY, 0),
                };
                all &= matches;
                result.max_abs_err = result.max_abs_err.max(err);
                result.outputs.push(OutputReport {
                    name: p.name.clone(),
                    matches,
                    max_abs_err: err,
                    mismatches: mism,
                    tensor: actual.cloned(),
                    reference: expected.cloned(),
                });
            }
            result.reference_match = all;
        }
    }
    result.record(sim);
    result.compile = compile;
    result
}

impl RunResult {
    /// Keeps the simulation, and its lower bound: the busiest pipe's busy cycles, or
    /// the GM transfers at full rate one after another.
    fn record(&mut self, sim: SimResult) {
        // Bandwidth sharing stretched some transfers by an amount another schedule could
        // avoid, so it is not counted here; the sharing itself is `gm_transfer_cycles`.
        let busiest = sim
            .pipes
            .iter()
            .map(|p| p.busy - p.shared_bandwidth.min(p.busy))
            .max()
            .unwrap_or(0);
        self.bound = busiest.max(sim.gm_transfer_cycles);
        self.path_bound = sim::path_bound::path_bound(&sim).map(|p| p.max(self.bound));
        self.sim = sim;
    }
}

/// Names the tile an on-chip race is on, as the student knows it (`t`, or the
/// expression that made a temporary), in place of the bare address the simulator
/// knows: the buffers of the race's space that overlap its bytes. Where plan-memory let
/// several tiles share those bytes at different times, the ones the racing instructions
/// define come first, else all are named.
fn name_race_tiles(races: &mut [sim::Race], buffers: &[crate::compile::BufferInfo], source: &str) {
    for race in races.iter_mut().filter(|r| r.space != MemSpace::GM) {
        let (lo, hi) = race.overlap;
        let overlapping: Vec<&crate::compile::BufferInfo> = buffers
            .iter()
            .filter(|b| b.space == race.space)
            .filter(|b| b.addrs.iter().any(|&a| a < hi && lo < a + b.bytes))
            .collect();
        let spans = [race.first.instr.prov.span, race.second.instr.prov.span];
        let defined: Vec<&crate::compile::BufferInfo> = overlapping
            .iter()
            .copied()
            .filter(|b| b.span.is_some() && spans.contains(&b.span))
            .collect();
        let named = if defined.is_empty() {
            overlapping
        } else {
            defined
        };
        if named.is_empty() {
            continue;
        }
        let mut labels: Vec<String> = named
            .iter()
            .map(|b| crate::explain::buffer_label(&b.name, b.span, source))
            .collect();
        labels.dedup();
        let label = labels.join("` or `");
        let memory = format!("`{label}` ({}[{lo:#x}..{hi:#x}))", race.space.name());
        race.message = race.describe(&memory);
        race.buffer = Some(labels.join(" or "));
    }
}

/// The error for a program whose run would pass `machine`'s instruction limit, at the
/// loop that runs most of it.
fn too_long(program: &Program, machine: &Machine, work: sim::Work) -> Diagnostic {
    let limit = machine.limits.max_instructions;
    let message = format!(
        "the kernel would run {} instructions, over the limit of {limit} simulated \
         instructions on {} (limits.max_instructions)",
        work.instructions, machine.name
    );
    at_heaviest_loop(program, work, message, |l| {
        format!(
            "this loop runs {} iterations, {} instructions in all",
            l.iterations, l.instructions
        )
    })
    .with_note("shrink the loop's range or take larger steps; the `tilescope` command line simulates up to the machine description's `limits.max_instructions`")
}

/// An error `message` with its caret on the outermost loop that runs most of `work`
/// (and `note` about that loop), or without a place when there is no such loop.
fn at_heaviest_loop(
    program: &Program,
    work: sim::Work,
    message: String,
    note: impl FnOnce(sim::LoopWork) -> String,
) -> Diagnostic {
    let heaviest = work
        .heaviest_loop
        .and_then(|l| Some((l, program.instrs.get(l.instr)?.prov.span?)));
    match heaviest {
        Some((l, span)) => Diagnostic::error(message, span).with_note(note(l)),
        None => Diagnostic::global(message),
    }
}

/// The error for a program (of `work`, `sim::work`) whose functional run would touch
/// more than `limit` elements, at the loop that runs most of it; `None` within the limit.
/// The playground refuses such a run before it starts: few instructions over big tiles
/// can take as long as millions of small ones.
pub fn too_many_elements(program: &Program, work: sim::Work, limit: u64) -> Option<Diagnostic> {
    if work.elements <= limit {
        return None;
    }
    let message = format!(
        "the kernel would touch {} tile elements, over the playground's limit of {limit}",
        work.elements
    );
    let d = at_heaviest_loop(program, work, message, |l| {
        format!("this loop runs {} iterations over its tiles", l.iterations)
    });
    Some(d.with_note(
        "use fewer iterations or smaller tiles; the `tilescope` command line has no such limit",
    ))
}

/// Runs a hand-written program (`.tasm`) on inputs generated from `seed`
/// (`inputs::for_program`, as `tilescope sim` fills the tensors it is not given). There
/// is no reference to compare with: `outputs` stays empty.
pub fn run_program(program: &Program, machine: &Machine, seed: u64) -> RunResult {
    let mut result = RunResult::default();
    match crate::inputs::for_program(program, seed) {
        Ok(inputs) => result.record(sim::simulate(program, machine, inputs, SimMode::FULL)),
        Err(e) => result.diagnostics.push(Diagnostic::global(e)),
    }
    result
}

/// What one optional pass buys: the run with that pass turned off.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Ablation {
    /// The pass left out.
    pub pass: String,
    pub cycles: u64,
    /// Set/wait pairs that executed.
    pub syncs: u64,
    /// On-chip bytes plan-memory allocated (every slot of every buffer).
    pub peak_bytes: u64,
    pub matches_reference: bool,
    /// Why the run failed, when it did (a capacity error, say).
    pub error: Option<String>,
}

/// Runs `source` once without each optional pass in turn (on top of the passes
/// `options` already leaves out), as `run --json --ablate` reports.
pub fn ablate(
    source: &str,
    options: &CompileOptions,
    provided: &[(String, Tensor)],
    seed: u64,
) -> Vec<Ablation> {
    crate::passes::optional_passes()
        .into_iter()
        .filter(|p| !options.disabled_passes.iter().any(|d| d == p))
        .map(|pass| {
            let mut without = options.clone();
            without.disabled_passes.push(pass.to_string());
            let r = run(source, &without, provided.to_vec(), seed);
            let error = r
                .diagnostics
                .first()
                .map(|d| d.message.clone())
                .or_else(|| r.sim.errors.first().map(|e| e.message.clone()));
            Ablation {
                pass: pass.to_string(),
                cycles: r.sim.cycles,
                syncs: r.sim.syncs,
                peak_bytes: r
                    .compile
                    .buffers
                    .iter()
                    .map(|b| b.bytes.saturating_mul(b.addrs.len() as u64))
                    .sum(),
                matches_reference: r.reference_match && r.sim.races.is_empty() && error.is_none(),
                error,
            }
        })
        .collect()
}
