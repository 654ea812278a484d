//! The verifier catches each broken invariant: every test breaks one thing in a valid
//! lowered kernel and checks the error names it.

mod ir_support;

use tilescope::ir::{self, lower::lower, BlockItem, Handle, Kernel, OpKind, ValueId};
use tilescope::types::{DType, MemSpace, TileType};

fn lowered(k: tilescope::front::hir::Kernel) -> Kernel {
    let k = lower(&k).expect("lowers");
    ir::verify(&k).expect("starts valid");
    k
}

fn errors(k: &Kernel) -> String {
    match ir::verify(k) {
        Ok(()) => panic!("broken IR verified:\n{}", ir::print(k).text),
        Err(es) => es
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn assert_error(k: &Kernel, needle: &str) {
    let e = errors(k);
    assert!(e.contains(needle), "expected `{needle}` in:\n{e}");
}

fn named(k: &Kernel, name: &str) -> ValueId {
    k.values
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some(name))
        .map(|(h, _)| h)
        .expect("named value")
}

fn def_op(k: &Kernel, v: ValueId) -> ir::OpId {
    match k.values[v].def {
        ir::ValueDef::Result { op, .. } | ir::ValueDef::LoopArg { op, .. } => op,
    }
}

/// The first loop of the body and its body items.
fn first_loop(k: &mut Kernel) -> &mut ir::ForOp {
    let id = k
        .body
        .ops()
        .find(|&op| matches!(k.ops[op].kind, OpKind::For(_)))
        .expect("a loop");
    match &mut k.ops[id].kind {
        OpKind::For(l) => l,
        _ => unreachable!("found as a loop"),
    }
}

#[test]
fn op_handle_out_of_range() {
    let mut k = lowered(ir_support::colsum_tail());
    k.body.items.push(BlockItem::Op(Handle::from_index(999)));
    assert_error(&k, "op #999: out of range");
}

#[test]
fn operand_handle_out_of_range() {
    let mut k = lowered(ir_support::softmax());
    let m = named(&k, "m");
    let op = def_op(&k, m);
    k.ops[op].kind = OpKind::Reduce {
        op: tilescope::front::hir::ReduceOp::Amax,
        arg: Handle::from_index(777),
        axis: 1,
    };
    assert_error(&k, "operand value #777 is out of range");
}

#[test]
fn op_placed_twice() {
    let mut k = lowered(ir_support::colsum_tail());
    let first = k.body.items[0].clone();
    k.body.items.push(first);
    assert_error(&k, "appears in more than one place");
}

#[test]
fn use_before_definition() {
    let mut k = lowered(ir_support::softmax());
    let l = first_loop(&mut k);
    l.body.items.swap(0, 1); // amax before the load it reads
    assert_error(&k, "does not dominate");
}

#[test]
fn value_from_inside_a_loop_used_after_it() {
    let mut k = lowered(ir_support::colsum_tail());
    let t = named(&k, "t");
    let store = k.body.ops().last().expect("store");
    if let OpKind::Store { value, .. } = &mut k.ops[store].kind {
        *value = t;
    }
    assert_error(&k, "does not dominate");
}

#[test]
fn result_type_breaks_the_op_rule() {
    let mut k = lowered(ir_support::softmax());
    let m = named(&k, "m");
    k.values[m].ty = TileType::new(DType::F32, vec![8, 512]);
    assert_error(&k, "does not match the op's rule");
}

#[test]
fn cast_may_change_dtype_but_not_shape() {
    let mut k = lowered(ir_support::softmax());
    let t = named(&k, "t");
    let (good_op, _) = k.add_op(
        OpKind::Cast { arg: t },
        Default::default(),
        TileType::new(DType::F16, vec![8, 512]),
        None,
    );
    let (bad_op, _) = k.add_op(
        OpKind::Cast { arg: t },
        Default::default(),
        TileType::new(DType::F16, vec![8, 1]),
        None,
    );
    let l = first_loop(&mut k);
    l.body.items.insert(1, BlockItem::Op(good_op));
    l.body.items.insert(2, BlockItem::Op(bad_op));
    let e = errors(&k);
    assert_eq!(e.matches("does not match the op's rule").count(), 1, "{e}");
}

#[test]
fn loop_carried_arity() {
    let mut k = lowered(ir_support::colsum_tail());
    first_loop(&mut k).yields.clear();
    assert_error(&k, "loop-carried arity differs");
}

#[test]
fn loop_carried_types() {
    let mut k = lowered(ir_support::colsum_tail());
    let arg = first_loop(&mut k).args[0];
    k.values[arg].ty = TileType::new(DType::F32, vec![2, 64]);
    assert_error(&k, "changes type");
}

#[test]
fn loop_variable_outside_its_loop() {
    let mut k = lowered(ir_support::softmax());
    let var = first_loop(&mut k).var;
    let (op, _) = k.add_op(
        OpKind::IndexValue {
            expr: ir::IndexExpr::Var(var),
        },
        Default::default(),
        TileType::scalar(DType::I32),
        None,
    );
    k.body.items.push(BlockItem::Op(op));
    assert_error(&k, "used outside its loop");
}

#[test]
fn store_to_an_input() {
    let mut k = lowered(ir_support::softmax());
    k.params[1].is_out = false;
    assert_error(&k, "not an `out` parameter");
}

#[test]
fn value_records_the_wrong_definition() {
    let mut k = lowered(ir_support::softmax());
    let m = named(&k, "m");
    let t = named(&k, "t");
    k.values[m].def = k.values[t].def;
    assert_error(&k, "records definition");
}

#[test]
fn spaces_consistent_once_set() {
    let mut k = lowered(ir_support::softmax());
    let t = named(&k, "t");
    k.values[t].space = Some(MemSpace::L1);
    assert_error(&k, "a vector operand is in l1, expected ub");

    let mut k = lowered(ir_support::softmax());
    let t = named(&k, "t");
    k.values[t].space = Some(MemSpace::GM);
    assert_error(&k, "cannot live in GM");

    let mut k = lowered(ir_support::colsum_tail());
    let (init, arg) = {
        let l = first_loop(&mut k);
        (l.inits[0], l.args[0])
    };
    k.values[init].space = Some(MemSpace::UB);
    k.values[arg].space = Some(MemSpace::L0C);
    assert_error(&k, "changes memory space");
}

#[test]
fn matmul_operand_spaces() {
    let mut k = lowered(ir_support::matmul());
    let x = named(&k, "x");
    k.values[x].space = Some(MemSpace::L0B);
    assert_error(&k, "the matmul left operand is in l0b, expected l0a");
}

#[test]
fn fused_expression_reads_a_missing_operand() {
    let mut k = lowered(ir_support::softmax());
    let e = named(&k, "e");
    let op = def_op(&k, e);
    k.ops[op].kind = OpKind::Fused {
        args: vec![named(&k, "t")],
        expr: ir::FusedExpr::Arg(3),
    };
    assert_error(&k, "reads $3 but has 1 operands");
}
