//! What a lesson file (`static/lessons/*.toml`) holds, and how one is read and checked.
//!
//! A crate of its own because core's build script reads every lesson file with it: a
//! malformed file fails the build, and nothing that ships parses TOML. Core checks the
//! one thing this crate cannot know, that the lesson's machine preset exists.
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
    /// 1-based position in the track, from the file order; a file may not set it.
    #[serde(default)]
    pub number: usize,
    /// The file stem, e.g. `01-load-store`, from the file name; a file may not set it.
    #[serde(default)]
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

impl Lesson {
    /// The file extension of a submission: `tile` or `tasm`.
    pub fn extension(&self) -> &'static str {
        match self.kind {
            LessonKind::Kernel => "tile",
            LessonKind::Asm => "tasm",
        }
    }

    /// Reads lesson file `{id}.toml` and checks what serde cannot: non-empty texts and
    /// ordered budgets. Errors name the file.
    #[cfg(feature = "parse")]
    pub fn parse(id: &str, text: &str) -> Result<Lesson, String> {
        let mut lesson: Lesson = toml::from_str(text).map_err(|e| format!("{id}.toml: {e}"))?;
        if lesson.number != 0 || !lesson.id.is_empty() {
            return Err(format!(
                "{id}.toml: `id` and `number` come from the file's name and place in the track"
            ));
        }
        lesson.id = id.to_string();
        lesson.check().map_err(|e| format!("{id}.toml: {e}"))?;
        Ok(lesson)
    }

    /// What every lesson must satisfy beyond its shape.
    pub fn check(&self) -> Result<(), String> {
        let texts = [
            ("title", &self.title),
            ("idea", &self.idea),
            ("task", &self.task),
            ("starter", &self.starter),
            ("solution", &self.solution),
        ];
        if let Some((field, _)) = texts.iter().find(|(_, t)| t.trim().is_empty()) {
            return Err(format!("`{field}` is empty"));
        }
        let Budgets { silver, gold } = self.budgets;
        if gold == 0 || gold > silver {
            return Err(format!(
                "budgets must satisfy 0 < gold <= silver, but gold is {gold} and silver {silver}"
            ));
        }
        Ok(())
    }
}
