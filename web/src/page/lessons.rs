//! The lesson track on the page: the lessons (`crate::catalog`, the same files the
//! worker grades with `tilescope lesson`'s grader) and the student's progress, the best
//! medal earned in each lesson, which the page keeps in local storage.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::catalog::{lesson as find, lessons as all, Grade, Lesson, LessonKind, Medal};

/// Checks after which the reference solution is offered without a pass.
pub const SOLUTION_AFTER_TRIES: u32 = 3;

/// The best medal earned in each lesson, by lesson id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Progress(BTreeMap<String, Medal>);

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

    /// Keeps the better medal of each lesson from both (an embed's medals joined with
    /// what the full page saved meanwhile).
    pub fn merge(&mut self, other: &Progress) {
        for (id, medal) in &other.0 {
            self.record(id, *medal);
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

#[cfg(test)]
mod tests {
    use super::*;

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
