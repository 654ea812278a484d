//! Integer constant expressions: `const` items, extents, loop bounds, `axis=`. Checked
//! arithmetic with floor semantics for `//` and `%`; overflow is an error, not a wrap.

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
        BinaryOp::Cmp(_) => return Err("a comparison gives a mask, not an integer".into()),
    };
    r.ok_or_else(|| "overflows a 64-bit integer".to_string())
}

impl Checker<'_> {
    /// Evaluates the `const` items in source order; a const may use only earlier ones.
    pub(super) fn check_const_items(&mut self) {
        let mut seen = HashMap::new();
        for c in &self.file.consts {
            if !self.first_definition(&mut seen, "constant", &c.name) {
                continue;
            }
            let value = self.const_expr(&c.value);
            self.consts.insert(c.name.name.clone(), value);
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
                format!("`{}` is not an integer constant expression (integers, constants, `+ - * // %`)", show::expr(e)),
                e.span,
            ),
        }
    }

    fn const_name(&mut self, name: &str, span: Span) -> Option<i64> {
        if let Some(v) = self.consts.get(name) {
            return *v;
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
