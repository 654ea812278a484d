//! Whole kernels built by hand: tails, gather/scatter, loop-carried updates, argument
//! validation and limits.

mod interp_support;

use interp_support::*;
use tilescope::front::hir::{
    BinaryOp, Index, IndexExpr, IndexExprKind, ReduceOp, UnaryOp, UpdateOp,
};
use tilescope::tensor::Tensor;
use tilescope::types::DType::{F32, I32};

/// x[r][c] = -(100 r + c + 1): all negative, so a masked zero winning an `amax` shows.
fn tail_input() -> Tensor {
    let v: Vec<f32> = (0..400)
        .map(|i| -((100 * (i / 100) + i % 100 + 1) as f32))
        .collect();
    Tensor::from_f32(F32, vec![4, 100], &v)
}

/// for c in 0..100 step 32 { t = load x[:, c..c+32]; y[:, c..c+32] = t * 2;
///   mx[:, c/32] = amax(t); mn[:, c/32] = mean(t); acc += sum(t) }  s = acc
#[test]
fn tail_iteration_masks_reductions_and_stores() {
    let mut b = KernelBuilder::new("tail");
    let x = b.param("x", F32, &[4, 100], false);
    let y = b.param("y", F32, &[4, 100], true);
    let mx = b.param("mx", F32, &[4, 4], true);
    let mn = b.param("mn", F32, &[4, 4], true);
    let s = b.param("s", F32, &[4, 1], true);
    let acc = b.local("acc", ty(F32, &[4, 1]));
    let t = b.local("t", ty(F32, &[4, 32]));
    let l = b.for_loop("c", 0, 100, 32);
    let slot = || {
        Index::Single(IndexExpr {
            kind: IndexExprKind::FloorDiv(Box::new(var(l)), 32),
            span: sp(9),
        })
    };
    let body = vec![
        let_(t, b.load(x, vec![Index::Full, clamped(var(l), 32)])),
        store(
            y,
            vec![Index::Full, clamped(var(l), 32)],
            binary(BinaryOp::Mul, b.local_expr(t), scalar(2.0, F32)),
        ),
        store(
            mx,
            vec![Index::Full, slot()],
            reduce(ReduceOp::Amax, b.local_expr(t), 1),
        ),
        store(
            mn,
            vec![Index::Full, slot()],
            reduce(ReduceOp::Mean, b.local_expr(t), 1),
        ),
        update(
            acc,
            UpdateOp::Add,
            reduce(ReduceOp::Sum, b.local_expr(t), 1),
        ),
    ];
    b.k.body = vec![
        let_(acc, full(ty(F32, &[4, 1]), 0.0)),
        for_(l, body),
        store(s, vec![Index::Full, Index::Full], b.local_expr(acc)),
    ];
    let k = b.build();
    let out = run(
        &k,
        vec![
            tail_input(),
            Tensor::zeros(F32, vec![4, 100]),
            Tensor::zeros(F32, vec![4, 4]),
            Tensor::zeros(F32, vec![4, 4]),
            Tensor::zeros(F32, vec![4, 1]),
        ],
    );
    let xv = tail_input().to_f32_vec();
    assert_eq!(
        out[1].to_f32_vec(),
        xv.iter().map(|v| v * 2.0).collect::<Vec<_>>()
    );
    for r in 0..4 {
        let base = 100.0 * r as f32;
        // Row sum of -(base + 1) .. -(base + 100).
        assert_eq!(out[4].get(r), -(100.0 * base + 5050.0));
        // amax of each chunk is its first element; the tail chunk starts at column 96.
        let mx: Vec<f32> = (0..4).map(|j| out[2].get(4 * r + j)).collect();
        assert_eq!(
            mx,
            [
                -(base + 1.0),
                -(base + 33.0),
                -(base + 65.0),
                -(base + 97.0)
            ]
        );
        // The tail mean is over its 4 valid columns 96..100 only.
        let mn: Vec<f32> = (0..4).map(|j| out[3].get(4 * r + j)).collect();
        assert_eq!(
            mn,
            [
                -(base + 16.5),
                -(base + 48.5),
                -(base + 80.5),
                -(base + 98.5)
            ]
        );
    }
}

