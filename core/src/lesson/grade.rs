//! The grader: runs a submission on the lesson's input sets and compares it with the
//! reference solution, then awards a medal by simulated cycles. The CLI
//! (`tilescope lesson check`) and the playground share it, so a student sees the same
//! verdict in both.
//!
//! Correctness is judged on three input sets from fixed seeds, which a student can
//! reproduce with `tilescope run --seed N`, and one hidden set, so a submission cannot
//! pass by fitting the visible data. A kernel's outputs are compared with the reference
//! interpreter running the lesson's solution (the same oracle and tolerance as
//! `tilescope run`); an assembly program's with the solution program simulated on the
//! same inputs. A submission passes when every output matches on every set and the runs
//! have no race and no simulation error (flag misuse, deadlock, limits). The medal is
//! bronze for a pass, silver or gold when the worst set's cycles are within the lesson's
//! budget.
//!
//! Never panics and never runs unbounded: compile errors, malformed assembly and
//! simulation errors (the instruction limit included) are failed checks with a message.

use super::{Budgets, Lesson, LessonKind};
use crate::compile::{compile_with_context, CompileOptions};
use crate::diag;
use crate::front::{self, hir};
use crate::isa::{self, asm, Op, Program, Region};
use crate::machine::Machine;
use crate::sim::{self, InstrRef, Race, SimError, SimMode, SimResult};
use crate::tensor::{compare, Tensor};
use crate::types::DType;
use serde::{Deserialize, Serialize};

/// The seeds of the input sets a student can reproduce (`tilescope run --seed N`).
pub const SEEDS: [u64; 3] = [1, 2, 3];
/// The seed of the input set the student does not see. Fixed, so grading is
/// deterministic; only its position in the report is named, never its value.
const HIDDEN_SEED: u64 = 1009;

/// Dynamic instructions one graded run may simulate. The presets allow 10^7, which a
/// lesson never needs; a lower cap keeps a runaway submission (a huge loop in assembly)
/// to a fraction of a second per input set, in the browser too.
pub const GRADE_MAX_INSTRUCTIONS: u64 = 1_000_000;

/// Races and simulation errors listed in a message before the rest are only counted.
const MAX_LISTED: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Medal {
    Bronze,
    Silver,
    Gold,
}

impl Medal {
    pub fn name(self) -> &'static str {
        match self {
            Medal::Bronze => "bronze",
            Medal::Silver => "silver",
            Medal::Gold => "gold",
        }
    }
}

/// One thing the grader verified, with a message specific enough to act on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Check {
    pub name: String,
    pub passed: bool,
    pub message: String,
}

impl Check {
    fn new(name: impl Into<String>, passed: bool, message: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            passed,
            message: message.into(),
        }
    }
}

/// The verdict. `passed` is every check except `cycles`, which only says how far the
/// run is from the next medal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Grade {
    pub passed: bool,
    pub medal: Option<Medal>,
    /// Simulated cycles of the slowest input set, when every set ran to its end.
    pub cycles: Option<u64>,
    pub checks: Vec<Check>,
}

/// The name of the check that reports the medal; it does not count toward `passed`.
pub const CYCLES_CHECK: &str = "cycles";

impl Grade {
    fn push(&mut self, check: Check) {
        self.checks.push(check);
    }

    /// Sets `passed` from the checks and, for a pass, the medal and its check.
    fn finish(mut self, budgets: Budgets) -> Grade {
        self.passed = !self.checks.is_empty() && self.checks.iter().all(|c| c.passed);
        if let (true, Some(cycles)) = (self.passed, self.cycles) {
            let (medal, check) = medal(cycles, budgets);
            self.medal = Some(medal);
            self.push(check);
        }
        self
    }
}

/// A failure of the lesson itself (its solution does not compile or run): a test keeps
/// lessons from shipping this way, but a user never sees a panic for it either.
fn lesson_bug(mut grade: Grade, message: String) -> Grade {
    grade.push(Check::new(
        "lesson",
        false,
        format!("the lesson is broken, not your submission: {message}"),
    ));
    grade.passed = false;
    grade
}

