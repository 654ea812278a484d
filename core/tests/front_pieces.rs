//! The lexer's lossless mode (`pieces`, what the playground highlights) and the
//! compiler's token stream (`lex`) agree on every input: the pieces cover the text
//! without gaps or overlaps, their tokens are exactly `lex`'s, and an error in `lex` is
//! an `Invalid` piece or a token that `lex` also reports. Run over every example, the
//! language reference and the regression inputs, then over random text.

use proptest::prelude::*;
use tilescope::front::lexer::{lex, pieces, Piece};

fn check(source: &str) -> Result<(), String> {
    let all = pieces(source);
    let mut at = 0usize;
    for (_, span) in &all {
        if span.start as usize != at || span.end <= span.start {
            return Err(format!("gap or empty piece at byte {at}: {span:?}"));
        }
        at = span.end as usize;
    }
    if at != source.len() {
        return Err(format!("pieces end at {at} of {}", source.len()));
    }
    let (tokens, _) = lex(source);
    let from_pieces: Vec<_> = all
        .iter()
        .filter_map(|(p, s)| match p {
            Piece::Token(t) => Some((*t, *s)),
            _ => None,
        })
        .collect();
    let from_lex: Vec<_> = tokens
        .iter()
        .filter(|t| t.tok != tilescope::front::lexer::Tok::Eof)
        .map(|t| (t.tok, t.span))
        .collect();
    // NaN floats compare unequal: compare the debug text.
    if format!("{from_pieces:?}") != format!("{from_lex:?}") {
        return Err("the pieces' tokens differ from lex's".into());
    }
    Ok(())
}

#[test]
fn every_example_and_the_reference_lex_the_same_both_ways() {
    for e in tilescope::examples::ALL {
        check(e.source).unwrap_or_else(|m| panic!("{}: {m}", e.name));
    }
    let reference = include_str!("../../docs/language.md");
    check(reference).unwrap_or_else(|m| panic!("docs/language.md: {m}"));
    for tricky in [
        "b // 4",
        "x[(b // 4) * 16] // rows",
        "// only a comment",
        "let a = 1 //\n// b",
        "99999999999999999999999",
        "é€ let\u{0}x",
        "1e5e5 1.2.3 0..64 @buffers(2) @ a.T",
        "",
    ] {
        check(tricky).unwrap_or_else(|m| panic!("{tricky:?}: {m}"));
    }
}

#[test]
fn floor_division_after_an_operand_is_a_token_not_a_comment() {
    let source = include_str!("../../static/examples/block_permute.tile");
    let comments: Vec<&str> = pieces(source)
        .into_iter()
        .filter(|(p, _)| *p == Piece::Comment)
        .map(|(_, s)| &source[s.start as usize..s.end as usize])
        .collect();
    assert!(!comments.is_empty());
    assert!(
        comments
            .iter()
            .all(|c| !c.starts_with("// 4") && !c.starts_with("// 2")),
        "{comments:?}"
    );
}

proptest! {
    #[test]
    fn random_text_lexes_the_same_both_ways(s in "[ -~\n\té€\u{0}]{0,200}") {
        prop_assert!(check(&s).is_ok(), "{:?}: {:?}", s, check(&s));
    }
}

/// Hexadecimal and binary integers read as Python and Rust read them, `_` between
/// digits; a wrong digit makes the whole word one wrong literal.
#[test]
fn hexadecimal_and_binary_literals() {
    use tilescope::front::lexer::Tok;
    let ints = |source: &str| -> Vec<i64> {
        lex(source)
            .0
            .iter()
            .filter_map(|t| match t.tok {
                Tok::Int(v) => Some(v),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        ints("0xF 0xff_ff 0X1f 0b1010 0B1_1 0x7fff_ffff_ffff_ffff 0..0x40"),
        [15, 65535, 31, 10, 3, i64::MAX, 0, 64]
    );
    for bad in [
        "0b102",
        "0x",
        "0x_1",
        "0x1_",
        "0b1__0",
        "0xg",
        "0x8000_0000_0000_0000",
    ] {
        let (tokens, diags) = lex(bad);
        assert_eq!(diags.len(), 1, "{bad}: {diags:?}");
        assert_eq!(
            tokens.len(),
            2,
            "{bad}: one literal, then the end: {tokens:?}"
        );
        check(bad).unwrap_or_else(|e| panic!("{bad}: {e}"));
    }
}
