//! What the worker runs: core's compiler and simulator, converted to the compact
//! messages the page renders. The only place that knows core's result types.

use tilescope::dense::DenseMap;

use tilescope::compile;
use tilescope::diag::Diagnostic;
use tilescope::isa::{asm, Op, Program};
use tilescope::run::{self, RunResult};
use tilescope::sim::{self, StallReason};
use tilescope::tensor::Tensor;
use tilescope::types::Pipe;

use crate::protocol::options::CompileOptions;
use crate::protocol::{
    AsmLine, CompileOutput, FlagEvent, FlagWait, InstrRef, Lane, OutputTensor, PassRecord, Race,
    SimOutput, SimProblem, Stall, StepEdge, StepEdgeKind, StepGraph, StepNode, TraceSlice,
    FLAG_WAITS,
};
use crate::worker::layout;

/// Slices sent to the page at most: beyond this the timeline shows the run's start and
/// says so (each slice costs the page memory and the worker transfer time).
pub const SLICE_CAP: usize = 200_000;
/// Values shown per output tensor.
const PREVIEW: usize = 8;

/// Dynamic instructions one run in the playground may simulate: well past every
/// gallery kernel and lesson (the largest runs some tens of thousands), and about a
/// second of the worker's time (the simulator runs some 10 M instructions/s natively,
/// the reference interpreter and wasm cost more). A bigger run is refused before it
/// starts, naming the loop to shrink, rather than freezing the results for seconds;
/// the command line keeps the presets' 10^7.
pub const PLAYGROUND_MAX_INSTRUCTIONS: u64 = 2_000_000;

/// Tile elements one run in the playground may touch (`sim::Work::elements`): the
/// elements of the gallery's largest run are some millions; the 3,000-iteration loop
/// over 16 K-element tiles of `browser_hostile` touches 2.4 * 10^8 and simulates in
/// 1.45 s natively, several in the worker. Past this a run is refused at once: a loop
/// of few instructions over big tiles would otherwise run until the watchdog.
pub const PLAYGROUND_MAX_ELEMENTS: u64 = 500_000_000;

/// The page's options as the worker compiles them: their machine with the playground's
/// instruction limit, passes timed by the browser's clock. An unknown preset stays as
/// it is, for the compile to report.
fn core_options(options: &CompileOptions) -> CompileOptions {
    let mut out = options.clone();
    if let Ok(mut machine) = compile::resolve_machine(options) {
        machine.limits.max_instructions = machine
            .limits
            .max_instructions
            .min(PLAYGROUND_MAX_INSTRUCTIONS);
        out.machine = Some(machine);
    }
    out.clock = compile::PassClock(clock());
    out
}

/// Pass durations use the browser's clock (`std::time::Instant` does not exist on
/// wasm32-unknown-unknown).
fn clock() -> Option<tilescope::passes::Clock> {
    #[cfg(target_arch = "wasm32")]
    {
        Some(crate::clock::now_ms)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        tilescope::passes::default_clock()
    }
}

/// Compiles `source` through every pass.
pub fn compile(source: &str, options: &CompileOptions) -> CompileOutput {
    compile_output(compile::compile(source, &core_options(options)), source)
}

fn compile_output(result: compile::CompileResult, source: &str) -> CompileOutput {
    let total_micros = result.passes.iter().map(|p| p.micros).sum();
    let (asm_header, asm) = result
        .program
        .as_ref()
        .map(program_lines)
        .unwrap_or_default();
    // insert-sync's event-id reductions and barrier fallbacks cost overlap the user
    // did not ask for: Problems lists them as warnings.
    let mut diagnostics = result.diagnostics;
    if let Some(report) = &result.sync {
        diagnostics.extend(
            tilescope::explain::notes(report)
                .into_iter()
                .map(|note| Diagnostic {
                    severity: tilescope::diag::Severity::Warning,
                    ..Diagnostic::global(format!("insert-sync: {note}"))
                }),
        );
    }
    let syncs = result
        .sync
        .as_ref()
        .map(|report| tilescope::explain::sync_rows(report, result.program.as_ref(), source))
        .unwrap_or_default();
    let mut asm = asm;
    if let Some(program) = &result.program {
        link_syncs(program, &syncs, &mut asm);
    }
    CompileOutput {
        syncs,
        passes: result
            .passes
            .into_iter()
            .map(|p| PassRecord {
                name: p.name,
                description: p.description,
                ir: p.ir,
                lines: p.lines,
                changed: p.changed,
                micros: p.micros,
                notes: p
                    .notes
                    .into_iter()
                    .map(|n| format!("{}: {}", n.at, n.message))
                    .collect(),
            })
            .collect(),
        diagnostics,
        steps: result.steps.as_ref().map(step_graph),
        asm_header,
        asm,
        total_micros,
    }
}