fn medal(cycles: u64, b: Budgets) -> (Medal, Check) {
    if cycles <= b.gold {
        let msg = format!(
            "gold: {cycles} cycles, within the gold budget of {} cycles",
            b.gold
        );
        (Medal::Gold, Check::new(CYCLES_CHECK, true, msg))
    } else if cycles <= b.silver {
        let msg = format!(
            "silver: gold needs <= {} cycles; this run took {cycles}, {} over",
            b.gold,
            cycles - b.gold
        );
        (Medal::Silver, Check::new(CYCLES_CHECK, false, msg))
    } else {
        let msg = format!(
            "bronze: silver needs <= {} cycles; this run took {cycles}, {} over (gold needs <= {})",
            b.silver,
            cycles - b.silver,
            b.gold
        );
        (Medal::Bronze, Check::new(CYCLES_CHECK, false, msg))
    }
}

#[derive(Clone, Copy)]
struct InputSet {
    seed: u64,
    hidden: bool,
}

impl InputSet {
    fn all() -> impl Iterator<Item = InputSet> {
        SEEDS
            .iter()
            .map(|&seed| InputSet {
                seed,
                hidden: false,
            })
            .chain(std::iter::once(InputSet {
                seed: HIDDEN_SEED,
                hidden: true,
            }))
    }

    fn label(self) -> String {
        if self.hidden {
            "the hidden inputs".into()
        } else {
            format!("inputs {} (seed {})", self.seed, self.seed)
        }
    }

    fn check_name(self) -> String {
        if self.hidden {
            "outputs, hidden inputs".into()
        } else {
            format!("outputs, inputs {}", self.seed)
        }
    }
}

/// Grades `submission` for `lesson`. Never panics; every problem is a failed check.
pub fn grade(lesson: &Lesson, submission: &str) -> Grade {
    let Some(mut machine) = Machine::preset(&lesson.preset) else {
        return lesson_bug(
            Grade::default(),
            format!("unknown machine preset `{}`", lesson.preset),
        );
    };
    machine.limits.max_instructions = machine.limits.max_instructions.min(GRADE_MAX_INSTRUCTIONS);
    let grade = match lesson.kind {
        LessonKind::Kernel => grade_kernel(lesson, &machine, submission),
        LessonKind::Asm => grade_asm(lesson, &machine, submission),
    };
    if grade.checks.iter().any(|c| c.name == "lesson") {
        return grade;
    }
    grade.finish(lesson.budgets)
}

// ---------------------------------------------------------------- kernels

