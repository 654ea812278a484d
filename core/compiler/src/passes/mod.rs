//! The pass manager: a context holding the kernel in its current forms and a linear list
//! of passes (Cranelift style). After each pass the manager records the printed form
//! of the most lowered representation present, whether it changed, and how long the
//! pass took, and (when asked) verifies it.

pub mod accumulate;
pub mod axis_split;
pub mod buffer_depth;
pub mod canonicalize;
pub mod cost;
pub mod decompose_transfer;
pub mod emit;
pub mod fix_to_gm;
pub mod form_steps;
pub mod lower;
pub mod multi_buffer;
pub mod out_of_ssa;
pub mod peel;
pub mod plan_memory;
pub mod provenance;
pub mod relayout;
pub mod schedule;
pub mod scope;
pub mod sink;
pub mod software_pipeline;
pub mod stage;
pub mod subtile;
pub mod sync;
pub mod vector_peephole;

use crate::diag::{Diagnostic, Diagnostics, Span, VerifierErrors};
use crate::front::{self, hir};
use crate::ir::{self, Printed};
use serde::{Deserialize, Serialize};
pub use stage::{AnyPass, Stage};

/// A clock in milliseconds. Injected because `std::time::Instant` panics on
/// wasm32-unknown-unknown; the browser passes `performance.now()`.
pub type Clock = fn() -> f64;

/// Milliseconds since the first call, from `Instant`; the native default clock.
#[cfg(not(target_arch = "wasm32"))]
pub fn native_clock() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
        * 1000.0
}

/// The clock used when the caller injects none: `Instant` natively, none on wasm32.
pub fn default_clock() -> Option<Clock> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        Some(native_clock)
    }
    #[cfg(target_arch = "wasm32")]
    {
        None
    }
}

/// Everything passes read and write. Each representation is optional and set by the
/// pass that produces it; later representations (the per-pipe program of passes 9-11)
/// are added as further optional fields, checked first by `print` and `verify`.
#[derive(Clone, Debug, Default)]
pub struct Context {
    pub source: String,
    /// The source parsed, with the parser's diagnostics, when the driver parsed it
    /// already (for the kernel list); the parse pass takes it instead of parsing again.
    pub parsed: Option<(front::ast::File, Diagnostics)>,
    /// The kernel to compile; the first of the file when `None`.
    pub kernel_name: Option<String>,
    pub hir: Option<hir::Kernel>,
    pub ir: Option<ir::Kernel>,
    /// The per-pipe program, from lower-to-pipes on.
    pub lowered: Option<crate::lowered::Lowered>,
    /// The final program, from emit on.
    pub program: Option<crate::isa::Program>,
    /// How insert-sync orders the pipes.
    pub sync: crate::passes::sync::SyncStrategy,
    /// What insert-sync knows about aliasing.
    pub alias: crate::passes::sync::AliasMode,
    /// The target; `None` means the default preset (`a3`).
    pub machine: Option<crate::machine::Machine>,
    /// What insert-sync inserted, once it ran.
    pub sync_report: Option<sync::SyncReport>,
    /// For each instruction of `program`, the item of the lowered program it came from
    /// (set by emit; `provenance` follows printed lines through it).
    pub program_origin: Vec<ir::LineItem>,
    /// Let multi-buffer double-buffer innermost loops without `@buffers`.
    pub auto_multi_buffer: bool,
    /// The optional passes this compile leaves out, so a pass that runs part of the
    /// pipeline again ([`between`]) runs the same passes the compile does.
    pub disabled_passes: Vec<String>,
    /// What the running pass left as written and why ([`Context::note`]); the manager
    /// moves them into the pass's record.
    pub notes: Vec<PassNote>,
}

impl Context {
    /// Records that the running pass left something as written, and why, at `span`:
    /// a pass that declines a region says so instead of skipping it silently.
    pub fn note(&mut self, span: Span, message: impl Into<String>) {
        self.notes.push(PassNote {
            at: span.line_col(&self.source).to_string(),
            span: Some(span),
            message: message.into(),
        });
    }