#[test]
fn all_masked_reductions_give_the_identity() {
    // A clamped range starting at the extent has no valid lanes.
    for (op, want) in [
        (ReduceOp::Sum, 0.0),
        (ReduceOp::Amax, f32::NEG_INFINITY),
        (ReduceOp::Amin, f32::INFINITY),
        (ReduceOp::Mean, f32::NAN),
    ] {
        let mut b = KernelBuilder::new("empty");
        let x = b.param("x", F32, &[2, 8], false);
        let y = b.param("y", F32, &[2, 1], true);
        let t = b.load(x, vec![Index::Full, clamped(c(8), 4)]);
        b.k.body = vec![store(y, vec![Index::Full, Index::Full], reduce(op, t, 1))];
        let out = run(
            &b.build(),
            vec![
                Tensor::from_f32(F32, vec![2, 8], &[1.0; 16]),
                Tensor::zeros(F32, vec![2, 1]),
            ],
        );
        let got = out[1].get(0);
        assert!(
            got == want || (got.is_nan() && want.is_nan()),
            "{op:?}: {got}"
        );
    }
}

#[test]
fn masked_lanes_do_not_leak_into_later_ops() {
    // exp of a masked lane would be 1; the sum over the tail must still count 4 lanes.
    let mut b = KernelBuilder::new("exp_tail");
    let x = b.param("x", F32, &[1, 100], false);
    let s = b.param("s", F32, &[1, 4], true);
    let l = b.for_loop("c", 0, 100, 32);
    let e = unary(
        UnaryOp::Exp,
        b.load(x, vec![Index::Full, clamped(var(l), 32)]),
    );
    let slot = Index::Single(IndexExpr {
        kind: IndexExprKind::FloorDiv(Box::new(var(l)), 32),
        span: sp(9),
    });
    b.k.body = vec![for_(
        l,
        vec![store(
            s,
            vec![Index::Full, slot],
            reduce(ReduceOp::Sum, e, 1),
        )],
    )];
    let out = run(
        &b.build(),
        vec![
            Tensor::zeros(F32, vec![1, 100]),
            Tensor::zeros(F32, vec![1, 4]),
        ],
    );
    assert_eq!(out[1].to_f32_vec(), [32.0, 32.0, 32.0, 4.0]);
}

fn rows_tensor(rows: u64, cols: u64) -> Tensor {
    let v: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    Tensor::from_f32(F32, vec![rows, cols], &v)
}

fn ints(v: &[i32]) -> Tensor {
    let mut t = Tensor::zeros(I32, vec![v.len() as u64]);
    v.iter().enumerate().for_each(|(i, &x)| t.set_i32(i, x));
    t
}

/// y = load x[load idx[:] + offset, :]
fn gather_kernel(offset: i64) -> tilescope::front::hir::Kernel {
    let mut b = KernelBuilder::new("gather");
    let x = b.param("x", F32, &[40, 2], false);
    let idx = b.param("idx", I32, &[3], false);
    let y = b.param("y", F32, &[3, 2], true);
    let mut rows = b.load_all(idx);
    if offset != 0 {
        rows = binary(BinaryOp::Add, rows, scalar(offset as f64, I32));
    }
    let g = b.load(x, vec![Index::Indirect(Box::new(rows)), Index::Full]);
    b.k.body = vec![store(y, vec![Index::Full, Index::Full], g)];
    b.build()
}

#[test]
fn gather_moves_whole_rows() {
    let out = run(
        &gather_kernel(0),
        vec![
            rows_tensor(40, 2),
            ints(&[5, 0, 39]),
            Tensor::zeros(F32, vec![3, 2]),
        ],
    );
    assert_eq!(out[2].to_f32_vec(), [10.0, 11.0, 0.0, 1.0, 78.0, 79.0]);
    // An index computed in the kernel.
    let out = run(
        &gather_kernel(2),
        vec![
            rows_tensor(40, 2),
            ints(&[5, 0, 37]),
            Tensor::zeros(F32, vec![3, 2]),
        ],
    );
    assert_eq!(out[2].to_f32_vec(), [14.0, 15.0, 4.0, 5.0, 78.0, 79.0]);
}

#[test]
fn out_of_range_gather_is_an_error_naming_the_tensor() {
    for bad in [40, -1] {
        let k = gather_kernel(0);
        let mut tensors = vec![
            rows_tensor(40, 2),
            ints(&[1, bad, 2]),
            Tensor::zeros(F32, vec![3, 2]),
        ];
        let err = tilescope::interp::run(&k, &mut tensors).expect_err("index out of range");
        assert!(err.message.contains("`x`"), "{}", err.message);
        assert!(err.message.contains(&bad.to_string()), "{}", err.message);
        assert!(err.message.contains("extent 40"), "{}", err.message);
        // The span is the index expression's (`load idx[:]` in the builder).
        assert_eq!(err.span, Some(sp(500)));
    }
}