fn grade_kernel(lesson: &Lesson, machine: &Machine, submission: &str) -> Grade {
    let mut grade = Grade::default();
    let reference = match front::frontend(&lesson.solution, None) {
        Ok(k) => k,
        Err(d) => {
            let text = diag::render(&d, "solution.tile", &lesson.solution);
            return lesson_bug(
                grade,
                format!("the reference solution does not compile:\n{text}"),
            );
        }
    };
    let options = CompileOptions {
        preset: Some(lesson.preset.clone()),
        machine: Some(machine.clone()),
        auto_multi_buffer: lesson.auto_buffers,
        ..CompileOptions::default()
    };
    let (compile, cx) = compile_with_context(submission, &options);
    let compiled = match (compile.ok(), cx.hir.as_ref(), compile.program.as_ref()) {
        (true, Some(hir), Some(program)) => Some((hir, program)),
        _ => None,
    };
    let Some((hir, program)) = compiled else {
        let mut text = diag::render(
            &compile.diagnostics,
            LessonKind::Kernel.file_name(),
            submission,
        );
        if text.is_empty() {
            text = "the compiler produced no program".into();
        }
        grade.push(Check::new("compiles", false, text.trim_end()));
        return grade;
    };
    grade.push(Check::new(
        "compiles",
        true,
        format!(
            "compiled for {}: {} instructions",
            machine.name,
            program.instrs.len()
        ),
    ));
    let expected: Vec<Signature> = reference.params.iter().map(Signature::param).collect();
    let actual: Vec<Signature> = hir.params.iter().map(Signature::param).collect();
    let same = signature_check("parameters", "parameter", &expected, &actual);
    let same_params = same.passed;
    grade.push(same);
    if !same_params {
        return grade;
    }
    let locate = Locator::Kernel(submission);
    let mut runs = Runs::default();
    for set in InputSet::all() {
        let inputs = match crate::inputs::prepare(&reference, Vec::new(), set.seed) {
            Ok(t) => t,
            Err(d) => return lesson_bug(grade, d.message),
        };
        let mut expected = inputs.clone();
        if let Err(d) = crate::interp::run(&reference, &mut expected) {
            return lesson_bug(
                grade,
                format!(
                    "the reference solution fails on {}: {}",
                    set.label(),
                    d.message
                ),
            );
        }
        let inputs = crate::inputs::with_scratch(program, inputs);
        let sim = sim::simulate(program, machine, inputs, graded_mode());
        let outputs: Vec<(&str, &Tensor, Option<&Tensor>)> = reference
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_out)
            .filter_map(|(i, p)| {
                let e = expected.get(i)?;
                Some((p.name.as_str(), e, sim.outputs.get(i).map(|o| &o.tensor)))
            })
            .collect();
        let stop = runs.record(set, &sim, &outputs);
        if stop {
            break;
        }
    }
    runs.into_checks(&mut grade, &locate);
    grade
}

fn graded_mode() -> SimMode {
    // No trace: the grade needs totals, races and errors, which are kept without it.
    SimMode {
        functional: true,
        trace: false,
    }
}

// ---------------------------------------------------------------- assembly

fn grade_asm(lesson: &Lesson, machine: &Machine, submission: &str) -> Grade {
    let mut grade = Grade::default();
    let reference = match asm::parse(&lesson.solution) {
        Ok(p) => p,
        Err(d) => {
            let text = diag::render(&d, "solution.tasm", &lesson.solution);
            return lesson_bug(
                grade,
                format!("the reference solution does not assemble:\n{text}"),
            );
        }
    };
    let program = match asm::parse(submission) {
        Ok(p) => p,
        Err(d) => {
            let text = diag::render(&d, LessonKind::Asm.file_name(), submission);
            grade.push(Check::new("assembles", false, text.trim_end()));
            return grade;
        }
    };
    grade.push(Check::new(
        "assembles",
        true,
        format!("{} instructions", program.instrs.len()),
    ));
    let expected: Vec<Signature> = reference.tensors.iter().map(Signature::decl).collect();
    let actual: Vec<Signature> = program.tensors.iter().map(Signature::decl).collect();
    let same = signature_check("tensors", "tensor", &expected, &actual);
    let same_tensors = same.passed;
    grade.push(same);
    if !same_tensors {
        return grade;
    }
    let written = written_tensors(&reference);
    let locate = Locator::Asm(instruction_lines(submission));
    let mut runs = Runs::default();
    for set in InputSet::all() {
        let inputs = match crate::inputs::for_program(&reference, set.seed) {
            Ok(t) => t,
            Err(e) => return lesson_bug(grade, e),
        };
        let expected = sim::simulate(&reference, machine, inputs.clone(), graded_mode());
        if let Some(e) = expected.errors.first() {
            return lesson_bug(
                grade,
                format!("the reference solution fails: {}", e.message),
            );
        }
        if let Some(r) = expected.races.first() {
            return lesson_bug(
                grade,
                format!("the reference solution races: {}", r.message),
            );
        }
        let sim = sim::simulate(&program, machine, inputs, graded_mode());
        let outputs: Vec<(&str, &Tensor, Option<&Tensor>)> = written
            .iter()
            .filter_map(|&t| {
                let out = expected.outputs.get(t)?;
                Some((out.name.as_str(), &out.tensor, sim.output(&out.name)))
            })
            .collect();
        let stop = runs.record(set, &sim, &outputs);
        if stop {
            break;
        }
    }
    runs.into_checks(&mut grade, &locate);
    grade
}

