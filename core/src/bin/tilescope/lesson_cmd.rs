//! `tilescope lesson`: list the lessons, show one, and grade a solution with the same
//! grader the playground uses.

use crate::io::{self, print_json};
use crate::Failed;
use serde::Serialize;
use std::path::PathBuf;
use tilescope::lesson::grade::CYCLES_CHECK;
use tilescope::lesson::{self, Check, Grade, Lesson, Medal};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: LessonCommand,
}

#[derive(clap::Subcommand)]
pub enum LessonCommand {
    /// List the lessons: number, title and kind.
    List,
    /// Show a lesson: its idea, task, budgets and starter code.
    Show {
        /// The lesson's number (see `tilescope lesson list`).
        number: usize,
        /// Also print the hints, in order.
        #[arg(long)]
        hints: bool,
        /// Print only the starter code, to save as a file.
        #[arg(long, conflicts_with = "hints")]
        starter: bool,
    },
    /// Grade a solution: exit code 0 when it passes, 1 otherwise.
    Check {
        /// The lesson's number.
        number: usize,
        /// The solution: a `.tile` kernel or a `.tasm` program, as the lesson asks.
        file: PathBuf,
        /// Print the grade as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> Result<(), Failed> {
    match args.command {
        LessonCommand::List => list(),
        LessonCommand::Show {
            number,
            hints,
            starter,
        } => show(number, hints, starter),
        LessonCommand::Check { number, file, json } => check(number, &file, json),
    }
}

fn find(number: usize) -> Result<Lesson, Failed> {
    lesson::find(number).map_err(|e| io::fail(&e))
}

fn list() -> Result<(), Failed> {
    let lessons = lesson::all().map_err(|e| io::fail(&e))?;
    for l in &lessons {
        println!("{:>2}  {:<6}  {}", l.number, l.kind.name(), l.title);
    }
    Ok(())
}

fn show(number: usize, with_hints: bool, only_starter: bool) -> Result<(), Failed> {
    let l = find(number)?;
    if only_starter {
        print!("{}", l.starter.trim_start_matches('\n'));
        return Ok(());
    }
    println!("Lesson {}: {} ({})", l.number, l.title, l.kind.name());
    println!();
    println!("Idea: {}", l.idea.trim());
    println!();
    println!("Task: {}", l.task.trim());
    if l.read_and_run {
        println!();
        println!("The starter already passes: run it and read its timeline.");
    }
    println!();
    println!(
        "Budgets on {}: gold <= {} cycles, silver <= {} cycles; a correct solution earns bronze.",
        l.preset, l.budgets.gold, l.budgets.silver
    );
    if with_hints {
        for (i, h) in l.hints.iter().enumerate() {
            println!("Hint {}: {h}", i + 1);
        }
    } else {
        let n = l.hints.len();
        println!(
            "{n} hint{} (`tilescope lesson show {} --hints`).",
            if n == 1 { "" } else { "s" },
            l.number
        );
    }
    println!();
    let file = format!("lesson{:02}.{}", l.number, l.extension());
    println!(
        "Starter (`tilescope lesson show {n} --starter > {file}`, then \
         `tilescope lesson check {n} {file}`):",
        n = l.number
    );
    println!();
    print!("{}", l.starter.trim_start_matches('\n'));
    Ok(())
}

/// `tilescope lesson check --json`: the grade with the lesson it is for.
#[derive(Serialize)]
struct CheckJson<'a> {
    lesson: usize,
    title: &'a str,
    passed: bool,
    medal: Option<Medal>,
    cycles: Option<u64>,
    checks: &'a [Check],
}

fn check(number: usize, file: &std::path::Path, json: bool) -> Result<(), Failed> {
    let l = find(number)?;
    let text = io::read_source(file)?;
    let grade = lesson::grade(&l, &text);
    if json {
        print_json(&CheckJson {
            lesson: l.number,
            title: &l.title,
            passed: grade.passed,
            medal: grade.medal,
            cycles: grade.cycles,
            checks: &grade.checks,
        })?;
    } else {
        print!("{}", text_report(&l, &grade));
    }
    if grade.passed {
        Ok(())
    } else {
        Err(Failed)
    }
}

fn text_report(l: &Lesson, g: &Grade) -> String {
    let mut out = format!("lesson {}: {}\n", l.number, l.title);
    for c in &g.checks {
        // The cycles check is a distance to the next medal, not a failure.
        let mark = match (c.passed, c.name == CYCLES_CHECK) {
            (true, _) => "ok  ",
            (false, true) => "note",
            (false, false) => "FAIL",
        };
        // Continuation lines of a multi-line message (a diagnostic, a race's two
        // instructions) stay under the message, not under the mark.
        let message = c.message.replace('\n', "\n        ");
        out.push_str(&format!("  {mark}  {}: {message}\n", c.name));
    }
    match (g.passed, g.medal) {
        (true, Some(m)) => {
            let cycles = g
                .cycles
                .map_or(String::new(), |c| format!(" in {c} cycles"));
            out.push_str(&format!("passed: {}{cycles}\n", m.name()));
        }
        _ => out.push_str("not passed\n"),
    }
    out
}
