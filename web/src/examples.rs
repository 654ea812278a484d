//! The example gallery: core's built-in examples (`static/examples/`).

pub use tilescope::examples::{default_example, Example, ALL as EXAMPLES};

pub fn find(id: &str) -> Option<&'static Example> {
    Example::find(id)
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