#[test]
fn scatter_writes_rows_last_write_wins() {
    // store y[idx, :] = load x[:, :] with idx = [2, 0, 2]: row 2 gets x's last row.
    let mut b = KernelBuilder::new("scatter");
    let x = b.param("x", F32, &[3, 2], false);
    let idx = b.param("idx", I32, &[3], false);
    let y = b.param("y", F32, &[4, 2], true);
    let rows = Index::Indirect(Box::new(b.load_all(idx)));
    b.k.body = vec![store(y, vec![rows, Index::Full], b.load_all(x))];
    let k = b.build();
    let y0 = Tensor::from_f32(F32, vec![4, 2], &[-1.0; 8]);
    let out = run(&k, vec![rows_tensor(3, 2), ints(&[2, 0, 2]), y0]);
    assert_eq!(
        out[2].to_f32_vec(),
        [2.0, 3.0, -1.0, -1.0, 4.0, 5.0, -1.0, -1.0]
    );
    // Out of range on a scatter is an error too.
    let mut bad = vec![
        rows_tensor(3, 2),
        ints(&[0, 4, 1]),
        Tensor::zeros(F32, vec![4, 2]),
    ];
    let err = tilescope::interp::run(&k, &mut bad).expect_err("scatter out of range");
    assert!(
        err.message.contains("`y`") && err.message.contains("index 4"),
        "{}",
        err.message
    );
}

#[test]
fn loop_carried_updates_follow_their_operator() {
    // i32 acc: set to i, add i, sub i, mul 2, over i in 1..5 (1, 2, 3, 4).
    let cases = [
        (UpdateOp::Set, 0, 4),
        (UpdateOp::Add, 0, 10),
        (UpdateOp::Sub, 0, -10),
        (UpdateOp::Mul, 1, 24),
    ];
    for (op, init, want) in cases {
        let mut b = KernelBuilder::new("acc");
        let y = b.param("y", I32, &[2], true);
        let acc = b.local("acc", ty(I32, &[2]));
        let l = b.for_loop("i", 1, 5, 1);
        b.k.body = vec![
            let_(acc, full(ty(I32, &[2]), init as f64)),
            for_(l, vec![update(acc, op, index_value(var(l)))]),
            store(y, vec![Index::Full], b.local_expr(acc)),
        ];
        let out = run(&b.build(), vec![Tensor::zeros(I32, vec![2])]);
        assert_eq!(
            (out[0].get_i32(0), out[0].get_i32(1)),
            (want, want),
            "{op:?}"
        );
    }
}

#[test]
fn update_with_a_tail_value_keeps_masked_lanes() {
    // acc[1, 100] = 1; for c in 0..100 step 64: acc[:, 0..64] ... modelled as
    // acc = load x[:, c..c+64] (clamped) broadcast-free into a [1, 64] accumulator:
    // the tail writes only its 36 valid lanes; the rest keep the first iteration's values.
    let mut b = KernelBuilder::new("keep");
    let x = b.param("x", F32, &[1, 100], false);
    let y = b.param("y", F32, &[1, 64], true);
    let acc = b.local("acc", ty(F32, &[1, 64]));
    let l = b.for_loop("c", 0, 100, 64);
    b.k.body = vec![
        let_(acc, full(ty(F32, &[1, 64]), 0.0)),
        for_(
            l,
            vec![update(
                acc,
                UpdateOp::Set,
                b.load(x, vec![Index::Full, clamped(var(l), 64)]),
            )],
        ),
        store(y, vec![Index::Full, Index::Full], b.local_expr(acc)),
    ];
    let out = run(
        &b.build(),
        vec![rows_tensor(1, 100), Tensor::zeros(F32, vec![1, 64])],
    );
    let want: Vec<f32> = (0..64)
        .map(|j| if j < 36 { 64.0 + j as f32 } else { j as f32 })
        .collect();
    assert_eq!(out[1].to_f32_vec(), want);
}

