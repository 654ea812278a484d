//! Shared by the pass tests: the IR a pass printed when compiling a source (where a
//! filetest cannot state the case: a custom machine, a sweep), and the runs that check
//! a pass's kernels against the reference and the simulator's race detector.
// Each test crate that includes this module uses part of it.
#![allow(dead_code)]

use tilescope::compile::{compile, CompileOptions, CompileResult, SyncStrategy};
use tilescope::machine::Machine;

/// The printed IR after `pass`, compiling `source` with `options`; the compile must
/// succeed.
pub fn ir_after_with(source: &str, options: &CompileOptions, pass: &str) -> String {
    let result = compile(source, options);
    assert!(result.diagnostics.is_empty(), "{:#?}", result.diagnostics);
    pass_ir(&result, pass)
}

/// The printed IR after `pass` in a compile's records, without source positions: the
/// tests that read it check what the pass made; the goldens check the positions.
pub fn pass_ir(result: &CompileResult, pass: &str) -> String {
    result
        .passes
        .iter()
        .find(|p| p.name == pass)
        .map(|p| without_positions(&p.ir))
        .unwrap_or_else(|| panic!("no pass `{pass}`"))
}

/// `ir` with every ` !at LINE:COL` left out.
pub fn without_positions(ir: &str) -> String {
    let mut out = String::with_capacity(ir.len());
    let mut rest = ir;
    while let Some(at) = rest.find(" !at ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + " !at ".len()..];
        let len = after
            .find(|c: char| !(c.is_ascii_digit() || c == ':'))
            .unwrap_or(after.len());
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// Options for `machine` and `sync`, verifying the IR after every pass.
pub fn options(machine: Machine, sync: SyncStrategy) -> CompileOptions {
    CompileOptions {
        machine: Some(machine),
        sync,
        verify: true,
        ..CompileOptions::default()
    }
}

/// Runs `source` on `machine` under `auto` and `barrier` sync: it must compile, run
/// without errors or races, and match the reference bit for bit (`name` labels the
/// failure). For splits that sum every element in the reference's order.
pub fn assert_exact_without_races(name: &str, source: &str, machine: &Machine) {
    for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
        let r = tilescope::run::run(source, &options(machine.clone(), sync), Vec::new(), 4);
        let at = format!("{name} on {} {sync:?}", machine.name);
        assert!(r.diagnostics.is_empty(), "{at}: {:?}", r.diagnostics);
        assert!(r.sim.errors.is_empty(), "{at}: {:?}", r.sim.errors);
        assert!(r.sim.races.is_empty(), "{at}: {} races", r.sim.races.len());
        assert!(
            r.reference_match && r.max_abs_err == 0.0,
            "{at}: err {}",
            r.max_abs_err
        );
    }
}

/// Runs `source` on `machine` with no sync at all: the simulator must find a race,
/// which shows the syncs the compiler places are needed (`name` labels the failure).
pub fn assert_races_without_sync(name: &str, source: &str, machine: &Machine) {
    let r = tilescope::run::run(
        source,
        &options(machine.clone(), SyncStrategy::None),
        Vec::new(),
        4,
    );
    assert!(!r.sim.races.is_empty(), "{name}: no race without sync");
}
