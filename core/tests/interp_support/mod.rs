//! Builders for checked kernels written by hand, so the interpreter can be tested
//! without the front end. Every builder fills in the types the checker would compute.
#![allow(dead_code)]

use tilescope::diag::Span;
use tilescope::front::hir::*;
use tilescope::tensor::Tensor;
use tilescope::types::{DType, TileType};

pub fn ty(dtype: DType, shape: &[u64]) -> TileType {
    TileType::new(dtype, shape.to_vec())
}

/// Spans in hand-built kernels are distinct so tests can check which one an error names.
pub fn sp(n: u32) -> Span {
    Span {
        start: n,
        end: n + 1,
    }
}

pub struct KernelBuilder {
    pub k: Kernel,
}

impl KernelBuilder {
    pub fn new(name: &str) -> Self {
        KernelBuilder {
            k: Kernel {
                name: name.into(),
                span: sp(0),
                params: vec![],
                locals: vec![],
                loops: vec![],
                body: vec![],
            },
        }
    }

    pub fn param(&mut self, name: &str, dtype: DType, shape: &[u64], is_out: bool) -> ParamId {
        self.k.params.push(Param {
            name: name.into(),
            ty: ty(dtype, shape),
            is_out,
            span: sp(100 + self.k.params.len() as u32),
        });
        ParamId(self.k.params.len() as u32 - 1)
    }

    pub fn local(&mut self, name: &str, t: TileType) -> LocalId {
        self.k.locals.push(Local {
            name: name.into(),
            ty: t,
            span: sp(200),
            slots: None,
        });
        LocalId(self.k.locals.len() as u32 - 1)
    }

    pub fn for_loop(&mut self, var: &str, start: i64, end: i64, step: i64) -> LoopId {
        self.k.loops.push(Loop {
            var: var.into(),
            start,
            end: tilescope::front::hir::LoopEnd::Const(end),
            step,
            buffers: None,
            span: sp(300),
        });
        LoopId(self.k.loops.len() as u32 - 1)
    }

    pub fn param_ty(&self, p: ParamId) -> TileType {
        self.k.params[p.0 as usize].ty.clone()
    }

    pub fn local_expr(&self, l: LocalId) -> Expr {
        Expr {
            kind: ExprKind::Local(l),
            ty: self.k.locals[l.0 as usize].ty.clone(),
            span: sp(400),
        }
    }

    /// `load p[index]` with the region's shape computed from the index.
    pub fn load(&self, p: ParamId, index: Vec<Index>) -> Expr {
        let pty = self.param_ty(p);
        let shape = index
            .iter()
            .zip(&pty.shape)
            .map(|(ix, &extent)| match ix {
                Index::Full => extent,
                Index::Range { len, .. } | Index::Strided { len, .. } => *len,
                Index::Single(_) => 1,
                Index::Indirect(e) => e.ty.shape[0],
            })
            .collect::<Vec<_>>();
        Expr {
            kind: ExprKind::Load {
                param: p,
                index,
                pad: None,
            },
            ty: ty(pty.dtype, &shape),
            span: sp(500),
        }
    }

    /// `load p[:, :, ...]`.
    pub fn load_all(&self, p: ParamId) -> Expr {
        let rank = self.param_ty(p).rank();
        self.load(p, vec![Index::Full; rank])
    }

    pub fn build(self) -> Kernel {
        self.k
    }
}

pub fn c(v: i64) -> IndexExpr {
    IndexExpr {
        kind: IndexExprKind::Const(v),
        span: sp(600),
    }
}

pub fn var(l: LoopId) -> IndexExpr {
    IndexExpr {
        kind: IndexExprKind::Var(l),
        span: sp(601),
    }
}

pub fn add_ix(a: IndexExpr, b: IndexExpr) -> IndexExpr {
    IndexExpr {
        kind: IndexExprKind::Add(Box::new(a), Box::new(b)),
        span: sp(602),
    }
}

pub fn range(start: IndexExpr, len: u64) -> Index {
    Index::Range {
        start,
        len,
        clamped: false,
    }
}

pub fn clamped(start: IndexExpr, len: u64) -> Index {
    Index::Range {
        start,
        len,
        clamped: true,
    }
}

pub fn scalar(v: f64, dtype: DType) -> Expr {
    Expr {
        kind: ExprKind::Scalar(v),
        ty: TileType::scalar(dtype),
        span: sp(700),
    }
}

pub fn unary(op: UnaryOp, a: Expr) -> Expr {
    let t = a.ty.clone();
    Expr {
        kind: ExprKind::Unary {
            op,
            arg: Box::new(a),
        },
        ty: t,
        span: sp(701),
    }
}

/// numpy broadcast of two shapes (the builder trusts the test to pass compatible ones).
pub fn broadcast(a: &[u64], b: &[u64]) -> Vec<u64> {
    let rank = a.len().max(b.len());
    (0..rank)
        .map(|i| {
            let get = |s: &[u64]| {
                if i + s.len() >= rank {
                    s[i + s.len() - rank]
                } else {
                    1
                }
            };
            get(a).max(get(b))
        })
        .collect()
}

