//! Core's provenance: each line of each pass's printed IR names the final instructions
//! it became (`IrLine::instrs`), so the playground follows a line to the assembly
//! without reading text. Checked on every gallery kernel against the printed text,
//! which this test may read and the views may not.

use tilescope::compile::{compile, CompileOptions};
use tilescope::isa::{asm, Op};

/// The opcode a line of the lowered program prints: its second word (after the pipe).
fn lowered_opcode(line: &str) -> Option<&str> {
    line.split_whitespace().nth(1)
}

/// The final instruction's opcode, as the assembly prints it.
fn opcode(program: &tilescope::isa::Program, i: u32) -> String {
    let text = program.instr_text(i as usize);
    text.split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Instructions emit adds for a lowered item: spill code and a loop's slot register.
fn emit_adds(op: &Op) -> bool {
    matches!(op, Op::Sld { .. } | Op::Sst { .. } | Op::Alu { .. })
}

#[test]
fn every_line_follows_to_the_instructions_it_became() {
    for ex in tilescope::examples::ALL {
        let r = compile(ex.source, &CompileOptions::default());
        let program = r.program.as_ref().expect(ex.name);
        let pass = |name: &str| {
            r.passes
                .iter()
                .find(|p| p.name == name)
                .unwrap_or_else(|| panic!("{}: no {name}", ex.name))
        };

        // The final program's lines are its instructions, one each.
        let emit = pass("emit");
        let mapped: Vec<u32> = emit.lines.iter().flat_map(|l| l.instrs.clone()).collect();
        let all: Vec<u32> = (0..program.instrs.len() as u32).collect();
        assert_eq!(mapped, all, "{}: emit", ex.name);

        // A lowered line becomes instructions of its own opcode (and what emit adds
        // around it); every instruction but loop code comes from a line of insert-sync's
        // dump, and every line of lower-to-pipes' dump that prints an instruction
        // reaches one through insert-sync's renumbering.
        for name in ["lower-to-pipes", "insert-sync"] {
            let p = pass(name);
            let mut reached = vec![false; program.instrs.len()];
            for (text, line) in p.ir.lines().zip(&p.lines) {
                let Some(code) = lowered_opcode(text) else {
                    continue;
                };
                if text.starts_with('.') {
                    assert!(line.instrs.is_empty(), "{}: {text}", ex.name);
                    continue;
                }
                assert!(
                    !line.instrs.is_empty(),
                    "{} after {name}: `{text}` became nothing",
                    ex.name
                );
                for &i in &line.instrs {
                    reached[i as usize] = true;
                    let op = &program.instrs[i as usize].op;
                    assert!(
                        opcode(program, i) == code || emit_adds(op),
                        "{} after {name}: `{text}` became `{}`",
                        ex.name,
                        program.instr_text(i as usize)
                    );
                }
            }
            if name == "insert-sync" {
                assert!(reached.iter().all(|&r| r), "{}: unreached", ex.name);
            }
        }

        // The tile IR lower-to-pipes read: each op's line holds exactly the
        // instructions that implement it, and every load and store op becomes some.
        let plan = pass("plan-memory");
        for (text, line) in plan.ir.lines().zip(&plan.lines) {
            for &i in &line.instrs {
                assert!(program.instrs[i as usize].prov.op.is_some(), "{}", ex.name);
            }
            let t = text.trim_start();
            if t.starts_with("store ") || t.contains(" = load ") {
                assert!(!line.instrs.is_empty(), "{}: `{t}` became nothing", ex.name);
            }
        }
        let from_ops = program
            .instrs
            .iter()
            .filter(|i| i.prov.op.is_some())
            .count();
        let linked: usize = plan.lines.iter().map(|l| l.instrs.len()).sum();
        assert_eq!(linked, from_ops, "{}", ex.name);
        // Sync code implements no op.
        for ins in &program.instrs {
            if matches!(
                ins.op,
                Op::SetFlag { .. } | Op::WaitFlag { .. } | Op::Barrier { .. }
            ) {
                assert_eq!(
                    ins.prov.op,
                    None,
                    "{}: {}",
                    ex.name,
                    asm::op_text(program, &ins.op)
                );
            }
        }
    }
}

/// A dump whose ops a later pass changed is not followed: its op numbering may name
/// other ops now. Dumps printed identically to the IR lowering read are.
#[test]
fn only_dumps_of_the_ir_lowering_read_follow_ops() {
    let ex = tilescope::examples::ALL
        .iter()
        .find(|e| e.name == "softmax")
        .expect("softmax example");
    let r = compile(ex.source, &CompileOptions::default());
    let plan = r
        .passes
        .iter()
        .position(|p| p.name == "plan-memory")
        .expect("ran");
    let read = &r.passes[plan].ir;
    let mut followed = 0;
    for p in &r.passes[..plan] {
        let any = p.lines.iter().any(|l| !l.instrs.is_empty());
        assert_eq!(any, p.ir == *read, "{}", p.name);
        followed += usize::from(any);
    }
    // parse's dump differs from plan-memory's, so at least one dump is not followed.
    assert!(followed < plan, "every dump followed");
}

/// A compile that stops before emit links nothing: its dumps exist, but no line
/// became an instruction.
#[test]
fn a_failed_compile_links_nothing() {
    // A tile of 1 MiB does not fit `teach`'s unified buffer: plan-memory fails.
    let r = compile(
        "kernel k(x: f32[512, 512], y: out f32[512, 512]) {\n    let t = load x[:, :];\n    store y[:, :] = t + 1.0;\n}\n",
        &CompileOptions {
            preset: Some("teach".into()),
            ..CompileOptions::default()
        },
    );
    assert!(r.program.is_none(), "{:?}", r.diagnostics);
    assert!(r.passes.len() > 5, "{:?}", r.diagnostics);
    assert!(r
        .passes
        .iter()
        .all(|p| p.lines.iter().all(|l| l.instrs.is_empty())));
}
