//! The pieces of a line: the cursor over it, comma lists, types and fused expressions.

use super::{Typed, R};
use crate::diag::{Diagnostic, Span};
use crate::front::hir::{BinaryOp, UnaryOp};
use crate::ir::{FusedExpr, ValueAttrs};
use crate::types::{DType, MemSpace, TileType};

/// `[space ]dtype[shape][ slots(N)][ at [ADDR, ...]]`.
pub(super) fn typed(c: &mut Cursor<'_>) -> R<Typed> {
    let save = c.clone();
    let first = c.word().unwrap_or("");
    let space = match MemSpace::from_name(first) {
        Some(space) if c.peek(" ") => {
            c.ws();
            Some(space)
        }
        _ => {
            *c = save;
            None
        }
    };
    let ty = tile_type(c)?;
    let mut attrs = ValueAttrs::default();
    if c.tok("slots(") {
        let n = u32::try_from(c.uint()?).map_err(|_| c.err("too many slots"))?;
        c.expect(")")?;
        attrs.slots = Some(n);
    }
    let save = c.clone();
    c.ws();
    if c.eat("at [") {
        attrs.addresses = comma_list(c, "]", Cursor::uint)?;
    } else {
        *c = save;
    }
    Ok(Typed { space, ty, attrs })
}

/// `f32[8, 512]`, or `f32` for a scalar.
pub(super) fn tile_type(c: &mut Cursor<'_>) -> R<TileType> {
    let at = c.clone();
    let name = c.word().unwrap_or("");
    let dtype = match name {
        "mask" => DType::Mask,
        _ => DType::from_name(name).ok_or_else(|| at.err(format!("`{name}` is not a type")))?,
    };
    let shape = if c.eat("[") {
        comma_list(c, "]", Cursor::uint)?
    } else {
        Vec::new()
    };
    Ok(TileType { dtype, shape })
}

/// A fused expression.
pub(super) fn fexpr(c: &mut Cursor<'_>, depth: usize) -> R<FusedExpr> {
    if depth > crate::limits::MAX_FUSED_NODES {
        return Err(c.err("a fused expression nested too deep"));
    }
    finfix(c, depth, true)
}

/// Left-associative infix operators of one binding strength, as the printer writes
/// them: `+ -` (`additive`) over `* /` over negation.
pub(super) fn finfix(c: &mut Cursor<'_>, depth: usize, additive: bool) -> R<FusedExpr> {
    let ops: [(&str, BinaryOp); 2] = if additive {
        [("+ ", BinaryOp::Add), ("- ", BinaryOp::Sub)]
    } else {
        [("* ", BinaryOp::Mul), ("/ ", BinaryOp::Div)]
    };
    let operand = |c: &mut Cursor<'_>| {
        if additive {
            finfix(c, depth, false)
        } else {
            funary(c, depth)
        }
    };
    let mut lhs = operand(c)?;
    loop {
        let save = c.clone();
        c.ws();
        let Some(op) = ops.iter().find(|(sym, _)| c.eat(sym)).map(|(_, op)| *op) else {
            *c = save;
            return Ok(lhs);
        };
        c.ws();
        let rhs = operand(c)?;
        lhs = FusedExpr::Binary(op, Box::new(lhs), Box::new(rhs));
    }
}

pub(super) fn funary(c: &mut Cursor<'_>, depth: usize) -> R<FusedExpr> {
    if depth > crate::limits::MAX_FUSED_NODES {
        return Err(c.err("a fused expression nested too deep"));
    }
    if c.peek("-") && !c.peek_number_after_minus() {
        c.i += 1;
        return Ok(FusedExpr::Unary(
            UnaryOp::Neg,
            Box::new(funary(c, depth + 1)?),
        ));
    }
    fatom(c, depth)
}