/// The GM tensors `program` writes (DMA, FIX and scatter destinations), in declaration
/// order: what a submission must reproduce. Tensors only read are the inputs.
fn written_tensors(program: &Program) -> Vec<usize> {
    let mut written = vec![false; program.tensors.len()];
    for ins in &program.instrs {
        let region = match &ins.op {
            Op::Dma { dst, .. } | Op::Scatter { dst, .. } => dst.region,
            Op::Fix { dst, .. } => dst.addr.region,
            _ => continue,
        };
        if let Region::Tensor(t) = region {
            if let Some(w) = written.get_mut(t as usize) {
                *w = true;
            }
        }
    }
    (0..written.len()).filter(|&t| written[t]).collect()
}

/// The 1-based line of each instruction of assembly text that parsed, in order. It
/// follows `asm::parse`'s rule: a line holds one instruction unless, without its `;`
/// comment, it is blank or a `.` directive.
fn instruction_lines(text: &str) -> Vec<(usize, &str)> {
    text.split_inclusive('\n')
        .enumerate()
        .filter_map(|(i, raw)| {
            let code = raw.split(';').next().unwrap_or("").trim();
            (!code.is_empty() && !code.starts_with('.')).then_some((i + 1, code))
        })
        .collect()
}

// ---------------------------------------------------------------- shared

/// A parameter or declared tensor as the grader compares them.
#[derive(PartialEq)]
struct Signature {
    name: String,
    is_out: bool,
    dtype: DType,
    shape: Vec<u64>,
}

impl Signature {
    fn param(p: &hir::Param) -> Signature {
        Signature {
            name: p.name.clone(),
            is_out: p.is_out,
            dtype: p.ty.dtype,
            shape: p.ty.shape.clone(),
        }
    }

    fn decl(d: &isa::TensorDecl) -> Signature {
        Signature {
            name: d.name.clone(),
            is_out: false,
            dtype: d.dtype,
            shape: d.shape.clone(),
        }
    }

    fn text(&self) -> String {
        let ty = crate::types::TileType::new(self.dtype, self.shape.clone());
        let out = if self.is_out { "out " } else { "" };
        format!("`{}: {out}{ty}`", self.name)
    }
}

/// Whether `actual` declares exactly `expected`, in order; otherwise each difference.
fn signature_check(name: &str, what: &str, expected: &[Signature], actual: &[Signature]) -> Check {
    let mut diffs = Vec::new();
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e != a {
            diffs.push(format!(
                "{what} {} is {} but the lesson expects {}",
                i + 1,
                a.text(),
                e.text()
            ));
        }
    }
    for e in expected.iter().skip(actual.len()) {
        diffs.push(format!("{what} {} is missing", e.text()));
    }
    for a in actual.iter().skip(expected.len()) {
        diffs.push(format!("{what} {} is not in the lesson", a.text()));
    }
    if diffs.is_empty() {
        let list: Vec<String> = expected.iter().map(Signature::text).collect();
        Check::new(
            name,
            true,
            format!("as the lesson declares: {}", list.join(", ")),
        )
    } else {
        let list: Vec<String> = expected.iter().map(Signature::text).collect();
        Check::new(
            name,
            false,
            format!(
                "{}; the lesson's {what}s are, in order: {}",
                diffs.join("; "),
                list.join(", ")
            ),
        )
    }
}