pub fn binary(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    let dtype = if a.ty.rank() == 0 {
        b.ty.dtype
    } else {
        a.ty.dtype
    };
    let t = ty(dtype, &broadcast(&a.ty.shape, &b.ty.shape));
    Expr {
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
        },
        ty: t,
        span: sp(702),
    }
}

pub fn reduce(op: ReduceOp, a: Expr, axis: usize) -> Expr {
    let mut t = a.ty.clone();
    t.shape[axis] = 1;
    t.dtype = op.result_dtype(t.dtype);
    Expr {
        kind: ExprKind::Reduce {
            op,
            arg: Box::new(a),
            axis,
        },
        ty: t,
        span: sp(703),
    }
}

pub fn matmul(a: Expr, b: Expr) -> Expr {
    let t = ty(DType::F32, &[a.ty.shape[0], b.ty.shape[1]]);
    Expr {
        kind: ExprKind::MatMul {
            lhs: Box::new(a),
            rhs: Box::new(b),
        },
        ty: t,
        span: sp(704),
    }
}

pub fn transpose(a: Expr) -> Expr {
    let t = ty(a.ty.dtype, &[a.ty.shape[1], a.ty.shape[0]]);
    Expr {
        kind: ExprKind::Transpose(Box::new(a)),
        ty: t,
        span: sp(705),
    }
}

pub fn cast(a: Expr, dtype: DType) -> Expr {
    let t = ty(dtype, &a.ty.shape);
    Expr {
        kind: ExprKind::Cast(Box::new(a)),
        ty: t,
        span: sp(706),
    }
}

pub fn full(t: TileType, value: f64) -> Expr {
    Expr {
        kind: ExprKind::Full { value },
        ty: t,
        span: sp(707),
    }
}

pub fn index_value(e: IndexExpr) -> Expr {
    Expr {
        kind: ExprKind::IndexValue(e),
        ty: TileType::scalar(DType::I32),
        span: sp(708),
    }
}

pub fn let_(l: LocalId, value: Expr) -> Stmt {
    Stmt {
        kind: StmtKind::Let { local: l, value },
        span: sp(800),
    }
}

pub fn update(l: LocalId, op: UpdateOp, value: Expr) -> Stmt {
    Stmt {
        kind: StmtKind::Update {
            local: l,
            op,
            value,
        },
        span: sp(801),
    }
}

pub fn store(p: ParamId, index: Vec<Index>, value: Expr) -> Stmt {
    Stmt {
        kind: StmtKind::Store {
            param: p,
            index,
            value,
            accumulate: false,
        },
        span: sp(802),
    }
}

pub fn for_(id: LoopId, body: Vec<Stmt>) -> Stmt {
    Stmt {
        kind: StmtKind::For { id, body },
        span: sp(803),
    }
}

/// Runs `k` and returns all tensors afterwards.
pub fn run(k: &Kernel, mut tensors: Vec<Tensor>) -> Vec<Tensor> {
    match tilescope::interp::run(k, &mut tensors) {
        Ok(()) => tensors,
        Err(d) => panic!("interpreter error: {d:?}"),
    }
}

/// `y = f(x)` for a single input and output of the given types; returns y as f32.
pub fn run_map(
    x: (DType, &[u64], &[f32]),
    y: (DType, &[u64]),
    f: impl FnOnce(&KernelBuilder, Expr) -> Expr,
) -> Vec<f32> {
    let mut b = KernelBuilder::new("map");
    let px = b.param("x", x.0, x.1, false);
    let py = b.param("y", y.0, y.1, true);
    let value = f(&b, b.load_all(px));
    let rank = y.1.len();
    b.k.body.push(store(py, vec![Index::Full; rank], value));
    let k = b.build();
    let out = run(
        &k,
        vec![
            Tensor::from_f32(x.0, x.1.to_vec(), x.2),
            Tensor::zeros(y.0, y.1.to_vec()),
        ],
    );
    out[1].to_f32_vec()
}

/// `z = f(x, y)` for two inputs of one type and an output; returns z as f32.
pub fn run_zip(
    x: (DType, &[u64], &[f32]),
    y: (DType, &[u64], &[f32]),
    z: (DType, &[u64]),
    f: impl FnOnce(Expr, Expr) -> Expr,
) -> Vec<f32> {
    let mut b = KernelBuilder::new("zip");
    let px = b.param("x", x.0, x.1, false);
    let py = b.param("y", y.0, y.1, false);
    let pz = b.param("z", z.0, z.1, true);
    let value = f(b.load_all(px), b.load_all(py));
    b.k.body
        .push(store(pz, vec![Index::Full; z.1.len()], value));
    let k = b.build();
    let out = run(
        &k,
        vec![
            Tensor::from_f32(x.0, x.1.to_vec(), x.2),
            Tensor::from_f32(y.0, y.1.to_vec(), y.2),
            Tensor::zeros(z.0, z.1.to_vec()),
        ],
    );
    out[2].to_f32_vec()
}