pub(super) fn fatom(c: &mut Cursor<'_>, depth: usize) -> R<FusedExpr> {
    if c.eat("(") {
        let e = fexpr(c, depth + 1)?;
        c.expect(")")?;
        return Ok(e);
    }
    if c.eat("$") {
        let i = u32::try_from(c.uint()?).map_err(|_| c.err("an operand number too large"))?;
        return Ok(FusedExpr::Arg(i));
    }
    let at = c.clone();
    if c.peek_number() {
        let lit = c.number();
        return lit
            .parse::<f64>()
            .map(FusedExpr::Const)
            .map_err(|_| at.err(format!("`{lit}` is not a number")));
    }
    let name = c
        .word()
        .ok_or_else(|| c.err("expected an operand, a number or a call"))?;
    c.expect("(")?;
    let a = fexpr(c, depth + 1)?;
    if let Some(op) = UnaryOp::from_name(name) {
        c.expect(")")?;
        return Ok(FusedExpr::Unary(op, Box::new(a)));
    }
    let op =
        BinaryOp::from_name(name).ok_or_else(|| at.err(format!("`{name}` is not a function")))?;
    c.expect(",")?;
    c.ws();
    let b = fexpr(c, depth + 1)?;
    c.expect(")")?;
    Ok(FusedExpr::Binary(op, Box::new(a), Box::new(b)))
}

/// Items separated by `, ` up to `close` (the opening bracket already read).
pub(super) fn comma_list<'t, T>(
    c: &mut Cursor<'t>,
    close: &str,
    mut item: impl FnMut(&mut Cursor<'t>) -> R<T>,
) -> R<Vec<T>> {
    let mut out = Vec::new();
    while !c.tok(close) {
        if !out.is_empty() {
            c.expect(",")?;
        }
        c.ws();
        out.push(item(c)?);
    }
    Ok(out)
}

/// A position in one line of the text.
#[derive(Clone)]
pub(super) struct Cursor<'t> {
    pub(super) s: &'t str,
    pub(super) i: usize,
    /// The line's byte offset in the whole text, for diagnostics.
    pub(super) base: usize,
}

