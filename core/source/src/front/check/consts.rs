//! Constant expressions: `const` items, extents, loop bounds, `axis=`. Integers use
//! checked arithmetic with floor semantics for `//` and `%` (overflow is an error, not a
//! wrap); a `const` item may also be a float (`const EPS = 1e-5;`), usable wherever a
//! float literal is.

use super::{show, Binding, Checker};
use crate::diag::{Diagnostic, Span};
use crate::front::ast::{BinaryOp, Expr, ExprKind};
use std::collections::HashMap;

/// `a // b` rounding toward negative infinity; `None` on division by zero or overflow.
pub fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

/// `a % b` with the sign of `b` (so `a == b * (a // b) + a % b`).
pub fn floor_mod(a: i64, b: i64) -> Option<i64> {
    let r = a.checked_rem(b)?;
    if r != 0 && ((r < 0) != (b < 0)) {
        r.checked_add(b)
    } else {
        Some(r)
    }
}

/// Applies an integer operator; the error text when it fails.
pub fn int_op(op: BinaryOp, a: i64, b: i64) -> Result<i64, String> {
    let r = match op {
        BinaryOp::Add => a.checked_add(b),
        BinaryOp::Sub => a.checked_sub(b),
        BinaryOp::Mul => a.checked_mul(b),
        BinaryOp::FloorDiv | BinaryOp::Mod if b == 0 => return Err("division by zero".into()),
        BinaryOp::FloorDiv => floor_div(a, b),
        BinaryOp::Mod => floor_mod(a, b),
        BinaryOp::Div => return Err("`/` is true division; integer constants use `//`".into()),
        BinaryOp::MatMul => return Err("`@` is not an integer operator".into()),
        BinaryOp::Pow => match u32::try_from(b) {
            Ok(b) => a.checked_pow(b),
            Err(_) if b < 0 => {
                return Err(
                    "a negative exponent gives a float; an integer takes `**` by 0 or more".into(),
                )
            }
            Err(_) => None,
        },
        BinaryOp::BitAnd => Some(a & b),
        BinaryOp::BitOr => Some(a | b),
        BinaryOp::BitXor => Some(a ^ b),
        BinaryOp::Shl | BinaryOp::Shr if b < 0 => return Err("a negative shift amount".into()),
        // As Python's integers, bounded to 64 bits: bits shifted past them overflow.
        BinaryOp::Shl if a == 0 => Some(0),
        BinaryOp::Shl if b >= 64 => None,
        BinaryOp::Shl => i64::try_from(i128::from(a) << b).ok(),
        BinaryOp::Shr => Some(a >> b.min(63)),
        BinaryOp::Cmp(_) => return Err("a comparison gives a mask, not an integer".into()),
    };
    r.ok_or_else(|| "overflows a 64-bit integer".to_string())
}

/// A `const` item's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    Int(i64),
    Float(f64),
}

