//! The compile options the page sets: core's `CompileOptions` (one type for the CLI,
//! the wasm API and the playground), with the page's defaults and the presets the
//! toolbar offers. The share link writes them under its own field names
//! (`page::share`).

use serde::{Deserialize, Serialize};

pub use tilescope::compile::{AliasMode, CompileOptions, SyncStrategy};

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

    /// The preset `options` compile for (core's default when they name none); `None`
    /// for a machine the page does not offer.
    pub fn of(options: &CompileOptions) -> Option<Preset> {
        if options.machine.is_some() {
            return None;
        }
        let name = options.preset.as_deref();
        Preset::from_name(name.unwrap_or(tilescope::machine::DEFAULT_PRESET))
    }

    /// `options`, compiling for this preset.
    pub fn set(self, options: &mut CompileOptions) {
        options.preset = Some(self.name().to_string());
        options.machine = None;
    }
}

/// The page's options before the student chooses: the `teach` preset, whose small
/// buffers make tiling and sync visible, and core's defaults for the rest.
pub fn playground() -> CompileOptions {
    let mut options = CompileOptions::default();
    Preset::Teach.set(&mut options);
    options
}

/// The name of the preset `options` compile for, as the status bar and Compare show
/// it.
pub fn preset_name(options: &CompileOptions) -> &'static str {
    Preset::of(options).map_or("custom", Preset::name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_starts_on_teach_and_reads_core_s_default_as_a3() {
        assert_eq!(Preset::of(&playground()), Some(Preset::Teach));
        assert_eq!(Preset::of(&CompileOptions::default()), Some(Preset::A3));
        let mut options = playground();
        Preset::A3.set(&mut options);
        assert_eq!(options.preset.as_deref(), Some("a3"));
    }
}
