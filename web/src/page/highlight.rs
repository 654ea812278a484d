//! Syntax highlighting for the editor overlay: the compiler's own lexer in its lossless
//! mode (`tilescope::front::lexer::pieces`: comments, spaces and unknown bytes are
//! pieces too, and nothing fails on half-typed text), so the editor colours the text
//! exactly as the compiler reads it, `//` as a comment or as floor division included;
//! and a splitter that overlays marks (diagnostic underlines, linked-span highlight) on
//! the tokens.

use std::ops::Range;
use tilescope::front::lexer::{pieces, Piece, Tok};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Keyword,
    DType,
    Number,
    Comment,
    Function,
    Attribute,
    Ident,
    Punct,
    Plain,
}

impl TokenKind {
    /// CSS class of the token's `<span>`.
    pub fn class(self) -> &'static str {
        match self {
            TokenKind::Keyword => "tk-kw",
            TokenKind::DType => "tk-ty",
            TokenKind::Number => "tk-num",
            TokenKind::Comment => "tk-com",
            TokenKind::Function => "tk-fn",
            TokenKind::Attribute => "tk-attr",
            TokenKind::Ident => "tk-id",
            TokenKind::Punct => "tk-p",
            TokenKind::Plain => "",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub range: Range<usize>,
}

/// Names the lexer reads as identifiers that the language gives a meaning of its own.
const DTYPES: &[&str] = &["f32", "f16", "bf16", "i32", "i8", "u8"];

/// Pipe names of the assembly (`set_flag MTE2, V, 0`).
const PIPES: &[&str] = &["S", "MTE2", "MTE1", "M", "V", "FIX", "MTE3"];

/// Tokens of a hand-written assembly program (`.tasm`, the assembly lessons): `;`
/// comments, directives (`.tensor`), each line's mnemonic, pipe names, dtypes, numbers.
/// Its own small scanner: the assembler's parser reads whole lines and keeps no
/// positions of the pieces a colouring needs.
pub fn tokenize_asm(source: &str) -> Vec<Token> {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    // The first word of a line is its mnemonic (or directive).
    let mut line_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let kind = if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        } else if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if c == b';' {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            TokenKind::Comment
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            TokenKind::Number
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'.' {
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
            {
                i += 1;
            }
            let word = source.get(start..i).unwrap_or("");
            if line_start && word.starts_with('.') {
                TokenKind::Keyword
            } else if line_start {
                TokenKind::Function
            } else if PIPES.contains(&word) {
                TokenKind::Attribute
            } else if DTYPES.contains(&word) {
                TokenKind::DType
            } else {
                TokenKind::Ident
            }
        } else {
            // One character, whole (never a UTF-8 continuation byte alone).
            i += source
                .get(i..)
                .and_then(|r| r.chars().next())
                .map_or(1, char::len_utf8);
            TokenKind::Punct
        };
        line_start = false;
        tokens.push(Token {
            kind,
            range: start..i,
        });
    }
    tokens
}

/// Tokens covering `source` in order; gaps are whitespace.
pub fn tokenize(source: &str) -> Vec<Token> {
    let all = pieces(source);
    let mut tokens: Vec<Token> = Vec::with_capacity(all.len());
    let next_token = |i: usize| {
        all.get(i + 1..)
            .unwrap_or_default()
            .iter()
            .find(|(p, _)| *p != Piece::Space)
    };
    for (i, &(piece, span)) in all.iter().enumerate() {
        let range = span.start as usize..span.end as usize;
        let kind = match piece {
            Piece::Space => continue,
            Piece::Comment => TokenKind::Comment,
            Piece::Invalid => TokenKind::Plain,
            Piece::Token(tok) => match tok {
                Tok::Int(_) | Tok::Float(_) => TokenKind::Number,
                Tok::Ident => {
                    let word = source.get(range.clone()).unwrap_or("");
                    let after_at = tokens.last().is_some_and(|t| {
                        t.kind == TokenKind::Attribute && t.range.end == range.start
                    });
                    if after_at {
                        // `@buffers`: one attribute token.
                        if let Some(t) = tokens.last_mut() {
                            t.range.end = range.end;
                        }
                        continue;
                    } else if DTYPES.contains(&word) {
                        TokenKind::DType
                    } else if word == "out"
                        && matches!(next_token(i), Some((Piece::Token(Tok::Ident), s))
                            if source.get(s.start as usize..s.end as usize).is_some_and(|w| DTYPES.contains(&w)))
                    {
                        // `out` before a parameter's type; elsewhere it is a name.
                        TokenKind::Keyword
                    } else if matches!(next_token(i), Some((Piece::Token(Tok::LParen), _))) {
                        TokenKind::Function
                    } else {
                        TokenKind::Ident
                    }
                }
                // `@` directly before a name starts an attribute; elsewhere it is `@`,
                // the matrix product.
                Tok::At if matches!(all.get(i + 1), Some((Piece::Token(Tok::Ident), s)) if s.start == span.end) => {
                    TokenKind::Attribute
                }
                Tok::Const
                | Tok::Kernel
                | Tok::Let
                | Tok::For
                | Tok::If
                | Tok::Else
                | Tok::In
                | Tok::Step
                | Tok::Load
                | Tok::Store
                | Tok::As => TokenKind::Keyword,
                _ => TokenKind::Punct,
            },
        };
        tokens.push(Token { kind, range });
    }
    tokens
}

