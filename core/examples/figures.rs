//! Quality figures: for every example on the `a3` preset, simulated cycles and the
//! cycle lower bound. `cargo run -p tilescope --example figures [-- SYNC]`.

use tilescope::compile::{CompileOptions, SyncStrategy};

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../static/examples");
    let sync = match std::env::args().nth(1).as_deref() {
        Some("barrier") => SyncStrategy::Barrier,
        Some("none") => SyncStrategy::None,
        _ => SyncStrategy::Auto,
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("cannot read {}", dir.display());
        return;
    };
    let mut files: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    files.sort();
    println!(
        "{:<20} {:>10} {:>10} {:>6} {:>6} {:>6}",
        "example", "cycles", "bound", "ratio", "match", "races"
    );
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "tile"))
    {
        let Ok(source) = std::fs::read_to_string(path) else {
            continue;
        };
        let options = CompileOptions {
            preset: Some("a3".into()),
            sync,
            ..CompileOptions::default()
        };
        let r = tilescope::run::run(&source, &options, Vec::new(), 1);
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
        let ratio = r.cycles as f64 / r.bound.max(1) as f64;
        println!(
            "{name:<20} {:>10} {:>10} {ratio:>6.2} {:>6} {:>6}",
            r.cycles,
            r.bound,
            r.reference_match,
            r.races.len()
        );
        for d in &r.diagnostics {
            println!("    {}", d.message);
        }
        for e in &r.errors {
            println!("    sim: {}", e.message);
        }
    }
}