#[test]
fn nested_loops_with_offsets() {
    // for i in 0..4 step 2 { for j in 0..6 step 3 { y[i..i+2, j..j+3] = x[i..i+2, j..j+3] + (i + j) } }
    let mut b = KernelBuilder::new("nest");
    let x = b.param("x", F32, &[4, 6], false);
    let y = b.param("y", F32, &[4, 6], true);
    let li = b.for_loop("i", 0, 4, 2);
    let lj = b.for_loop("j", 0, 6, 3);
    let region = || vec![range(var(li), 2), range(var(lj), 3)];
    let shift = cast(index_value(add_ix(var(li), var(lj))), F32);
    let v = binary(BinaryOp::Add, b.load(x, region()), shift);
    b.k.body = vec![for_(li, vec![for_(lj, vec![store(y, region(), v)])])];
    let out = run(
        &b.build(),
        vec![rows_tensor(4, 6), Tensor::zeros(F32, vec![4, 6])],
    );
    let want: Vec<f32> = (0..24)
        .map(|k| (k + (k / 6) / 2 * 2 + (k % 6) / 3 * 3) as f32)
        .collect();
    assert_eq!(out[1].to_f32_vec(), want);
}

#[test]
fn tensors_are_checked_against_the_parameters() {
    let k = gather_kernel(0);
    let mut wrong_count = vec![rows_tensor(40, 2)];
    let err = tilescope::interp::run(&k, &mut wrong_count).expect_err("count");
    assert!(err.message.contains("3 tensors"), "{}", err.message);
    let mut wrong_shape = vec![
        rows_tensor(40, 3),
        ints(&[0, 0, 0]),
        Tensor::zeros(F32, vec![3, 2]),
    ];
    let err = tilescope::interp::run(&k, &mut wrong_shape).expect_err("shape");
    assert!(
        err.message.contains("`x`") && err.message.contains("f32[40, 2]"),
        "{}",
        err.message
    );
    let mut wrong_dtype = vec![
        rows_tensor(40, 2),
        Tensor::zeros(F32, vec![3]),
        Tensor::zeros(F32, vec![3, 2]),
    ];
    let err = tilescope::interp::run(&k, &mut wrong_dtype).expect_err("dtype");
    assert!(
        err.message.contains("`idx`") && err.message.contains("i32[3]"),
        "{}",
        err.message
    );
    let mut short = vec![
        rows_tensor(40, 2),
        ints(&[0, 0, 0]),
        Tensor::zeros(F32, vec![3, 2]),
    ];
    short[0].data.pop();
    assert!(tilescope::interp::run(&k, &mut short).is_err());
}

#[test]
fn iteration_limit_is_an_error_not_a_hang() {
    let mut b = KernelBuilder::new("long");
    let y = b.param("y", F32, &[1], true);
    let l = b.for_loop("i", 0, 2_000_000, 1);
    b.k.body = vec![for_(l, vec![])];
    let _ = y;
    let err =
        tilescope::interp::run(&b.build(), &mut [Tensor::zeros(F32, vec![1])]).expect_err("limit");
    assert!(err.message.contains("1000000"), "{}", err.message);
}

#[test]
fn megaelement_tiles_run() {
    // A 2^20-element tile through a softmax-like chain.
    let n = 1024u64;
    let mut b = KernelBuilder::new("big");
    let x = b.param("x", F32, &[n, n], false);
    let y = b.param("y", F32, &[n, n], true);
    let t = b.local("t", ty(F32, &[n, n]));
    let m = reduce(ReduceOp::Amax, b.local_expr(t), 1);
    let e = unary(UnaryOp::Exp, binary(BinaryOp::Sub, b.local_expr(t), m));
    let s = binary(BinaryOp::Div, e.clone(), reduce(ReduceOp::Sum, e, 1));
    b.k.body = vec![
        let_(t, b.load_all(x)),
        store(y, vec![Index::Full, Index::Full], s),
    ];
    let out = run(
        &b.build(),
        vec![
            Tensor::zeros(F32, vec![n, n]),
            Tensor::zeros(F32, vec![n, n]),
        ],
    );
    assert_eq!(out[1].get(0), 1.0 / 1024.0);
    assert_eq!(out[1].get((n * n - 1) as usize), 1.0 / 1024.0);
}

