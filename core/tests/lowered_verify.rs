//! The lowered-program verifier (`lowered::verify`): every example verifies after
//! insert-sync under every sync strategy on both presets, and programs broken by hand
//! fail with the message of what was broken.

mod examples_support;

use tilescope::compile::{compile_with_context, CompileOptions, SyncStrategy};
use tilescope::isa::{AluOp, Op, Provenance, Val};
use tilescope::lowered::verify::verify;
use tilescope::lowered::{Instr, Item, Lowered, Target};
use tilescope::types::Pipe;

fn lowered(source: &str, sync: SyncStrategy, preset: &str) -> Lowered {
    let options = CompileOptions {
        sync,
        preset: Some(preset.into()),
        ..CompileOptions::default()
    };
    let (result, cx) = compile_with_context(source, &options);
    assert!(result.ok(), "{:?}", result.diagnostics);
    cx.lowered.expect("lowered program")
}

fn example(name: &str, sync: SyncStrategy) -> Lowered {
    let path = format!(
        "{}/../static/examples/{name}.tile",
        env!("CARGO_MANIFEST_DIR")
    );
    let source = std::fs::read_to_string(path).expect("readable example");
    lowered(&source, sync, "a3")
}

fn instr(op: Op) -> Item {
    Item::Instr(Instr {
        op,
        prov: Provenance::default(),
        accesses: Vec::new(),
    })
}

/// The errors of `l`, which must not verify.
fn errors(l: &Lowered) -> Vec<String> {
    match verify(l) {
        Ok(()) => panic!("a broken program verified"),
        Err(es) => es.iter().map(ToString::to_string).collect(),
    }
}

fn assert_mentions(errors: &[String], what: &str) {
    assert!(
        errors.iter().any(|e| e.contains(what)),
        "no error mentions `{what}`: {errors:#?}"
    );
}

/// Every instruction with its item path, in program order.
fn instrs(items: &[Item], prefix: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, Op)>) {
    for (i, item) in items.iter().enumerate() {
        prefix.push(i);
        match item {
            Item::Instr(ins) => out.push((prefix.clone(), ins.op.clone())),
            Item::Loop(l) => instrs(&l.body, prefix, out),
        }
        prefix.pop();
    }
}

fn all_instrs(l: &Lowered) -> Vec<(Vec<usize>, Op)> {
    let mut out = Vec::new();
    instrs(&l.body, &mut Vec::new(), &mut out);
    out
}

fn items_at<'a>(body: &'a mut Vec<Item>, path: &[usize]) -> Option<&'a mut Vec<Item>> {
    match path {
        [] | [_] => Some(body),
        [i, rest @ ..] => match body.get_mut(*i)? {
            Item::Loop(l) => items_at(&mut l.body, rest),
            Item::Instr(_) => None,
        },
    }
}

fn remove_at(l: &mut Lowered, path: &[usize]) {
    let last = *path.last().expect("a path");
    items_at(&mut l.body, path).expect("an item").remove(last);
}

/// The first vector unary instruction of `l`, with its item path.
fn first_vector_unary(l: &mut Lowered) -> (Vec<usize>, &mut Instr) {
    let (path, _) = all_instrs(l)
        .into_iter()
        .find(|(_, op)| matches!(op, Op::VUnary { .. }))
        .expect("a vector unary op");
    let last = *path.last().expect("a path");
    match items_at(&mut l.body, &path).and_then(|b| b.get_mut(last)) {
        Some(Item::Instr(ins)) => (path, ins),
        _ => panic!("no instruction at {path:?}"),
    }
}

