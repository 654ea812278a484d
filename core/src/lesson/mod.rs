//! The lesson track: one TOML file per lesson in `static/lessons/`, read by the build
//! script (`build.rs`) with [`tilescope_lesson_schema`], which documents the fields, so
//! the CLI and the playground show the same lessons without reading files; and the
//! grader ([`grade`]) that checks a submission against the lesson's reference solution.

pub mod grade;

pub use grade::{grade, Check, Grade, Medal};
pub use tilescope_lesson_schema::{Budgets, Lesson, LessonKind};

use crate::machine::Machine;

/// The track as the build script wrote it: every lesson, numbered, in file-name order.
const TRACK: &str = include_str!(concat!(env!("OUT_DIR"), "/lessons.json"));

/// What the build script cannot check: the lesson's machine preset exists.
pub fn check_preset(lesson: &Lesson) -> Result<(), String> {
    if Machine::preset(&lesson.preset).is_none() {
        return Err(format!(
            "{}.toml: unknown preset `{}` (presets: {})",
            lesson.id,
            lesson.preset,
            Machine::preset_names().join(", ")
        ));
    }
    Ok(())
}

/// Every lesson, numbered from 1 in track order. The build script has read and checked
/// every file; an error here is a lesson naming an unknown preset (the lesson tests read
/// the whole track, so it never reaches a user) or an internal error.
pub fn all() -> Result<Vec<Lesson>, String> {
    let track: Vec<Lesson> = serde_json::from_str(TRACK).map_err(|e| {
        format!("internal error: the built-in lesson track does not read back: {e}")
    })?;
    for lesson in &track {
        check_preset(lesson)?;
    }
    Ok(track)
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