impl<'t> Cursor<'t> {
    pub(super) fn rest(&self) -> &'t str {
        self.s.get(self.i..).unwrap_or("")
    }

    /// The line's code from the cursor on.
    pub(super) fn line_span(&self) -> Span {
        Span::new(self.base + self.i, self.base + self.s.len())
    }

    pub(super) fn err(&self, message: impl Into<String>) -> Diagnostic {
        let at = self.base + self.i;
        let len = self.rest().chars().next().map_or(0, char::len_utf8);
        Diagnostic::error(message, Span::new(at, at + len))
    }

    pub(super) fn ws(&mut self) {
        while self.rest().starts_with(' ') {
            self.i += 1;
        }
    }

    pub(super) fn peek(&self, s: &str) -> bool {
        self.rest().starts_with(s)
    }

    pub(super) fn eat(&mut self, s: &str) -> bool {
        let hit = self.peek(s);
        if hit {
            self.i += s.len();
        }
        hit
    }

    /// `s` after optional spaces; the cursor stays put when it is not there.
    pub(super) fn tok(&mut self, s: &str) -> bool {
        let save = self.i;
        self.ws();
        if self.eat(s) {
            true
        } else {
            self.i = save;
            false
        }
    }

    pub(super) fn expect(&mut self, s: &str) -> R<()> {
        if self.tok(s) {
            Ok(())
        } else {
            let found = self.rest().split(' ').next().unwrap_or("");
            let mut c = self.clone();
            c.ws();
            Err(c.err(if found.is_empty() {
                format!("expected `{s}` before the end of the line")
            } else {
                format!("expected `{s}`")
            }))
        }
    }

    /// The word `w` here, followed by a space or the end.
    pub(super) fn keyword_here(&mut self, w: &str) -> bool {
        let rest = self.rest();
        let hit = rest.starts_with(w)
            && !rest[w.len()..].starts_with(|ch: char| ch.is_ascii_alphanumeric() || ch == '_');
        if hit {
            self.i += w.len();
        }
        hit
    }

    pub(super) fn keyword(&mut self, w: &str) -> R<()> {
        if self.keyword_here(w) {
            Ok(())
        } else {
            Err(self.err(format!("expected `{w}`")))
        }
    }

    pub(super) fn end(&mut self) -> R<()> {
        self.ws();
        if self.rest().is_empty() {
            Ok(())
        } else {
            Err(self.err("unexpected text at the end of the line"))
        }
    }

    pub(super) fn word(&mut self) -> Option<&'t str> {
        let rest = self.rest();
        let len = rest
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .unwrap_or(rest.len());
        let starts_alpha = rest.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_');
        if len == 0 || !starts_alpha {
            return None;
        }
        self.i += len;
        Some(&rest[..len])
    }

    /// `%name` (printed names: letters, digits, `_` and the suffix's `.`), without `%`.
    pub(super) fn name(&mut self) -> R<String> {
        if !self.eat("%") {
            return Err(self.err("expected a `%name`"));
        }
        let rest = self.rest();
        let len = rest
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
            .unwrap_or(rest.len());
        // A `..` range after a name is not part of it.
        let len = rest[..len].find("..").unwrap_or(len);
        let len = rest[..len].trim_end_matches('.').len();
        if len == 0 {
            return Err(self.err("expected a name after `%`"));
        }
        self.i += len;
        Ok(rest[..len].to_string())
    }

    /// The text up to the next `stop` or the end.
    pub(super) fn until(&mut self, stop: char) -> &'t str {
        let rest = self.rest();
        let len = rest.find(stop).unwrap_or(rest.len());
        self.i += len;
        &rest[..len]
    }

    pub(super) fn uint(&mut self) -> R<u64> {
        let at = self.clone();
        let rest = self.rest();
        let (digits, radix, skip) = match rest.strip_prefix("0x") {
            Some(hex) => (hex, 16, 2),
            None => (rest, 10, 0),
        };
        let len = digits
            .find(|ch: char| !ch.is_digit(radix))
            .unwrap_or(digits.len());
        if len == 0 {
            return Err(at.err("expected a number"));
        }
        let n =
            u64::from_str_radix(&digits[..len], radix).map_err(|_| at.err("a number too large"))?;
        self.i += skip + len;
        Ok(n)
    }

    pub(super) fn int(&mut self) -> R<i64> {
        let at = self.clone();
        let negative = self.eat("-");
        let n = self.uint()?;
        let n = i64::try_from(n).map_err(|_| at.err("a number too large"))?;
        Ok(if negative { -n } else { n })
    }

    pub(super) fn peek_number(&self) -> bool {
        let r = self.rest();
        r.starts_with(|ch: char| ch.is_ascii_digit())
            || r.starts_with("inf")
            || r.starts_with("NaN")
            || (r.starts_with('-') && self.peek_number_after_minus())
    }

    pub(super) fn peek_number_after_minus(&self) -> bool {
        let r = self.rest().strip_prefix('-').unwrap_or("");
        r.starts_with(|ch: char| ch.is_ascii_digit()) || r.starts_with("inf")
    }

    /// A float literal as Rust's `{:?}` writes it (`-1.5`, `1e-5`, `inf`, `NaN`).
    pub(super) fn number(&mut self) -> &'t str {
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let mut len = 0;
        while let Some(&b) = bytes.get(len) {
            let exponent_sign = (b == b'-' || b == b'+')
                && len > 0
                && matches!(bytes.get(len - 1), Some(b'e' | b'E'));
            let ok =
                b.is_ascii_alphanumeric() || b == b'.' || exponent_sign || (b == b'-' && len == 0);
            if !ok {
                break;
            }
            len += 1;
        }
        self.i += len;
        &rest[..len]
    }
}
