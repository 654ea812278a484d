//! Prints syntax back as source-like text for messages ("range `r .. r + R`"). The
//! checker sees only the tree, not the source, and the tree prints more regularly.

use crate::front::ast::{BinaryOp, Cond, CondKind, Expr, ExprKind, Index, IndexKind};
use crate::front::lexer::truncate;
use std::fmt::Write;

/// Longest printed expression; deeper or longer trees end in `...`.
const MAX_CHARS: usize = 80;
/// Deepest nesting printed.
const MAX_DEPTH: usize = 32;

pub fn expr(e: &Expr) -> String {
    let mut out = String::new();
    write_expr(&mut out, e, 0, 0);
    cap(out)
}

/// A condition as written, parenthesised as its structure needs (`||` looser than
/// `&&`; `!` of anything but another `!` in parentheses): what the views call a branch.
pub fn cond(c: &Cond) -> String {
    let mut out = String::new();
    write_cond(&mut out, c, 0, 0);
    cap(out)
}

pub fn index(i: &Index) -> String {
    let mut out = String::new();
    write_index(&mut out, i, 0);
    cap(out)
}

fn cap(out: String) -> String {
    if out.len() > MAX_CHARS {
        let mut end = MAX_CHARS;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &out[..end])
    } else {
        out
    }
}

/// The levels past the binary operators: `@` (7) binds looser than a cast, a unary
/// operator and a power (8), which bind looser than a postfix `.T`.
const MATMUL: u8 = 7;
const UNARY: u8 = 8;
const POW: u8 = UNARY;
const POSTFIX: u8 = 9;

fn precedence(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::Cmp(_) => 0,
        BinaryOp::BitOr => 1,
        BinaryOp::BitXor => 2,
        BinaryOp::BitAnd => 3,
        BinaryOp::Shl | BinaryOp::Shr => 4,
        BinaryOp::Add | BinaryOp::Sub => 5,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Mod => 6,
        BinaryOp::MatMul => MATMUL,
        // Tighter than a unary minus on its left (`-t ** 2` is `-(t ** 2)`).
        BinaryOp::Pow => POW,
    }
}

/// `outer`: 0 under `||` (or at the top), 1 under `&&`, 2 under `!`.
fn write_cond(out: &mut String, c: &Cond, outer: u8, depth: usize) {
    if depth > MAX_DEPTH {
        out.push_str("...");
        return;
    }
    let (level, open) = match &c.kind {
        CondKind::Test(_) => (2, outer == 2),
        CondKind::Or(..) => (0, outer > 0),
        CondKind::And(..) => (1, outer > 1),
        CondKind::Not(_) => (3, false),
    };
    if open {
        out.push('(');
    }
    match &c.kind {
        CondKind::Test(e) => write_expr(out, e, 0, depth + 1),
        CondKind::Or(a, b) | CondKind::And(a, b) => {
            write_cond(out, a, level, depth + 1);
            out.push_str(if level == 0 { " || " } else { " && " });
            write_cond(out, b, level, depth + 1);
        }
        CondKind::Not(a) => {
            out.push('!');
            write_cond(out, a, 2, depth + 1);
        }
    }
    if open {
        out.push(')');
    }
}

fn write_index(out: &mut String, i: &Index, depth: usize) {
    match &i.kind {
        IndexKind::Full => out.push(':'),
        IndexKind::Range(a, b) => {
            write_expr(out, a, 0, depth);
            out.push_str(" .. ");
            write_expr(out, b, 0, depth);
        }
        IndexKind::Strided(a, b, s) => {
            write_expr(out, a, 0, depth);
            out.push_str(" .. ");
            write_expr(out, b, 0, depth);
            out.push_str(" step ");
            write_expr(out, s, 0, depth);
        }
        IndexKind::Point(e) => write_expr(out, e, 0, depth),
    }
}

