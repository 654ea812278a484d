//! Tile expressions: literals, names, elementwise and unary operations, reductions,
//! matmul, transpose, casts, constructors and loads (`docs/language.md`, "Operations").

use super::consts::{int_op, ConstValue};
use super::shape::{broadcast, scalar, Limit};
use super::{closest, show, Binding, Checker};
use crate::diag::{Diagnostic, Span};
use crate::front::ast;
use crate::front::hir::{BinaryOp, Expr, ExprKind, ReduceOp, UnaryOp};
use crate::types::{CmpOp, DType, TileType};

/// A literal not yet given a dtype: it takes the dtype of the tile it meets.
#[derive(Clone, Copy, Debug)]
pub struct Lit {
    pub value: f64,
    pub is_float: bool,
    pub span: Span,
}

pub enum Val {
    Tile(Expr),
    Lit(Lit),
}

/// Functions whose first argument is a type: `zeros(f32[8, 8])`.
/// The largest integer exponent `**` multiplies out. Each factor is a copy of the base
/// in the checked tree (the IR's common-subexpression pass merges them), so the tree
/// grows with the exponent; numpy kernels square and cube.
const MAX_POWER: i64 = 8;

const CONSTRUCTORS: [&str; 3] = ["zeros", "full", "iota"];
const BINARY_FUNCS: [&str; 4] = ["maximum", "minimum", "where", "pow"];
/// numpy's shape functions: the same elements in another shape.
const SHAPE_FUNCS: [&str; 3] = ["reshape", "squeeze", "unsqueeze"];

fn symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Maximum => "maximum",
        BinaryOp::Minimum => "minimum",
        BinaryOp::BitAnd => "&",
        BinaryOp::BitOr => "|",
        BinaryOp::BitXor => "^",
        BinaryOp::Shl => "<<",
        BinaryOp::Shr => ">>",
        BinaryOp::FloorDiv => "//",
        BinaryOp::Mod => "%",
    }
}

/// The bit width of an i32 lane: the shift amounts a constant may take are below it.
const I32_BITS: f64 = 32.0;

fn works_on_ints(op: UnaryOp) -> bool {
    matches!(op, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu)
}

