//! What each pass buys: `--disable-pass` leaves out an optional pass, and the program
//! stays correct without it (every example, every optional pass: the claim that a pass
//! is optional is tested, not assumed); `ablate` reports the difference; a required or
//! unknown pass named is an error that lists the optional ones.

use tilescope::compile::{compile, CompileOptions};
use tilescope::passes::optional_passes;
use tilescope::run::{ablate, run};

fn without(passes: &[&str]) -> CompileOptions {
    CompileOptions {
        disabled_passes: passes.iter().map(|p| p.to_string()).collect(),
        ..CompileOptions::default()
    }
}

#[test]
fn the_optional_passes_are_the_ones_that_only_make_code_faster() {
    let marked: Vec<&str> = tilescope::passes::pipeline()
        .iter()
        .filter(|p| p.optional())
        .map(|p| p.name())
        .collect();
    assert_eq!(
        optional_passes(),
        marked,
        "OPTIONAL_PASSES against Pass::optional"
    );
    assert_eq!(
        optional_passes(),
        [
            "vector-peephole",
            "subtile-matmul",
            "fix-to-gm",
            "software-pipeline",
            "peel-first",
            "sink-to-use",
            "multi-buffer",
            "list-schedule"
        ]
    );
}

#[test]
fn a_disabled_pass_is_not_run_and_its_effect_shows_in_cycles() {
    let source = include_str!("../../static/examples/softmax.tile");
    let with = run(source, &CompileOptions::default(), Vec::new(), 0);
    let r = run(source, &without(&["vector-peephole"]), Vec::new(), 0);
    assert!(r.reference_match && r.sim.races.is_empty());
    assert!(!r.compile.passes.iter().any(|p| p.name == "vector-peephole"));
    // The division by the row sum stays a division (4x the vector slope).
    assert!(
        r.sim.cycles > with.sim.cycles + 1000,
        "{} vs {}",
        r.sim.cycles,
        with.sim.cycles
    );
}

#[test]
fn naming_a_required_or_unknown_pass_is_an_error_listing_the_optional_ones() {
    let source = include_str!("../../static/examples/softmax.tile");
    for (name, why) in [
        ("insert-sync", "is needed for a correct program"),
        ("no-such-pass", "is not a pass"),
    ] {
        let r = compile(source, &without(&[name]));
        let msg = &r.diagnostics.first().expect("an error").message;
        assert!(msg.contains(why), "{msg}");
        assert!(msg.contains("vector-peephole, subtile-matmul"), "{msg}");
    }
}

/// Examples whose tiles overflow L0 on a3 unless subtile-matmul moves pieces of them:
/// without it they fail to compile with the capacity error, which the ablation shows.
const NEED_SUBTILE_ON_A3: &[&str] = &["weights_l1"];

#[test]
fn every_example_stays_correct_without_each_optional_pass() {
    let mut failures = Vec::new();
    for e in tilescope::examples::ALL {
        for a in ablate(e.source, &CompileOptions::default(), &[], 3) {
            let needed = a.pass == "subtile-matmul" && NEED_SUBTILE_ON_A3.contains(&e.name);
            if needed {
                let error = a.error.clone().unwrap_or_default();
                if !error.contains("L0A overflows") {
                    failures.push(format!("{} without {}: {error:?}", e.name, a.pass));
                }
                continue;
            }
            if !a.matches_reference {
                failures.push(format!("{} without {}: {:?}", e.name, a.pass, a.error));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
