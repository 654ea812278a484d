//! Each canonicalize sub-step on its own (before/after text), then the whole pass.

mod ir_support;

use tilescope::ir::{self, dce, lower::lower, Kernel};
use tilescope::passes::canonicalize::{self, cse, fold, fuse};

fn lowered(k: tilescope::front::hir::Kernel) -> Kernel {
    lower(&k).expect("lowers")
}

fn text(k: &Kernel) -> String {
    ir::verify(k).unwrap_or_else(|e| panic!("does not verify: {e:?}\n{}", ir::print(k).text));
    ir::print(k).text
}

#[test]
fn fold_normalizes_indices_folds_constants_and_identities() {
    let mut k = lowered(ir_support::redundant());
    assert!(fold::run(&mut k));
    let t = text(&k);
    assert!(t.contains("%t = load %x[%r * 4 .. %r * 4 + 4, :]"), "{t}");
    assert!(t.contains("%2 = const 2.0 : f32"), "{t}");
    // `%6 * 1.0` is replaced by `%6`: gelu reads the sum directly.
    assert!(t.contains("gelu %6 :"), "{t}");
    insta::assert_snapshot!(t);
    assert!(!fold::run(&mut k), "fold is idempotent");
}

#[test]
fn fold_turns_unmasked_updates_into_plain_ops() {
    let mut k = lowered(ir_support::matmul());
    assert!(fold::run(&mut k));
    let t = text(&k);
    assert!(t.contains("%acc.2 = add %acc.1, %0 : f32[32, 64]"), "{t}");
}

#[test]
fn fold_keeps_updates_where_lanes_may_be_masked() {
    let mut k = lowered(ir_support::colsum_tail());
    fold::run(&mut k);
    let t = text(&k);
    assert!(t.contains("%acc.2 = update add %acc.1, %0"), "{t}");
}

#[test]
fn cse_merges_identical_pure_ops() {
    let mut k = lowered(ir_support::redundant());
    fold::run(&mut k);
    assert!(cse::run(&mut k));
    let t = text(&k);
    assert!(!t.contains("%b ="), "{t}");
    assert!(t.contains("add %a, %a"), "{t}");
    insta::assert_snapshot!(t);
    assert!(!cse::run(&mut k));
}

#[test]
fn cse_merges_equal_constants_but_keeps_the_sign_of_zero() {
    use tilescope::front::hir::{BinaryOp, Index};
    let mut b = ir_support::B::new("zeros");
    let y = b.param("y", ir_support::f32t(&[4]), true);
    let t = ir_support::f32t(&[4]);
    // full(0.0) twice is one tile; full(-0.0) is another (1 / -0.0 is -inf).
    let sum = b.bin(
        BinaryOp::Add,
        b.bin(
            BinaryOp::Add,
            b.full(t.clone(), 0.0),
            b.full(t.clone(), 0.0),
        ),
        b.full(t, -0.0),
    );
    let store = b.store(y, vec![Index::Full], sum);
    let mut k = lowered(b.finish(vec![store]));
    assert!(cse::run(&mut k));
    let ir = text(&k);
    assert_eq!(ir.matches("full").count(), 2, "{ir}");
    assert!(ir.contains("-0"), "{ir}");
}

#[test]
fn cse_does_not_merge_loads() {
    let mut b = ir_support::B::new("twice");
    let x = b.param("x", ir_support::f32t(&[4]), false);
    let y = b.param("y", ir_support::f32t(&[4]), true);
    let s = vec![
        b.store(
            y,
            vec![tilescope::front::hir::Index::Full],
            b.load(x, vec![tilescope::front::hir::Index::Full]),
        ),
        b.store(
            y,
            vec![tilescope::front::hir::Index::Full],
            b.load(x, vec![tilescope::front::hir::Index::Full]),
        ),
    ];
    let mut k = lowered(b.finish(s));
    assert!(!cse::run(&mut k));
}

#[test]
fn dce_removes_dead_chains_and_keeps_stores() {
    let mut k = lowered(ir_support::redundant());
    fold::run(&mut k);
    cse::run(&mut k);
    assert!(dce::run(&mut k));
    let t = text(&k);
    assert!(!t.contains("%unused"), "{t}");
    assert!(
        !t.contains("const 1.0"),
        "the folded operands are gone:\n{t}"
    );
    assert!(t.contains("store %y"), "{t}");
    insta::assert_snapshot!(t);
    assert!(!dce::run(&mut k));
}

#[test]
fn dce_removes_a_loop_without_effects() {
    let mut k = lowered(ir_support::colsum_tail());
    // Drop the store: the accumulating loop now has no effect.
    k.body.items.pop();
    assert!(dce::run(&mut k));
    assert_eq!(
        text(&k),
        "kernel colsum(%x: f32[100, 64], %y: out f32[1, 64]) {\n}\n"
    );
}

#[test]
fn fuse_merges_single_use_chains_of_equal_type() {
    let mut k = lowered(ir_support::softmax());
    assert!(fuse::run(&mut k));
    dce::run(&mut k);
    let t = text(&k);
    assert!(
        t.contains("%e = fused(%t, %m) { exp($0 - $1) } : f32[8, 512]"),
        "{t}"
    );
    // %e has two uses (sum and div), so the div stays separate.
    assert!(t.contains("= div %e, %s"), "{t}");
    insta::assert_snapshot!(t);
}

#[test]
fn fuse_inlines_scalar_constants_and_respects_shape_and_reuse() {
    let mut k = lowered(ir_support::redundant());
    canonicalize::canonicalize(&mut k);
    let t = text(&k);
    // %a is used twice (after CSE), so it is not duplicated into the sum.
    assert!(t.contains("%a = mul %t, %0"), "{t}");
    assert!(t.contains("fused(%a, %t) { gelu($0 + $0) - $1 }"), "{t}");
}

#[test]
fn fuse_does_not_cross_reductions_or_loops() {
    let mut k = lowered(ir_support::colsum_tail());
    assert!(!fuse::run(&mut k));
    let mut k = lowered(ir_support::matmul());
    assert!(!fuse::run(&mut k));
}

#[test]
fn canonicalize_whole_pass_per_kernel() {
    for (name, hir) in [
        ("softmax", ir_support::softmax()),
        ("matmul", ir_support::matmul()),
        ("colsum_tail", ir_support::colsum_tail()),
        ("redundant", ir_support::redundant()),
        ("gather", ir_support::gather()),
    ] {
        let mut k = lowered(hir);
        canonicalize::canonicalize(&mut k);
        let t = text(&k);
        insta::assert_snapshot!(format!("canonicalize_{name}"), t);
        assert!(
            !canonicalize::canonicalize(&mut k),
            "{name}: canonicalize reaches a fixed point"
        );
    }
}
