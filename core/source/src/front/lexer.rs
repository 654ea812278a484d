//! Source text -> tokens (`docs/language.md`, "Lexical rules"). Hand-written: the token
//! set is tiny, and the one subtle rule (`0..64` is `Int DotDot Int`, `1.0` is a float)
//! is clearer as code than as a lexer-generator pattern.

use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::limits::MAX_DIAGNOSTICS;
use crate::types::CmpOp;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tok {
    Ident,
    Int(i64),
    Float(f64),
    // Keywords.
    Const,
    Kernel,
    Let,
    For,
    If,
    Else,
    In,
    Step,
    Load,
    Store,
    As,
    // Operators and punctuation.
    Plus,
    Minus,
    Star,
    /// `**`, the power operator.
    StarStar,
    Slash,
    SlashSlash,
    Percent,
    At,
    /// `&`, `|`, `^`, `~`, `<<`, `>>`: bit operations on i32 tiles and integer constants,
    /// logic on masks.
    Amp,
    Pipe,
    Caret,
    Tilde,
    Shl,
    Shr,
    /// `&&`, `||`, `!`: logic on the conditions of `if`.
    AndAnd,
    OrOr,
    Bang,
    Eq,
    PlusEq,
    MinusEq,
    StarEq,
    /// A comparison operator: `<`, `<=`, `>`, `>=`, `==`, `!=`.
    Cmp(CmpOp),
    DotDot,
    Dot,
    Colon,
    Comma,
    Semi,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Eof,
}

impl Tok {
    /// How the token reads in "expected ..., found ..." messages.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Ident => "a name",
            Tok::Int(_) => "an integer",
            Tok::Float(_) => "a float",
            Tok::Const => "`const`",
            Tok::Kernel => "`kernel`",
            Tok::Let => "`let`",
            Tok::For => "`for`",
            Tok::If => "`if`",
            Tok::Else => "`else`",
            Tok::In => "`in`",
            Tok::Step => "`step`",
            Tok::Load => "`load`",
            Tok::Store => "`store`",
            Tok::As => "`as`",
            Tok::Plus => "`+`",
            Tok::Minus => "`-`",
            Tok::Star => "`*`",
            Tok::StarStar => "`**`",
            Tok::Slash => "`/`",
            Tok::SlashSlash => "`//`",
            Tok::Percent => "`%`",
            Tok::Amp => "`&`",
            Tok::Pipe => "`|`",
            Tok::Caret => "`^`",
            Tok::Tilde => "`~`",
            Tok::Shl => "`<<`",
            Tok::Shr => "`>>`",
            Tok::AndAnd => "`&&`",
            Tok::OrOr => "`||`",
            Tok::Bang => "`!`",
            Tok::At => "`@`",
            Tok::Eq => "`=`",
            Tok::PlusEq => "`+=`",
            Tok::MinusEq => "`-=`",
            Tok::StarEq => "`*=`",
            Tok::Cmp(op) => match op {
                CmpOp::Lt => "`<`",
                CmpOp::Le => "`<=`",
                CmpOp::Gt => "`>`",
                CmpOp::Ge => "`>=`",
                CmpOp::Eq => "`==`",
                CmpOp::Ne => "`!=`",
            },
            Tok::DotDot => "`..`",
            Tok::Dot => "`.`",
            Tok::Colon => "`:`",
            Tok::Comma => "`,`",
            Tok::Semi => "`;`",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::Eof => "the end of the file",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn keyword(word: &str) -> Option<Tok> {
    Some(match word {
        "const" => Tok::Const,
        "kernel" => Tok::Kernel,
        "let" => Tok::Let,
        "for" => Tok::For,
        "if" => Tok::If,
        "else" => Tok::Else,
        "in" => Tok::In,
        "step" => Tok::Step,
        "load" => Tok::Load,
        "store" => Tok::Store,
        "as" => Tok::As,
        "inf" => Tok::Float(f64::INFINITY),
        _ => return None,
    })
}

/// A piece of the source text. Every byte of a source belongs to exactly one piece:
/// the lossless stream [`pieces`] gives the playground's highlighter, so the editor
/// colours the text exactly as the compiler reads it (`//` as a comment or as floor
/// division included).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Piece {
    Token(Tok),
    /// A `//` comment up to the end of its line.
    Comment,
    /// Spaces, tabs and line breaks.
    Space,
    /// A run of characters no token starts with (reported as an error by [`lex`]).
    Invalid,
}

