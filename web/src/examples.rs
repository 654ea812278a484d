//! The example gallery: every kernel in `static/examples/`, embedded at build time.

pub struct Example {
    /// File stem; the id stored in share links.
    pub id: &'static str,
    pub title: &'static str,
    pub source: &'static str,
}

macro_rules! example {
    ($id:literal, $title:literal) => {
        Example {
            id: $id,
            title: $title,
            source: include_str!(concat!("../../static/examples/", $id, ".tile")),
        }
    };
}

/// In teaching order: streaming first, then reductions, matrix kernels, data movement.
pub const EXAMPLES: &[Example] = &[
    example!("elementwise", "Elementwise"),
    example!("multibuffer", "Multi-buffered stream"),
    example!("softmax", "Softmax"),
    example!("layernorm", "Layer norm"),
    example!("rmsnorm", "RMS norm (f16)"),
    example!("tail_reduction", "Tail iteration"),
    example!("matmul_tiled", "Tiled matmul"),
    example!("matmul_bias_gelu", "Linear + GELU"),
    example!("attention", "Attention"),
    example!("rope", "Rotary embedding"),
    example!("gather", "Gather"),
    example!("scatter", "Scatter"),
    example!("block_permute", "Block permute"),
];

pub fn find(id: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.id == id)
}

/// The example a new session starts with.
pub fn default_example() -> &'static Example {
    // EXAMPLES is a non-empty constant.
    &EXAMPLES[0]
}

impl Example {
    /// The first comment block: the example's teaching text, one paragraph.
    pub fn teaching_text(&self) -> String {
        self.source
            .lines()
            .map_while(|l| l.trim_start().strip_prefix("//"))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_has_a_unique_id_and_teaching_text() {
        let mut ids: Vec<&str> = EXAMPLES.iter().map(|e| e.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), EXAMPLES.len());
        for e in EXAMPLES {
            assert!(
                e.teaching_text().len() > 40,
                "{} has no teaching comment",
                e.id
            );
            assert!(e.source.contains("kernel "), "{}", e.id);
        }
        assert_eq!(find("softmax").map(|e| e.title), Some("Softmax"));
        assert!(default_example().teaching_text().starts_with("Elementwise"));
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
