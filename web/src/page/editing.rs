//! Tab and Shift-Tab in the editor, on byte offsets of the text (the editor converts
//! the textarea's UTF-16 selection before and after).

pub const INDENT: &str = "    ";

/// The text and selection after an edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub text: String,
    pub sel_start: usize,
    pub sel_end: usize,
}

/// Tab: with no selection inserts spaces up to the next 4-column stop; with a selection
/// indents every line it touches (as CodeMirror's indentMore does), never replacing text.
pub fn indent(text: &str, sel_start: usize, sel_end: usize) -> Edit {
    let (start, end) = ordered(text, sel_start, sel_end);
    let first_line = line_begin(text, start);
    if start == end {
        let column = text[first_line..start].chars().count();
        let pad = &INDENT[..INDENT.len() - column % INDENT.len()];
        let mut out = String::with_capacity(text.len() + pad.len());
        out.push_str(&text[..start]);
        out.push_str(pad);
        out.push_str(&text[start..]);
        let caret = start + pad.len();
        return Edit {
            text: out,
            sel_start: caret,
            sel_end: caret,
        };
    }
    let mut out = String::with_capacity(text.len() + INDENT.len() * 8);
    out.push_str(&text[..first_line]);
    let mut added_before_end = 0;
    let (lines, rest) = selected_lines(text, first_line, end);
    for (offset, line) in lines {
        out.push_str(INDENT);
        if offset < end {
            added_before_end += INDENT.len();
        }
        out.push_str(line);
    }
    out.push_str(&text[rest..]);
    Edit {
        text: out,
        sel_start: start + INDENT.len(),
        sel_end: end + added_before_end,
    }
}

/// Shift-Tab: removes up to 4 leading spaces from every line the selection touches.
pub fn dedent(text: &str, sel_start: usize, sel_end: usize) -> Edit {
    let (start, end) = ordered(text, sel_start, sel_end);
    let first_line = line_begin(text, start);
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first_line]);
    let (mut new_start, mut new_end) = (start, end);
    let (lines, rest) = selected_lines(text, first_line, end);
    for (offset, line) in lines {
        let removed = line
            .bytes()
            .take(INDENT.len())
            .take_while(|b| *b == b' ')
            .count();
        out.push_str(&line[removed..]);
        // Shift each selection end by what was removed before it on earlier lines, and
        // by the part of this line's removal that lies before it.
        let shift = |pos: usize| removed.min(pos.saturating_sub(offset));
        if offset <= start {
            new_start -= shift(start);
        }
        new_end -= shift(end);
    }
    out.push_str(&text[rest..]);
    Edit {
        text: out,
        sel_start: new_start,
        sel_end: new_end.max(new_start),
    }
}

fn ordered(text: &str, a: usize, b: usize) -> (usize, usize) {
    let a = crate::page::text::floor_char_boundary(text, a);
    let b = crate::page::text::floor_char_boundary(text, b);
    (a.min(b), a.max(b))
}

fn line_begin(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The lines (with their newline) from the line starting at `from` through the one
/// containing `until`, each with its offset, and the offset where the untouched rest of
/// the text starts. A selection ending exactly at a line start excludes that line.
fn selected_lines(text: &str, from: usize, until: usize) -> (Vec<(usize, &str)>, usize) {
    let mut lines = Vec::new();
    let mut offset = from;
    while offset == from || (offset < until && offset < text.len()) {
        let line_end = text[offset..]
            .find('\n')
            .map_or(text.len(), |i| offset + i + 1);
        lines.push((offset, &text[offset..line_end]));
        offset = line_end;
        if offset >= text.len() {
            break;
        }
    }
    (lines, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tab_without_selection_goes_to_next_stop() {
        let e = indent("ab", 2, 2);
        assert_eq!(
            e,
            Edit {
                text: "ab  ".into(),
                sel_start: 4,
                sel_end: 4
            }
        );
        let e = indent("x\n", 2, 2);
        assert_eq!(e.text, "x\n    ");
    }

    #[test]
    fn tab_with_a_selection_in_one_line_indents_the_line() {
        let e = indent("ab\ncd", 4, 5);
        assert_eq!(
            e,
            Edit {
                text: "ab\n    cd".into(),
                sel_start: 8,
                sel_end: 9
            }
        );
    }

    #[test]
    fn tab_indents_selected_lines() {
        let text = "a\nb\nc\n";
        let e = indent(text, 0, 3);
        assert_eq!(e.text, "    a\n    b\nc\n");
        assert_eq!((e.sel_start, e.sel_end), (4, 11));
    }

    #[test]
    fn shift_tab_dedents_and_keeps_selection_inside() {
        let text = "    a\n  b\nc\n";
        let e = dedent(text, 5, 8);
        assert_eq!(e.text, "a\nb\nc\n");
        assert_eq!((e.sel_start, e.sel_end), (1, 2));
        let e = dedent("  x", 1, 1);
        assert_eq!(
            e,
            Edit {
                text: "x".into(),
                sel_start: 0,
                sel_end: 0
            }
        );
    }
}
