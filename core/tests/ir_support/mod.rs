//! Builders for checked kernels (`hir`) by hand, so IR tests do not depend on the parser.
#![allow(dead_code)]

use std::cell::Cell;
use tilescope::diag::Span;
use tilescope::front::hir::*;
use tilescope::ir::typing;
use tilescope::types::{DType, TileType};

pub fn ty(dtype: DType, shape: &[u64]) -> TileType {
    TileType::new(dtype, shape.to_vec())
}

pub fn f32t(shape: &[u64]) -> TileType {
    ty(DType::F32, shape)
}

pub struct B {
    pub k: Kernel,
    next: Cell<u32>,
}

impl B {
    pub fn new(name: &str) -> B {
        B {
            k: Kernel {
                name: name.into(),
                span: Span::new(0, 1),
                params: vec![],
                locals: vec![],
                loops: vec![],
                body: vec![],
            },
            next: Cell::new(1),
        }
    }

    /// A fresh span per node, so tests can tell which op a printed line came from.
    pub fn span(&self) -> Span {
        let n = self.next.get();
        self.next.set(n + 1);
        Span::new(n as usize * 10, n as usize * 10 + 5)
    }

    pub fn param(&mut self, name: &str, ty: TileType, is_out: bool) -> ParamId {
        let span = self.span();
        self.k.params.push(Param {
            name: name.into(),
            ty,
            is_out,
            span,
        });
        ParamId(self.k.params.len() as u32 - 1)
    }

    pub fn local(&mut self, name: &str, ty: TileType) -> LocalId {
        let span = self.span();
        self.k.locals.push(Local {
            name: name.into(),
            ty,
            span,
            slots: None,
        });
        LocalId(self.k.locals.len() as u32 - 1)
    }

    pub fn looop(
        &mut self,
        var: &str,
        start: i64,
        end: i64,
        step: i64,
        buffers: Option<u32>,
    ) -> LoopId {
        let span = self.span();
        self.k.loops.push(Loop {
            var: var.into(),
            start,
            end: tilescope::front::hir::LoopEnd::Const(end),
            step,
            buffers,
            span,
        });
        LoopId(self.k.loops.len() as u32 - 1)
    }

    fn e(&self, kind: ExprKind, ty: TileType) -> Expr {
        Expr {
            kind,
            ty,
            span: self.span(),
        }
    }

    pub fn load(&self, p: ParamId, index: Vec<Index>) -> Expr {
        let param = &self.k.params[p.0 as usize];
        let shape = index
            .iter()
            .zip(&param.ty.shape)
            .map(|(ix, ext)| match ix {
                Index::Full => *ext,
                Index::Range { len, .. } | Index::Strided { len, .. } => *len,
                Index::Single(_) => 1,
                Index::Indirect(e) => e.ty.shape[0],
            })
            .collect();
        self.e(
            ExprKind::Load {
                param: p,
                index,
                pad: None,
            },
            TileType::new(param.ty.dtype, shape),
        )
    }

    pub fn get(&self, l: LocalId) -> Expr {
        self.e(ExprKind::Local(l), self.k.locals[l.0 as usize].ty.clone())
    }

    pub fn scalar(&self, v: f64, dtype: DType) -> Expr {
        self.e(ExprKind::Scalar(v), TileType::scalar(dtype))
    }

    pub fn full(&self, t: TileType, v: f64) -> Expr {
        self.e(ExprKind::Full { value: v }, t)
    }

    pub fn un(&self, op: UnaryOp, a: Expr) -> Expr {
        let t = a.ty.clone();
        self.e(
            ExprKind::Unary {
                op,
                arg: Box::new(a),
            },
            t,
        )
    }