/// Writes `e`, parenthesised when it binds looser than `outer` requires.
fn write_expr(out: &mut String, e: &Expr, outer: u8, depth: usize) {
    // Past the cap the text is cut anyway; the depth bound keeps trees built by hand
    // (the parser already bounds its own) from recursing without limit.
    if out.len() > MAX_CHARS || depth > MAX_DEPTH {
        out.push_str("...");
        return;
    }
    let depth = depth + 1;
    match &e.kind {
        ExprKind::Int(v) => {
            let _ = write!(out, "{v}");
        }
        ExprKind::Float(v) if v.is_infinite() => {
            out.push_str(if *v > 0.0 { "inf" } else { "-inf" })
        }
        ExprKind::Float(v) => {
            let _ = write!(out, "{v:?}");
        }
        ExprKind::Name(n) => out.push_str(&truncate(n)),
        ExprKind::Neg(a) | ExprKind::Not(a) => {
            // Only the base of a power binds tighter: `(-t) ** 2`.
            let parens = outer > UNARY;
            if parens {
                out.push('(');
            }
            out.push(if matches!(e.kind, ExprKind::Neg(_)) {
                '-'
            } else {
                '~'
            });
            write_expr(out, a, UNARY, depth);
            if parens {
                out.push(')');
            }
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let p = precedence(*op);
            if p < outer {
                out.push('(');
            }
            // Comparisons do not associate: a comparison on either side keeps its
            // parentheses. A power associates to the right.
            let (left, right) = match op {
                BinaryOp::Cmp(_) => (p + 1, p + 1),
                BinaryOp::Pow => (p + 1, p),
                _ => (p, p + 1),
            };
            write_expr(out, lhs, left, depth);
            let _ = write!(out, " {} ", op.symbol());
            write_expr(out, rhs, right, depth);
            if p < outer {
                out.push(')');
            }
        }
        ExprKind::Transpose(a) => {
            write_expr(out, a, POSTFIX, depth);
            out.push_str(".T");
        }
        ExprKind::Cast { value, dtype, .. } => {
            if outer > MATMUL {
                out.push('(');
            }
            write_expr(out, value, UNARY, depth);
            let _ = write!(out, " as {dtype}");
            if outer > MATMUL {
                out.push(')');
            }
        }
        ExprKind::Load {
            tensor,
            indices,
            pad,
        } => {
            let _ = write!(out, "load {}[", truncate(&tensor.name));
            for (k, i) in indices.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_index(out, i, depth);
            }
            out.push(']');
            if let Some(v) = pad {
                out.push_str(" pad ");
                write_expr(out, v, UNARY, depth);
            }
        }
        ExprKind::SlotRead { name, slot } => {
            let _ = write!(out, "{}[", truncate(&name.name));
            write_expr(out, slot, 0, depth);
            out.push(']');
        }
        ExprKind::List(items) => {
            out.push('[');
            for (k, i) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_expr(out, i, 0, depth);
            }
            out.push(']');
        }
        ExprKind::Slice { arg, indices } => {
            write_expr(out, arg, POSTFIX, depth);
            out.push('[');
            for (k, i) in indices.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_index(out, i, depth);
            }
            out.push(']');
        }
        ExprKind::Call {
            func,
            ty,
            args,
            axis,
        } => {
            let _ = write!(out, "{}(", truncate(&func.name));
            let mut parts = Vec::new();
            if let Some(t) = ty {
                let mut s = format!("{}[", t.dtype);
                for (k, d) in t.shape.iter().enumerate() {
                    if k > 0 {
                        s.push_str(", ");
                    }
                    write_expr(&mut s, d, 0, depth);
                }
                s.push(']');
                parts.push(s);
            }
            for a in args {
                let mut s = String::new();
                write_expr(&mut s, a, 0, depth);
                parts.push(s);
            }
            if let Some(a) = axis {
                let mut s = String::from("axis=");
                write_expr(&mut s, a, 0, depth);
                parts.push(s);
            }
            out.push_str(&parts.join(", "));
            out.push(')');
        }
    }
}