    pub fn new(source: impl Into<String>, kernel_name: Option<String>) -> Context {
        Context {
            source: source.into(),
            kernel_name,
            ..Context::default()
        }
    }

    /// Whether insert-sync will place set/wait pairs (`--sync auto`), as opposed to
    /// barriers or nothing.
    pub fn auto_sync(&self) -> bool {
        self.sync == sync::SyncStrategy::Auto
    }

    /// The target machine: the one set, or the default preset.
    pub fn machine(&self) -> crate::machine::Machine {
        self.machine
            .clone()
            .unwrap_or_else(crate::machine::default_machine)
    }

    /// The printed form of the most lowered representation present.
    pub fn print(&self) -> Printed {
        if let Some(p) = &self.program {
            return print_program(p, &self.source);
        }
        if let Some(l) = &self.lowered {
            return crate::lowered::print(l);
        }
        match &self.ir {
            Some(k) => ir::print_located(k, &self.source),
            None => Printed::default(),
        }
    }

    /// Verifies the most lowered representation present.
    pub fn verify(&self) -> Result<(), VerifierErrors> {
        if let Some(p) = &self.program {
            return p.validate();
        }
        if let Some(k) = &self.ir {
            ir::verify(k)?;
            // Once addresses exist, check them (the IR no longer changes after
            // plan-memory, so once is enough).
            if self.lowered.is_none() && ir::verify_plan::is_planned(k) {
                ir::verify_plan::verify_plan(k, &self.machine(), &self.source)?;
            }
        }
        // After lower-to-pipes and insert-sync (emit sets `program`, checked above).
        if let Some(l) = &self.lowered {
            crate::lowered::verify::verify(l)?;
        }
        Ok(())
    }

    /// The lowered program, or an internal error naming `pass` when no pass produced it.
    pub fn lowered_mut(&mut self, pass: &str) -> Result<&mut crate::lowered::Lowered, Diagnostics> {
        self.lowered.as_mut().ok_or_else(|| {
            vec![Diagnostic::global(format!(
                "internal error: pass `{pass}` needs the lowered program"
            ))]
        })
    }

    /// The tile IR, or an internal error naming `pass` when no pass produced it yet.
    pub fn ir_mut(&mut self, pass: &str) -> Result<&mut ir::Kernel, Diagnostics> {
        self.ir.as_mut().ok_or_else(|| {
            vec![Diagnostic::global(format!(
                "internal error: pass `{pass}` needs the tile IR"
            ))]
        })
    }
}

/// The final assembly, with each line's source span.
fn print_program(program: &crate::isa::Program, source: &str) -> Printed {
    let text = crate::isa::asm::print_located(program, source);
    let mut spans: Vec<Option<crate::diag::Span>> = program.tensors.iter().map(|_| None).collect();
    spans.extend(program.instrs.iter().map(|i| i.prov.span));
    let mut items: Vec<Option<ir::LineItem>> = program.tensors.iter().map(|_| None).collect();
    items.extend((0..program.instrs.len()).map(|i| Some(ir::LineItem::Instr(i as u32))));
    Printed { text, spans, items }
}

/// A pass. Lists hold passes as [`AnyPass`], which every `Pass` is.
pub trait Pass {
    /// The stage the pass reads.
    type In: stage::IsStage;
    /// The stage the pass leaves.
    type Out: stage::IsStage;
    fn name(&self) -> &'static str;
    /// One line for the playground's pass list.
    fn description(&self) -> &'static str;
    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics>;
    /// Whether the pass only makes the code faster: without it (`--disable-pass`) the
    /// program is still correct, so its effect can be measured by turning it off.
    fn optional(&self) -> bool {
        false
    }
}

