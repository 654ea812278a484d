//! `diag::render`: the clang-style text the CLI, the playground and tests rely on.

mod common;

use tilescope::diag::{render, Diagnostic, Span};

fn span_of(source: &str, needle: &str) -> Span {
    let start = source.find(needle).expect("needle in source");
    Span::new(start, start + needle.len())
}

#[test]
fn unknown_name_in_softmax_matches_the_documented_format() {
    let source = common::SOFTMAX.replace("load x[", "load q[");
    let rendered = common::diagnose(&source);
    assert_eq!(
        rendered,
        "softmax.tile:5:22: error: unknown name `q`\n        let t = load q[r .. r + R, :];\n                     ^\n"
            .replace("softmax.tile", "test.tile")
    );
}

#[test]
fn carets_cover_a_one_line_span_and_labels_and_notes_follow() {
    let source = "const A = 1;\nconst B = A + 22;\n";
    let d = Diagnostic::error("bad sum", span_of(source, "A + 22"))
        .with_label(span_of(source, "A = 1"), "from here")
        .with_note("a note");
    assert_eq!(
        render(&[d], "f.tile", source),
        "f.tile:2:11: error: bad sum\nconst B = A + 22;\n          ^^^^^^\n\
         f.tile:1:7: note: from here\nconst A = 1;\n      ^^^^^\n  = note: a note\n"
    );
}

#[test]
fn multi_line_spans_mark_their_first_line() {
    let source = "ab\ncd\n";
    let d = Diagnostic::error("spans lines", Span::new(1, 4));
    assert_eq!(
        render(&[d], "f", source),
        "f:1:2: error: spans lines\nab\n ^\n"
    );
}

#[test]
fn tabs_are_kept_so_the_caret_lines_up() {
    let source = "\tx\t= y;";
    let d = Diagnostic::error("here", span_of(source, "y"));
    assert_eq!(
        render(&[d], "f", source),
        "f:1:6: error: here\n\tx\t= y;\n\t \t  ^\n"
    );
}

#[test]
fn columns_count_characters_not_bytes() {
    let source = "// é\nλ = 1;";
    let d = Diagnostic::error("here", span_of(source, "1"));
    assert_eq!(
        render(&[d], "f", source),
        "f:2:5: error: here\nλ = 1;\n    ^\n"
    );
}

#[test]
fn global_and_out_of_range_spans() {
    let source = "abc";
    let diags = [
        Diagnostic::global("no span"),
        Diagnostic::error("past the end", Span::new(10, 20)),
    ];
    assert_eq!(
        render(&diags, "f", source),
        "f: error: no span\nf:1:4: error: past the end\nabc\n   ^\n"
    );
}
