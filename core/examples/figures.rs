//! Quality of the compiled code: for every example on a preset (default `a3`), the
//! simulated cycles and the machine's lower bound under `auto` sync, the syncs inserted,
//! and the cycles under the conservative `barrier` strategy.
//!
//! `cargo run --release -p tilescope --example figures [-- PRESET]`

use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::run::{run, RunResult};

fn simulate(source: &str, preset: &str, sync: SyncStrategy) -> RunResult {
    let options = CompileOptions {
        preset: Some(preset.to_string()),
        sync,
        ..CompileOptions::default()
    };
    run(source, &options, Vec::new(), 1)
}

fn main() {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "a3".to_string());
    println!(
        "| example | cycles | bound | bound/cycles | syncs | barrier cycles | auto speed-up | matches reference |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
    let mut log_sum = 0.0;
    let mut count = 0;
    for example in tilescope::examples::ALL {
        let auto = simulate(example.source, &preset, SyncStrategy::Auto);
        let barrier = simulate(example.source, &preset, SyncStrategy::Barrier);
        if !auto.diagnostics.is_empty() || !auto.errors.is_empty() {
            let why: Vec<String> = auto
                .diagnostics
                .iter()
                .map(|d| d.message.clone())
                .chain(auto.errors.iter().map(|e| e.message.clone()))
                .collect();
            println!("| {} | does not run: {} |", example.name, why.join("; "));
            continue;
        }
        let ratio = auto.bound as f64 / auto.cycles.max(1) as f64;
        log_sum += ratio.ln();
        count += 1;
        println!(
            "| {} | {} | {} | {:.2} | {} | {} | {:.2}x | {} |",
            example.name,
            auto.cycles,
            auto.bound,
            ratio,
            auto.syncs,
            barrier.cycles,
            barrier.cycles as f64 / auto.cycles.max(1) as f64,
            auto.reference_match && auto.races.is_empty(),
        );
    }
    if count > 0 {
        println!(
            "\ngeometric mean of bound/cycles on {preset}: {:.3}",
            (log_sum / count as f64).exp()
        );
    }
}
