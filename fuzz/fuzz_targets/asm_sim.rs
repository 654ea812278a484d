//! Arbitrary bytes as assembly text, parsed and simulated in timing and functional mode
//! on a machine with small instruction and cycle limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tilescope::inputs::generate;
use tilescope::machine::Machine;
use tilescope::sim::{simulate, SimMode};

/// Inputs larger than this are not generated: the functional run is skipped, the timing
/// run still happens (the simulator must cope with any declared size there).
const MAX_INPUT_BYTES: u64 = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(program) = tilescope::isa::asm::parse(&text) else {
        return;
    };
    let mut machine = Machine::teach();
    machine.limits.max_instructions = 20_000;
    machine.limits.max_cycles = 2_000_000;
    let _ = simulate(&program, &machine, Vec::new(), SimMode::TIMING);
    let total = program
        .tensors
        .iter()
        .fold(0u64, |a, t| a.saturating_add(t.bytes()));
    if total <= MAX_INPUT_BYTES {
        let inputs = program
            .tensors
            .iter()
            .enumerate()
            .map(|(i, t)| generate(t.dtype, t.shape.clone(), 7, i as u64))
            .collect();
        let _ = simulate(&program, &machine, inputs, SimMode::FULL);
    }
});
