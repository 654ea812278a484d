//! The checker's output: the softmax of `docs/language.md` and our own kernels check to
//! the expected `hir`, with the types, indices and loop facts later stages rely on.

mod common;

use tilescope::front::hir::{
    ExprKind, Index, IndexExprKind, Kernel, LoopEnd, LoopId, ReduceOp, StmtKind, UnaryOp, UpdateOp,
};
use tilescope::front::{self, hir};
use tilescope::types::{DType, TileType};

fn checked(source: &str, kernel: Option<&str>) -> Kernel {
    match front::frontend(source, kernel) {
        Ok(k) => k,
        Err(d) => panic!("{}", tilescope::diag::render(&d, "test.tile", source)),
    }
}

fn f32s(shape: &[u64]) -> TileType {
    TileType::new(DType::F32, shape.to_vec())
}

fn lets(k: &Kernel) -> Vec<(String, TileType)> {
    k.locals
        .iter()
        .map(|l| (l.name.clone(), l.ty.clone()))
        .collect()
}

#[test]
fn softmax_checks_to_the_expected_hir() {
    let k = checked(common::SOFTMAX, None);
    assert_eq!(k.name, "softmax");
    assert_eq!(k.params.len(), 2);
    assert_eq!(k.params[0].ty, f32s(&[64, 512]));
    assert!(!k.params[0].is_out && k.params[1].is_out);
    assert_eq!(
        lets(&k),
        [
            ("t".into(), f32s(&[8, 512])),
            ("m".into(), f32s(&[8, 1])),
            ("e".into(), f32s(&[8, 512])),
            ("s".into(), f32s(&[8, 1])),
        ]
    );
    let l = &k.loops[0];
    assert_eq!(
        (l.start, &l.end, l.step, l.buffers),
        (0, &LoopEnd::Const(64), 8, Some(2))
    );
    assert_eq!(l.static_trip_count(), Some(8));
    assert!(!l.has_tail());

    let [hir::Stmt {
        kind: StmtKind::For { id, body },
        ..
    }] = k.body.as_slice()
    else {
        panic!("expected one loop: {:?}", k.body);
    };
    assert_eq!(*id, LoopId(0));
    assert_eq!(body.len(), 5);
    // `let t = load x[r .. r + R, :]`: a range of constant length 8, not clamped.
    let StmtKind::Let { value, .. } = &body[0].kind else {
        panic!("let t")
    };
    let ExprKind::Load { index, .. } = &value.kind else {
        panic!("load")
    };
    let Index::Range {
        start,
        len: 8,
        clamped: false,
    } = &index[0]
    else {
        panic!("range: {:?}", index[0]);
    };
    assert_eq!(start.kind, IndexExprKind::Var(LoopId(0)));
    assert_eq!(index[1], Index::Full);
    // `amax(t, axis=1)` keeps the axis.
    let StmtKind::Let { value, .. } = &body[1].kind else {
        panic!("let m")
    };
    assert!(matches!(
        value.kind,
        ExprKind::Reduce {
            op: ReduceOp::Amax,
            axis: 1,
            ..
        }
    ));
    // `exp(t - m)` broadcasts.
    let StmtKind::Let { value, .. } = &body[2].kind else {
        panic!("let e")
    };
    let ExprKind::Unary {
        op: UnaryOp::Exp,
        arg,
    } = &value.kind
    else {
        panic!("exp")
    };
    assert_eq!(arg.ty, f32s(&[8, 512]));
    // The store writes e / s of the region's type.
    let StmtKind::Store { value, index, .. } = &body[4].kind else {
        panic!("store")
    };
    assert_eq!(value.ty, f32s(&[8, 512]));
    assert_eq!(index.len(), 2);
}

#[test]
fn a_range_driven_by_a_loop_with_a_tail_is_clamped() {
    let k = checked(common::EXTRA_KERNELS[0], None);
    let l = &k.loops[0];
    assert!(l.has_tail());
    assert_eq!(l.static_trip_count(), Some(4));
    let StmtKind::For { body, .. } = &k.body[0].kind else {
        panic!("loop")
    };
    let StmtKind::Let { value, .. } = &body[0].kind else {
        panic!("let")
    };
    let ExprKind::Load { index, .. } = &value.kind else {
        panic!("load")
    };
    assert!(matches!(
        index[0],
        Index::Range {
            len: 32,
            clamped: true,
            ..
        }
    ));
    // `relu(t) * 2.0 + 1`: the literals take the tile's dtype.
    let StmtKind::Store { value, .. } = &body[1].kind else {
        panic!("store")
    };
    let ExprKind::Binary { rhs, .. } = &value.kind else {
        panic!("binary")
    };
    assert_eq!(
        (&rhs.kind, &rhs.ty),
        (&ExprKind::Scalar(1.0), &TileType::scalar(DType::F32))
    );
}

