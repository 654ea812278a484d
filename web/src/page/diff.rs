//! Line diff of one pass's IR against the previous pass's, for the Passes panel.

use similar::{capture_diff_slices, Algorithm, DiffOp};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    Same,
    Added,
    Removed,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: DiffKind,
    pub text: String,
    /// 0-based line in the new IR (for `Same` and `Added`), to look up its source span.
    pub new_line: Option<usize>,
}

/// Every line of `new` in order, interleaved with the lines of `old` it replaced (a
/// replaced run: its old lines, then its new ones).
///
/// Myers over the two line slices, not `TextDiff::from_lines`: that links the diff a
/// second time for its interned-line form, several KB of the playground's module.
pub fn diff_lines(old: &str, new: &str) -> Vec<DiffLine> {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut out = Vec::with_capacity(new.len());
    let removed = |out: &mut Vec<DiffLine>, at: usize, len: usize| {
        out.extend(old.iter().skip(at).take(len).map(|l| DiffLine {
            kind: DiffKind::Removed,
            text: (*l).to_string(),
            new_line: None,
        }));
    };
    let kept = |out: &mut Vec<DiffLine>, kind: DiffKind, at: usize, len: usize| {
        out.extend(
            new.iter()
                .enumerate()
                .skip(at)
                .take(len)
                .map(|(i, l)| DiffLine {
                    kind,
                    text: (*l).to_string(),
                    new_line: Some(i),
                }),
        );
    };
    for op in capture_diff_slices(Algorithm::Myers, &old, &new) {
        match op {
            DiffOp::Equal { new_index, len, .. } => kept(&mut out, DiffKind::Same, new_index, len),
            DiffOp::Delete {
                old_index, old_len, ..
            } => removed(&mut out, old_index, old_len),
            DiffOp::Insert {
                new_index, new_len, ..
            } => kept(&mut out, DiffKind::Added, new_index, new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                removed(&mut out, old_index, old_len);
                kept(&mut out, DiffKind::Added, new_index, new_len);
            }
        }
    }
    out
}

/// Counts of added and removed lines.
pub fn stats(lines: &[DiffLine]) -> (usize, usize) {
    let added = lines.iter().filter(|l| l.kind == DiffKind::Added).count();
    let removed = lines.iter().filter(|l| l.kind == DiffKind::Removed).count();
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{IrLine, PassRecord};
    use tilescope::diag::Span;

    /// Two passes as core will report them: canonicalize fuses two vector ops into one.
    fn mock_passes() -> Vec<PassRecord> {
        let before = "%0 = load x[r..r+16, :]\n%1 = mul %0, 2.0\n%2 = add %1, %bias\n%3 = relu %2\nstore y, %3\n";
        let after =
            "%0 = load x[r..r+16, :]\n%3 = fused(relu(add(mul(%0, 2.0), %bias)))\nstore y, %3\n";
        let span = |a, b| IrLine {
            span: Some(Span::new(a, b)),
            instrs: Vec::new(),
        };
        vec![
            PassRecord {
                name: "parse".into(),
                description: "source -> typed tile IR".into(),
                ir: before.into(),
                lines: vec![
                    span(10, 20),
                    span(30, 40),
                    span(30, 50),
                    span(25, 55),
                    span(0, 60),
                ],
                changed: true,
                micros: 12,
                notes: Vec::new(),
            },
            PassRecord {
                name: "canonicalize".into(),
                description: "fold, CSE, fuse elementwise chains".into(),
                ir: after.into(),
                lines: vec![span(10, 20), span(25, 55), span(0, 60)],
                changed: true,
                micros: 7,
                notes: Vec::new(),
            },
        ]
    }

    #[test]
    fn diff_of_a_fusion_marks_removed_and_added_lines() {
        let passes = mock_passes();
        let lines = diff_lines(&passes[0].ir, &passes[1].ir);
        let rendered: Vec<String> = lines
            .iter()
            .map(|l| {
                let sign = match l.kind {
                    DiffKind::Same => ' ',
                    DiffKind::Added => '+',
                    DiffKind::Removed => '-',
                };
                format!("{sign}{}", l.text)
            })
            .collect();
        assert_eq!(
            rendered,
            vec![
                " %0 = load x[r..r+16, :]",
                "-%1 = mul %0, 2.0",
                "-%2 = add %1, %bias",
                "-%3 = relu %2",
                "+%3 = fused(relu(add(mul(%0, 2.0), %bias)))",
                " store y, %3",
            ]
        );
        assert_eq!(stats(&lines), (1, 3));
        // New-side line numbers index the new pass's spans.
        let fused = lines
            .iter()
            .find(|l| l.kind == DiffKind::Added)
            .and_then(|l| l.new_line);
        assert_eq!(fused, Some(1));
        assert_eq!(passes[1].span_of_line(1), Some(Span::new(25, 55)));
        assert_eq!(passes[1].span_of_line(9), None);
    }

    #[test]
    fn identical_ir_has_no_changes() {
        let lines = diff_lines("a\nb\n", "a\nb\n");
        assert_eq!(stats(&lines), (0, 0));
        assert!(lines.iter().all(|l| l.kind == DiffKind::Same));
    }
}