/// The names of the passes that `--disable-pass` may turn off, in pipeline order: those
/// whose `Pass::optional` says so (a test holds the two equal). A list rather than a
/// walk over `pipeline()`, so a reader of names (the playground's page, share links)
/// does not link every pass.
pub const OPTIONAL_PASSES: [&str; 8] = [
    "vector-peephole",
    "subtile-matmul",
    "fix-to-gm",
    "software-pipeline",
    "peel-first",
    "sink-to-use",
    "multi-buffer",
    "list-schedule",
];

/// `OPTIONAL_PASSES` as a list.
pub fn optional_passes() -> Vec<&'static str> {
    OPTIONAL_PASSES.to_vec()
}

/// A list the compiler built out of order is its own bug, not the user's.
fn internal(d: Diagnostic) -> Diagnostic {
    Diagnostic::global(format!("internal error: {}", d.message))
}

/// The passes of the pipeline without `disabled` strictly between the passes named
/// `after` and `before`: what a pass that tries a change runs on a copy to see whether
/// the rest of the compile takes it (software-pipeline). Names that are not passes of
/// that pipeline, in that order, are an internal error, never an empty range.
pub fn between(
    after: &str,
    before: &str,
    disabled: &[String],
) -> Result<Vec<Box<dyn AnyPass>>, Diagnostic> {
    let mut passes = pipeline_without(disabled)?;
    let at = |passes: &[Box<dyn AnyPass>], name: &str| passes.iter().position(|p| p.name() == name);
    match (at(&passes, after), at(&passes, before)) {
        (Some(a), Some(b)) if a < b => {
            // `a` is a position in `passes`.
            let from = passes[a].makes();
            passes.truncate(b);
            let range = passes.split_off(a + 1);
            stage::check_order(&range, from).map_err(internal)?;
            Ok(range)
        }
        _ => Err(Diagnostic::global(format!(
            "internal error: no passes between `{after}` and `{before}` in this pipeline"
        ))),
    }
}

/// The rest of the compile that a pass tries a change against: the passes from just
/// after it up to (not including) `until`, as this compile runs them (`between`), with
/// the compile's machine and options. Software-pipeline and multi-buffer keep a change
/// only where it `succeeds`.
pub struct Trial {
    passes: Vec<Box<dyn AnyPass>>,
    machine: crate::machine::Machine,
    auto_multi_buffer: bool,
}

impl Trial {
    pub fn new(cx: &Context, pass: &str, until: &str) -> Result<Trial, Diagnostics> {
        Ok(Trial {
            passes: between(pass, until, &cx.disabled_passes).map_err(|d| vec![d])?,
            machine: cx.machine(),
            auto_multi_buffer: cx.auto_multi_buffer,
        })
    }

    /// Whether every pass of the trial succeeds on `kernel`, a copy: the passes are
    /// deterministic, so they make the same choices on the real kernel afterwards.
    pub fn succeeds(&self, kernel: ir::Kernel) -> bool {
        let mut cx = Context {
            ir: Some(kernel),
            machine: Some(self.machine.clone()),
            auto_multi_buffer: self.auto_multi_buffer,
            ..Context::default()
        };
        self.passes.iter().all(|p| p.run(&mut cx).is_ok())
    }
}

/// The pipeline without the passes named in `disabled`; a name that is not an
/// optional pass is an error that lists the optional ones.
pub fn pipeline_without(disabled: &[String]) -> Result<Vec<Box<dyn AnyPass>>, Diagnostic> {
    let all = pipeline();
    for name in disabled {
        let known = all.iter().find(|p| p.name() == name.as_str());
        if !known.is_some_and(|p| p.optional()) {
            let why = if known.is_some() {
                "is needed for a correct program"
            } else {
                "is not a pass"
            };
            return Err(Diagnostic::global(format!(
                "`{}` {why}; the passes that can be disabled are: {}",
                crate::front::lexer::truncate(name),
                optional_passes().join(", ")
            )));
        }
    }
    let kept: Vec<Box<dyn AnyPass>> = all
        .into_iter()
        .filter(|p| !disabled.iter().any(|d| d == p.name()))
        .collect();
    // Only passes that keep the stage are optional, so this holds; a list that broke
    // it would fail here, before any pass runs.
    stage::check_order(&kept, Stage::Source).map_err(internal)?;
    Ok(kept)
}

