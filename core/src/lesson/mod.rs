//! The lesson track: one TOML file per lesson in `static/lessons/`, built in like the
//! example gallery so the CLI and the playground show the same lessons without reading
//! files, and the grader ([`grade`]) that checks a submission against the lesson's
//! reference solution.
//!
//! A lesson file holds:
//!
//! | field | meaning |
//! |---|---|
//! | `title` | a short title |
//! | `idea` | the one idea of the machine or compiler the lesson teaches |
//! | `task` | what the student writes |
//! | `kind` | `"kernel"` (a `.tile` kernel) or `"asm"` (a `.tasm` program) |
//! | `starter` | the code the student starts from; it does not pass unless `read_and_run` |
//! | `solution` | the reference solution, which earns gold |
//! | `hints` | ordered hints, most general first |
//! | `read_and_run` | the starter already passes: the lesson is about reading its timeline (default false) |
//! | `preset` | the machine preset the lesson compiles and simulates for (default `teach`) |
//! | `auto_buffers` | let the compiler multi-buffer loops without `@buffers` (default true; a lesson about `@buffers` turns it off) |
//! | `budgets` | `{ silver, gold }`: simulated cycles for the two upper medals |

pub mod grade;

pub use grade::{grade, Check, Grade, Medal};

use crate::machine::Machine;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum LessonKind {
    /// A `.tile` kernel, compiled and simulated, compared with the reference interpreter
    /// running the lesson's solution.
    Kernel,
    /// A hand-written `.tasm` program, simulated, compared with the lesson's solution
    /// program simulated on the same inputs.
    Asm,
}

impl LessonKind {
    pub fn name(self) -> &'static str {
        match self {
            LessonKind::Kernel => "kernel",
            LessonKind::Asm => "asm",
        }
    }

    /// What the student's file is called, in the grader's messages and the playground's
    /// Problems alike: one name, so an error reads the same in both.
    pub fn file_name(self) -> &'static str {
        match self {
            LessonKind::Kernel => "kernel.tile",
            LessonKind::Asm => "kernel.tasm",
        }
    }
}

/// Simulated cycles (the worst over the grader's input sets) a correct submission must
/// stay within for each medal above bronze.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    pub silver: u64,
    pub gold: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    /// 1-based position in the track (set from the file order, not read from the file).
    #[serde(skip_deserializing, default)]
    pub number: usize,
    /// The file stem, e.g. `01-load-store` (set from the file name).
    #[serde(skip_deserializing, default)]
    pub id: String,
    pub title: String,
    pub idea: String,
    pub task: String,
    pub kind: LessonKind,
    pub starter: String,
    pub solution: String,
    #[serde(default)]
    pub hints: Vec<String>,
    #[serde(default)]
    pub read_and_run: bool,
    #[serde(default = "default_preset")]
    pub preset: String,
    #[serde(default = "default_auto_buffers")]
    pub auto_buffers: bool,
    pub budgets: Budgets,
}

fn default_preset() -> String {
    "teach".into()
}

fn default_auto_buffers() -> bool {
    true
}

macro_rules! lesson_files {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../../static/lessons/", $name, ".toml")))),*]
    };
}

/// The lesson files in track order: (file stem, text). Each lesson builds on the ones
/// before it.
pub const FILES: &[(&str, &str)] = lesson_files![
    "01-load-store",
    "02-broadcasting",
    "03-loop-and-tail",
    "04-reductions",
    "05-elementwise-chains",
    "06-softmax",
    "07-layer-norm",
    "08-multi-buffering",
    "09-capacity",
    "10-matrix-path",
    "11-tiled-matmul",
    "12-attention",
    "13-online-softmax",
    "14-flash-attention",
    "15-gather",
    "16-scatter",
    "17-block-permute",
    "18-asm-race",
    "19-asm-deadlock",
    "20-asm-double-buffer",
];

impl Lesson {
    /// Parses one lesson file and checks what serde cannot: non-empty texts, a known
    /// preset and ordered budgets.
    pub fn parse(id: &str, text: &str) -> Result<Lesson, String> {
        let mut lesson: Lesson = toml::from_str(text).map_err(|e| format!("{id}.toml: {e}"))?;
        lesson.id = id.to_string();
        let texts = [
            ("title", &lesson.title),
            ("idea", &lesson.idea),
            ("task", &lesson.task),
            ("starter", &lesson.starter),
            ("solution", &lesson.solution),
        ];
        if let Some((field, _)) = texts.iter().find(|(_, t)| t.trim().is_empty()) {
            return Err(format!("{id}.toml: `{field}` is empty"));
        }
        if Machine::preset(&lesson.preset).is_none() {
            return Err(format!(
                "{id}.toml: unknown preset `{}` (presets: {})",
                lesson.preset,
                Machine::preset_names().join(", ")
            ));
        }
        let Budgets { silver, gold } = lesson.budgets;
        if gold == 0 || gold > silver {
            return Err(format!(
                "{id}.toml: budgets must satisfy 0 < gold <= silver, but gold is {gold} and silver {silver}"
            ));
        }
        Ok(lesson)
    }

    /// The file extension of a submission: `tile` or `tasm`.
    pub fn extension(&self) -> &'static str {
        match self.kind {
            LessonKind::Kernel => "tile",
            LessonKind::Asm => "tasm",
        }
    }
}

/// Every lesson, numbered from 1 in track order. A malformed file is an error naming it
/// (the lesson tests parse every file, so it never reaches a user).
pub fn all() -> Result<Vec<Lesson>, String> {
    FILES
        .iter()
        .enumerate()
        .map(|(i, (id, text))| {
            let mut lesson = Lesson::parse(id, text)?;
            lesson.number = i + 1;
            Ok(lesson)
        })
        .collect()
}

/// Lesson `number` (1-based), or why there is none.
pub fn find(number: usize) -> Result<Lesson, String> {
    let lessons = all()?;
    let count = lessons.len();
    lessons
        .into_iter()
        .find(|l| l.number == number)
        .ok_or_else(|| format!("there is no lesson {number}: the lessons are 1 to {count}"))
}