/// Points each `set_flag` / `wait_flag` line at its pair: the row whose set or wait it
/// is, else (a loop's prime or drain) the row of the same pipes whose ids include its
/// id, or whose id is per slot when it takes its id from a register.
fn link_syncs(program: &Program, syncs: &[tilescope::explain::SyncRow], asm: &mut [AsmLine]) {
    for (i, (ins, line)) in program.instrs.iter().zip(asm.iter_mut()).enumerate() {
        let (Op::SetFlag { src, dst, id } | Op::WaitFlag { src, dst, id }) = &ins.op else {
            continue;
        };
        let exact = syncs
            .iter()
            .position(|r| r.set_index == Some(i) || r.wait_index == Some(i));
        let same_flag = || {
            syncs.iter().position(|r| {
                r.src == *src
                    && r.dst == *dst
                    && match id {
                        tilescope::isa::Val::Imm(x) => r.events.iter().any(|e| i64::from(*e) == *x),
                        tilescope::isa::Val::Reg(_) => r.dynamic,
                    }
            })
        };
        line.sync = exact.or_else(same_flag).map(|r| r as u32);
    }
}

/// The program as `.tensor` lines and one line per instruction (indexable by the
/// trace's instruction index, unlike the printed text).
fn program_lines(p: &Program) -> (Vec<String>, Vec<AsmLine>) {
    let listing = asm::listing(p);
    let lines = p
        .instrs
        .iter()
        .zip(listing.instrs)
        .enumerate()
        .map(|(i, (ins, (text, depth)))| AsmLine {
            text,
            depth,
            pipe: ins.op.pipe(),
            step: ins.prov.step,
            span: ins.prov.span,
            sync: None,
            branch: p.branch_at(i as u32).map(|b| b.cond.clone()),
        })
        .collect();
    (listing.header, lines)
}

fn step_graph(g: &compile::StepGraph) -> StepGraph {
    let ids: Vec<u32> = g.nodes.iter().map(|n| n.id).collect();
    let forward: Vec<(u32, u32)> = g
        .edges
        .iter()
        .filter(|e| !e.back)
        .map(|e| (e.from, e.to))
        .collect();
    let placed = layout::layout(&ids, &forward);
    let nodes = g
        .nodes
        .iter()
        .map(|n| {
            let (x, y) = placed.centres.get(&n.id).copied().unwrap_or_default();
            StepNode {
                step: n.clone(),
                x,
                y,
                w: layout::NODE_W,
                h: layout::NODE_H,
            }
        })
        .collect();
    let edges = g
        .edges
        .iter()
        .map(|e| StepEdge {
            from: e.from,
            to: e.to,
            kind: match e.kind {
                compile::StepEdgeKind::Data => StepEdgeKind::Data,
                compile::StepEdgeKind::Sync => StepEdgeKind::Sync,
                compile::StepEdgeKind::LoopCarried => StepEdgeKind::LoopCarried,
            },
            label: e.flag.map(|(src, dst, id)| match id {
                Some(id) => format!("{src}→{dst} #{id}"),
                None => format!("{src}→{dst} #dyn"),
            }),
            back: e.back,
        })
        .collect();
    StepGraph {
        nodes,
        edges,
        width: placed.width,
        height: placed.height,
    }
}

/// What the worker keeps of the newest run to build the Chrome trace on demand.
pub struct TraceSource {
    program: Program,
    sim: sim::SimResult,
    /// The text the program came from: slices carry their `line` and `col` in it.
    source: String,
}

impl TraceSource {
    pub fn chrome_json(&self) -> String {
        sim::trace::chrome_trace_located(&self.program, &self.sim, Some(&self.source)).to_string()
    }
}

/// A kernel compiled once: the worker answers with its `output` first, then simulates
/// the same compilation (core's `run::run_compiled`) instead of compiling it again. An
/// assembly lesson's `.tasm` program is assembled instead, with no passes.
pub struct Compiled {
    options: compile::CompileOptions,
    /// The source text (the trace download locates slices in it).
    text: String,
    source: Source,
}

enum Source {
    Kernel {
        result: Box<compile::CompileResult>,
        cx: Box<tilescope::passes::Context>,
    },
    Asm(Result<Program, Vec<Diagnostic>>),
}

impl Compiled {
    pub fn new(source: &str, options: &CompileOptions) -> Self {
        let options = core_options(options);
        let (result, cx) = compile::compile_with_context(source, &options);
        Compiled {
            options,
            text: source.to_string(),
            source: Source::Kernel {
                result: Box::new(result),
                cx: Box::new(cx),
            },
        }
    }

    /// `source` as a kernel, or as a hand-written assembly program when `asm` (an
    /// assembly lesson).
    pub fn for_source(source: &str, options: &CompileOptions, asm: bool) -> Self {
        if asm {
            return Compiled {
                options: core_options(options),
                text: source.to_string(),
                source: Source::Asm(asm::parse(source)),
            };
        }
        Compiled::new(source, options)
    }

    /// The compile result as the page shows it.
    pub fn output(&self) -> CompileOutput {
        match &self.source {
            Source::Kernel { result, .. } => compile_output((**result).clone(), &self.text),
            Source::Asm(Ok(program)) => {
                let (asm_header, asm) = program_lines(program);
                CompileOutput {
                    asm_header,
                    asm,
                    ..CompileOutput::default()
                }
            }
            Source::Asm(Err(diagnostics)) => CompileOutput {
                diagnostics: diagnostics.clone(),
                ..CompileOutput::default()
            },
        }
    }