impl Checker<'_> {
    /// Types a tile expression. Every tile it produces is within the tile size limit.
    pub(super) fn value(&mut self, e: &ast::Expr) -> Option<Val> {
        self.nested(e.span, |cx| {
            let v = cx.value_inner(e)?;
            if let Val::Tile(t) = &v {
                cx.check_size(&t.ty, Limit::Tile, t.span)?;
                cx.byte_lanes(t)?;
            }
            Some(v)
        })
    }

    /// `i8` and `u8` tiles are loaded, stored, sliced and converted with `as`; the
    /// vector unit computes on i32 and floats, so any other use is an error that says
    /// to cast first.
    fn byte_lanes(&mut self, t: &Expr) -> Option<()> {
        let moves = matches!(
            t.kind,
            ExprKind::Load { .. }
                | ExprKind::Cast(_)
                | ExprKind::Local(_)
                | ExprKind::SlotRead { .. }
                | ExprKind::Slice { .. }
                | ExprKind::Reshape(_)
        );
        let children: Vec<&Expr> = match &t.kind {
            ExprKind::Cast(_) | ExprKind::Slice { .. } | ExprKind::Reshape(_) => Vec::new(),
            ExprKind::Unary { arg, .. }
            | ExprKind::Reduce { arg, .. }
            | ExprKind::Transpose(arg) => vec![arg],
            ExprKind::Binary { lhs, rhs, .. }
            | ExprKind::MatMul { lhs, rhs }
            | ExprKind::Compare { lhs, rhs, .. } => vec![lhs, rhs],
            ExprKind::Select {
                mask,
                on_true,
                on_false,
            } => vec![mask, on_true, on_false],
            _ => Vec::new(),
        };
        let bad = children
            .into_iter()
            .find(|c| c.ty.dtype.is_byte_int())
            .map(|c| (c.ty.dtype, c.span))
            .or_else(|| (!moves && t.ty.dtype.is_byte_int()).then_some((t.ty.dtype, t.span)));
        match bad {
            Some((dtype, span)) => self.error(
                format!(
                    "{dtype} tiles are loaded, stored, sliced and converted only: the vector unit computes on i32 and floats, so convert first (`t as i32`, `t as f16`)"
                ),
                span,
            ),
            None => Some(()),
        }
    }

    /// A value that must be a tile (not a bare literal); `what` says where.
    fn tile(&mut self, e: &ast::Expr, what: &str) -> Option<Expr> {
        match self.value(e)? {
            Val::Tile(t) => Some(t),
            Val::Lit(_) => self.error(
                format!("{what} needs a tile, but `{}` is a number", show::expr(e)),
                e.span,
            ),
        }
    }

    /// A literal given the dtype of the tile it meets.
    pub(super) fn typed_lit(&mut self, l: Lit, dtype: DType) -> Option<Expr> {
        if dtype == DType::Mask {
            return self.error(
                format!(
                    "the number {} is not a mask: make a mask with a comparison such as `t > 0.0`",
                    l.value
                ),
                l.span,
            );
        }
        if l.is_float && dtype == DType::I32 {
            return self.error(
                format!(
                    "the float {} cannot be used with an i32 tile: convert the tile with `as f32`",
                    l.value
                ),
                l.span,
            );
        }
        if dtype == DType::I32 && !fits_i32(l.value) {
            return self.out_of_i32(&l);
        }
        Some(scalar(l.value, dtype, l.span))
    }

    fn value_inner(&mut self, e: &ast::Expr) -> Option<Val> {
        let span = e.span;
        let lit = |value: f64, is_float| {
            Some(Val::Lit(Lit {
                value,
                is_float,
                span,
            }))
        };
        let tile = |kind, ty| Some(Val::Tile(Expr { kind, ty, span }));
        let integer = matches!(
            &e.kind,
            ast::ExprKind::Neg(_)
                | ast::ExprKind::Binary {
                    op: ast::BinaryOp::Add
                        | ast::BinaryOp::Sub
                        | ast::BinaryOp::Mul
                        | ast::BinaryOp::FloorDiv
                        | ast::BinaryOp::Mod,
                    ..
                }
        );
        if integer && self.is_index_expr(e) && self.reads_loop_var(e, 0) {
            // Integer arithmetic on loop variables is one scalar index expression (as in
            // a range), computed on the scalar pipe: `(i - 40) as f32`, `i // 8`.
            let index = self.index_expr(e)?;
            return tile(ExprKind::IndexValue(index), TileType::scalar(DType::I32));
        }
        match &e.kind {
            ast::ExprKind::Int(v) => lit(*v as f64, false),
            ast::ExprKind::Float(v) => lit(*v, true),
            ast::ExprKind::Name(name) => self.name_value(name, span),
            ast::ExprKind::Neg(arg) => {
                let v = self.value(arg)?;
                self.unary(UnaryOp::Neg, v, span)
            }
            ast::ExprKind::Not(arg) => self.not(e, arg),
            ast::ExprKind::Binary { op, lhs, rhs } => {
                let op = match op {
                    ast::BinaryOp::Add => BinaryOp::Add,
                    ast::BinaryOp::Sub => BinaryOp::Sub,
                    ast::BinaryOp::Mul => BinaryOp::Mul,
                    ast::BinaryOp::Div => BinaryOp::Div,
                    ast::BinaryOp::MatMul => return self.matmul(lhs, rhs, span),
                    ast::BinaryOp::Pow => return self.power(lhs, rhs, span),
                    ast::BinaryOp::BitAnd => return self.bitwise(BinaryOp::BitAnd, e, lhs, rhs),
                    ast::BinaryOp::BitOr => return self.bitwise(BinaryOp::BitOr, e, lhs, rhs),
                    ast::BinaryOp::BitXor => return self.bitwise(BinaryOp::BitXor, e, lhs, rhs),
                    ast::BinaryOp::Shl => return self.bitwise(BinaryOp::Shl, e, lhs, rhs),
                    ast::BinaryOp::Shr => return self.bitwise(BinaryOp::Shr, e, lhs, rhs),
                    ast::BinaryOp::Cmp(op) => return self.compare(*op, lhs, rhs, span),
                    ast::BinaryOp::FloorDiv | ast::BinaryOp::Mod => {
                        return self.int_only(e, *op, lhs, rhs)
                    }
                };
                let a = self.value(lhs);
                let b = self.value(rhs);
                self.elementwise(op, a?, b?, span)
            }
            ast::ExprKind::Transpose(arg) => {
                let t = self.tile(arg, "`.T`")?;
                match t.ty.shape[..] {
                    [m, n] => {
                        let ty = TileType::new(t.ty.dtype, vec![n, m]);
                        tile(ExprKind::Transpose(Box::new(t)), ty)
                    }
                    // numpy's `.T` of a 1-D array is the array itself.
                    [_] => Some(Val::Tile(t)),
                    _ => self.error(
                        format!(
                            "`.T` transposes a 2-D tile (a 1-D one stays as it is), but this one is {}",
                            t.ty
                        ),
                        arg.span,
                    ),
                }
            }
            ast::ExprKind::Cast { value, dtype, .. } => {
                let t = match self.value(value)? {
                    Val::Tile(t) => t,
                    Val::Lit(l) if !l.is_float && !fits_i32(l.value) => return self.out_of_i32(&l),
                    Val::Lit(l) => scalar(
                        l.value,
                        if l.is_float { DType::F32 } else { DType::I32 },
                        l.span,
                    ),
                };
                let ty = TileType::new(*dtype, t.ty.shape.clone());
                tile(ExprKind::Cast(Box::new(t)), ty)
            }
            ast::ExprKind::SlotRead { name, slot } => self.slot_read(name, slot, span),
            ast::ExprKind::List(_) => self.error(
                "a list `[...]` is only the shape argument of `reshape`: `reshape(t, [A, B])`",
                span,
            ),
            ast::ExprKind::Slice { arg, indices } => {
                let t = match self.value(arg)? {
                    Val::Tile(t) => t,
                    Val::Lit(l) => {
                        return self.error("a number has no axes to slice", l.span);
                    }
                };
                let (index, ty, points) = self.tile_slice(&t.ty, arg, indices, span)?;
                let window = Expr {
                    kind: ExprKind::Slice {
                        arg: Box::new(t),
                        index,
                    },
                    ty,
                    span,
                };
                if points.is_empty() {
                    return Some(Val::Tile(window));
                }
                // numpy drops the axes of single positions; a lone element stays [1].
                Some(Val::Tile(Self::reshaped(window, |s| {
                    let kept: Vec<u64> = (0..s.len())
                        .filter(|a| !points.contains(a))
                        .map(|a| s[a])
                        .collect();
                    *s = if kept.is_empty() { vec![1] } else { kept };
                })))
            }
            ast::ExprKind::Load {
                tensor,
                indices,
                pad,
            } => {
                let param = self.tensor(tensor)?;
                let pad = match pad {
                    Some(v) => Some(self.pad_value(param, tensor, v)?),
                    None => None,
                };
                let (index, ty) = self.access_padded(param, tensor, indices, pad.is_some())?;
                tile(ExprKind::Load { param, index, pad }, ty)
            }
            ast::ExprKind::Call {
                func,
                ty,
                args,
                axis,
            } => self.call(e, func, ty.as_ref(), args, axis.as_deref()),
        }
    }

    fn name_value(&mut self, name: &str, span: Span) -> Option<Val> {
        if self.whole_slot_tile(name, span, false).is_some() {
            return None;
        }
        match self.lookup(name) {
            Some((Binding::Local(id), _)) => {
                let ty = self.locals.get(id.0 as usize)?.ty.clone();
                Some(Val::Tile(Expr {
                    kind: ExprKind::Local(id),
                    ty,
                    span,
                }))
            }
            Some((Binding::Loop(id), _)) => {
                let index = self.loop_value(id, span);
                Some(Val::Tile(Expr {
                    kind: ExprKind::IndexValue(index),
                    ty: TileType::scalar(DType::I32),
                    span,
                }))
            }
            Some((Binding::Poisoned, _)) => None,
            None => {
                if let Some(v) = self.consts.get(name) {
                    return v.map(|v| {
                        let (value, is_float) = match v {
                            ConstValue::Int(v) => (v as f64, false),
                            ConstValue::Float(v) => (v, true),
                        };
                        Val::Lit(Lit {
                            value,
                            is_float,
                            span,
                        })
                    });
                }
                if self.param_ids.contains_key(name) {
                    let d = Diagnostic::error(
                        format!("`{name}` is a tensor in global memory, not a tile"),
                        span,
                    )
                    .with_note(format!("read it into a tile with `load {name}[...]`"));
                    self.report(d);
                    return None;
                }
                self.unknown_name(name, span)
            }
        }
    }

    /// `//` and `%`: two integers fold; on i32 tiles they are numpy's floor division
    /// and remainder.
    fn int_only(
        &mut self,
        e: &ast::Expr,
        op: ast::BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
    ) -> Option<Val> {
        let a = self.value(lhs);
        let b = self.value(rhs);
        match (a?, b?) {
            (Val::Lit(a), Val::Lit(b)) if !a.is_float && !b.is_float => {
                match int_op(op, a.value as i64, b.value as i64) {
                    Ok(v) => Some(Val::Lit(Lit {
                        value: v as f64,
                        is_float: false,
                        span: e.span,
                    })),
                    Err(why) => self.error(format!("`{}`: {why}", show::expr(e)), e.span),
                }
            }
            (a, b) => {
                let hir_op = if op == ast::BinaryOp::FloorDiv {
                    BinaryOp::FloorDiv
                } else {
                    BinaryOp::Mod
                };
                if let Val::Lit(Lit {
                    value,
                    is_float: false,
                    ..
                }) = b
                {
                    if value == 0.0 {
                        return self
                            .error(format!("`{}` divides by zero", show::expr(e)), rhs.span);
                    }
                }
                self.i32_binary(hir_op, a, b, e.span, "takes i32 tiles", "floats have `/`")
            }
        }
    }

    fn unary(&mut self, op: UnaryOp, v: Val, span: Span) -> Option<Val> {
        match v {
            Val::Lit(l) => {
                let is_float = l.is_float || !works_on_ints(op);
                Some(Val::Lit(Lit {
                    // In f64; the literal is rounded to its dtype when it meets a tile.
                    value: op.apply(l.value),
                    is_float,
                    span,
                }))
            }
            Val::Tile(t) => {
                self.not_mask(&t, op.name())?;
                if !t.ty.dtype.is_float() && !works_on_ints(op) {
                    return self.error(
                        format!(
                            "`{}` needs a float tile, but this one is {}: convert it with `as f32`",
                            op.name(),
                            t.ty
                        ),
                        t.span,
                    );
                }
                let ty = t.ty.clone();
                Some(Val::Tile(Expr {
                    kind: ExprKind::Unary {
                        op,
                        arg: Box::new(t),
                    },
                    ty,
                    span,
                }))
            }
        }
    }

    fn elementwise(&mut self, op: BinaryOp, a: Val, b: Val, span: Span) -> Option<Val> {
        let (a, b) = match (a, b) {
            (Val::Lit(a), Val::Lit(b)) => {
                let value = match op {
                    BinaryOp::Add => a.value + b.value,
                    BinaryOp::Sub => a.value - b.value,
                    BinaryOp::Mul => a.value * b.value,
                    BinaryOp::Div => a.value / b.value,
                    BinaryOp::Maximum => a.value.max(b.value),
                    BinaryOp::Minimum => a.value.min(b.value),
                    // `bitwise` folds these.
                    _ => {
                        return self.error(
                            format!("internal error: `{}` reached the float fold", symbol(op)),
                            span,
                        )
                    }
                };
                let is_float = a.is_float || b.is_float || op == BinaryOp::Div;
                return Some(Val::Lit(Lit {
                    value,
                    is_float,
                    span,
                }));
            }
            (a, b) => self.pair(a, b, symbol(op), span)?,
        };
        if op == BinaryOp::Div && a.ty.dtype == DType::I32 {
            return self.error(
                "`/` is not defined on i32 tiles: convert them with `as f32`",
                span,
            );
        }
        let ty = TileType::new(a.ty.dtype, broadcast(&a.ty.shape, &b.ty.shape)?);
        Some(Val::Tile(Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            ty,
            span,
        }))
    }

    /// `base ** exponent` with a constant exponent, as numpy computes it: an integer
    /// exponent multiplies (`t ** 3` is `t * t * t`, `t ** 0` is ones, a negative one
    /// takes the reciprocal), `0.5` and `-0.5` are `sqrt` and `rsqrt`, and any other
    /// float exponent `c` is `exp2(c * log2(t))`, NaN for a negative base as in numpy.
    fn power(&mut self, base: &ast::Expr, exponent: &ast::Expr, span: Span) -> Option<Val> {
        let b = self.value(base);
        let x = self.value(exponent);
        let x = match x? {
            Val::Lit(x) => x,
            Val::Tile(t) => {
                return self.error(
                    "the exponent of `**` must be a constant; for a tile exponent, write `exp2(y * log2(t))` (for t > 0)",
                    t.span,
                )
            }
        };
        let t = match b? {
            Val::Lit(b) => {
                // Python's rule: an integer to a non-negative integer power stays one.
                let is_float = b.is_float || x.is_float || x.value < 0.0;
                return Some(Val::Lit(Lit {
                    value: b.value.powf(x.value),
                    is_float,
                    span,
                }));
            }
            Val::Tile(t) => t,
        };
        self.not_mask(&t, "**")?;
        let float = t.ty.dtype.is_float();
        let integral = x.value.fract() == 0.0;
        if integral && x.value.abs() > MAX_POWER as f64 {
            // exp2(n * log2(t)) would make a negative base NaN, where numpy's integer
            // power is real: refuse rather than compute something else.
            return self.error(
                format!(
                    "`**` takes an integer exponent from -{MAX_POWER} to {MAX_POWER}, but `{}` is {}: multiply powers yourself (`let t4 = t2 * t2;`)",
                    show::expr(exponent),
                    x.value
                ),
                exponent.span,
            );
        }
        if integral {
            let n = x.value as i64;
            if n < 0 && !float {
                return self.error(
                    format!("an {} tile to a negative power is not an integer (numpy refuses it too): convert it with `as f32`", t.ty.dtype),
                    exponent.span,
                );
            }
            if n == 0 {
                let ty = t.ty.clone();
                return Some(Val::Tile(Expr {
                    kind: ExprKind::Full { value: 1.0 },
                    ty,
                    span,
                }));
            }
            let mut p = Val::Tile(t.clone());
            for _ in 1..n.unsigned_abs() {
                p = self.elementwise(BinaryOp::Mul, p, Val::Tile(t.clone()), span)?;
            }
            return if n < 0 {
                self.unary(UnaryOp::Recip, p, span)
            } else {
                Some(p)
            };
        }
        if !float {
            return self.error(
                format!(
                    "an {} tile takes `**` by an integer from 0 to {MAX_POWER}: convert it with `as f32` for the power `{}`",
                    t.ty.dtype,
                    show::expr(exponent)
                ),
                exponent.span,
            );
        }
        match x.value {
            0.5 => self.unary(UnaryOp::Sqrt, Val::Tile(t), span),
            -0.5 => self.unary(UnaryOp::Rsqrt, Val::Tile(t), span),
            c => {
                let log = self.unary(UnaryOp::Log2, Val::Tile(t), span)?;
                let c = Val::Lit(Lit {
                    value: c,
                    is_float: true,
                    span: x.span,
                });
                let scaled = self.elementwise(BinaryOp::Mul, c, log, span)?;
                self.unary(UnaryOp::Exp2, scaled, span)
            }
        }
    }

    /// `a & b`, `a | b`, `a ^ b`, `a << b`, `a >> b`: bitwise on i32 values (two
    /// numbers fold as integer constants do), logic on two masks.
    fn bitwise(
        &mut self,
        op: BinaryOp,
        e: &ast::Expr,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
    ) -> Option<Val> {
        let span = e.span;
        let a = self.value(lhs);
        let b = self.value(rhs);
        let (a, b) = (a?, b?);
        let sym = symbol(op);
        if let (Val::Lit(x), Val::Lit(y)) = (&a, &b) {
            let ast::ExprKind::Binary { op: ast_op, .. } = e.kind else {
                return None;
            };
            if x.is_float || y.is_float {
                return self.error(
                    format!(
                        "`{sym}` takes integers, but `{}` has a float",
                        show::expr(e)
                    ),
                    span,
                );
            }
            return match int_op(ast_op, x.value as i64, y.value as i64) {
                Ok(v) => Some(Val::Lit(Lit {
                    value: v as f64,
                    is_float: false,
                    span,
                })),
                Err(why) => self.error(format!("`{}`: {why}", show::expr(e)), span),
            };
        }
        let is_mask = |v: &Val| matches!(v, Val::Tile(t) if t.ty.dtype == DType::Mask);
        if is_mask(&a) || is_mask(&b) {
            return self.mask_logic(op, a, b, span);
        }
        if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            if let Val::Lit(y) = &b {
                if y.is_float || !(0.0..I32_BITS).contains(&y.value) {
                    return self.error(
                        format!(
                            "a shift amount is an integer from 0 to 31 (an i32 has 32 bits), but `{}` is {}",
                            show::expr(rhs),
                            y.value
                        ),
                        rhs.span,
                    );
                }
            }
        }
        self.i32_binary(
            op,
            a,
            b,
            span,
            "needs i32 tiles (or masks, for `& | ^`)",
            "bit operations have no float form",
        )
    }

    /// `a op b` for an operator defined on i32 values only: the operands as for any
    /// elementwise op (`pair`), then an error saying `needs` and `instead` when they
    /// are not i32.
    fn i32_binary(
        &mut self,
        op: BinaryOp,
        a: Val,
        b: Val,
        span: Span,
        needs: &str,
        instead: &str,
    ) -> Option<Val> {
        let sym = symbol(op);
        let (a, b) = self.pair(a, b, sym, span)?;
        if a.ty.dtype != DType::I32 {
            return self.error(
                format!("`{sym}` {needs}, but this one is {}: {instead}", a.ty),
                span,
            );
        }
        let ty = TileType::new(DType::I32, broadcast(&a.ty.shape, &b.ty.shape)?);
        let kind = ExprKind::Binary {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
        };
        Some(Val::Tile(Expr { kind, ty, span }))
    }

    /// `&`, `|`, `^` of two masks, as numpy's logical operators on booleans.
    fn mask_logic(&mut self, op: BinaryOp, a: Val, b: Val, span: Span) -> Option<Val> {
        let sym = symbol(op);
        let (a, b) = match (a, b) {
            (Val::Tile(a), Val::Tile(b))
                if a.ty.dtype == DType::Mask && b.ty.dtype == DType::Mask =>
            {
                (a, b)
            }
            (a, b) => {
                let show_val = |v: &Val| match v {
                    Val::Tile(t) => t.ty.to_string(),
                    Val::Lit(l) => format!("the number {}", l.value),
                };
                return self.error(
                    format!(
                        "`{sym}` combines two masks or two i32 values, but these are {} and {}",
                        show_val(&a),
                        show_val(&b)
                    ),
                    span,
                );
            }
        };
        if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            return self.error(
                format!("`{sym}` is not defined on masks: combine them with `&`, `|`, `^` and `~`"),
                span,
            );
        }
        let Some(shape) = broadcast(&a.ty.shape, &b.ty.shape) else {
            return self.error(
                format!(
                    "the shapes of {} and {} do not broadcast in `{sym}`",
                    a.ty, b.ty
                ),
                span,
            );
        };
        let ty = TileType::new(DType::Mask, shape);
        let kind = ExprKind::Binary {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
        };
        Some(Val::Tile(Expr { kind, ty, span }))
    }

    /// `~v`: bitwise not of an i32 value (`v ^ -1`), logical not of a mask (`m ^ true`).
    fn not(&mut self, e: &ast::Expr, arg: &ast::Expr) -> Option<Val> {
        let span = e.span;
        match self.value(arg)? {
            Val::Lit(l) if !l.is_float => Some(Val::Lit(Lit {
                value: !(l.value as i64) as f64,
                is_float: false,
                span,
            })),
            Val::Lit(_) => self.error(
                format!("`~` takes an integer, but `{}` is a float", show::expr(arg)),
                span,
            ),
            Val::Tile(t) => {
                let ones = match t.ty.dtype {
                    DType::I32 => -1.0,
                    DType::Mask => 1.0,
                    _ => {
                        return self.error(
                            format!("`~` needs an i32 tile or a mask, but this one is {}: bit operations have no float form", t.ty),
                            span,
                        )
                    }
                };
                let ty = t.ty.clone();
                let all = scalar(ones, t.ty.dtype, span);
                let kind = ExprKind::Binary {
                    op: BinaryOp::BitXor,
                    lhs: Box::new(t),
                    rhs: Box::new(all),
                };
                Some(Val::Tile(Expr { kind, ty, span }))
            }
        }
    }

    fn matmul(&mut self, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> Option<Val> {
        let a = self.tile(lhs, "`@`");
        let b = self.tile(rhs, "`@`");
        let (mut a, mut b) = (a?, b?);
        if !a.ty.dtype.is_float() || a.ty.dtype != b.ty.dtype {
            return self.error(
                format!(
                    "`@` needs two float operands of one element type, but they are {} and {}",
                    a.ty, b.ty
                ),
                span,
            );
        }
        // numpy's matmul of a 1-D operand: a row vector on the left, a column on the
        // right, whose axis the result then drops.
        let (left_vector, right_vector) = (a.ty.rank() == 1, b.ty.rank() == 1);
        if left_vector {
            a = Self::reshaped(a, |s| s.insert(0, 1));
        }
        if right_vector {
            b = Self::reshaped(b, |s| s.push(1));
        }
        let (&[m, k1], &[k2, n]) = (a.ty.shape.as_slice(), b.ty.shape.as_slice()) else {
            return self.error(
                format!(
                    "`@` multiplies 1-D and 2-D tiles, but the operands are {} and {}",
                    a.ty, b.ty
                ),
                span,
            );
        };
        if k1 != k2 {
            return self.error(
                format!(
                    "`@` inner dimensions disagree: {} @ {} ({k1} != {k2})",
                    a.ty, b.ty
                ),
                span,
            );
        }
        let ty = TileType::new(DType::F32, vec![m, n]);
        let mut product = Expr {
            kind: ExprKind::MatMul {
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            ty,
            span,
        };
        if left_vector || right_vector {
            product = Self::reshaped(product, |s| {
                if right_vector {
                    s.pop();
                }
                if left_vector {
                    s.remove(0);
                }
                if s.is_empty() {
                    // A vector dot a vector: numpy's scalar, kept as a 1-element tile.
                    s.push(1);
                }
            });
        }
        Some(Val::Tile(product))
    }

    /// `t` reshaped by `edit` on its shape (an axis of extent 1 added or dropped).
    fn reshaped(t: Expr, edit: impl FnOnce(&mut Vec<u64>)) -> Expr {
        let mut shape = t.ty.shape.clone();
        edit(&mut shape);
        let (ty, span) = (TileType::new(t.ty.dtype, shape), t.span);
        Expr {
            kind: ExprKind::Reshape(Box::new(t)),
            ty,
            span,
        }
    }

    fn call(
        &mut self,
        e: &ast::Expr,
        func: &ast::Ident,
        ty: Option<&ast::TypeExpr>,
        args: &[ast::Expr],
        axis: Option<&ast::Expr>,
    ) -> Option<Val> {
        let name = func.name.as_str();
        let is_reduce = ReduceOp::from_name(name).is_some();
        let is_ctor = CONSTRUCTORS.contains(&name);
        let unary = UnaryOp::from_name(name);
        if name == "buffers" {
            return self.error(
                "`buffers(...)` declares a tile with slots: write it as `let name = buffers(TYPE, N);`",
                e.span,
            );
        }
        if SHAPE_FUNCS.contains(&name) {
            return self.reshape(e, name, args, axis);
        }
        if unary.is_none() && !is_reduce && !is_ctor && !BINARY_FUNCS.contains(&name) {
            let known = UnaryOp::ALL
                .iter()
                .map(|op| op.name())
                .chain(ReduceOp::ALL.map(ReduceOp::name))
                .chain(CONSTRUCTORS)
                .chain(BINARY_FUNCS)
                .chain(SHAPE_FUNCS);
            let mut d = Diagnostic::error(
                format!("unknown function `{}`", crate::front::lexer::truncate(name)),
                func.span,
            );
            if let Some(close) = closest(name, known) {
                d = d.with_note(format!("did you mean `{close}`?"));
            }
            self.report(d);
            return None;
        }
        if let (Some(a), false) = (axis, is_reduce || name == "iota") {
            return self.error(
                format!("`{name}` takes no `axis=`; only reductions and `iota` do"),
                a.span,
            );
        }
        if let (Some(t), false) = (ty, is_ctor) {
            return self.error(
                format!("`{name}` takes no type argument; only `zeros`, `full` and `iota` do"),
                t.span,
            );
        }
        let arity = match (unary.is_some(), is_reduce, name) {
            (true, _, _) | (_, true, _) => 1,
            (_, _, "zeros" | "iota") => 0,
            (_, _, "full") => 1,
            (_, _, "where") => 3,
            _ => 2,
        };
        // numpy's `sum(t, 1)`: the axis as a second positional argument.
        if is_reduce && axis.is_none() && args.len() == 2 {
            let k = match args.get(1).map(|a| &a.kind) {
                Some(ast::ExprKind::Int(k)) => Some(*k),
                Some(ast::ExprKind::Neg(inner)) => match inner.kind {
                    ast::ExprKind::Int(k) => Some(-k),
                    _ => None,
                },
                _ => None,
            };
            if let Some(k) = k {
                let tile = match args.first().map(|a| &a.kind) {
                    Some(ast::ExprKind::Name(n)) => n.as_str(),
                    _ => "…",
                };
                return self.error(
                    format!(
                        "`{name}` takes the axis as a keyword: write `{name}({tile}, axis={k})`, not a second argument"
                    ),
                    e.span,
                );
            }
        }
        if args.len() != arity {
            let plural = if arity == 1 { "" } else { "s" };
            return self.error(
                format!(
                    "`{name}` takes {arity} argument{plural}, but {} were given",
                    args.len()
                ),
                e.span,
            );
        }
        if let Some(op) = unary {
            let v = self.value(args.first()?)?;
            return self.unary(op, v, e.span);
        }
        if let Some(op) = ReduceOp::from_name(name) {
            return self.reduce(op, e, args.first()?, axis);
        }
        if is_ctor {
            return self.construct(e, name, ty, args.first(), axis);
        }
        if name == "where" {
            return self.select(args, e.span);
        }
        if name == "pow" {
            // numpy's `np.power(t, c)`, the same as `t ** c`.
            return self.power(args.first()?, args.get(1)?, e.span);
        }
        let op = if name == "maximum" {
            BinaryOp::Maximum
        } else {
            BinaryOp::Minimum
        };
        let a = self.value(args.first()?);
        let b = self.value(args.get(1)?);
        self.elementwise(op, a?, b?, e.span)
    }

    /// `reshape(t, [A, B])`, `squeeze(t, axis=K)` (drops an axis of extent 1) and
    /// `unsqueeze(t, axis=K)` (inserts one before axis K; `K` may be the rank): numpy's,
    /// the element count unchanged.
    fn reshape(
        &mut self,
        e: &ast::Expr,
        name: &str,
        args: &[ast::Expr],
        axis: Option<&ast::Expr>,
    ) -> Option<Val> {
        let usage = match name {
            "reshape" => "reshape(t, [A, B])",
            "squeeze" => "squeeze(t, axis=K)",
            _ => "unsqueeze(t, axis=K)",
        };
        let arity = if name == "reshape" { 2 } else { 1 };
        if args.len() != arity || (name == "reshape") == axis.is_some() {
            return self.error(format!("`{name}` is written `{usage}`"), e.span);
        }
        let t = self.tile(args.first()?, &format!("`{name}`"))?;
        let old = t.ty.clone();
        let shape = match name {
            "reshape" => {
                let Some(ast::Expr {
                    kind: ast::ExprKind::List(items),
                    span,
                }) = args.get(1)
                else {
                    return self.error(
                        format!("`reshape` takes the new shape as a list: `{usage}`"),
                        args.get(1).map_or(e.span, |a| a.span),
                    );
                };
                let mut dims = Vec::with_capacity(items.len());
                for d in items {
                    let v = self.const_expr(d)?;
                    if v <= 0 {
                        return self.error(
                            format!("a reshape's extents are positive, but this one is {v}"),
                            d.span,
                        );
                    }
                    dims.push(v as u64);
                }
                let count = |s: &[u64]| s.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
                if count(&dims) != count(&old.shape) {
                    return self.error(
                        format!(
                            "`reshape` keeps the element count: {old} has {} elements, but [{}] holds {}",
                            count(&old.shape).map_or("too many".into(), |c| c.to_string()),
                            dims.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
                            count(&dims).map_or("too many".into(), |c| c.to_string()),
                        ),
                        *span,
                    );
                }
                dims
            }
            _ => {
                let a = axis?;
                let k = self.const_expr(a)?;
                let mut dims = old.shape.clone();
                if name == "squeeze" {
                    let k = self.normalise_axis(k, a.span, &t)?;
                    if dims[k] != 1 {
                        return self.error(
                            format!(
                                "`squeeze` drops an axis of extent 1, but axis {k} of {old} has {}",
                                dims[k]
                            ),
                            a.span,
                        );
                    }
                    dims.remove(k);
                } else {
                    let rank = dims.len() as i64;
                    let k = if k < 0 { k + rank + 1 } else { k };
                    if !(0..=rank).contains(&k) {
                        return self.error(
                            format!(
                                "`unsqueeze` inserts an axis at 0 ..= {rank} of {old}, not {k}"
                            ),
                            a.span,
                        );
                    }
                    dims.insert(k as usize, 1);
                }
                dims
            }
        };
        if shape.is_empty() {
            return self.error(
                format!("`{name}` would leave {old} with no axes: a tile keeps one"),
                e.span,
            );
        }
        let ty = TileType::new(old.dtype, shape);
        Some(Val::Tile(Expr {
            kind: ExprKind::Reshape(Box::new(t)),
            ty,
            span: e.span,
        }))
    }

    fn reduce(
        &mut self,
        op: ReduceOp,
        e: &ast::Expr,
        arg: &ast::Expr,
        axis: Option<&ast::Expr>,
    ) -> Option<Val> {
        let t = self.tile(arg, &format!("`{}`", op.name()));
        let Some(axis) = axis else {
            return self.error(
                format!(
                    "`{}` needs the axis to reduce: `{}(t, axis=K)`",
                    op.name(),
                    op.name()
                ),
                e.span,
            );
        };
        let k = self.const_expr(axis);
        let (t, k) = (t?, k?);
        let axis = self.normalise_axis(k, axis.span, &t)?;
        self.not_mask(&t, op.name())?;
        if op == ReduceOp::Mean && !t.ty.dtype.is_float() {
            return self.error(
                format!(
                    "`mean` needs a float tile, but this one is {}: convert it with `as f32`",
                    t.ty
                ),
                e.span,
            );
        }
        let mut ty = t.ty.clone();
        if let Some(d) = ty.shape.get_mut(axis) {
            *d = 1;
        }
        ty.dtype = op.result_dtype(ty.dtype);
        Some(Val::Tile(Expr {
            kind: ExprKind::Reduce {
                op,
                arg: Box::new(t),
                axis,
            },
            ty,
            span: e.span,
        }))
    }

    fn construct(
        &mut self,
        e: &ast::Expr,
        name: &str,
        ty: Option<&ast::TypeExpr>,
        arg: Option<&ast::Expr>,
        axis: Option<&ast::Expr>,
    ) -> Option<Val> {
        let Some(ty) = ty else {
            let example = match name {
                "full" => "f32[8, 8], v",
                "iota" => "i32[8, 8], axis=0",
                _ => "f32[8, 8]",
            };
            return self.error(
                format!("`{name}` needs a type first: `{name}({example})`"),
                e.span,
            );
        };
        let ty = self.type_expr(ty, Limit::Tile)?;
        if name == "iota" {
            return self.iota(e, ty, axis);
        }
        let value = match arg {
            None => 0.0,
            Some(a) => match self.value(a)? {
                Val::Lit(l) => {
                    self.typed_lit(l, ty.dtype)?;
                    l.value
                }
                Val::Tile(_) => {
                    return self.error(
                        format!(
                            "`full` fills with a constant number, but `{}` is a tile",
                            show::expr(a)
                        ),
                        a.span,
                    )
                }
            },
        };
        Some(Val::Tile(Expr {
            kind: ExprKind::Full { value },
            ty,
            span: e.span,
        }))
    }
}

/// Masks: comparisons, `where` and `iota` (`docs/language.md`, "Masks").
impl Checker<'_> {
    /// Rejects a mask where `what` (an operator or function) needs numbers: arithmetic
    /// on 0/1 lanes is almost always a mistake, and `where` says what was meant.
    fn not_mask(&mut self, t: &Expr, what: &str) -> Option<()> {
        if t.ty.dtype != DType::Mask {
            return Some(());
        }
        self.error(
            format!(
                "`{what}` is not defined on masks ({}): select values with `where(mask, a, b)` or convert with `as f32`",
                t.ty
            ),
            t.span,
        )
    }

    /// The two operands of an elementwise operation or comparison `what`: neither is a
    /// mask, a literal takes the other's dtype (two literals: f32 if either is a float,
    /// else i32), the dtypes agree and the shapes broadcast.
    fn pair(&mut self, a: Val, b: Val, what: &str, span: Span) -> Option<(Expr, Expr)> {
        for v in [&a, &b] {
            if let Val::Tile(t) = v {
                self.not_mask(t, what)?;
            }
        }
        let (a, b) = match (a, b) {
            (Val::Tile(a), Val::Lit(b)) => {
                let b = self.typed_lit(b, a.ty.dtype)?;
                (a, b)
            }
            (Val::Lit(a), Val::Tile(b)) => (self.typed_lit(a, b.ty.dtype)?, b),
            (Val::Tile(a), Val::Tile(b)) => (a, b),
            (Val::Lit(a), Val::Lit(b)) => {
                let dtype = if a.is_float || b.is_float {
                    DType::F32
                } else {
                    DType::I32
                };
                (
                    scalar(a.value, dtype, a.span),
                    scalar(b.value, dtype, b.span),
                )
            }
        };
        if a.ty.dtype != b.ty.dtype {
            return self.error(
                format!(
                    "`{what}` needs operands of one element type, but they are {} and {}: convert one with `as`",
                    a.ty, b.ty
                ),
                span,
            );
        }
        if broadcast(&a.ty.shape, &b.ty.shape).is_none() {
            return self.error(
                format!(
                    "the shapes of {} and {} do not broadcast in `{what}`",
                    a.ty, b.ty
                ),
                span,
            );
        }
        Some((a, b))
    }

    fn compare(&mut self, op: CmpOp, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> Option<Val> {
        let a = self.value(lhs);
        let b = self.value(rhs);
        let (a, b) = (a?, b?);
        if let (Val::Lit(_), Val::Lit(_)) = (&a, &b) {
            return self.error(
                format!(
                    "`{}` compares two numbers: a comparison needs a tile",
                    op.symbol()
                ),
                span,
            );
        }
        let (a, b) = self.pair(a, b, op.symbol(), span)?;
        let shape = broadcast(&a.ty.shape, &b.ty.shape)?;
        Some(Val::Tile(Expr {
            kind: ExprKind::Compare {
                op,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            ty: TileType::new(DType::Mask, shape),
            span,
        }))
    }

    /// `where(mask, a, b)`.
    fn select(&mut self, args: &[ast::Expr], span: Span) -> Option<Val> {
        let [m, a, b] = args else { return None };
        let (mv, av, bv) = (self.value(m), self.value(a), self.value(b));
        let mask = match mv? {
            Val::Tile(t) if t.ty.dtype == DType::Mask => t,
            other => {
                let what = match other {
                    Val::Tile(t) => format!("this one is {}", t.ty),
                    Val::Lit(_) => format!("`{}` is a number", show::expr(m)),
                };
                return self.error(
                    format!(
                        "`where` needs a mask as its condition, but {what}: make one with a comparison such as `t > 0.0`"
                    ),
                    m.span,
                );
            }
        };
        let (a, b) = self.pair(av?, bv?, "where", span)?;
        let values = broadcast(&a.ty.shape, &b.ty.shape)?;
        let Some(shape) = broadcast(&mask.ty.shape, &values) else {
            return self.error(
                format!(
                    "the shapes of {}, {} and {} do not broadcast in `where`",
                    mask.ty, a.ty, b.ty
                ),
                span,
            );
        };
        let ty = TileType::new(a.ty.dtype, shape);
        Some(Val::Tile(Expr {
            kind: ExprKind::Select {
                mask: Box::new(mask),
                on_true: Box::new(a),
                on_false: Box::new(b),
            },
            ty,
            span,
        }))
    }

    /// `iota(i32[...], axis=K)`.
    fn iota(&mut self, e: &ast::Expr, ty: TileType, axis: Option<&ast::Expr>) -> Option<Val> {
        let Some(axis) = axis else {
            return self.error(
                "`iota` needs the axis to count along: `iota(i32[8, 8], axis=K)`",
                e.span,
            );
        };
        let k = self.const_expr(axis)?;
        if ty.dtype != DType::I32 {
            return self.error(
                format!("`iota` makes an i32 tile, but the type is {ty}: write `iota(i32[...], axis=K)` and convert with `as`"),
                e.span,
            );
        }
        let shape_only = Expr {
            kind: ExprKind::Scalar(0.0),
            ty: ty.clone(),
            span: e.span,
        };
        let axis = self.normalise_axis(k, axis.span, &shape_only)?;
        Some(Val::Tile(Expr {
            kind: ExprKind::Iota { axis },
            ty,
            span: e.span,
        }))
    }

    /// An `axis=K` of tile `t`; negative values count from the end.
    fn normalise_axis(&mut self, k: i64, span: Span, t: &Expr) -> Option<usize> {
        let ty = &t.ty;
        let rank = ty.rank() as i64;
        let normalised = if k < 0 { k.saturating_add(rank) } else { k };
        if !(0..rank).contains(&normalised) {
            let mut d = Diagnostic::error(
                format!("axis {k} is out of range for {ty}, which has {rank} axes"),
                span,
            );
            let dropped = match &t.kind {
                ExprKind::Local(l) => self.dropped.contains(l),
                _ => drops_an_axis(t),
            };
            if dropped {
                d = d.with_note(
                    "the tile comes from a load whose integer index drops its axis, as numpy's does (`x[i, :]` is 1-D): a range of one position keeps it (`x[i .. i + 1, :]`)",
                );
            }
            self.report(d);
            return None;
        }
        Some(normalised as usize)
    }
}

impl Checker<'_> {
    /// The number after `pad`, in the tensor's dtype: an integer for an `i32` tensor,
    /// any number (rounded as a literal is) for a float one.
    fn pad_value(
        &mut self,
        param: crate::front::hir::ParamId,
        tensor: &ast::Ident,
        v: &ast::Expr,
    ) -> Option<f64> {
        let dtype = self.params.get(param.0 as usize)?.ty.dtype;
        let lit = match self.value(v)? {
            Val::Lit(l) => l,
            Val::Tile(_) => {
                return self.error(
                    format!(
                        "a pad value is a number (a literal or a `const`), not the tile `{}`",
                        show::expr(v)
                    ),
                    v.span,
                )
            }
        };
        if dtype == DType::I32 && (lit.is_float || !fits_i32(lit.value)) {
            return self.error(
                format!(
                    "`{}` holds i32, so its pad value is an i32 integer, not `{}`",
                    tensor.name,
                    show::expr(v)
                ),
                v.span,
            );
        }
        Some(f64::from(dtype.literal(lit.value)))
    }
}

/// Whether an integer constant is an `i32` value (numpy refuses to put a larger Python
/// integer into an int32 array, rather than wrap it).
fn fits_i32(v: f64) -> bool {
    (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&v)
}

impl Checker<'_> {
    /// The error for an integer constant that an `i32` tile cannot hold.
    fn out_of_i32<T>(&mut self, l: &Lit) -> Option<T> {
        self.error(
            format!(
                "the integer {} is outside the range of i32 ({} to {}), which tile arithmetic computes in",
                l.value,
                i32::MIN,
                i32::MAX
            ),
            l.span,
        )
    }
}

/// Whether `e` is a load whose integer index dropped an axis (numpy's `x[i, :]`).
pub(super) fn drops_an_axis(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Load { index, .. } if index.iter().any(|ix| matches!(ix, crate::front::hir::Index::Single(_))))
}
