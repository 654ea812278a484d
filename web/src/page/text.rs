//! Position arithmetic on the editor text. Spans from core are byte offsets; the
//! textarea's selection is in UTF-16 code units; lines and columns come from core
//! (`tilescope::diag::LineCol`), as diagnostics print them.
//! All functions clamp out-of-range input instead of panicking, since spans may come
//! from an older version of the text than the one on screen.

/// The largest char boundary `<= at` (clamped to the text length).
pub fn floor_char_boundary(source: &str, at: usize) -> usize {
    let mut at = at.min(source.len());
    while !source.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Byte offset of the start of 0-based line `line` (the text end past the last line).
pub fn line_start(source: &str, line: usize) -> usize {
    if line == 0 {
        return 0;
    }
    source
        .match_indices('\n')
        .nth(line - 1)
        .map_or(source.len(), |(i, _)| i + 1)
}

/// Byte offset -> UTF-16 offset (what `selectionStart` expects).
pub fn byte_to_utf16(source: &str, at: usize) -> u32 {
    let at = floor_char_boundary(source, at);
    source[..at].encode_utf16().count() as u32
}

/// UTF-16 offset -> byte offset, clamped to the text.
pub fn utf16_to_byte(source: &str, at: u32) -> usize {
    let mut units = 0u32;
    for (i, c) in source.char_indices() {
        if units >= at {
            return i;
        }
        units += c.len_utf16() as u32;
    }
    source.len()
}

/// Number of lines as an editor shows them (a trailing newline opens an empty line).
pub fn line_count(source: &str) -> usize {
    source.matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_round_trip() {
        let s = "a😀b";
        assert_eq!(byte_to_utf16(s, 5), 3);
        assert_eq!(utf16_to_byte(s, 3), 5);
        assert_eq!(utf16_to_byte(s, 100), s.len());
    }

    #[test]
    fn line_starts() {
        let s = "x\nyy\nz";
        assert_eq!(line_start(s, 0), 0);
        assert_eq!(line_start(s, 1), 2);
        assert_eq!(line_start(s, 2), 5);
        assert_eq!(line_start(s, 7), s.len());
        assert_eq!(line_count(s), 3);
    }
}