#[test]
fn matmul_accumulates_into_an_f32_update() {
    let k = checked(common::EXTRA_KERNELS[1], None);
    assert_eq!(k.locals[0].ty, f32s(&[64, 64]));
    let StmtKind::For { body, .. } = &k.body[1].kind else {
        panic!("loop")
    };
    let StmtKind::Update {
        op: UpdateOp::Add,
        value,
        ..
    } = &body[2].kind
    else {
        panic!("update: {:?}", body[2].kind)
    };
    let ExprKind::MatMul { lhs, rhs } = &value.kind else {
        panic!("matmul")
    };
    assert_eq!(lhs.ty, TileType::new(DType::F16, vec![64, 16]));
    assert!(matches!(rhs.kind, ExprKind::Transpose(_)));
    assert_eq!(rhs.ty, TileType::new(DType::F16, vec![16, 64]));
    assert_eq!(value.ty, f32s(&[64, 64]));
}

#[test]
fn gathers_singles_casts_and_constructors() {
    let k = checked(common::EXTRA_KERNELS[2], None);
    assert_eq!(k.locals[1].ty, TileType::new(DType::BF16, vec![8, 4]));
    let StmtKind::Let { value, .. } = &k.body[1].kind else {
        panic!("let rows")
    };
    let ExprKind::Load { index, .. } = &value.kind else {
        panic!("load")
    };
    let Index::Indirect(idx) = &index[0] else {
        panic!("indirect: {:?}", index[0])
    };
    assert_eq!(idx.ty, TileType::new(DType::I32, vec![8]));
    let StmtKind::Let { value, .. } = &k.body[2].kind else {
        panic!("let m")
    };
    assert_eq!(
        value.kind,
        ExprKind::Full {
            value: f64::NEG_INFINITY
        }
    );
    // `mean(..., axis=-1)` normalises the axis.
    let StmtKind::Store { value, .. } = &k.body[3].kind else {
        panic!("store")
    };
    let ExprKind::Binary { rhs, .. } = &value.kind else {
        panic!("binary")
    };
    assert!(matches!(
        rhs.kind,
        ExprKind::Reduce {
            op: ReduceOp::Mean,
            axis: 1,
            ..
        }
    ));
    // `store y[j * 2 % 8, j // 1]`: single indices drop their axes (numpy); a lone
    // element is a one-element tile.
    let StmtKind::For { body, .. } = &k.body[4].kind else {
        panic!("loop")
    };
    let StmtKind::Store { index, value, .. } = &body[0].kind else {
        panic!("store")
    };
    assert!(matches!(&index[0], Index::Single(e) if matches!(e.kind, IndexExprKind::Mod(_, 8))));
    assert!(matches!(&index[1], Index::Single(_)));
    assert_eq!(value.ty, f32s(&[1]));
}

#[test]
fn loop_variables_in_tile_arithmetic_are_index_values() {
    let source = "kernel k(x: i32[4, 4], y: out i32[4, 4]) {
    for i in 0..4 {
        store y[i, :] = load x[i, :] + i * 2;
    }
}";
    let k = checked(source, None);
    let StmtKind::For { body, .. } = &k.body[0].kind else {
        panic!("loop")
    };
    let StmtKind::Store { value, .. } = &body[0].kind else {
        panic!("store")
    };
    let ExprKind::Binary { rhs, .. } = &value.kind else {
        panic!("binary")
    };
    // `i * 2` is one index expression, computed on the scalar pipe.
    let ExprKind::IndexValue(e) = &rhs.kind else {
        panic!("i * 2: {rhs:?}")
    };
    let IndexExprKind::Mul(var, two) = &e.kind else {
        panic!("i * 2: {e:?}")
    };
    assert_eq!(var.kind, IndexExprKind::Var(LoopId(0)));
    assert_eq!(two.kind, IndexExprKind::Const(2));
    assert_eq!(rhs.ty, TileType::scalar(DType::I32));
}

#[test]
fn floor_division_and_modulo_of_a_range_cancel_structurally() {
    let source = "kernel k(x: f32[16, 64], y: out f32[16, 64]) {
    for i in 0..64 step 4 {
        store y[i // 4, (i % 16) * 4 .. (i % 16) * 4 + 4] = load x[i // 4, 0 .. 4];
    }
}";
    let k = checked(source, None);
    let StmtKind::For { body, .. } = &k.body[0].kind else {
        panic!("loop")
    };
    let StmtKind::Store { index, .. } = &body[0].kind else {
        panic!("store")
    };
    assert!(matches!(
        index[1],
        Index::Range {
            len: 4,
            clamped: false,
            ..
        }
    ));
}

#[test]
fn kernels_are_selected_by_name_and_see_every_const() {
    let source = "kernel a(x: f32[N]) { }\nkernel b(x: f32[N, 2]) { }\nconst N = 4;";
    assert_eq!(checked(source, None).name, "a");
    let b = checked(source, Some("b"));
    assert_eq!(b.params[0].ty, f32s(&[4, 2]));
}

#[test]
fn scalar_folding_makes_negative_infinity_a_scalar() {
    let source =
        "kernel k(y: out f32[4, 4]) { store y[:, :] = full(f32[4, 4], -inf) * -(2 // 2); }";
    let k = checked(source, None);
    let StmtKind::Store { value, .. } = &k.body[0].kind else {
        panic!("store")
    };
    let ExprKind::Binary { rhs, .. } = &value.kind else {
        panic!("binary")
    };
    assert_eq!(rhs.kind, ExprKind::Scalar(-1.0));
}