/// Splits `source` into tokens ending with `Eof`. Characters outside the language are
/// reported (a run of them as one error) and skipped.
pub fn lex(source: &str) -> (Vec<Token>, Diagnostics) {
    let mut tokens = Vec::new();
    let mut diags = Vec::new();
    walk(source, &mut |piece, span, diag| {
        if let Some(d) = diag {
            if diags.len() < MAX_DIAGNOSTICS {
                diags.push(d);
            }
        }
        if let Piece::Token(tok) = piece {
            tokens.push(Token { tok, span });
        }
    });
    tokens.push(Token {
        tok: Tok::Eof,
        span: Span::new(source.len(), source.len()),
    });
    (tokens, diags)
}

/// Every piece of `source` in order, covering it without gaps; never fails, whatever
/// the text (half-typed code included).
pub fn pieces(source: &str) -> Vec<(Piece, Span)> {
    let mut out = Vec::new();
    walk(source, &mut |piece, span, _| out.push((piece, span)));
    out
}

/// The one scan behind [`lex`] and [`pieces`]: calls `emit` with each piece, its span
/// and, for an error, the diagnostic [`lex`] reports.
fn walk(source: &str, emit: &mut dyn FnMut(Piece, Span, Option<Diagnostic>)) {
    let bytes = source.as_bytes();
    // The last token, for the `//` rule.
    let mut last: Option<Token> = None;
    // Names with non-ASCII letters already reported.
    let mut non_ascii_names: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let c = bytes[i];
        let single = |tok| (tok, 1);
        let two = |next: u8, both, one| {
            if bytes.get(i + 1) == Some(&next) {
                (both, 2)
            } else {
                (one, 1)
            }
        };
        let (tok, len) = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i = scan(bytes, i, |b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
                emit(Piece::Space, Span::new(start, i), None);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') && bytes.get(i + 2) == Some(&b'/') => {
                // `///` is still a comment, as in C and Rust.
                i = line_end(bytes, i);
                emit(Piece::Comment, Span::new(start, i), None);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                // `//` is both the comment marker and floor division. A comment starts
                // a line's trailing text; floor division sits between two operands, so
                // it is followed by a space or an operand on the same line. The rule
                // (docs/language.md, "Whitespace and comments"): `//` starts a comment
                // unless an operand came right before it on this line (`a // b`,
                // `(r + 1) // 2`).
                if previous_is_operand(last.as_ref(), source, start) {
                    (Tok::SlashSlash, 2)
                } else {
                    i = line_end(bytes, i);
                    emit(Piece::Comment, Span::new(start, i), None);
                    continue;
                }
            }
            _ if starts_word(source, i) => {
                let end = word_end(source, i);
                let word = &source[i..end];
                if word.is_ascii() {
                    (keyword(word).unwrap_or(Tok::Ident), end - i)
                } else {
                    // `tëst`: one name, with one error the first time it appears, so
                    // neither this use nor the later ones cascade into parse errors.
                    let span = Span::new(start, end);
                    let first = !non_ascii_names.contains(&word);
                    let diag = first.then(|| {
                        non_ascii_names.push(word);
                        let odd: String = word.chars().filter(|c| !c.is_ascii()).collect();
                        Diagnostic::error(
                            format!(
                                "names are ASCII letters, digits and `_`; `{word}` has `{odd}`"
                            ),
                            span,
                        )
                    });
                    emit(Piece::Token(Tok::Ident), span, diag);
                    last = Some(Token {
                        tok: Tok::Ident,
                        span,
                    });
                    i = end;
                    continue;
                }
            }
            b'0'..=b'9' => {
                let (tok, end, diag) = number(source, i);
                if let Some(d) = diag {
                    // Reported with the token, which still parses (as 0).
                    emit(Piece::Token(tok), Span::new(start, end), Some(d));
                    last = Some(Token {
                        tok,
                        span: Span::new(start, end),
                    });
                    i = end;
                    continue;
                }
                (tok, end - i)
            }
            b'+' => two(b'=', Tok::PlusEq, Tok::Plus),
            b'-' => two(b'=', Tok::MinusEq, Tok::Minus),
            b'*' if bytes.get(i + 1) == Some(&b'*') => (Tok::StarStar, 2),
            b'*' => two(b'=', Tok::StarEq, Tok::Star),
            b'/' => single(Tok::Slash),
            b'%' => single(Tok::Percent),
            b'&' => two(b'&', Tok::AndAnd, Tok::Amp),
            b'|' => two(b'|', Tok::OrOr, Tok::Pipe),
            b'^' => single(Tok::Caret),
            b'~' => single(Tok::Tilde),
            b'<' if bytes.get(i + 1) == Some(&b'<') => (Tok::Shl, 2),
            b'>' if bytes.get(i + 1) == Some(&b'>') => (Tok::Shr, 2),
            b'@' => single(Tok::At),
            b'=' => two(b'=', Tok::Cmp(CmpOp::Eq), Tok::Eq),
            b'<' => two(b'=', Tok::Cmp(CmpOp::Le), Tok::Cmp(CmpOp::Lt)),
            b'>' => two(b'=', Tok::Cmp(CmpOp::Ge), Tok::Cmp(CmpOp::Gt)),
            b'!' => two(b'=', Tok::Cmp(CmpOp::Ne), Tok::Bang),
            b'.' => two(b'.', Tok::DotDot, Tok::Dot),
            b':' => single(Tok::Colon),
            b',' => single(Tok::Comma),
            b';' => single(Tok::Semi),
            b'(' => single(Tok::LParen),
            b')' => single(Tok::RParen),
            b'[' => single(Tok::LBracket),
            b']' => single(Tok::RBracket),
            b'{' => single(Tok::LBrace),
            b'}' => single(Tok::RBrace),
            _ => {
                let end = invalid_run(source, i);
                let text = &source[i..end];
                let what = if text.chars().count() == 1 {
                    format!("unexpected character `{}`", text.escape_debug())
                } else {
                    format!("unexpected characters `{}`", text.escape_debug())
                };
                let span = Span::new(i, end);
                emit(Piece::Invalid, span, Some(Diagnostic::error(what, span)));
                i = end;
                continue;
            }
        };
        i += len;
        let token = Token {
            tok,
            span: Span::new(start, i),
        };
        emit(Piece::Token(tok), token.span, None);
        last = Some(token);
    }
}

