//! The `!at LINE:COL` positions of a text, as spans of the kernel source they name, or
//! of a blank stand-in text when the source is not at hand.

use super::split_comment;
use crate::diag::{Diagnostic, Span};
use std::collections::HashMap;

/// Every `!at LINE:COL` of the text as a span of the kernel source (or the stand-in).
pub(super) struct Positions {
    pub(super) spans: HashMap<(usize, usize), Span>,
    pub(super) source: String,
}

impl Positions {
    pub(super) fn new(lines: &[(usize, &str)], source: Option<&str>) -> Result<Self, Diagnostic> {
        let mut wanted: Vec<((usize, usize), Span)> = Vec::new();
        for &(offset, line) in lines {
            let (code, _) = split_comment(line);
            if let Some(at) = code.rfind(" !at ") {
                let start = at + " !at ".len();
                let token = code[start..].split(' ').next().unwrap_or("");
                let here = Span::new(offset + start, offset + start + token.len());
                let parsed = token
                    .split_once(':')
                    .and_then(|(l, c)| Some((l.parse::<usize>().ok()?, c.parse::<usize>().ok()?)))
                    .filter(|&(l, c)| l > 0 && c > 0);
                match parsed {
                    Some(lc) => wanted.push((lc, here)),
                    None => return Err(Diagnostic::error("expected `!at LINE:COL`", here)),
                }
            }
        }
        match source {
            Some(source) => {
                let starts: Vec<usize> = std::iter::once(0)
                    .chain(source.match_indices('\n').map(|(i, _)| i + 1))
                    .collect();
                let mut spans = HashMap::new();
                for ((l, c), here) in wanted {
                    let line_start = starts.get(l - 1).copied();
                    let at = line_start.and_then(|s| {
                        let line = &source[s..];
                        let line = &line[..line.find('\n').unwrap_or(line.len())];
                        let mut chars = line.char_indices().map(|(i, ch)| (s + i, ch));
                        let (i, ch) = chars.nth(c - 1)?;
                        Some(Span::new(i, i + ch.len_utf8()))
                    });
                    match at {
                        Some(span) => {
                            spans.insert((l, c), span);
                        }
                        None => {
                            return Err(Diagnostic::error(
                                format!("position {l}:{c} is not in the kernel source"),
                                here,
                            ))
                        }
                    }
                }
                Ok(Positions {
                    spans,
                    source: source.to_string(),
                })
            }
            None => {
                // A blank text as wide as each line needs: the column's character is a
                // space, so every position prints back as written.
                let mut width: Vec<usize> = Vec::new();
                for &((l, c), _) in &wanted {
                    if width.len() < l {
                        width.resize(l, 0);
                    }
                    width[l - 1] = width[l - 1].max(c);
                }
                let total: usize = width.iter().map(|w| w + 1).sum();
                if total > crate::limits::MAX_SOURCE_BYTES {
                    return Err(Diagnostic::error(
                        "the positions reach past the largest kernel source",
                        Span::new(0, 0),
                    ));
                }
                let mut source = String::with_capacity(total);
                let mut starts = Vec::with_capacity(width.len());
                for w in &width {
                    starts.push(source.len());
                    source.extend(std::iter::repeat_n(' ', *w));
                    source.push('\n');
                }
                let spans = wanted
                    .into_iter()
                    .map(|((l, c), _)| {
                        let at = starts[l - 1] + c - 1;
                        ((l, c), Span::new(at, at + 1))
                    })
                    .collect();
                Ok(Positions { spans, source })
            }
        }
    }
}
