//! The compile result's step graph, program and assembly, from source text.

use tilescope::compile::{compile, steps_dot, CompileOptions, StepEdgeKind, StepGraph};
use tilescope::types::Pipe;

const GATHER: &str = include_str!("../../static/examples/gather.tile");
const MATMUL: &str = include_str!("../../static/examples/matmul_tiled.tile");

#[test]
fn a_computed_gather_is_three_steps_joined_by_data_edges() {
    let r = compile(GATHER, &CompileOptions::default());
    assert!(r.ok(), "{:?}", r.diagnostics);
    let g = r.steps.expect("step graph");
    let kinds: Vec<&str> = g.nodes.iter().map(|n| n.kind.as_str()).collect();
    assert_eq!(kinds, ["load", "compute", "load, compute, store"]);
    assert_eq!(g.nodes[0].pipes, [Pipe::MTE2]);
    assert_eq!(g.nodes[1].pipes, [Pipe::V]);
    assert_eq!(g.nodes[2].pipes, [Pipe::MTE2, Pipe::V, Pipe::MTE3]);
    assert!(g.nodes.iter().all(|n| n.loop_var.as_deref() == Some("i")));
    let data: Vec<(u32, u32)> = g
        .edges
        .iter()
        .filter(|e| e.kind == StepEdgeKind::Data)
        .map(|e| (e.from, e.to))
        .collect();
    assert_eq!(data, [(0, 1), (1, 2)]);
    assert!(g.nodes[2].writes.contains(&"y".to_string()));
    let json = serde_json::to_string(&g).expect("serialises");
    let back: StepGraph = serde_json::from_str(&json).expect("deserialises");
    assert_eq!(back, g);
    let dot = steps_dot(&g);
    assert!(dot.starts_with("digraph steps {"), "{dot}");
    assert!(dot.contains("s0 -> s1;"), "{dot}");
}

#[test]
fn a_loop_carried_accumulator_has_a_loop_carried_edge() {
    let r = compile(MATMUL, &CompileOptions::default());
    assert!(r.ok(), "{:?}", r.diagnostics);
    let g = r.steps.expect("step graph");
    assert!(
        g.edges
            .iter()
            .any(|e| e.kind == StepEdgeKind::LoopCarried && e.back),
        "{:#?}",
        g.edges
    );
    assert!(steps_dot(&g).contains("loop-carried"));
}

#[test]
fn the_program_and_assembly_are_in_the_result() {
    let r = compile(MATMUL, &CompileOptions::default());
    let program = r.program.expect("program");
    assert!(program.validate().is_ok());
    let asm = r.asm.expect("asm");
    assert!(asm.contains("mmad.f32"), "{asm}");
    assert!(asm.contains("mov2d.f32"), "{asm}");
    assert!(asm.contains("fix.f32"), "{asm}");
    // The assembly text parses back into the same program.
    let back = tilescope::isa::asm::parse(&asm).expect("parses");
    assert_eq!(back.instrs.len(), program.instrs.len());
}

#[test]
fn auto_sync_flags_become_sync_edges_between_steps() {
    let source = include_str!("../../static/examples/gather.tile");
    let r = compile(source, &CompileOptions::default());
    let g = r.steps.expect("step graph");
    let sync: Vec<_> = g
        .edges
        .iter()
        .filter(|e| e.kind == StepEdgeKind::Sync)
        .collect();
    assert!(!sync.is_empty(), "{:#?}", g.edges);
    // The index load (MTE2) hands its tile to the offset build (V).
    assert!(
        sync.iter().any(|e| e.from == 0
            && e.to == 1
            && e.flag.is_some_and(|f| (f.0, f.1) == (Pipe::MTE2, Pipe::V))),
        "{sync:#?}"
    );
    assert!(steps_dot(&g).contains("color=red"));
}
