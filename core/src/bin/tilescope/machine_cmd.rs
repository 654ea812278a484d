//! `tilescope machine`: print a machine preset.

use crate::io::{self, print_json};
use crate::Failed;
use tilescope::machine::Machine;
use tilescope::types::MemSpace;

#[derive(clap::Args)]
pub struct Args {
    /// A preset name (`teach`, `a3`) or a JSON machine file.
    #[arg(long, default_value = "a3")]
    pub preset: String,
    /// Print the preset as JSON (the format `--preset FILE.json` reads).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<(), Failed> {
    let machine = io::machine(&args.preset)?;
    if args.json {
        return print_json(&machine);
    }
    print!("{}", describe(&machine));
    Ok(())
}

/// A short human-readable summary; `--json` has every field.
fn describe(m: &Machine) -> String {
    let mut s = format!(
        "machine {} at {} GHz, {} event ids per pipe pair, DMA up to {} dims, {} scalar registers\n",
        m.name, m.clock_ghz, m.event_ids_per_pair, m.dma_max_dims, m.scalar_regs
    );
    s.push_str("memory  size         alignment\n");
    for space in MemSpace::ALL {
        let mem = m.memories.get(space);
        let size = mem
            .size
            .map_or("unbounded".to_string(), |b| format!("{} KiB", b / 1024));
        s.push_str(&format!(
            "{:<7} {:<12} {} B\n",
            space.name(),
            size,
            mem.alignment
        ));
    }
    let b = &m.costs.bandwidth;
    s.push_str(&format!(
        "bandwidth (B/cycle): GM->UB {}, GM->L1 {}, UB->GM {}, L1->L0A {}, L1->L0B {}, L0C->GM {}, L0C->UB {}\n",
        b.gm_ub, b.gm_l1, b.ub_gm, b.l1_l0a, b.l1_l0b, b.l0c_gm, b.l0c_ub
    ));
    s.push_str(&format!(
        "DMA startup: {} cycles from GM, {} on chip; vector: {} cycles/f32 element + {}\n",
        m.costs.dma_startup_gm,
        m.costs.dma_startup_onchip,
        m.costs.vector_slope_f32,
        m.costs.vector_bias
    ));
    s
}