proptest::proptest! {
    /// For any extent and step, a clamped loop stores every column exactly once and its
    /// reduction sees exactly the valid columns.
    #[test]
    fn clamped_loops_cover_the_axis_exactly(n in 1u64..150, step in 1u64..48, seed in 0u64..1000) {
        let mut b = KernelBuilder::new("cover");
        let x = b.param("x", F32, &[2, n], false);
        let y = b.param("y", F32, &[2, n], true);
        let s = b.param("s", F32, &[2, 1], true);
        let acc = b.local("acc", ty(F32, &[2, 1]));
        let l = b.for_loop("c", 0, n as i64, step as i64);
        let t = || b.load(x, vec![Index::Full, clamped(var(l), step)]);
        let body = vec![
            store(y, vec![Index::Full, clamped(var(l), step)], binary(BinaryOp::Add, t(), scalar(1.0, F32))),
            update(acc, UpdateOp::Add, reduce(ReduceOp::Amax, unary(UnaryOp::Abs, t()), 1)),
        ];
        b.k.body = vec![
            let_(acc, full(ty(F32, &[2, 1]), 0.0)),
            for_(l, body),
            store(s, vec![Index::Full, Index::Full], b.local_expr(acc)),
        ];
        let xs = tilescope::inputs::generate(F32, vec![2, n], seed, 0);
        let out = run(&b.build(), vec![xs.clone(), Tensor::zeros(F32, vec![2, n]), Tensor::zeros(F32, vec![2, 1])]);
        let want: Vec<f32> = xs.to_f32_vec().iter().map(|v| v + 1.0).collect();
        proptest::prop_assert_eq!(out[1].to_f32_vec(), want);
        for r in 0..2 {
            let row: Vec<f32> = (0..n as usize).map(|j| xs.get(r * n as usize + j).abs()).collect();
            let expected: f32 = row.chunks(step as usize).map(|c| c.iter().fold(f32::NEG_INFINITY, |a, &v| a.max(v))).sum();
            proptest::prop_assert_eq!(out[2].get(r), expected);
        }
    }
}

#[test]
fn deep_expressions_are_refused_not_overflowing() {
    let depth_ok = tilescope::interp::MAX_EXPR_DEPTH - 1;
    for (depth, ok) in [(depth_ok, true), (depth_ok + 10, false)] {
        let mut b = KernelBuilder::new("deep");
        let x = b.param("x", F32, &[2], false);
        let y = b.param("y", F32, &[2], true);
        let mut e = b.load_all(x);
        for _ in 0..depth {
            e = unary(UnaryOp::Neg, e);
        }
        b.k.body = vec![store(y, vec![Index::Full], e)];
        let k = b.build();
        let mut t = vec![
            Tensor::from_f32(F32, vec![2], &[1.0, 2.0]),
            Tensor::zeros(F32, vec![2]),
        ];
        let r = tilescope::interp::run(&k, &mut t);
        assert_eq!(r.is_ok(), ok, "{r:?}");
    }
}

/// `b = buffers(f32[1, 2], 2)`; for i in 0..3 { b[i] = load x[i, :]; store y[i, :] = b[i]; }
/// The checker proves slot indices in range; the interpreter checks again and names the
/// access that leaves the slots.
#[test]
fn a_slot_index_outside_the_slots_is_an_error_naming_the_access() {
    use tilescope::front::hir::{Local, LocalId, Stmt, StmtKind};
    let mut b = KernelBuilder::new("slots");
    let x = b.param("x", F32, &[3, 2], false);
    let y = b.param("y", F32, &[3, 2], true);
    b.k.locals.push(Local {
        name: "b".into(),
        ty: ty(F32, &[1, 2]),
        span: sp(200),
        slots: Some(2),
    });
    let buf = LocalId(0);
    let i = b.for_loop("i", 0, 3, 1);
    let slot_of = |at: u32| IndexExpr {
        span: sp(at),
        ..var(i)
    };
    let read = tilescope::front::hir::Expr {
        kind: tilescope::front::hir::ExprKind::SlotRead {
            local: buf,
            slot: slot_of(700),
        },
        ty: ty(F32, &[1, 2]),
        span: sp(701),
    };
    let write = Stmt {
        kind: StmtKind::SlotWrite {
            local: buf,
            slot: slot_of(600),
            value: b.load(x, vec![Index::Single(var(i)), Index::Full]),
        },
        span: sp(601),
    };
    let declare = Stmt {
        kind: StmtKind::Buffers { local: buf },
        span: sp(300),
    };
    b.k.body = vec![
        declare,
        for_(
            i,
            vec![
                write,
                store(y, vec![Index::Single(var(i)), Index::Full], read),
            ],
        ),
    ];
    let k = b.build();
    let mut tensors = vec![rows_tensor(3, 2), Tensor::zeros(F32, vec![3, 2])];
    let err = tilescope::interp::run(&k, &mut tensors).expect_err("slot 2 of 2");
    assert_eq!(err.message, "slot 2 of `b` is outside 0..2");
    assert_eq!(err.span, Some(sp(601)));
}