/// A pass's note on what it left as written and why, at the source it concerns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct PassNote {
    pub span: Option<Span>,
    /// `LINE:COL` of `span`.
    pub at: String,
    pub message: String,
}

/// What the manager records after each pass.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct PassRecord {
    pub name: String,
    pub description: String,
    /// The printed IR after the pass.
    pub ir: String,
    /// Each line of `ir`: its source span and the final instructions it became.
    pub lines: Vec<provenance::IrLine>,
    /// The text differs from the previous pass's.
    pub changed: bool,
    pub micros: u64,
    /// What the pass left as written and why.
    pub notes: Vec<PassNote>,
}

pub struct PassManager {
    pub passes: Vec<Box<dyn AnyPass>>,
    /// Verify after every pass (always on in debug builds).
    pub verify: bool,
    pub clock: Option<Clock>,
}

/// Every pass, in order.
pub fn pipeline() -> Vec<Box<dyn AnyPass>> {
    // `Chain` checks the order at compile time: each pass reads what the one before left.
    stage::Chain::new()
        .then(ParsePass)
        .then(canonicalize::Canonicalize)
        .then(vector_peephole::VectorPeephole)
        .then(axis_split::AxisSplit)
        .then(relayout::Relayout)
        .then(subtile::SubtileMatmul)
        .then(scope::ScopeInference)
        .then(fix_to_gm::FixToGm)
        .then(software_pipeline::SoftwarePipeline)
        .then(peel::PeelFirst)
        .then(sink::SinkToUse)
        .then(form_steps::FormSteps)
        .then(decompose_transfer::DecomposeTransfer)
        .then(multi_buffer::MultiBuffer)
        .then(out_of_ssa::OutOfSsa)
        .then(plan_memory::PlanMemory)
        .then(lower::LowerToPipes)
        .then(schedule::ListSchedule)
        .then(sync::InsertSync)
        .then(emit::Emit)
        .build()
}

impl PassManager {
    pub fn new(passes: Vec<Box<dyn AnyPass>>, verify: bool, clock: Option<Clock>) -> PassManager {
        PassManager {
            passes,
            verify,
            clock,
        }
    }

    /// Runs the passes in order, stopping at the first that fails. Returns the records of
    /// every pass that ran to completion, and the first failure.
    pub fn run(&self, cx: &mut Context) -> (Vec<PassRecord>, Result<(), Diagnostics>) {
        let mut records: Vec<PassRecord> = Vec::new();
        // What each line of each record prints, lowered items in the numbering of the
        // current lowered program.
        let mut items: Vec<Vec<Option<ir::LineItem>>> = Vec::new();
        let outcome = self.run_recorded(cx, &mut records, &mut items);
        if let Some(program) = &cx.program {
            let texts: Vec<&str> = records.iter().map(|r| r.ir.as_str()).collect();
            let links = provenance::link(&items, &texts, program, &cx.program_origin);
            for (record, links) in records.iter_mut().zip(links) {
                for (line, instrs) in record.lines.iter_mut().zip(links) {
                    line.instrs = instrs;
                }
            }
        }
        (records, outcome)
    }

