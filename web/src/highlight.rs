//! Syntax highlighting for the editor overlay: a small tokenizer over `.tile` source
//! that never fails (unknown bytes become `Plain`), and a splitter that overlays marks
//! (diagnostic underlines, linked-span highlight) on the tokens. Kept separate from
//! core's lexer because highlighting must survive any half-typed text; it can switch to
//! core's lexer once that offers an error-tolerant token stream.

use std::ops::Range;

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

const KEYWORDS: &[&str] = &[
    "const", "kernel", "let", "for", "in", "step", "load", "store", "out", "as",
];
const DTYPES: &[&str] = &["f32", "f16", "bf16", "i32"];

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Tokens covering `source` in order; gaps are whitespace.
pub fn tokenize(source: &str) -> Vec<Token> {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    let take_while = |mut j: usize, f: &dyn Fn(u8) -> bool| {
        while j < bytes.len() && f(bytes[j]) {
            j += 1;
        }
        j
    };
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        let kind = if b.is_ascii_whitespace() {
            i = take_while(i, &|c| c.is_ascii_whitespace());
            continue;
        } else if source[i..].starts_with("//") {
            i = take_while(i, &|c| c != b'\n');
            TokenKind::Comment
        } else if b == b'@' && bytes.get(i + 1).copied().is_some_and(is_ident_start) {
            i = take_while(i + 1, &is_ident_continue);
            TokenKind::Attribute
        } else if b.is_ascii_digit() {
            i = number_end(bytes, i);
            TokenKind::Number
        } else if is_ident_start(b) {
            i = take_while(i, &is_ident_continue);
            let word = &source[start..i];
            let next = take_while(i, &|c| c == b' ');
            if KEYWORDS.contains(&word) {
                TokenKind::Keyword
            } else if DTYPES.contains(&word) {
                TokenKind::DType
            } else if word == "inf" {
                TokenKind::Number
            } else if bytes.get(next) == Some(&b'(') {
                TokenKind::Function
            } else {
                TokenKind::Ident
            }
        } else if b.is_ascii() {
            i += 1;
            TokenKind::Punct
        } else {
            // A non-ASCII char: one token for the whole char keeps ranges on boundaries.
            i += source[i..].chars().next().map_or(1, char::len_utf8);
            TokenKind::Plain
        };
        tokens.push(Token {
            kind,
            range: start..i,
        });
    }
    tokens
}

/// End of a number starting at `i`: digits, an optional fraction (not the `..` of a
/// range), an optional exponent.
fn number_end(bytes: &[u8], mut i: usize) -> usize {
    let digits = |mut j: usize| {
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    i = digits(i);
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i = digits(i + 1);
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if bytes.get(j).is_some_and(u8::is_ascii_digit) {
            i = digits(j);
        }
    }
    i
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
            let start = crate::text::floor_char_boundary(source, r.start);
            let mut end = crate::text::floor_char_boundary(source, r.end.max(start));
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
    crate::order::sort_by_key(&mut cuts, |&c| (c as u64, 0));
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
                (".", Punct),
                (".", Punct),
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
