//! Quality of the compiled code: for every example on a preset (default `a3`), the
//! simulated cycles and the machine's lower bound under `auto` sync, the path bound
//! (the bound plus the fill and drain the dependences force) and the dataflow bound
//! (the same along the data flow alone), the kernel's
//! roofline (what no program of it beats), the syncs inserted,
//! the cycles under the conservative `barrier` strategy and what limits the run, and
//! the bound over the busiest pipe's working span; then what precise aliasing
//! buys: cycles and syncs under `auto` with precise and with coarse aliasing.
//!
//! `cargo run --release -p tilescope --example figures [-- PRESET]`

use tilescope::compile::{AliasMode, CompileOptions, SyncStrategy};
use tilescope::isa::Op;
use tilescope::run::{run, RunResult};

fn simulate(source: &str, preset: &str, sync: SyncStrategy) -> RunResult {
    simulate_alias(source, preset, sync, AliasMode::Precise)
}

fn simulate_alias(source: &str, preset: &str, sync: SyncStrategy, alias: AliasMode) -> RunResult {
    let options = CompileOptions {
        preset: Some(preset.to_string()),
        sync,
        alias,
        ..CompileOptions::default()
    };
    run(source, &options, Vec::new(), 1)
}

/// What holds a run back: the pipe at the bound (or GM bandwidth), and where that
/// pipe's idle cycles went, biggest cause first.
fn limited_by(r: &RunResult) -> String {
    let cycles = r.sim.cycles.max(1) as f64;
    let Some(busiest) = r.sim.stalls.iter().max_by_key(|s| s.busy) else {
        return String::new();
    };
    let head = if r.sim.gm_transfer_cycles > busiest.busy {
        format!(
            "GM bandwidth ({:.0}%)",
            100.0 * r.sim.gm_transfer_cycles as f64 / cycles
        )
    } else {
        format!(
            "{} ({:.0}% busy)",
            busiest.pipe.name(),
            100.0 * busiest.busy as f64 / cycles
        )
    };
    let mut causes = [
        (busiest.flag_wait, "flags"),
        (busiest.shared_bandwidth, "shared bandwidth"),
        (busiest.barrier, "barriers"),
        (busiest.queue_full, "full queues"),
        (busiest.not_issued, "nothing issued"),
    ];
    causes.sort_by_key(|c| std::cmp::Reverse(c.0));
    let idle: Vec<String> = causes
        .iter()
        .filter(|c| c.0 as f64 >= 0.02 * cycles)
        .map(|(c, what)| format!("{what} {:.0}%", 100.0 * *c as f64 / cycles))
        .collect();
    if idle.is_empty() {
        head
    } else {
        format!("{head}; the rest: {}", idle.join(", "))
    }
}

/// The busiest pipe's busy cycles over the span from its first to its last work
/// instruction (syncs left out): how close the schedule comes to the bound once the
/// pipeline has filled and before it drains, which the bound does not count.
fn steady(r: &RunResult) -> f64 {
    let Some(busiest) = r.sim.stalls.iter().max_by_key(|s| s.busy) else {
        return 1.0;
    };
    let program = r.compile.program.as_ref();
    let work = r.sim.trace.iter().filter(|e| {
        e.pipe == busiest.pipe
            && program
                .and_then(|p| p.instrs.get(e.index as usize))
                .is_some_and(|i| {
                    !matches!(
                        i.op,
                        Op::SetFlag { .. } | Op::WaitFlag { .. } | Op::Barrier { .. }
                    )
                })
    });
    let (first, last) = work.fold((u64::MAX, 0), |(a, b), e| (a.min(e.start), b.max(e.end)));
    if first >= last {
        return 1.0;
    }
    (r.bound as f64 / (last - first) as f64).min(1.0)
}

/// Set/wait pairs placed, and pairs met at run time.
fn syncs(r: &RunResult) -> String {
    let pairs = r.compile.sync.as_ref().map_or(0, |s| s.pair_count());
    format!("{pairs} / {}", r.sim.syncs)
}