    /// Simulates with inputs from `seed` (none when the kernel did not compile): the
    /// simulation and what the trace download needs.
    pub fn simulate(self, seed: u64) -> Option<(SimOutput, TraceSource)> {
        let (mut result, program, buffers) = match self.source {
            Source::Kernel { result, cx } => {
                // A run past the instruction limit is refused by `run_compiled`, which
                // says that more precisely; elements are checked within it.
                let refused = result.program.as_ref().and_then(|p| {
                    let work = tilescope::sim::work(p);
                    (work.instructions <= PLAYGROUND_MAX_INSTRUCTIONS)
                        .then(|| run::too_many_elements(p, work, PLAYGROUND_MAX_ELEMENTS))
                        .flatten()
                });
                let mut result = match refused {
                    // As `run_compiled` reports: the compile's diagnostics, then its own.
                    Some(d) => RunResult {
                        diagnostics: result.diagnostics.iter().cloned().chain([d]).collect(),
                        compile: *result,
                        ..RunResult::default()
                    },
                    None => run::run_compiled(&self.options, *result, &cx, Vec::new(), seed),
                };
                let compile = std::mem::take(&mut result.compile);
                // `run` repeats the compile's diagnostics before its own; the page lists
                // those once, from the compile.
                let repeated = compile.diagnostics.len().min(result.diagnostics.len());
                result.diagnostics.drain(..repeated);
                (result, compile.program?, compile.buffers)
            }
            Source::Asm(program) => {
                let program = program.ok()?;
                let result = match compile::resolve_machine(&self.options) {
                    Ok(machine) => run::run_program(&program, &machine, seed),
                    Err(d) => RunResult {
                        diagnostics: vec![d],
                        ..RunResult::default()
                    },
                };
                (result, program, Vec::new())
            }
        };
        let buffers = crate::worker::liveness::slots(
            &buffers,
            &self.text,
            &result.sim.trace,
            &result.sim.accesses,
        );
        let fixes = race_fixes(&self.options, &self.text, &result.sim.races);
        let mut sim = sim_output(&mut result, &program);
        for (race, fix) in sim.races.iter_mut().zip(fixes) {
            race.fix = Some(fix);
        }
        sim.buffers = buffers;
        let trace = TraceSource {
            sim: std::mem::take(&mut result.sim),
            program,
            source: self.text,
        };
        Some((sim, trace))
    }
}

/// What each optional pass buys: `source` run without each in turn (core's
/// `run::ablate`, as `tilescope run --ablate`).
pub fn ablate(source: &str, options: &CompileOptions, seed: u64) -> Vec<run::Ablation> {
    run::ablate(source, &core_options(options), &[], seed)
}

/// For each race of a run compiled without sync, the pair `auto` places that orders it
/// (core's `explain::race_fix`, as `tilescope run --sync none` prints it); none for a
/// run with sync.
fn race_fixes(options: &compile::CompileOptions, text: &str, races: &[sim::Race]) -> Vec<String> {
    let line =
        |s: &tilescope::explain::Site| s.line.map_or("-".to_string(), |l| format!("line {l}"));
    tilescope::explain::race_fixes(options, text, races)
        .iter()
        .map(|fix| tilescope::explain::race_fix_text(fix.as_ref(), &line))
        .collect()
}

/// Compiles and simulates `source` with inputs from `seed`: the compile result, the
/// simulation (when the kernel compiled) and what the trace download needs.
pub fn run(
    source: &str,
    options: &CompileOptions,
    seed: u64,
) -> (CompileOutput, Option<(SimOutput, TraceSource)>) {
    let compiled = Compiled::new(source, options);
    (compiled.output(), compiled.simulate(seed))
}

fn stall(e: &sim::TraceEntry) -> Option<Stall> {
    let s = e.stall?;
    // Placed as the Chrome trace places them: a bandwidth stall lies inside the
    // transfer, a full queue holds the S pipe before dispatch, the rest precede start.
    let (reason, cycles, pipe, to) = match s {
        StallReason::QueueFull { cycles } => (
            format!("{} queue full", e.pipe),
            cycles,
            Pipe::S,
            e.dispatch,
        ),
        StallReason::WaitFlag {
            src,
            dst,
            id,
            cycles,
        } => (
            format!("wait_flag {src}→{dst} #{id}"),
            cycles,
            e.pipe,
            e.start,
        ),
        StallReason::Bandwidth { cycles } => ("GM bandwidth shared".into(), cycles, e.pipe, e.end),
        StallReason::Barrier { cycles } => ("pipe_barrier ALL".into(), cycles, e.pipe, e.start),
    };
    (cycles > 0).then(|| Stall {
        pipe,
        from: to.saturating_sub(cycles),
        to,
        reason,
    })
}

