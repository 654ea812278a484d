//! What both modules read: the gallery's examples (`static/examples/`) and the lesson
//! track (`static/lessons/`), both built into core. The page lists them before the
//! worker has arrived; the worker compiles and grades them.

use std::sync::OnceLock;

pub use tilescope::lesson::{Grade, Lesson, LessonKind, Medal};

pub use tilescope::examples::{default_example, Example, ALL as EXAMPLES};

pub fn find(id: &str) -> Option<&'static Example> {
    Example::find(id)
}

/// Every lesson in track order, parsed once. Core's lesson tests parse every file and
/// `lessons_parse` below checks this list, so a malformed file fails the build's tests
/// and never ships; if one did, the track would be empty, not a crash.
pub fn lessons() -> &'static [Lesson] {
    static LESSONS: OnceLock<Vec<Lesson>> = OnceLock::new();
    LESSONS.get_or_init(|| tilescope::lesson::all().unwrap_or_default())
}

/// The lesson with file stem `id` (`01-load-store`).
pub fn lesson(id: &str) -> Option<&'static Lesson> {
    lessons().iter().find(|l| l.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_has_a_unique_id_and_description() {
        let mut ids: Vec<&str> = EXAMPLES.iter().map(|e| e.name).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), EXAMPLES.len());
        for e in EXAMPLES {
            assert!(
                e.description().len() > 40,
                "{} has no teaching comment",
                e.name
            );
            assert!(e.source.contains("kernel "), "{}", e.name);
        }
        assert_eq!(find("softmax").map(|e| e.title), Some("Softmax"));
        assert!(default_example().description().starts_with("Elementwise"));
    }

    #[test]
    fn lessons_parse_and_are_found_by_id() {
        assert_eq!(
            tilescope::lesson::all().map(|l| l.len()),
            Ok(lessons().len())
        );
        assert!(lessons().len() >= 16);
        let first = lesson("01-load-store").expect("the first lesson");
        assert_eq!(first.number, 1);
        assert!(lesson("no-such-lesson").is_none());
    }

    #[test]
    fn every_example_file_is_in_the_table() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../static/examples");
        let entries = std::fs::read_dir(dir).expect("examples directory");
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".tile") {
                assert!(find(stem).is_some(), "{name} is missing from EXAMPLES");
            }
        }
    }
}
