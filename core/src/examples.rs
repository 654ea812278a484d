//! The example kernels of `static/examples/`, built in so the CLI, the wasm API and the
//! playground's gallery all show the same set without reading files.

use serde::Serialize;

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Example {
    /// File stem: `softmax` for `softmax.tile`.
    pub name: &'static str,
    pub source: &'static str,
}

macro_rules! examples {
    ($($name:literal),* $(,)?) => {
        &[$(Example {
            name: $name,
            source: include_str!(concat!("../../static/examples/", $name, ".tile")),
        }),*]
    };
}

/// In gallery order: from the simplest kernel to the ones that show the most machinery.
pub const ALL: &[Example] = examples![
    "elementwise",
    "softmax",
    "layernorm",
    "rmsnorm",
    "tail_reduction",
    "multibuffer",
    "matmul_tiled",
    "matmul_bias_gelu",
    "attention",
    "rope",
    "gather",
    "scatter",
    "block_permute",
];

impl Example {
    /// The leading `//` comment block with the comment markers removed: what the example
    /// teaches.
    pub fn description(&self) -> String {
        self.source
            .lines()
            .map_while(|l| l.trim_start().strip_prefix("//"))
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The first line of the description.
    pub fn title(&self) -> &'static str {
        self.source
            .lines()
            .next()
            .and_then(|l| l.trim_start().strip_prefix("//"))
            .map_or(self.name, str::trim)
    }

    pub fn find(name: &str) -> Option<&'static Example> {
        ALL.iter().find(|e| e.name == name)
    }
}