    pub fn bin(&self, op: BinaryOp, a: Expr, b: Expr) -> Expr {
        let t = typing::binary(&a.ty, &b.ty).expect("test kernels are well typed");
        self.e(
            ExprKind::Binary {
                op,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            t,
        )
    }

    pub fn reduce(&self, op: ReduceOp, a: Expr, axis: usize) -> Expr {
        let t = typing::reduce(op, &a.ty, axis).expect("test kernels are well typed");
        self.e(
            ExprKind::Reduce {
                op,
                arg: Box::new(a),
                axis,
            },
            t,
        )
    }

    pub fn matmul(&self, a: Expr, b: Expr) -> Expr {
        let t = typing::matmul(&a.ty, &b.ty).expect("test kernels are well typed");
        self.e(
            ExprKind::MatMul {
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            t,
        )
    }

    pub fn transpose(&self, a: Expr) -> Expr {
        let t = typing::transpose(&a.ty).expect("test kernels are well typed");
        self.e(ExprKind::Transpose(Box::new(a)), t)
    }

    pub fn cast(&self, a: Expr, dtype: DType) -> Expr {
        let t = TileType::new(dtype, a.ty.shape.clone());
        self.e(ExprKind::Cast(Box::new(a)), t)
    }

    pub fn index_value(&self, ix: IndexExpr) -> Expr {
        self.e(ExprKind::IndexValue(ix), TileType::scalar(DType::I32))
    }

    fn ie(&self, kind: IndexExprKind) -> IndexExpr {
        IndexExpr {
            kind,
            span: self.span(),
        }
    }

    pub fn c(&self, v: i64) -> IndexExpr {
        self.ie(IndexExprKind::Const(v))
    }

    pub fn var(&self, l: LoopId) -> IndexExpr {
        self.ie(IndexExprKind::Var(l))
    }

    pub fn add(&self, a: IndexExpr, b: IndexExpr) -> IndexExpr {
        self.ie(IndexExprKind::Add(Box::new(a), Box::new(b)))
    }

    pub fn sub(&self, a: IndexExpr, b: IndexExpr) -> IndexExpr {
        self.ie(IndexExprKind::Sub(Box::new(a), Box::new(b)))
    }

    pub fn mul(&self, a: IndexExpr, b: IndexExpr) -> IndexExpr {
        self.ie(IndexExprKind::Mul(Box::new(a), Box::new(b)))
    }

    pub fn modulo(&self, a: IndexExpr, d: i64) -> IndexExpr {
        self.ie(IndexExprKind::Mod(Box::new(a), d))
    }

    pub fn range(&self, start: IndexExpr, len: u64, clamped: bool) -> Index {
        Index::Range {
            start,
            len,
            clamped,
        }
    }

    pub fn let_(&self, l: LocalId, value: Expr) -> Stmt {
        Stmt {
            kind: StmtKind::Let { local: l, value },
            span: self.span(),
        }
    }

    pub fn update(&self, l: LocalId, op: UpdateOp, value: Expr) -> Stmt {
        Stmt {
            kind: StmtKind::Update {
                local: l,
                op,
                value,
            },
            span: self.span(),
        }
    }

    pub fn store(&self, p: ParamId, index: Vec<Index>, value: Expr) -> Stmt {
        Stmt {
            kind: StmtKind::Store {
                param: p,
                index,
                value,
                accumulate: false,
            },
            span: self.span(),
        }
    }

    pub fn for_(&self, id: LoopId, body: Vec<Stmt>) -> Stmt {
        Stmt {
            kind: StmtKind::For { id, body },
            span: self.span(),
        }
    }

    pub fn finish(mut self, body: Vec<Stmt>) -> Kernel {
        self.k.body = body;
        self.k
    }
}

/// The softmax of `docs/language.md`: 64 x 512, 8 rows per tile, double-buffered.
pub fn softmax() -> Kernel {
    let mut b = B::new("softmax");
    let x = b.param("x", f32t(&[64, 512]), false);
    let y = b.param("y", f32t(&[64, 512]), true);
    let r = b.looop("r", 0, 64, 8, Some(2));
    let t = b.local("t", f32t(&[8, 512]));
    let m = b.local("m", f32t(&[8, 1]));
    let e = b.local("e", f32t(&[8, 512]));
    let s = b.local("s", f32t(&[8, 1]));
    let rows = |b: &B| b.range(b.var(r), 8, false);
    let body = vec![
        b.let_(t, b.load(x, vec![rows(&b), Index::Full])),
        b.let_(m, b.reduce(ReduceOp::Amax, b.get(t), 1)),
        b.let_(
            e,
            b.un(UnaryOp::Exp, b.bin(BinaryOp::Sub, b.get(t), b.get(m))),
        ),
        b.let_(s, b.reduce(ReduceOp::Sum, b.get(e), 1)),
        b.store(
            y,
            vec![rows(&b), Index::Full],
            b.bin(BinaryOp::Div, b.get(e), b.get(s)),
        ),
    ];
    let l = b.for_(r, body);
    b.finish(vec![l])
}

/// A tiled matmul accumulating over k in a nested, double-buffered loop.
pub fn matmul() -> Kernel {
    let mut b = B::new("mm");
    let a = b.param("a", ty(DType::F16, &[64, 128]), false);
    let w = b.param("b", ty(DType::F16, &[128, 64]), false);
    let c = b.param("c", f32t(&[64, 64]), true);
    let i = b.looop("i", 0, 64, 32, None);
    let k = b.looop("k", 0, 128, 64, Some(2));
    let acc = b.local("acc", f32t(&[32, 64]));
    let x = b.local("x", ty(DType::F16, &[32, 64]));
    let wt = b.local("w", ty(DType::F16, &[64, 64]));
    let inner = vec![
        b.let_(
            x,
            b.load(
                a,
                vec![b.range(b.var(i), 32, false), b.range(b.var(k), 64, false)],
            ),
        ),
        b.let_(
            wt,
            b.load(w, vec![b.range(b.var(k), 64, false), Index::Full]),
        ),
        b.update(acc, UpdateOp::Add, b.matmul(b.get(x), b.get(wt))),
    ];
    let outer = vec![
        b.let_(acc, b.full(f32t(&[32, 64]), 0.0)),
        b.for_(k, inner),
        b.store(
            c,
            vec![b.range(b.var(i), 32, false), Index::Full],
            b.get(acc),
        ),
    ];
    let l = b.for_(i, outer);
    b.finish(vec![l])
}

/// Column sums of 100 rows, 32 at a time: a tail iteration with clamped loads, and a
/// loop-carried accumulator whose masked lanes must keep their value.
pub fn colsum_tail() -> Kernel {
    let mut b = B::new("colsum");
    let x = b.param("x", f32t(&[100, 64]), false);
    let y = b.param("y", f32t(&[1, 64]), true);
    let r = b.looop("r", 0, 100, 32, None);
    let acc = b.local("acc", f32t(&[1, 64]));
    let t = b.local("t", f32t(&[32, 64]));
    let body = vec![
        b.let_(t, b.load(x, vec![b.range(b.var(r), 32, true), Index::Full])),
        b.update(acc, UpdateOp::Add, b.reduce(ReduceOp::Sum, b.get(t), 0)),
    ];
    let stmts = vec![
        b.let_(acc, b.full(f32t(&[1, 64]), 0.0)),
        b.for_(r, body),
        b.store(y, vec![b.range(b.c(0), 1, false), Index::Full], b.get(acc)),
    ];
    b.finish(stmts)
}

/// Redundancy for canonicalize to remove: a foldable scalar, an index expression in
/// non-normal form, a duplicated product, a dead exp and an elementwise chain.
pub fn redundant() -> Kernel {
    let mut b = B::new("redundant");
    let x = b.param("x", f32t(&[16, 64]), false);
    let y = b.param("y", f32t(&[16, 64]), true);
    let r = b.looop("r", 0, 4, 1, None);
    let t = b.local("t", f32t(&[4, 64]));
    let a = b.local("a", f32t(&[4, 64]));
    let a2 = b.local("b", f32t(&[4, 64]));
    let dead = b.local("unused", f32t(&[4, 64]));
    let two = |b: &B| {
        b.bin(
            BinaryOp::Add,
            b.scalar(1.0, DType::F32),
            b.scalar(1.0, DType::F32),
        )
    };
    // (r + 1) * 4 - 4 == r * 4
    let start = |b: &B| b.sub(b.mul(b.add(b.var(r), b.c(1)), b.c(4)), b.c(4));
    let body = vec![
        b.let_(
            t,
            b.load(x, vec![b.range(start(&b), 4, false), Index::Full]),
        ),
        b.let_(a, b.bin(BinaryOp::Mul, b.get(t), two(&b))),
        b.let_(a2, b.bin(BinaryOp::Mul, b.get(t), two(&b))),
        b.let_(dead, b.un(UnaryOp::Exp, b.get(t))),
        b.store(
            y,
            vec![b.range(b.mul(b.var(r), b.c(4)), 4, false), Index::Full],
            b.bin(
                BinaryOp::Sub,
                b.un(
                    UnaryOp::Gelu,
                    b.bin(
                        BinaryOp::Mul,
                        b.bin(BinaryOp::Add, b.get(a), b.get(a2)),
                        b.scalar(1.0, DType::F32),
                    ),
                ),
                b.get(t),
            ),
        ),
    ];
    let l = b.for_(r, body);
    b.finish(vec![l])
}

/// Row gather by an index tile loaded in the kernel, offset by 2.
pub fn gather() -> Kernel {
    let mut b = B::new("gather");
    let ids = b.param("ids", ty(DType::I32, &[8]), false);
    let x = b.param("x", f32t(&[32, 16]), false);
    let y = b.param("y", f32t(&[8, 16]), true);
    let idx = b.local("idx", ty(DType::I32, &[8]));
    let stmts = vec![
        b.let_(idx, b.load(ids, vec![Index::Full])),
        b.store(
            y,
            vec![Index::Full, Index::Full],
            b.load(
                x,
                vec![
                    Index::Indirect(Box::new(b.bin(
                        BinaryOp::Add,
                        b.get(idx),
                        b.scalar(2.0, DType::I32),
                    ))),
                    Index::Full,
                ],
            ),
        ),
    ];
    b.finish(stmts)
}