/// The ablation of alias information: `auto` with precise and coarse aliasing, and
/// `barrier`, per example.
fn alias_table(preset: &str) {
    println!("\n### What precise aliasing buys ({preset})\n");
    println!(
        "| example | precise cycles | precise syncs | coarse cycles | coarse syncs | barrier cycles | coarse / precise | clean |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
    for example in tilescope::examples::ALL {
        let precise = simulate_alias(
            example.source,
            preset,
            SyncStrategy::Auto,
            AliasMode::Precise,
        );
        let coarse = simulate_alias(
            example.source,
            preset,
            SyncStrategy::Auto,
            AliasMode::Coarse,
        );
        let barrier = simulate(example.source, preset, SyncStrategy::Barrier);
        let clean = [&precise, &coarse, &barrier].iter().all(|r| {
            r.diagnostics.is_empty()
                && r.sim.errors.is_empty()
                && r.sim.races.is_empty()
                && r.reference_match
        });
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.2}x | {} |",
            example.name,
            precise.sim.cycles,
            syncs(&precise),
            coarse.sim.cycles,
            syncs(&coarse),
            barrier.sim.cycles,
            coarse.sim.cycles as f64 / precise.sim.cycles.max(1) as f64,
            clean,
        );
    }
}

fn main() {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "a3".to_string());
    println!(
        "| example | cycles | bound | bound/cycles | path bound | path bound/cycles | dataflow bound/cycles | roofline | roofline/cycles | syncs | barrier cycles | auto speed-up | matches reference | limited by |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|");
    let mut log_sum = 0.0;
    let mut roof_log_sum = 0.0;
    let mut steady_log_sum = 0.0;
    let mut path_log_sum = 0.0;
    let mut dataflow_log_sum = 0.0;
    let mut count = 0;
    for example in tilescope::examples::ALL {
        let auto = simulate(example.source, &preset, SyncStrategy::Auto);
        let barrier = simulate(example.source, &preset, SyncStrategy::Barrier);
        if !auto.diagnostics.is_empty() || !auto.sim.errors.is_empty() {
            let why: Vec<String> = auto
                .diagnostics
                .iter()
                .map(|d| d.message.clone())
                .chain(auto.sim.errors.iter().map(|e| e.message.clone()))
                .collect();
            println!("| {} | does not run: {} |", example.name, why.join("; "));
            continue;
        }
        let ratio = auto.bound as f64 / auto.sim.cycles.max(1) as f64;
        log_sum += ratio.ln();
        count += 1;
        let roofline = auto.roofline.cycles as f64 / auto.sim.cycles.max(1) as f64;
        roof_log_sum += roofline.max(1e-9).ln();
        steady_log_sum += steady(&auto).max(1e-9).ln();
        // The figures table runs every example with its whole trace kept.
        let path = auto.path_bound.unwrap_or(auto.bound);
        let path_ratio = path as f64 / auto.sim.cycles.max(1) as f64;
        path_log_sum += path_ratio.ln();
        let dataflow = tilescope::sim::path_bound::dataflow_bound(&auto.sim)
            .unwrap_or(auto.bound)
            .max(auto.bound);
        let dataflow_ratio = dataflow as f64 / auto.sim.cycles.max(1) as f64;
        dataflow_log_sum += dataflow_ratio.ln();
        println!(
            "| {} | {} | {} | {:.2} | {} | {:.2} | {:.2} | {} | {:.2} | {} | {} | {:.2}x | {} | {} |",
            example.name,
            auto.sim.cycles,
            auto.bound,
            ratio,
            path,
            path_ratio,
            dataflow_ratio,
            auto.roofline.cycles,
            roofline,
            auto.sim.syncs,
            barrier.sim.cycles,
            barrier.sim.cycles as f64 / auto.sim.cycles.max(1) as f64,
            auto.reference_match && auto.sim.races.is_empty(),
            limited_by(&auto),
        );
    }
    if count > 0 {
        println!();
        for (what, sum) in [
            ("bound/cycles", log_sum),
            ("path bound/cycles", path_log_sum),
            ("dataflow bound/cycles", dataflow_log_sum),
            ("roofline/cycles", roof_log_sum),
            (
                "bound over the busiest pipe's span from its first to its last work instruction",
                steady_log_sum,
            ),
        ] {
            println!(
                "geometric mean of {what} on {preset}: {:.3}",
                (sum / count as f64).exp()
            );
        }
    }
    alias_table(&preset);
}
