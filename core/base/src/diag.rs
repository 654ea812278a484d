//! Source spans and diagnostics. Every error the compiler or simulator can produce is a
//! `Diagnostic` value; nothing in core panics on user input.

use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` into the kernel source.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const DUMMY: Span = Span { start: 0, end: 0 };

    pub fn new(start: usize, end: usize) -> Span {
        // Sources are capped far below 4 GiB (limits::MAX_SOURCE_BYTES), so this cannot truncate.
        Span {
            start: start as u32,
            end: end.max(start) as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

impl Span {
    /// Where the span starts, as people read positions.
    pub fn line_col(self, source: &str) -> LineCol {
        LineCol::at(source, self.start as usize)
    }
}

/// A position as people read it: 1-based line, and 1-based column in characters. The
/// one place that turns byte offsets into lines and columns (the CLI, the explanations,
/// the verifiers, the grader and the playground all ask it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    pub line: usize,
    pub col: usize,
    /// Byte offset of the start of the line.
    pub line_start: usize,
}

impl LineCol {
    /// The position of byte offset `at` in `source`. An offset past the end, or inside a
    /// character, is taken back to the character boundary at or before it: a span may
    /// come from an older version of the text than the one at hand.
    pub fn at(source: &str, at: usize) -> LineCol {
        let before = &source[..source.floor_char_boundary(at)];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        LineCol {
            line: before.matches('\n').count() + 1,
            col: before[line_start..].chars().count() + 1,
            line_start,
        }
    }

    /// The text of the position's line, without its line break.
    pub fn line_text(self, source: &str) -> &str {
        let rest = source.get(self.line_start..).unwrap_or("");
        rest.lines().next().unwrap_or("")
    }
}

impl std::fmt::Display for LineCol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// A secondary location that explains the primary one ("first defined here").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// Primary location; `None` for errors with no source location (e.g. a bad .npy file).
    pub span: Option<Span>,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span: Some(span),
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// An error with no source location.
    pub fn global(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span: None,
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

/// Many diagnostics from one stage. Compile stages return `Result<T, Diagnostics>`.
pub type Diagnostics = Vec<Diagnostic>;

/// Renders diagnostics as the CLI prints them (clang style; line and column 1-based, the
/// column counted in characters):
///
/// ```text
/// softmax.tile:5:22: error: unknown name `q`
///     let t = load q[r .. r + R, :];
///                  ^
/// ```
///
/// The carets cover the span when it lies on one line (else its first line). Each label
/// follows as a `note:` with its own line and carets, then each note as `  = note: ...`.
/// A diagnostic without a span renders as `file: error: message`.
pub fn render(diags: &[Diagnostic], file_name: &str, source: &str) -> String {
    let file = codespan_reporting::files::SimpleFile::new(file_name, source);
    let mut out = String::new();
    for d in diags {
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        match d.span {
            Some(span) => render_located(&mut out, &file, span, severity, &d.message),
            None => out.push_str(&format!("{file_name}: {severity}: {}\n", d.message)),
        }
        for label in &d.labels {
            render_located(&mut out, &file, label.span, "note", &label.message);
        }
        for note in &d.notes {
            out.push_str(&format!("  = note: {note}\n"));
        }
    }
    out
}

/// `file:line:col: severity: message`, the source line, and carets under the span.
fn render_located(
    out: &mut String,
    file: &codespan_reporting::files::SimpleFile<&str, &str>,
    span: Span,
    severity: &str,
    message: &str,
) {
    use codespan_reporting::files::Files;
    let source = *file.source();
    // Spans come from our own lexer, but a stale or foreign span must not panic: clamp
    // it into the source and onto character boundaries.
    let floor = |mut i: usize| {
        i = i.min(source.len());
        while !source.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = floor(span.start as usize);
    let end = floor(span.end as usize).max(start);
    let located = file.line_index((), start).and_then(|line| {
        let range = file.line_range((), line)?;
        let col = file.column_number((), line, start)?;
        Ok((line, range, col))
    });
    let Ok((line, range, col)) = located else {
        out.push_str(&format!("{}: {severity}: {message}\n", file.name()));
        return;
    };
    out.push_str(&format!(
        "{}:{}:{col}: {severity}: {message}\n",
        file.name(),
        line + 1
    ));
    let text = source.get(range.start..range.end).unwrap_or("");
    let text = text.trim_end_matches(['\n', '\r']);
    out.push_str(text);
    out.push('\n');
    // Reproduce tabs before the caret so it lines up however tabs are displayed.
    let prefix = source.get(range.start..start).unwrap_or("");
    let mut carets: String = prefix
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let line_end = range.start + text.len();
    let covered = source
        .get(start..end.min(line_end))
        .map_or(0, |s| s.chars().count());
    carets.push_str(&"^".repeat(covered.max(1)));
    out.push_str(&carets);
    out.push('\n');
}

/// Where a verifier found a problem, in the representation it checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// The program as a whole (no one place).
    Program,
    /// A tile-IR operation, by its index in the kernel's op arena.
    Op(u32),
    /// A tile-IR value, by its printed name (`%t`).
    Value(String),
    /// An instruction of the lowered per-pipe program: its text and the item path
    /// (indices from the pipe's top level into nested loops) that reaches it.
    Lowered { text: String, path: Vec<usize> },
    /// An instruction of the final program: its index and text.
    Instr { index: usize, text: String },
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Program => write!(f, "the program"),
            Location::Op(index) => write!(f, "op #{index}"),
            Location::Value(name) => write!(f, "{name}"),
            Location::Lowered { text, path } => write!(f, "`{text}` at {path:?}"),
            Location::Instr { index, text } => write!(f, "#{index} `{text}`"),
        }
    }
}

/// What every verifier reports (the tile IR's, the address plan's, the lowered
/// program's and the final program's): where, the source it came from, and what is
/// wrong. A verifier's failure is the compiler's own bug: the pass manager reports these
/// under one internal-error diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifierError {
    pub location: Location,
    pub span: Option<Span>,
    pub message: String,
}

pub type VerifierErrors = Vec<VerifierError>;

impl VerifierError {
    pub fn new(location: Location, span: Option<Span>, message: impl Into<String>) -> Self {
        VerifierError {
            location,
            span,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for VerifierError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_lines_and_chars_and_clamps() {
        let at = |s: &str, i: usize| {
            let p = LineCol::at(s, i);
            (p.line, p.col)
        };
        let s = "ab\ncδe\n";
        assert_eq!(at(s, 0), (1, 1));
        assert_eq!(at(s, 3), (2, 1));
        // 'e' is after the two-byte 'δ': byte 6, column 3.
        assert_eq!(at(s, 6), (2, 3));
        assert_eq!(at(s, 99), (3, 1));
        // Inside a multi-byte char: rounds down.
        assert_eq!(at(s, 5), (2, 2));
        let span = Span::new(4, 7);
        assert_eq!(span.line_col(s).to_string(), "2:2");
        assert_eq!(span.line_col(s).line_text(s), "cδe");
    }
}
