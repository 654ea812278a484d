//! Compile options the toolbar sets; part of the share link and of each worker request.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    #[default]
    Teach,
    A3,
}

impl Preset {
    pub const ALL: [Preset; 2] = [Preset::Teach, Preset::A3];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Teach => "teach",
            Preset::A3 => "a3",
        }
    }

    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Core's own option types: one set of names for the CLI, the worker and the page.
pub use tilescope::compile::{AliasMode, SyncStrategy};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompileOptions {
    pub preset: Preset,
    pub sync: SyncStrategy,
    /// What insert-sync knows about overlapping accesses: `coarse` is the ablation
    /// without alias information.
    #[serde(default)]
    pub alias: AliasMode,
    /// Let the compiler pick a slot count for loops without `@buffers`.
    pub multibuffer_auto: bool,
    /// The kernel to compile; the first one when `None`.
    #[serde(default)]
    pub kernel: Option<String>,
    /// Optional passes turned off (`tilescope::passes::optional_passes`).
    #[serde(default)]
    pub disabled_passes: Vec<String>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            preset: Preset::Teach,
            sync: SyncStrategy::Auto,
            alias: AliasMode::Precise,
            multibuffer_auto: true,
            kernel: None,
            disabled_passes: Vec::new(),
        }
    }
}