    fn run_recorded(
        &self,
        cx: &mut Context,
        records: &mut Vec<PassRecord>,
        items: &mut Vec<Vec<Option<ir::LineItem>>>,
    ) -> Result<(), Diagnostics> {
        let now = || self.clock.map_or(0.0, |c| c());
        for pass in &self.passes {
            // The pass reads what it says it reads and leaves what it says it leaves:
            // `Chain` and `check_order` order the list, this checks the passes.
            let stage = |cx: &Context, expected: Stage, when: &str| {
                let at = Stage::of(cx);
                (at != expected).then(|| {
                    vec![Diagnostic::global(format!(
                        "internal error: {when} pass `{}` the program is the {}, not the {}",
                        pass.name(),
                        at.name(),
                        expected.name()
                    ))]
                })
            };
            if let Some(d) = stage(cx, pass.needs(), "before") {
                return Err(d);
            }
            let start = now();
            // A pass that rewrites the lowered program renumbers its items.
            let lowered_before = cx.program.is_none().then(|| cx.lowered.clone()).flatten();
            pass.run(cx)?;
            let elapsed_ms = (now() - start).max(0.0);
            if let Some(d) = stage(cx, pass.makes(), "after") {
                return Err(d);
            }
            if let (Some(before), Some(after), None) = (&lowered_before, &cx.lowered, &cx.program) {
                if before != after {
                    let map = provenance::renumbering(before, after);
                    for lines in items.iter_mut() {
                        provenance::renumber(lines, map.as_deref());
                    }
                }
            }
            let printed = cap_dump(cx.print());
            let changed = records.last().is_none_or(|prev| prev.ir != printed.text);
            items.push(printed.items);
            records.push(PassRecord {
                name: pass.name().to_string(),
                description: pass.description().to_string(),
                ir: printed.text,
                lines: printed
                    .spans
                    .into_iter()
                    .map(|span| provenance::IrLine {
                        span,
                        instrs: Vec::new(),
                    })
                    .collect(),
                changed,
                micros: (elapsed_ms * 1000.0) as u64,
                notes: std::mem::take(&mut cx.notes),
            });
            if self.verify || cfg!(debug_assertions) {
                if let Err(errors) = cx.verify() {
                    let mut d = Diagnostic::global(format!(
                        "internal error: the IR after pass `{}` does not verify",
                        pass.name()
                    ));
                    for e in &errors {
                        d = d.with_note(match e.span {
                            Some(span) => format!("{e} (line {})", span.line_col(&cx.source)),
                            None => e.to_string(),
                        });
                    }
                    return Err(vec![d]);
                }
            }
        }
        Ok(())
    }
}

/// Cuts a pass dump longer than `MAX_PASS_DUMP_BYTES` at a line boundary and appends a
/// marker line naming the limit, so one huge kernel cannot make every pass of the list
/// carry megabytes of text to the page.
pub fn cap_dump(mut printed: Printed) -> Printed {
    use crate::limits::MAX_PASS_DUMP_BYTES;
    if printed.text.len() <= MAX_PASS_DUMP_BYTES {
        return printed;
    }
    let total = printed.text.len();
    // Lines are `\n`-terminated, so the cut after the last whole line is a char boundary.
    let cut = printed
        .text
        .as_bytes()
        .get(..MAX_PASS_DUMP_BYTES)
        .unwrap_or_default()
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    printed.text.truncate(cut);
    let lines = printed.text.lines().count();
    printed.spans.truncate(lines);
    printed.items.truncate(lines);
    printed.text.push_str(&format!(
        "; ... truncated: the dump is {total} bytes, over the limit of {MAX_PASS_DUMP_BYTES} (MAX_PASS_DUMP_BYTES)\n"
    ));
    printed.spans.push(None);
    printed.items.push(None);
    printed
}

/// Pass 1: source -> checked kernel -> tile IR.
pub struct ParsePass;

impl Pass for ParsePass {
    type In = crate::passes::stage::Source;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "parse"
    }

    fn description(&self) -> &'static str {
        "parse and type-check the source, then lower it to the tile IR"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let (file, diags) = cx.parsed.take().unwrap_or_else(|| front::parse(&cx.source));
        let hir = front::frontend_parsed(&file, diags, cx.kernel_name.as_deref())?;
        let ir = ir::lower::lower(&hir)?;
        let ops = ir.ops.len();
        if ops > crate::limits::MAX_IR_OPS {
            return Err(vec![Diagnostic::error(
                format!(
                    "the kernel has {ops} operations; the limit is {} (MAX_IR_OPS): split it",
                    crate::limits::MAX_IR_OPS
                ),
                hir.span,
            )]);
        }
        cx.ir = Some(ir);
        cx.hir = Some(hir);
        Ok(())
    }
}