/// Marks drawn over the text, as bit flags so they can overlap.
pub const MARK_ERROR: u8 = 1;
pub const MARK_WARNING: u8 = 2;
pub const MARK_LINKED: u8 = 4;

/// A run of text with one token kind and one set of marks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub range: Range<usize>,
    pub kind: TokenKind,
    pub marks: u8,
}

/// Splits `source` into segments at every token and mark boundary, so the overlay can
/// render each as one `<span>`. Whitespace between tokens becomes `Plain` segments; mark
/// ranges are clamped to the text and to char boundaries. An empty mark range is widened
/// to one char so a zero-width diagnostic (e.g. "expected `;`") is still visible.
pub fn segments(source: &str, tokens: &[Token], marks: &[(Range<usize>, u8)]) -> Vec<Segment> {
    let len = source.len();
    let marks: Vec<(Range<usize>, u8)> = marks
        .iter()
        .map(|(r, m)| {
            let start = crate::page::text::floor_char_boundary(source, r.start);
            let mut end = crate::page::text::floor_char_boundary(source, r.end.max(start));
            if end == start {
                end = source[start..]
                    .chars()
                    .next()
                    .map_or(start, |c| start + c.len_utf8());
            }
            (start..end, *m)
        })
        .collect();
    let mut cuts: Vec<usize> = vec![0, len];
    for t in tokens {
        cuts.push(t.range.start.min(len));
        cuts.push(t.range.end.min(len));
    }
    for (r, _) in &marks {
        cuts.push(r.start);
        cuts.push(r.end);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Segment> = Vec::with_capacity(cuts.len());
    let mut token_iter = tokens.iter().peekable();
    for pair in cuts.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        while token_iter.peek().is_some_and(|t| t.range.end <= a) {
            token_iter.next();
        }
        let kind = match token_iter.peek() {
            Some(t) if t.range.start <= a && b <= t.range.end => t.kind,
            _ => TokenKind::Plain,
        };
        let flags = marks
            .iter()
            .filter(|(r, _)| r.start < b && a < r.end)
            .fold(0, |acc, (_, m)| acc | m);
        match out.last_mut() {
            Some(last) if last.kind == kind && last.marks == flags && last.range.end == a => {
                last.range.end = b;
            }
            _ => out.push(Segment {
                range: a..b,
                kind,
                marks: flags,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(&str, TokenKind)> {
        tokenize(src)
            .into_iter()
            .map(|t| (&src[t.range], t.kind))
            .collect()
    }

    #[test]
    fn classifies_the_language() {
        use TokenKind::*;
        let src = "for r in 0..64 step 8 @buffers(2) { let t = exp(x) as f16; } // hi";
        assert_eq!(
            kinds(src),
            vec![
                ("for", Keyword),
                ("r", Ident),
                ("in", Keyword),
                ("0", Number),
                ("..", Punct),
                ("64", Number),
                ("step", Keyword),
                ("8", Number),
                ("@buffers", Attribute),
                ("(", Punct),
                ("2", Number),
                (")", Punct),
                ("{", Punct),
                ("let", Keyword),
                ("t", Ident),
                ("=", Punct),
                ("exp", Function),
                ("(", Punct),
                ("x", Ident),
                (")", Punct),
                ("as", Keyword),
                ("f16", DType),
                (";", Punct),
                ("}", Punct),
                ("// hi", Comment),
            ]
        );
    }

    #[test]
    fn assembly_comments_mnemonics_and_pipes() {
        let source = "; y = x\n.tensor x f32[8, 64]\nset_flag MTE2, V, 0 ; done\n";
        let kinds: Vec<(&str, TokenKind)> = tokenize_asm(source)
            .into_iter()
            .map(|t| (&source[t.range], t.kind))
            .collect();
        use TokenKind::*;
        assert_eq!(kinds[0], ("; y = x", Comment));
        assert_eq!(kinds[1], (".tensor", Keyword));
        assert!(kinds.contains(&("f32", DType)));
        assert!(kinds.contains(&("set_flag", Function)));
        assert!(kinds.contains(&("MTE2", Attribute)) && kinds.contains(&("V", Attribute)));
        assert_eq!(kinds.last(), Some(&("; done", Comment)));
        // Any text, however broken, is covered without a panic.
        for odd in ["", ";", "é;ü\n\u{1F600}", "0x1f.."] {
            let _ = tokenize_asm(odd);
        }
    }

    #[test]
    fn if_and_else_are_keywords() {
        use TokenKind::*;
        let src = "if i % 2 == 0 && !(j > i) {} else {}";
        let k = kinds(src);
        assert_eq!(k.first(), Some(&("if", Keyword)));
        assert!(k.contains(&("else", Keyword)), "{k:?}");
        assert!(
            k.contains(&("&&", Punct)) && k.contains(&("!", Punct)),
            "{k:?}"
        );
    }

    #[test]
    fn out_is_a_keyword_only_before_a_type() {
        use TokenKind::*;
        let src = "kernel k(out: out f32[4]) { store out[:] = t ** 2; }";
        let k = kinds(src);
        assert_eq!(k[3], ("out", Ident));
        assert_eq!(k[5], ("out", Keyword));
        assert_eq!(k[6], ("f32", DType));
        assert!(k.contains(&("out", Ident)) && k.iter().filter(|t| t.0 == "out").count() == 3);
        assert!(k.contains(&("**", Punct)));
    }

    #[test]
    fn numbers_with_fraction_and_exponent() {
        use TokenKind::*;
        assert_eq!(
            kinds("1e-5 2.5e3 -inf"),
            vec![
                ("1e-5", Number),
                ("2.5e3", Number),
                ("-", Punct),
                ("inf", Number)
            ]
        );
    }

    #[test]
    fn floor_division_is_not_a_comment() {
        use TokenKind::*;
        // As the compiler reads it: `//` after an operand on the same line divides.
        assert_eq!(
            kinds("x[(b // 4) * 16]; // rows"),
            vec![
                ("x", Ident),
                ("[", Punct),
                ("(", Punct),
                ("b", Ident),
                ("//", Punct),
                ("4", Number),
                (")", Punct),
                ("*", Punct),
                ("16", Number),
                ("]", Punct),
                (";", Punct),
                ("// rows", Comment),
            ]
        );
        assert_eq!(
            kinds("a @ b"),
            vec![("a", Ident), ("@", Punct), ("b", Ident)]
        );
    }

    #[test]
    fn segments_cover_text_and_split_on_marks() {
        let src = "let abc = 1;";
        let segs = segments(src, &tokenize(src), &[(5..7, MARK_ERROR)]);
        let joined: String = segs.iter().map(|s| &src[s.range.clone()]).collect();
        assert_eq!(joined, src);
        let marked: Vec<&str> = segs
            .iter()
            .filter(|s| s.marks & MARK_ERROR != 0)
            .map(|s| &src[s.range.clone()])
            .collect();
        assert_eq!(marked, vec!["bc"]);
    }

    #[test]
    fn empty_and_out_of_range_marks_are_safe() {
        let src = "aé";
        let segs = segments(
            src,
            &tokenize(src),
            &[(2..2, MARK_ERROR), (1..99, MARK_LINKED)],
        );
        let joined: String = segs.iter().map(|s| &src[s.range.clone()]).collect();
        assert_eq!(joined, src);
        assert!(segs.iter().any(|s| s.marks & MARK_ERROR != 0));
    }
}