/// A name starts at `at`: an ASCII letter or `_`, or a letter of another script (which
/// is an error, reported once per name).
fn starts_word(source: &str, at: usize) -> bool {
    source
        .get(at..)
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| {
            c.is_ascii_alphabetic() || c == '_' || (!c.is_ascii() && c.is_alphabetic())
        })
}

/// The end of the name starting at `from`: ASCII letters, digits and `_`, and letters
/// of other scripts (so `tëst` is one name).
fn word_end(source: &str, from: usize) -> usize {
    let mut end = from;
    for (offset, c) in source[from..].char_indices() {
        if !(c.is_ascii_alphanumeric() || c == '_' || (!c.is_ascii() && c.is_alphabetic())) {
            break;
        }
        end = from + offset + c.len_utf8();
    }
    end
}

fn scan(bytes: &[u8], from: usize, keep: impl Fn(u8) -> bool) -> usize {
    let mut end = from;
    while bytes.get(end).is_some_and(|&b| keep(b)) {
        end += 1;
    }
    end
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    scan(bytes, from, |b| b != b'\n')
}

/// True when the token before byte `at` ends an operand on the same line, so a `//`
/// at `at` is floor division rather than a comment.
fn previous_is_operand(prev: Option<&Token>, source: &str, at: usize) -> bool {
    let Some(prev) = prev else {
        return false;
    };
    let operand_end = matches!(
        prev.tok,
        Tok::Ident | Tok::Int(_) | Tok::Float(_) | Tok::RParen | Tok::RBracket
    );
    let between = source.get(prev.span.end as usize..at).unwrap_or("\n");
    operand_end && !between.contains('\n')
}