fn sim_output(r: &mut RunResult, program: &Program) -> SimOutput {
    // Every instruction the pipes executed, not the trace's length: the simulator keeps
    // at most `sim::TRACE_LIMIT` entries.
    let total: u64 = r.sim.pipes.iter().map(|p| p.instructions).sum();
    let mut order: Vec<&sim::TraceEntry> = r.sim.trace.iter().collect();
    order.sort_by_key(|e| (e.start, e.end));
    order.truncate(SLICE_CAP);
    let mut first_cycle: DenseMap<u32, u64> = DenseMap::new();
    let mut by_pipe: [Vec<TraceSlice>; 7] = Default::default();
    for e in &order {
        first_cycle.entry(e.index).or_insert(e.start);
        if let Some(lane) = by_pipe.get_mut(e.pipe.index()) {
            lane.push(TraceSlice {
                instr: e.index,
                start: e.start,
                end: e.end,
                step: e.prov.step,
                stall: stall(e),
            });
        }
    }
    let mut stops: Vec<u64> = order.iter().map(|e| e.start).collect();
    stops.dedup();
    let lanes = Pipe::ALL
        .into_iter()
        .zip(by_pipe)
        .filter_map(|(pipe, slices)| {
            let stats = r.sim.pipes.iter().find(|p| p.pipe == pipe);
            let instructions = stats.map_or(0, |s| s.instructions);
            if slices.is_empty() && instructions == 0 {
                return None;
            }
            let reach = slices
                .iter()
                .scan(0u64, |m, s| {
                    *m = (*m).max(s.end);
                    Some(*m)
                })
                .collect();
            Some(Lane {
                pipe,
                slices,
                reach,
                busy: stats.map_or(0, |s| s.busy),
                instructions,
                shared_bandwidth: stats.map_or(0, |s| s.shared_bandwidth),
            })
        })
        .collect();
    let instr = |i: &sim::InstrRef, access: Option<&str>| InstrRef {
        index: i.index,
        text: i.text.clone(),
        pipe: i.pipe,
        span: i.prov.span,
        access: access.map(str::to_string),
        first_cycle: first_cycle.get(&i.index).copied(),
    };
    let access = |k: sim::AccessKind| match k {
        sim::AccessKind::Read => Some("read"),
        sim::AccessKind::Write => Some("write"),
    };
    SimOutput {
        cycles: r.sim.cycles,
        bound: r.bound,
        path_bound: r.path_bound,
        syncs: r.sim.syncs,
        reference_match: r.reference_match,
        max_abs_err: r.max_abs_err,
        lanes,
        stops,
        total_slices: total,
        capped: total > order.len() as u64,
        flags: r
            .sim
            .flags
            .iter()
            .map(|f| FlagEvent {
                src: f.src,
                dst: f.dst,
                event: f.id,
                set_cycle: f.set_cycle,
                wait_cycle: f.wait_cycle,
                set_instr: f.set_instr,
                wait_instr: f.wait_instr,
            })
            .collect(),
        branches: std::mem::take(&mut r.sim.branches),
        branch_runs: std::mem::take(&mut r.sim.branch_runs),
        races: r
            .sim
            .races
            .iter()
            .map(|race| Race {
                message: race.message.clone(),
                first: instr(&race.first.instr, access(race.first.kind)),
                second: instr(&race.second.instr, access(race.second.kind)),
                // The memory: the tensor for GM, else the space (the message names the
                // tile an on-chip race is on).
                place: race
                    .buffer
                    .clone()
                    .filter(|_| race.space == tilescope::types::MemSpace::GM)
                    .unwrap_or_else(|| race.space.name().to_string()),
                count: race.count,
                fix: None,
            })
            .collect(),
        errors: r
            .sim
            .errors
            .iter()
            .map(|e| SimProblem {
                kind: serde_json::to_value(e.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
                    .unwrap_or_default(),
                message: e.message.clone(),
                instr: e.instr.as_ref().map(|i| instr(i, None)),
                related: e.related.iter().map(|i| instr(i, None)).collect(),
                cycle: e.cycle,
            })
            .collect(),
        diagnostics: std::mem::take(&mut r.diagnostics),
        outputs: r.outputs.iter().filter_map(output_tensor).collect(),
        // Filled by `run`, which still holds the compile's buffer table.
        buffers: Vec::new(),
        roofline: r.roofline.clone(),
        flag_waits: flag_waits(r, program, &|i| instr(i, None)),
        stalls: std::mem::take(&mut r.sim.stalls),
    }
}

/// The `wait_flag`s that held their pipes longest over the run, with their source.
fn flag_waits(
    r: &RunResult,
    program: &Program,
    instr: &dyn Fn(&sim::InstrRef) -> InstrRef,
) -> Vec<FlagWait> {
    let mut all: Vec<&sim::FlagStall> = r.sim.stalls.iter().flat_map(|s| &s.flags).collect();
    all.sort_by_key(|f| (std::cmp::Reverse(f.cycles), f.wait_instr));
    all.truncate(FLAG_WAITS);
    all.into_iter()
        .map(|f| FlagWait {
            wait: instr(&sim::InstrRef::new(program, f.wait_instr)),
            src: f.src,
            dst: f.dst,
            event: f.id,
            cycles: f.cycles,
            times: f.times,
            longest_from: f.longest.from,
        })
        .collect()
}

fn output_tensor(o: &run::OutputReport) -> Option<OutputTensor> {
    let t: &Tensor = o.tensor.as_ref()?;
    let n = t.len().min(PREVIEW);
    let preview = (0..n)
        .map(|i| {
            if t.dtype.is_float() {
                format!("{:.4}", f64::from(t.get(i)))
            } else {
                t.get_i32(i).to_string()
            }
        })
        .collect();
    Some(OutputTensor {
        name: o.name.clone(),
        shape: t.shape.clone(),
        dtype: t.dtype.name().to_string(),
        matches: o.matches,
        max_abs_err: o.max_abs_err,
        mismatches: o.mismatches as u64,
        preview,
        npy: tilescope::npy::write(t),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::options::SyncStrategy;

    #[test]
    fn front_end_errors_come_back_as_diagnostics() {
        let out = compile("kernel (", &crate::protocol::options::playground());
        assert!(out.error_count() > 0);
        assert!(out.passes.is_empty() && out.asm.is_empty() && out.steps.is_none());
        let (out, sim) = run("kernel (", &crate::protocol::options::playground(), 0);
        assert!(out.error_count() > 0 && sim.is_none());
    }

    #[test]
    fn a_run_past_the_playgrounds_limit_is_refused_at_its_loop() {
        // 200,000 iterations: a few million instructions, under the command line's 10^7
        // but past the playground's limit.
        let source = "kernel long(x: f32[16, 16], y: out f32[16, 16]) {
    for i in 0..200000 {
        let t = load x[:, :];
        store y[:, :] = t * 2.0 + 1.0;
    }
}
";
        let d = refused_at_loop(source, "for i in 0..200000");
        assert!(
            d.message
                .contains(&format!("over the limit of {PLAYGROUND_MAX_INSTRUCTIONS}")),
            "{}",
            d.message
        );
        assert!(d
            .notes
            .iter()
            .any(|n| n.contains("this loop runs 200000 iterations")));
    }

    /// Runs `source`, which compiles, and returns why the run was refused; the error is
    /// at the loop that starts with `at`.
    fn refused_at_loop(source: &str, at: &str) -> tilescope::diag::Diagnostic {
        let (out, sim) = run(source, &crate::protocol::options::playground(), 0);
        assert_eq!(out.error_count(), 0, "it compiles: {:?}", out.diagnostics);
        let (sim, _) = sim.expect("the run's answer");
        assert!(sim.lanes.is_empty() && sim.cycles == 0);
        let d = sim.diagnostics.first().expect("why it did not run").clone();
        let span = d.span.expect("at the loop");
        assert!(source[span.start as usize..].starts_with(at), "{span:?}");
        d
    }

    #[test]
    fn a_run_over_too_many_elements_is_refused_at_its_loop() {
        // Few instructions (some 200 K) over 16 K-element tiles: 3 * 10^9 elements.
        let source = "kernel heavy(x: f32[64, 256], y: out f32[64, 256]) {
    for i in 0..40000 {
        let t = load x[:, :];
        store y[:, :] = exp(t) * 2.0 + 1.0;
    }
}
";
        let d = refused_at_loop(source, "for i in 0..40000");
        assert!(
            d.message
                .contains("tile elements, over the playground's limit"),
            "{}",
            d.message
        );
        // Every gallery kernel stays well under the limit.
        for e in crate::catalog::EXAMPLES {
            let out = tilescope::compile::compile(
                e.source,
                &core_options(&crate::protocol::options::playground()),
            );
            let p = out.program.expect("the example compiles");
            let elements = tilescope::sim::work(&p).elements;
            assert!(
                elements < PLAYGROUND_MAX_ELEMENTS / 10,
                "{}: {elements}",
                e.name
            );
        }
        // The 3,000-iteration loop the cancel test runs stays under the limit.
        let (_, sim) = run(
            &source.replace("40000", "3000"),
            &crate::protocol::options::playground(),
            0,
        );
        let (sim, _) = sim.expect("the run's answer");
        assert!(
            sim.diagnostics.is_empty() && sim.cycles > 0,
            "{:?}",
            sim.diagnostics
        );
    }

    fn example(name: &str) -> &'static str {
        crate::catalog::find(name).map_or("", |e| e.source)
    }

    #[test]
    fn a_compiled_example_converts_to_the_page_shapes() {
        let out = compile(
            example("elementwise"),
            &crate::protocol::options::playground(),
        );
        assert_eq!(out.error_count(), 0, "{:?}", out.diagnostics);
        assert!(
            out.steps_pass().is_some(),
            "the form-steps pass is named form-steps"
        );
        // The program lines are indexable by instruction and carry provenance.
        assert!(out.asm.iter().any(|l| l.text.starts_with("dma")));
        assert!(out.asm.iter().any(|l| l.step.is_some() && l.span.is_some()));
        assert!(out.asm_header.iter().all(|h| h.starts_with(".tensor")));
        let loop_body = out.asm.iter().skip_while(|l| !l.text.starts_with("loop"));
        assert!(loop_body.skip(1).take(3).all(|l| l.depth == 1));
        let g = out.steps.expect("a step graph");
        assert_laid_out(&g);
        // Sync edges are labelled with their pipes and id.
        assert!(g
            .edges
            .iter()
            .filter(|e| e.kind == StepEdgeKind::Sync)
            .all(|e| e
                .label
                .as_deref()
                .is_some_and(|l| l.contains('→') && l.contains('#'))));
    }

    /// Every step is placed inside the picture without overlapping another, and every
    /// edge forward in program order points down.
    fn assert_laid_out(g: &StepGraph) {
        assert!(!g.nodes.is_empty());
        for a in &g.nodes {
            assert!(a.x > 0.0 && a.y > 0.0 && a.x < g.width && a.y < g.height);
            for b in &g.nodes {
                if a.step.id < b.step.id {
                    assert!((a.x - b.x).abs() >= a.w || (a.y - b.y).abs() >= a.h);
                }
            }
        }
        // Nodes are in program order; the layering uses the edges going forward in it.
        let at = |id: u32| g.nodes.iter().position(|n| n.step.id == id);
        let y = |id: u32| g.nodes.iter().find(|n| n.step.id == id).map(|n| n.y);
        for e in g.edges.iter().filter(|e| !e.back && at(e.from) < at(e.to)) {
            assert!(y(e.from) < y(e.to), "{} -> {}", e.from, e.to);
        }
    }

    #[test]
    fn every_example_step_graph_is_laid_out() {
        for e in crate::catalog::EXAMPLES {
            let out = compile(e.source, &crate::protocol::options::playground());
            let g = out.steps.expect("a step graph");
            assert_laid_out(&g);
        }
    }

    /// Each `if` reaches the page with its condition on its `loop` line, its counts as
    /// core ran them, and one S-lane slice at each decision's cycle (where the timeline
    /// marks it).
    #[test]
    fn branches_reach_the_page_with_their_conditions_and_decisions() {
        let source = example("block_sparse_attention");
        let options = crate::protocol::options::playground();
        let (out, sim) = run(source, &options, 0);
        let (sim, _) = sim.expect("it simulates");
        let core = tilescope::run::run(source, &options, Vec::new(), 0);
        assert_eq!(sim.branches, core.sim.branches);
        assert_eq!(sim.branches.len(), 1);
        let b = &sim.branches[0];
        assert!(b.taken > 0 && b.taken < b.runs, "{b:?}");
        let line = out.asm.get(b.instr as usize).expect("the loop");
        assert!(
            line.text.starts_with("loop ") && line.branch.is_some(),
            "{line:?}"
        );
        assert_eq!(out.asm.iter().filter(|l| l.branch.is_some()).count(), 1);
        assert_eq!(sim.branch_runs.len() as u64, b.runs);
        let taken = sim.branch_runs.iter().filter(|r| r.taken).count() as u64;
        assert_eq!(taken, b.taken);
        let s_lane = sim.lane(Pipe::S).expect("an S lane");
        for r in &sim.branch_runs {
            assert!(s_lane
                .slices
                .iter()
                .any(|s| s.instr == r.instr && s.start == r.cycle));
        }
    }

    /// In block-sparse attention the key blocks' pairs, one block's to the next
    /// included, are set and waited inside the `if`'s region, and the pairs of each
    /// row block (its output tile's) outside it (the sync card says which).
    #[test]
    fn a_pair_is_inside_a_branch_when_its_set_and_wait_are() {
        let out = compile(
            example("block_sparse_attention"),
            &crate::protocol::options::playground(),
        );
        let branch = out
            .asm
            .iter()
            .position(|l| l.branch.is_some())
            .expect("the if's loop");
        let around: Vec<Option<usize>> = out
            .syncs
            .iter()
            .filter_map(|r| Some(out.branch_around(r.set_index?, r.wait_index?)))
            .collect();
        assert!(around.contains(&Some(branch)), "{around:?}");
        assert!(around.contains(&None), "{around:?}");
        // A pair outside is outside: the `if`'s own loop line and anything before it.
        assert_eq!(out.branch_around(branch, branch + 1), None);
        assert_eq!(out.branch_around(branch + 1, branch + 2), Some(branch));
    }

    /// A pass that leaves a loop as written says so: the Passes panel gets core's
    /// notes, each with its place, on the pass that made them.
    #[test]
    fn a_pass_note_reaches_the_page_with_its_place() {
        let source = include_str!("../../../core/tests/kernels/varying_attention.tile");
        let options = crate::protocol::options::playground();
        let out = compile(source, &options);
        let core = tilescope::compile::compile(source, &options);
        let notes = |name: &str| -> Vec<String> {
            out.passes
                .iter()
                .find(|p| p.name == name)
                .map(|p| p.notes.clone())
                .unwrap_or_default()
        };
        let want: Vec<String> = core
            .passes
            .iter()
            .find(|p| p.name == "software-pipeline")
            .map(|p| {
                p.notes
                    .iter()
                    .map(|n| format!("{}: {}", n.at, n.message))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(notes("software-pipeline"), want);
        assert_eq!(want.len(), 1, "{want:?}");
        assert!(
            want[0].starts_with("8:9: loop `i` is left as written"),
            "{want:?}"
        );
        assert!(notes("multi-buffer").is_empty());
    }

    #[test]
    fn a_simulation_converts_to_sorted_lanes_and_outputs() {
        let (out, sim) = run(
            example("matmul_tiled"),
            &crate::protocol::options::playground(),
            0,
        );
        let (sim, trace) = sim.expect("it simulates");
        assert!(sim.reference_match && sim.errors.is_empty() && sim.races.is_empty());
        assert!(sim.cycles > 0 && sim.bound > 0 && sim.bound <= sim.cycles);
        assert!(!sim.capped);
        let kept: usize = sim.lanes.iter().map(|l| l.slices.len()).sum();
        assert_eq!(kept as u64, sim.total_slices);
        for lane in &sim.lanes {
            assert!(lane.slices.windows(2).all(|w| w[0].start <= w[1].start));
            assert_eq!(lane.reach.len(), lane.slices.len());
            assert!(lane.reach.windows(2).all(|w| w[0] <= w[1]));
            for s in &lane.slices {
                let line = out.asm.get(s.instr as usize).expect("instruction exists");
                assert_eq!(line.pipe, lane.pipe);
                assert_eq!(line.step, s.step);
            }
        }
        for pipe in [Pipe::MTE2, Pipe::M, Pipe::S] {
            assert!(sim.lane(pipe).is_some(), "{pipe} lane");
        }
        assert!(sim.stops.windows(2).all(|w| w[0] < w[1]));
        assert!(sim
            .flags
            .iter()
            .all(|f| f.wait_cycle.is_none_or(|w| w >= f.set_cycle)));
        let o = sim.outputs.first().expect("an output");
        assert!(o.npy.starts_with(b"\x93NUMPY") && !o.preview.is_empty() && o.matches);
        // The Chrome trace is valid JSON with one event per slice at least.
        let json: serde_json::Value = serde_json::from_str(&trace.chrome_json()).expect("JSON");
        let events = json["traceEvents"].as_array().cloned().unwrap_or_default();
        assert!(events.len() >= kept);
        // Slices give their source position as line and column, never byte offsets.
        assert!(events.iter().any(|e| e["args"]["line"].as_u64().is_some()));
        assert!(events.iter().all(|e| e["args"].get("span").is_none()));
    }

    #[test]
    fn lanes_carry_the_cycles_stretched_by_shared_gm_bandwidth() {
        // elementwise's loads and stores overlap, and MTE2 and MTE3 share GM bandwidth.
        let (_, sim) = run(
            example("elementwise"),
            &crate::protocol::options::playground(),
            0,
        );
        let (sim, _) = sim.expect("it simulates");
        let shared = |p| sim.lane(p).map_or(0, |l| l.shared_bandwidth);
        assert!(shared(Pipe::MTE2) > 0 && shared(Pipe::MTE3) > 0);
        assert!(sim.lanes.iter().all(|l| l.shared_bandwidth <= l.busy));
        assert_eq!(shared(Pipe::V), 0);
    }

    #[test]
    fn without_sync_each_race_names_the_pair_auto_places() {
        let options = CompileOptions {
            sync: SyncStrategy::None,
            ..crate::protocol::options::playground()
        };
        let (_, sim) = run(example("elementwise"), &options, 0);
        let (sim, _) = sim.expect("it simulates");
        assert!(!sim.races.is_empty());
        assert!(sim.races.iter().all(|r| r.fix.is_some()));
        assert!(sim.races.iter().any(|r| r
            .fix
            .as_deref()
            .is_some_and(|f| f.starts_with("auto orders it with a MTE2 -> V pair (RAW on t)"))));
        // With sync there is nothing to fix.
        let (_, sim) = run(
            example("elementwise"),
            &crate::protocol::options::playground(),
            0,
        );
        assert!(sim.expect("it simulates").0.races.is_empty());
    }

    #[test]
    fn without_sync_races_name_both_instructions() {
        let options = CompileOptions {
            sync: SyncStrategy::None,
            ..crate::protocol::options::playground()
        };
        let (_, sim) = run(example("elementwise"), &options, 0);
        let (sim, _) = sim.expect("it simulates");
        let race = sim.races.first().expect("races without sync");
        for side in [&race.first, &race.second] {
            assert!(!side.text.is_empty() && side.span.is_some() && side.access.is_some());
        }
        assert_ne!(race.first.pipe, race.second.pipe);
        assert!(race.first.first_cycle.is_some() || race.second.first_cycle.is_some());
        // The message names the tile; the place is the memory it is in.
        assert!(
            race.message.contains("`bias` (ub[0x0..0x400))"),
            "{}",
            race.message
        );
        assert_eq!(race.place, "ub");
    }

    #[test]
    fn an_assembly_lesson_runs_its_program_and_a_bad_one_is_a_diagnostic() {
        let lesson = crate::page::lessons::find("18-asm-race").expect("lesson 18");
        let options = crate::protocol::options::playground();
        let starter = Compiled::for_source(&lesson.starter, &options, true);
        let out = starter.output();
        assert_eq!(out.error_count(), 0, "{:?}", out.diagnostics);
        assert!(out.passes.is_empty() && !out.asm.is_empty());
        let (sim, _) = starter.simulate(1).expect("it simulates");
        assert!(sim.cycles > 0 && !sim.lanes.is_empty());
        assert!(
            !sim.races.is_empty(),
            "the starter's race shows on the timeline"
        );
        let (sim, _) = Compiled::for_source(&lesson.solution, &options, true)
            .simulate(1)
            .expect("it simulates");
        assert!(sim.races.is_empty() && sim.errors.is_empty());

        let bad = Compiled::for_source("nonsense r1", &options, true);
        assert!(bad.output().error_count() > 0);
        assert!(bad.simulate(1).is_none());
    }

    #[test]
    fn the_alias_option_reaches_insert_sync() {
        let cycles = |alias| {
            let options = CompileOptions {
                preset: Some("a3".into()),
                alias,
                ..crate::protocol::options::playground()
            };
            let (_, sim) = run(example("rmw"), &options, 0);
            let (sim, _) = sim.expect("it simulates");
            assert!(sim.reference_match && sim.races.is_empty());
            sim.cycles
        };
        let precise = cycles(crate::protocol::options::AliasMode::Precise);
        let coarse = cycles(crate::protocol::options::AliasMode::Coarse);
        assert!(coarse > precise, "coarse {coarse}, precise {precise}");
    }

    #[test]
    fn insert_syncs_notes_are_warnings() {
        let source = "kernel stream(x: f32[256, 16], y: out f32[256, 16]) {
    for r in 0..256 step 8 @buffers(16) {
        let t = load x[r .. r + 8, :];
        store y[r .. r + 8, :] = exp(t);
    }
}";
        let out = compile(source, &crate::protocol::options::playground());
        assert_eq!(out.error_count(), 0, "{:?}", out.diagnostics);
        let warning = out
            .diagnostics
            .iter()
            .find(|d| d.severity == tilescope::diag::Severity::Warning)
            .expect("a warning");
        assert!(
            warning
                .message
                .starts_with("insert-sync: event ids ran out"),
            "{}",
            warning.message
        );
        // An example that needs no fallback has none.
        let quiet = compile(
            example("elementwise"),
            &crate::protocol::options::playground(),
        );
        assert!(quiet.diagnostics.is_empty(), "{:?}", quiet.diagnostics);
    }

    #[test]
    fn every_set_and_wait_of_an_example_has_its_reason() {
        // Sync edges between two steps (a step's own pairs are labels on its box).
        let mut mapped = 0;
        for name in [
            "elementwise",
            "multibuffer",
            "matmul_tiled",
            "flash_attention",
        ] {
            let out = compile(example(name), &crate::protocol::options::playground());
            assert!(!out.syncs.is_empty(), "{name}");
            for (i, line) in out.asm.iter().enumerate() {
                let flag = line.text.starts_with("set_flag") || line.text.starts_with("wait_flag");
                let row = out.sync_of(i as u32);
                // Every set and wait, primes and drains included, has its pair.
                assert_eq!(flag, row.is_some(), "{name} #{i} {}", line.text);
                if let Some(r) = row {
                    assert!(line.text.contains(r.src.name()) && line.text.contains(r.dst.name()));
                }
            }
            let placed = out
                .syncs
                .iter()
                .filter(|r| r.set_index.is_some() && r.wait_index.is_some());
            assert_eq!(
                placed.count(),
                out.syncs.len(),
                "{name}: every pair is in the program"
            );
            assert!(out
                .syncs
                .iter()
                .any(|r| r.producer.line.is_some() && r.consumer.line.is_some()));
            // A sync edge of the step graph leads to a set_flag of its pair.
            let graph = out.steps.as_ref().expect("a step graph");
            let sync_edges: Vec<_> = graph
                .edges
                .iter()
                .filter(|e| e.kind == StepEdgeKind::Sync && e.from != e.to)
                .collect();
            mapped += sync_edges
                .iter()
                .filter(|e| out.set_flag_of(e.from, e.to).is_some())
                .count();
            for e in sync_edges {
                if let Some(i) = out.set_flag_of(e.from, e.to) {
                    assert!(out.asm[i as usize].text.starts_with("set_flag"));
                }
            }
        }
        assert!(
            mapped > 0,
            "no sync edge between steps leads to its set_flag"
        );
    }

    #[test]
    fn ablation_runs_without_each_optional_pass() {
        let ablation = ablate(
            example("elementwise"),
            &crate::protocol::options::playground(),
            0,
        );
        let passes: Vec<&str> = ablation.iter().map(|a| a.pass.as_str()).collect();
        assert_eq!(passes, tilescope::passes::optional_passes());
        let (_, sim) = run(
            example("elementwise"),
            &crate::protocol::options::playground(),
            0,
        );
        let with = sim.expect("it simulates").0.cycles;
        let without = ablation
            .iter()
            .find(|a| a.pass == "multi-buffer")
            .expect("multi-buffer");
        assert!(without.matches_reference && without.cycles > with);
    }
}
