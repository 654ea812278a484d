//! Runs one kernel file end to end and prints the result summary (a development aid).
fn main() {
    for path in std::env::args().skip(1) {
        let Ok(src) = std::fs::read_to_string(&path) else {
            continue;
        };
        let r = tilescope::run::run(
            &src,
            &tilescope::compile::CompileOptions::default(),
            Vec::new(),
            1,
        );
        println!(
            "{path}: match {} cycles {} err {}",
            r.reference_match, r.cycles, r.max_abs_err
        );
        for d in &r.diagnostics {
            println!("   diag: {}", d.message);
        }
        for e in &r.errors {
            println!("   sim: {}", e.message);
        }
        if !r.races.is_empty() {
            println!("   races {}", r.races.len());
        }
    }
}