impl Checker<'_> {
    /// Evaluates the `const` items in source order; a const may use only earlier ones.
    pub(super) fn check_const_items(&mut self) {
        let mut seen = HashMap::new();
        for c in &self.file.consts {
            if !self.first_definition(&mut seen, "constant", &c.name) {
                continue;
            }
            let value = self.const_item_expr(&c.value);
            self.consts.insert(c.name.name.clone(), value);
        }
    }

    /// A `const` item's expression: an integer constant expression, or a float one
    /// (a float literal or float constant anywhere in it; `+ - * / **` and unary `-`,
    /// in f64 as Python computes).
    fn const_item_expr(&mut self, e: &Expr) -> Option<ConstValue> {
        if !self.mentions_float(e) {
            return self.const_expr(e).map(ConstValue::Int);
        }
        self.nested(e.span, |cx| cx.float_expr(e))
    }

    /// Whether `e` has a float literal or names a float constant (so is a float
    /// expression, as in Python, where `2 * 0.5` is a float).
    fn mentions_float(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Float(_) => true,
            ExprKind::Name(name) => {
                matches!(self.consts.get(name), Some(Some(ConstValue::Float(_))))
            }
            ExprKind::Neg(arg) | ExprKind::Not(arg) => self.mentions_float(arg),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.mentions_float(lhs) || self.mentions_float(rhs)
            }
            _ => false,
        }
    }

    fn float_expr(&mut self, e: &Expr) -> Option<ConstValue> {
        // An integer part keeps integer semantics: `(7 // 2) * 0.5` is 1.5.
        if !self.mentions_float(e) {
            return self.const_expr(e).map(ConstValue::Int);
        }
        let value = |cx: &mut Self, e: &Expr| -> Option<f64> {
            match cx.nested(e.span, |cx| cx.float_expr(e))? {
                ConstValue::Int(v) => Some(v as f64),
                ConstValue::Float(v) => Some(v),
            }
        };
        match &e.kind {
            ExprKind::Float(v) => Some(ConstValue::Float(*v)),
            // A float constant (integer ones took the path above).
            ExprKind::Name(name) => self.consts.get(name).copied().flatten(),
            ExprKind::Neg(arg) => value(self, arg).map(|v| ConstValue::Float(-v)),
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (value(self, lhs), value(self, rhs));
                let (a, b) = (a?, b?);
                let v = match op {
                    BinaryOp::Add => a + b,
                    BinaryOp::Sub => a - b,
                    BinaryOp::Mul => a * b,
                    BinaryOp::Div => a / b,
                    BinaryOp::Pow => a.powf(b),
                    _ => {
                        return self.error(
                            format!(
                                "`{}`: a float constant is built with `+ - * / **`, not `{}`",
                                show::expr(e),
                                op.symbol()
                            ),
                            e.span,
                        )
                    }
                };
                Some(ConstValue::Float(v))
            }
            _ => self.error(
                format!(
                    "`{}` is not a constant expression (numbers, constants, `+ - * / **`)",
                    show::expr(e)
                ),
                e.span,
            ),
        }
    }

    /// The value of an integer constant expression, or `None` after reporting why not.
    pub(super) fn const_expr(&mut self, e: &Expr) -> Option<i64> {
        self.nested(e.span, |cx| cx.const_expr_inner(e))
    }

    fn const_expr_inner(&mut self, e: &Expr) -> Option<i64> {
        match &e.kind {
            ExprKind::Int(v) => Some(*v),
            ExprKind::Name(name) => self.const_name(name, e.span),
            ExprKind::Neg(arg) => {
                let v = self.const_expr(arg)?;
                match v.checked_neg() {
                    Some(n) => Some(n),
                    None => self.error(format!("`-{v}` overflows a 64-bit integer"), e.span),
                }
            }
            // Python's `~`: -v - 1.
            ExprKind::Not(arg) => self.const_expr(arg).map(|v| !v),
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.const_expr(lhs);
                let b = self.const_expr(rhs);
                let (a, b) = (a?, b?);
                match int_op(*op, a, b) {
                    Ok(v) => Some(v),
                    Err(why) => self.error(format!("`{}`: {why}", show::expr(e)), e.span),
                }
            }
            ExprKind::Float(_) => self.error(format!("expected an integer constant, found `{}`", show::expr(e)), e.span),
            _ => self.error(
                format!("`{}` is not an integer constant expression (integers, constants, `+ - * // % ** & | ^ ~ << >>`)", show::expr(e)),
                e.span,
            ),
        }
    }

    fn const_name(&mut self, name: &str, span: Span) -> Option<i64> {
        match self.consts.get(name) {
            Some(Some(ConstValue::Int(v))) => return Some(*v),
            Some(Some(ConstValue::Float(v))) => {
                let v = *v;
                return self.error(
                    format!("`{name}` is a float constant ({v}), but an integer is needed here"),
                    span,
                );
            }
            Some(None) => return None,
            None => {}
        }
        if let Some(item) = self.const_item(name) {
            let d = Diagnostic::error(
                format!("constant `{name}` is used before its definition"),
                span,
            )
            .with_label(item.name.span, "defined here");
            self.report(d);
            return None;
        }
        let what = match self.lookup(name) {
            Some((Binding::Loop(_), _)) => "a loop variable",
            Some((Binding::Local(_), _)) => "a tile",
            Some((Binding::Poisoned, _)) => return None,
            None if self.param_ids.contains_key(name) => "a kernel parameter",
            None => return self.unknown_name(name, span),
        };
        self.error(
            format!("`{name}` is {what}, but a constant is needed here"),
            span,
        )
    }
}