#[test]
fn every_example_verifies_under_every_sync_strategy_on_both_presets() {
    let mut problems = Vec::new();
    let mut verified = 0;
    for path in examples_support::examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        for preset in ["teach", "a3"] {
            for sync in [
                SyncStrategy::Auto,
                SyncStrategy::Barrier,
                SyncStrategy::None,
            ] {
                let l = lowered(&source, sync, preset);
                match verify(&l) {
                    Ok(()) => verified += 1,
                    Err(es) => problems.push(format!(
                        "{} ({preset}, {sync:?}):\n  {}",
                        path.display(),
                        es.iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("\n  ")
                    )),
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(verified >= 6 * 10, "only {verified} programs verified");
}

/// The masked update of a loop-carried tile in place (`+=` in a loop with a tail)
/// records a read of the tile it writes (the lanes it adds to), which belongs to its
/// destination operand.
#[test]
fn an_in_place_update_may_read_its_destination() {
    let source = "kernel k(x: f32[4, 9], y: out f32[4, 1]) {
    let acc = zeros(f32[4, 1]);
    for c in 0..9 step 8 {
        let t = load x[:, c .. c + 8];
        acc += amax(t, axis=1);
    }
    store y[:, :] = acc;
}";
    fn reads_what_it_writes(items: &[Item]) -> bool {
        items.iter().any(|item| match item {
            Item::Instr(ins) => ins
                .accesses
                .iter()
                .any(|r| !r.write && ins.accesses.iter().any(|w| w.write && w.target == r.target)),
            Item::Loop(l) => reads_what_it_writes(&l.body),
        })
    }
    for sync in [SyncStrategy::Auto, SyncStrategy::None] {
        let l = lowered(source, sync, "a3");
        assert!(reads_what_it_writes(&l.body), "no in-place update");
        assert_eq!(verify(&l), Ok(()));
    }
}

#[test]
fn a_register_used_before_its_definition_is_reported() {
    let mut l = example("elementwise", SyncStrategy::Auto);
    let (never, out) = (l.new_reg(), l.new_reg());
    l.body.insert(
        0,
        instr(Op::Alu {
            op: AluOp::Add,
            dst: out,
            a: never,
            b: Val::Imm(1),
        }),
    );
    let es = errors(&l);
    assert_mentions(&es, &format!("r{} is used before it is defined", never.0));
    assert_mentions(&es, "at [0]");
}

#[test]
fn a_register_defined_only_inside_a_loop_is_undefined_after_it() {
    let mut l = example("elementwise", SyncStrategy::Auto);
    let (inside, after) = (l.new_reg(), l.new_reg());
    let at = l
        .body
        .iter()
        .position(|i| matches!(i, Item::Loop(_)))
        .expect("a loop");
    if let Some(Item::Loop(lp)) = l.body.get_mut(at) {
        lp.body.push(instr(Op::Mov {
            dst: inside,
            src: Val::Imm(3),
        }));
    }
    l.body.insert(
        at + 1,
        instr(Op::Mov {
            dst: after,
            src: Val::Reg(inside),
        }),
    );
    assert_mentions(
        &errors(&l),
        &format!("r{} is used before it is defined", inside.0),
    );
    // Defined before the loop too, it is defined on every path.
    l.body.insert(
        0,
        instr(Op::Mov {
            dst: inside,
            src: Val::Imm(0),
        }),
    );
    assert_eq!(verify(&l), Ok(()));
}

#[test]
fn a_wait_without_a_set_is_reported() {
    let mut l = example("elementwise", SyncStrategy::Auto);
    l.body.insert(
        0,
        instr(Op::WaitFlag {
            src: Pipe::MTE2,
            dst: Pipe::V,
            id: Val::Imm(15),
        }),
    );
    let es = errors(&l);
    assert_mentions(&es, "`wait_flag MTE2, V, 15` at [0]");
    assert_mentions(&es, "wait_flag without a matching set_flag on some path");
}

/// Removing any one `set_flag` leaves a wait without its set, or a dynamic wait without
/// any set of its id register; primes included.
#[test]
fn every_set_flag_of_auto_sync_is_needed() {
    for name in ["softmax", "multibuffer", "matmul_tiled", "flash_attention"] {
        let l = example(name, SyncStrategy::Auto);
        let sets: Vec<_> = all_instrs(&l)
            .into_iter()
            .filter(|(_, op)| matches!(op, Op::SetFlag { .. }))
            .collect();
        assert!(!sets.is_empty(), "{name} has no set_flag");
        for (path, op) in sets {
            let mut broken = l.clone();
            remove_at(&mut broken, &path);
            let es = errors(&broken);
            let dynamic = matches!(
                op,
                Op::SetFlag {
                    id: Val::Reg(_),
                    ..
                }
            );
            let what = if dynamic {
                "wait_flag without a set_flag of the same pipes and id register"
            } else {
                "wait_flag without a matching set_flag on some path"
            };
            assert!(
                es.iter().any(|e| e.contains(what)),
                "{name}: removing {op:?} at {path:?} gave {es:#?}"
            );
        }
    }
}

#[test]
fn a_set_flag_nothing_waits_for_is_reported() {
    let mut l = example("elementwise", SyncStrategy::Auto);
    l.body.push(instr(Op::SetFlag {
        src: Pipe::V,
        dst: Pipe::MTE3,
        id: Val::Imm(14),
    }));
    assert_mentions(
        &errors(&l),
        "set_flag V, MTE3, 14 is still set at the end of the program",
    );
}

#[test]
fn a_written_buffer_without_its_annotation_is_reported() {
    let mut l = example("softmax", SyncStrategy::Auto);
    let (path, ins) = first_vector_unary(&mut l);
    ins.accesses
        .retain(|a| !(a.write && matches!(a.target, Target::Buffer(_))));
    let span = ins.prov.span;
    let es = errors(&l);
    assert_mentions(&es, "no access annotation writes the ub buffer at");
    assert_mentions(&es, &format!("at {path:?}"));
    // Located: the instruction's item path and the source it came from.
    let located = verify(&l).err().unwrap_or_default();
    assert!(span.is_some());
    assert!(
        located.iter().any(|e| e.span == span
            && matches!(&e.location, tilescope::diag::Location::Lowered { path: p, .. } if *p == path)),
        "{located:?}"
    );
}

#[test]
fn an_annotation_of_no_operand_is_reported() {
    let mut l = example("softmax", SyncStrategy::Auto);
    let (_, ins) = first_vector_unary(&mut l);
    let mut extra = ins.accesses[0];
    // A vector instruction touches no GM tensor.
    extra.target = Target::Tensor(0);
    ins.accesses.push(extra);
    assert_mentions(&errors(&l), "belongs to no operand");
}

#[test]
fn loops_must_nest_as_items() {
    let mut l = example("elementwise", SyncStrategy::Auto);
    l.body.push(instr(Op::EndLoop));
    assert_mentions(
        &errors(&l),
        "loops are items of the lowered program, not instructions",
    );

    let mut l = example("matmul_tiled", SyncStrategy::Auto);
    let counter = l
        .body
        .iter()
        .find_map(|i| match i {
            Item::Loop(lp) => Some(lp.counter),
            _ => None,
        })
        .expect("a loop");
    if let Some(Item::Loop(lp)) = l.body.iter_mut().find(|i| matches!(i, Item::Loop(_))) {
        lp.body.push(instr(Op::Mov {
            dst: counter,
            src: Val::Imm(0),
        }));
    }
    assert_mentions(&errors(&l), "the counter of a loop around it");
}
