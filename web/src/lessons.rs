//! The lesson track in the playground: core's lessons (`tilescope::lesson`, the same
//! files and grader as `tilescope lesson`) and the student's progress, the best medal
//! earned in each lesson, which the page keeps in local storage.

#[cfg(feature = "lessons")]
use std::collections::BTreeMap;

#[cfg(feature = "lessons")]
use serde::{Deserialize, Serialize};

#[cfg(feature = "lessons")]
use std::sync::OnceLock;
pub use tilescope::lesson::{Grade, Lesson, LessonKind, Medal};

/// Checks after which the reference solution is offered without a pass.
pub const SOLUTION_AFTER_TRIES: u32 = 3;

/// Every lesson in track order, parsed once. The lesson tests parse every file, so a
/// malformed one never ships; if one did, the track would be empty, not a crash.
#[cfg(feature = "lessons")]
pub fn all() -> &'static [Lesson] {
    static LESSONS: OnceLock<Vec<Lesson>> = OnceLock::new();
    LESSONS.get_or_init(|| tilescope::lesson::all().unwrap_or_default())
}

/// No lessons in a build without the track: the page shows none, and the compiler
/// sees that every lesson view is unreachable and leaves it out of the module.
#[cfg(not(feature = "lessons"))]
pub fn all() -> &'static [Lesson] {
    &[]
}

/// The lesson with file stem `id` (`01-load-store`).
pub fn find(id: &str) -> Option<&'static Lesson> {
    all().iter().find(|l| l.id == id)
}

/// The best medal earned in each lesson, by lesson id.
#[cfg(feature = "lessons")]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Progress(BTreeMap<String, Medal>);

/// Without the lesson track there are no medals.
#[cfg(not(feature = "lessons"))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {}

#[cfg(feature = "lessons")]
impl Progress {
    /// Keeps the better of the recorded medal and `medal`; true if that changed anything.
    pub fn record(&mut self, id: &str, medal: Medal) -> bool {
        match self.0.get(id) {
            Some(best) if *best >= medal => false,
            _ => {
                self.0.insert(id.to_string(), medal);
                true
            }
        }
    }

    pub fn medal(&self, id: &str) -> Option<Medal> {
        self.0.get(id).copied()
    }

    /// Lessons passed (any medal).
    pub fn passed(&self) -> usize {
        all().iter().filter(|l| self.0.contains_key(&l.id)).count()
    }
}

/// The medal as a short badge text.
pub fn badge(medal: Medal) -> &'static str {
    match medal {
        Medal::Gold => "🥇 gold",
        Medal::Silver => "🥈 silver",
        Medal::Bronze => "🥉 bronze",
    }
}

#[cfg(all(test, feature = "lessons"))]
mod tests {
    use super::*;

    #[test]
    fn the_track_is_built_in_and_found_by_id() {
        assert!(all().len() >= 16);
        let first = find("01-load-store").expect("the first lesson");
        assert_eq!(first.number, 1);
        assert!(find("no-such-lesson").is_none());
    }

    #[test]
    fn progress_keeps_the_best_medal() {
        let mut p = Progress::default();
        assert!(p.record("01-load-store", Medal::Silver));
        assert!(!p.record("01-load-store", Medal::Bronze));
        assert_eq!(p.medal("01-load-store"), Some(Medal::Silver));
        assert!(p.record("01-load-store", Medal::Gold));
        assert_eq!(p.medal("01-load-store"), Some(Medal::Gold));
        assert_eq!(p.passed(), 1);
        let json = serde_json::to_string(&p).expect("serialise");
        assert_eq!(json, r#"{"01-load-store":"gold"}"#);
        assert_eq!(serde_json::from_str::<Progress>(&json).ok(), Some(p));
    }
}