/// The run of characters starting at `from` that no token can start with.
fn invalid_run(source: &str, from: usize) -> usize {
    let mut end = from;
    for (offset, ch) in source[from..].char_indices() {
        let known = ch.is_ascii_alphanumeric()
            || ch.is_ascii_whitespace()
            || "_+-*/%@=<>.:,;()[]{}".contains(ch);
        if known && offset > 0 {
            break;
        }
        end = from + offset + ch.len_utf8();
    }
    end
}

/// An integer or float literal starting at `from`: digits, then `.digits` (a dot only
/// when a digit follows, so `0..64` stays an integer range), then an exponent. An
/// integer too large for `i64` comes back as 0 with its diagnostic.
fn number(source: &str, from: usize) -> (Tok, usize, Option<Diagnostic>) {
    let bytes = source.as_bytes();
    if bytes.get(from) == Some(&b'0') {
        let radix = match bytes.get(from + 1) {
            Some(b'x' | b'X') => Some((16, "hexadecimal")),
            Some(b'b' | b'B') => Some((2, "binary")),
            _ => None,
        };
        if let Some((radix, name)) = radix {
            return prefixed(source, from, radix, name);
        }
    }
    let digits = |at| scan(bytes, at, |b| b.is_ascii_digit());
    let mut end = digits(from);
    let mut is_float = false;
    if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end = digits(end + 1);
        is_float = true;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        if bytes.get(end + 1 + sign).is_some_and(u8::is_ascii_digit) {
            end = digits(end + 1 + sign);
            is_float = true;
        }
    }
    let text = &source[from..end];
    let span = Span::new(from, end);
    if is_float {
        // The lexer's float syntax (digits, `.digits`, an exponent) is a subset of what
        // `str::parse` reads, so the NaN is never taken.
        return (
            Tok::Float(text.parse::<f64>().unwrap_or(f64::NAN)),
            end,
            None,
        );
    }
    match text.parse::<i64>() {
        Ok(v) => (Tok::Int(v), end, None),
        Err(_) => (
            Tok::Int(0),
            end,
            Some(Diagnostic::error(
                format!("integer literal `{}` is too large", truncate(text)),
                span,
            )),
        ),
    }
}

/// `0x...` or `0b...` at `from`, as Python and Rust write them: digits of `radix`, with
/// `_` allowed between them. The literal runs to the end of the letters and digits that
/// follow the prefix, so `0b102` is one (wrong) literal, never `0b10` and then `2`.
fn prefixed(source: &str, from: usize, radix: u32, name: &str) -> (Tok, usize, Option<Diagnostic>) {
    let bytes = source.as_bytes();
    let end = scan(bytes, from + 2, |b| b.is_ascii_alphanumeric() || b == b'_');
    let text = &source[from..end];
    let digits = &source[from + 2..end];
    let error = |message: String| {
        (
            Tok::Int(0),
            end,
            Some(Diagnostic::error(message, Span::new(from, end))),
        )
    };
    if let Some(bad) = digits.chars().find(|c| *c != '_' && !c.is_digit(radix)) {
        return error(format!(
            "`{}` is not a {name} literal: `{bad}` is not a {name} digit",
            truncate(text)
        ));
    }
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return error(format!(
            "`{}` needs {name} digits after its prefix (`_` only between digits)",
            truncate(text)
        ));
    }
    match i64::from_str_radix(&digits.replace('_', ""), radix) {
        Ok(v) => (Tok::Int(v), end, None),
        Err(_) => error(format!("integer literal `{}` is too large", truncate(text))),
    }
}

/// Shortens user text quoted in a message, so a megabyte-long token stays readable.
pub fn truncate(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let head: String = text.chars().take(MAX).collect();
        format!("{head}...")
    }
}
