//! Compile latency: every example through every pass, IR printed after each (what the
//! playground asks for on every edit), and the full compile-and-simulate of `run`.
//!
//! `cargo bench -p tilescope --bench compile`

use tilescope::compile::{compile, CompileOptions};
use tilescope::examples::{Example, ALL};

fn main() {
    divan::main();
}

fn options() -> CompileOptions {
    // No clock: pass timing is what the benchmark measures from outside.
    CompileOptions {
        clock: tilescope::compile::PassClock::NONE,
        ..CompileOptions::default()
    }
}

fn names() -> impl Iterator<Item = &'static str> {
    ALL.iter().map(|e| e.name)
}

fn example(name: &str) -> &'static Example {
    Example::find(name).unwrap_or(&ALL[0])
}

#[divan::bench(args = names())]
fn compile_all_passes(bencher: divan::Bencher, name: &str) {
    let source = example(name).source;
    let options = options();
    bencher.bench(|| compile(divan::black_box(source), &options).passes.len());
}

#[divan::bench(args = names())]
fn compile_and_simulate(bencher: divan::Bencher, name: &str) {
    let source = example(name).source;
    let options = options();
    bencher.bench(|| {
        tilescope::run::run(divan::black_box(source), &options, Vec::new(), 1)
            .sim
            .cycles
    });
}
