//! The example kernels of `static/examples/`, built in so the CLI, the wasm API and the
//! playground's gallery all show the same set without reading files.

use serde::Serialize;

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Example {
    /// File stem: `softmax` for `softmax.tile`; the id stored in share links.
    pub name: &'static str,
    /// A short title for the gallery.
    pub title: &'static str,
    pub source: &'static str,
}

macro_rules! examples {
    ($($name:literal: $title:literal),* $(,)?) => {
        &[$(Example {
            name: $name,
            title: $title,
            source: include_str!(concat!("../../static/examples/", $name, ".tile")),
        }),*]
    };
}

/// In teaching order: streaming first, then reductions, matrix kernels, data movement,
/// scalar registers.
pub const ALL: &[Example] = examples![
    "elementwise": "Elementwise",
    "multibuffer": "Multi-buffered stream",
    "prefetch_slots": "Prefetch into explicit slots",
    "slot_phases": "Slots at two phases",
    "softmax": "Softmax",
    "layernorm": "Layer norm",
    "rmsnorm": "RMS norm (f16)",
    "tail_reduction": "Tail iteration",
    "rmw": "Read-modify-write",
    "matmul_tiled": "Tiled matmul",
    "matmul_bias_gelu": "Linear + GELU",
    "gemm_l0": "GEMM in L0 sub-tiles",
    "weights_l1": "Weight kept in L1",
    "swiglu": "SwiGLU (two accumulators)",
    "silu_and_mul": "SiLU and mul (tile slices)",
    "attention": "Attention",
    "flash_attention": "Flash attention (online softmax)",
    "causal_attention": "Causal attention (masks)",
    "block_sparse_attention": "Block-sparse attention (if)",
    "reverse_cumsum": "Reverse chunk cumsum (rev loop)",
    "decode": "Decode attention",
    "gqa_decode": "GQA decode (squeeze)",
    "moe_router": "MoE top-2 router (argmax)",
    "int4_gemv": "int4 GEMV (bit ops, strided loads)",
    "rope": "Rotary embedding",
    "causal_conv1d": "Causal conv1d (pad)",
    "gather": "Gather",
    "scatter": "Scatter",
    "block_permute": "Block permute",
    "shuffle": "Block shuffle (relayout)",
    "spills": "Register spills",
];

impl Example {
    /// The leading `//` comment block as one paragraph: what the example teaches.
    pub fn description(&self) -> String {
        self.source
            .lines()
            .map_while(|l| l.trim_start().strip_prefix("//"))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub fn find(name: &str) -> Option<&'static Example> {
        ALL.iter().find(|e| e.name == name)
    }
}

/// The example a new session starts with.
pub fn default_example() -> &'static Example {
    // ALL is a non-empty constant.
    &ALL[0]
}
