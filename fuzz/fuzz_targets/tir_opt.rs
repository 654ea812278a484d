//! Arbitrary bytes as tile-IR text (`tilescope opt`'s input): read, verified, then run
//! through every pass from the stage it is at to the final program.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tilescope::passes::{pipeline, Stage};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(read) = tilescope::ir::read::read(&text, None) else {
        return;
    };
    let from = if read.kernel.memory.is_some() {
        Stage::Planned
    } else {
        Stage::Tile
    };
    let passes: Vec<String> = pipeline()
        .iter()
        .skip_while(|p| p.needs() != from)
        .map(|p| p.name().to_string())
        .collect();
    let _ = tilescope::opt::opt(&text, &passes, None, None);
});