/// Where an instruction came from in the submission.
enum Locator<'a> {
    /// Kernel source: instructions carry the span of the source they were compiled from.
    Kernel(&'a str),
    /// Assembly: instruction k is the k-th instruction line.
    Asm(Vec<(usize, &'a str)>),
}

impl Locator<'_> {
    fn describe(&self, r: &InstrRef) -> String {
        let place = match self {
            Locator::Kernel(source) => r.prov.span.map(|s| {
                let at = s.line_col(source);
                format!("from line {}: `{}`", at.line, at.line_text(source).trim())
            }),
            Locator::Asm(lines) => lines
                .get(r.index as usize)
                .map(|(line, _)| format!("at line {line}")),
        };
        match place {
            Some(p) => format!("#{} `{}` ({}, {p})", r.index, r.text, r.pipe),
            None => format!("#{} `{}` ({})", r.index, r.text, r.pipe),
        }
    }

    fn race(&self, race: &Race) -> String {
        let times = if race.count > 1 {
            format!(" ({} times)", race.count)
        } else {
            String::new()
        };
        format!(
            "{}{times}\n  {}\n  {}",
            race.message,
            self.describe(&race.first.instr),
            self.describe(&race.second.instr)
        )
    }

    fn error(&self, e: &SimError) -> String {
        let mut text = e.message.clone();
        for r in e.instr.iter().chain(&e.related) {
            text.push_str("\n  ");
            text.push_str(&self.describe(r));
        }
        text
    }
}

/// What the runs over the input sets found.
#[derive(Default)]
struct Runs {
    outputs: Vec<Check>,
    /// Races of the first run that had any (the detector does not depend on timing, so
    /// every set reports the same ones).
    races: Vec<Race>,
    errors: Option<(String, Vec<SimError>)>,
    cycles: Option<u64>,
    complete: bool,
}

impl Runs {
    /// Records one run; true when the remaining sets should not run (a simulation
    /// error, which would only repeat).
    fn record(
        &mut self,
        set: InputSet,
        sim: &SimResult,
        outputs: &[(&str, &Tensor, Option<&Tensor>)],
    ) -> bool {
        if self.races.is_empty() {
            self.races = sim.races.clone();
        }
        if !sim.errors.is_empty() {
            self.errors = Some((set.label(), sim.errors.clone()));
            self.outputs.push(Check::new(
                set.check_name(),
                false,
                format!(
                    "the simulation of {} stopped with an error, so its outputs were not compared",
                    set.label()
                ),
            ));
            self.complete = false;
            return true;
        }
        self.cycles = Some(self.cycles.unwrap_or(0).max(sim.cycles));
        self.complete = true;
        let mut problems = Vec::new();
        for &(name, expected, actual) in outputs {
            match actual {
                Some(a) => {
                    if let Some(p) = mismatch(name, expected, a) {
                        problems.push(p);
                    }
                }
                None => problems.push(format!("`{name}` is missing from the result")),
            }
        }
        let names: Vec<String> = outputs.iter().map(|(n, _, _)| format!("`{n}`")).collect();
        let check = if problems.is_empty() {
            Check::new(
                set.check_name(),
                true,
                format!(
                    "{} {} the reference on {} ({} cycles)",
                    names.join(", "),
                    if names.len() == 1 { "matches" } else { "match" },
                    set.label(),
                    sim.cycles
                ),
            )
        } else {
            Check::new(
                set.check_name(),
                false,
                format!("on {}: {}", set.label(), problems.join("; ")),
            )
        };
        self.outputs.push(check);
        false
    }

    /// The checks in the order a reader wants them: a simulation error or a race
    /// explains wrong outputs, so they come first.
    fn into_checks(self, grade: &mut Grade, locate: &Locator) {
        let races = if self.races.is_empty() {
            Check::new(
                "no races",
                true,
                "every pair of accesses from two pipes is ordered",
            )
        } else {
            let mut listed: Vec<String> = self
                .races
                .iter()
                .take(MAX_LISTED)
                .map(|r| locate.race(r))
                .collect();
            if self.races.len() > MAX_LISTED {
                listed.push(format!("and {} more", self.races.len() - MAX_LISTED));
            }
            Check::new(
                "no races",
                false,
                format!(
                    "{} race{}: {}",
                    self.races.len(),
                    if self.races.len() == 1 { "" } else { "s" },
                    listed.join("\n")
                ),
            )
        };
        grade.push(races);
        let errors = match self.errors {
            None => Check::new(
                "no simulation errors",
                true,
                "every flag set was consumed, no pipe deadlocked, no limit was reached",
            ),
            Some((label, errors)) => {
                let mut listed: Vec<String> = errors
                    .iter()
                    .take(MAX_LISTED)
                    .map(|e| locate.error(e))
                    .collect();
                if errors.len() > MAX_LISTED {
                    listed.push(format!("and {} more", errors.len() - MAX_LISTED));
                }
                Check::new(
                    "no simulation errors",
                    false,
                    format!("on {label}: {}", listed.join("\n")),
                )
            }
        };
        grade.push(errors);
        grade.checks.extend(self.outputs);
        if self.complete {
            grade.cycles = self.cycles;
        }
    }
}

/// Why `actual` does not match `expected`, or `None` when it does (the tolerance of
/// `tensor::compare`, the one `tilescope run` uses).
fn mismatch(name: &str, expected: &Tensor, actual: &Tensor) -> Option<String> {
    let c = compare(expected, actual);
    if c.matches {
        return None;
    }
    if expected.dtype != actual.dtype || expected.shape != actual.shape {
        let e = crate::types::TileType::new(expected.dtype, expected.shape.clone());
        let a = crate::types::TileType::new(actual.dtype, actual.shape.clone());
        return Some(format!("`{name}` is {a} but the reference is {e}"));
    }
    let i = c.first_mismatch.unwrap_or(0);
    let value = |t: &Tensor| {
        if i >= t.len() {
            return "?".to_string();
        }
        match t.dtype {
            DType::I32 => t.get_i32(i).to_string(),
            _ => t.get(i).to_string(),
        }
    };
    Some(format!(
        "`{name}` differs from the reference at {}: expected {}, got {} ({} of {} elements differ)",
        multi_index(i, &expected.shape),
        value(expected),
        value(actual),
        c.mismatches,
        expected.len()
    ))
}

/// `[3, 17]` for flat index 209 of a `[*, 64]` tensor (row-major).
fn multi_index(flat: usize, shape: &[u64]) -> String {
    let mut rest = flat as u64;
    let mut index = vec![0u64; shape.len()];
    for (slot, &d) in index.iter_mut().zip(shape).rev() {
        if let (Some(r), Some(q)) = (rest.checked_rem(d), rest.checked_div(d)) {
            *slot = r;
            rest = q;
        }
    }
    let parts: Vec<String> = index.iter().map(u64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_index_is_row_major() {
        assert_eq!(multi_index(209, &[16, 64]), "[3, 17]");
        assert_eq!(multi_index(0, &[4]), "[0]");
        assert_eq!(multi_index(23, &[2, 3, 4]), "[1, 2, 3]");
    }

    #[test]
    fn instruction_lines_skip_comments_blanks_and_directives() {
        let text = "; header\n.tensor x f32[8]\n\n  mov r1, 1 ; one\nadd r1, r1, 1\n";
        let lines: Vec<usize> = instruction_lines(text).iter().map(|l| l.0).collect();
        assert_eq!(lines, vec![4, 5]);
    }

    #[test]
    fn medals_follow_the_budgets() {
        let b = Budgets {
            silver: 1400,
            gold: 1050,
        };
        assert_eq!(medal(1000, b).0, Medal::Gold);
        let (m, c) = medal(1200, b);
        assert_eq!(m, Medal::Silver);
        assert!(c
            .message
            .contains("gold needs <= 1050 cycles; this run took 1200, 150 over"));
        let (m, c) = medal(1500, b);
        assert_eq!(m, Medal::Bronze);
        assert!(c
            .message
            .contains("silver needs <= 1400 cycles; this run took 1500, 100 over"));
    }
}
