//! Properties of the pure modules over arbitrary input: editor text and links are user
//! input, so none of these may panic, and their results must stay inside the text.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use tilescope_web::page::diff::{diff_lines, DiffKind};
use tilescope_web::page::editing::{dedent, indent};
use tilescope_web::page::highlight::{segments, tokenize, MARK_ERROR, MARK_LINKED};
use tilescope_web::page::share::{decode, encode, Panel, ViewState};
use tilescope_web::page::text;
use tilescope_web::protocol::options::playground;
use tilescope_web::worker::layout::{self, NODE_H, NODE_W};

/// Source-like text: the language's characters plus some multi-byte ones.
fn source() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-z0-9_ \n\t(){}\\[\\]:;,.=+*/@-]{0,80}|.{0,40}")
        .expect("a valid regex")
}

proptest! {
    /// The pass diff shows every line of the new IR in order with its index, and the
    /// old IR is exactly its kept and removed lines.
    #[test]
    fn pass_diff_replays_both_sides(old in proptest::collection::vec("[abc]{0,2}", 0..12),
                                    new in proptest::collection::vec("[abc]{0,2}", 0..12)) {
        let (old, new) = (old.join("\n"), new.join("\n"));
        let lines = diff_lines(&old, &new);
        let new_side: Vec<(&str, Option<usize>)> = lines
            .iter()
            .filter(|l| l.kind != DiffKind::Removed)
            .map(|l| (l.text.as_str(), l.new_line))
            .collect();
        let old_side: Vec<&str> = lines
            .iter()
            .filter(|l| l.kind != DiffKind::Added)
            .map(|l| l.text.as_str())
            .collect();
        let expected_new: Vec<(&str, Option<usize>)> =
            new.lines().enumerate().map(|(i, l)| (l, Some(i))).collect();
        let expected_old: Vec<&str> = old.lines().collect();
        prop_assert_eq!(new_side, expected_new);
        prop_assert_eq!(old_side, expected_old);
    }

    #[test]
    fn decode_never_panics(fragment in ".{0,200}") {
        let _ = decode(&fragment);
        let _ = decode(&format!("v1={fragment}"));
    }

    #[test]
    fn links_round_trip(
        src in ".{0,300}",
        cursor in any::<u64>(),
        pass in proptest::option::of("[a-z-]{1,12}"),
        lesson in proptest::sample::select(tilescope_web::catalog::lessons().iter().map(|l| Some(l.id.clone())).chain([None]).collect::<Vec<_>>()),
    ) {
        let view = ViewState {
            source: src,
            example: None,
            options: playground(),
            pass,
            panel: Panel::Steps,
            cursor,
            seed: 0,
            lesson,
            compare: None,
        };
        prop_assert_eq!(decode(&encode(&view)), Ok(view));
    }

    #[test]
    fn highlight_segments_tile_the_text(src in source(), a in 0usize..120, b in 0usize..120) {
        let tokens = tokenize(&src);
        for t in &tokens {
            prop_assert!(src.is_char_boundary(t.range.start) && src.is_char_boundary(t.range.end));
        }
        let segs = segments(&src, &tokens, &[(a..b, MARK_ERROR), (b..a, MARK_LINKED)]);
        let joined: String = segs.iter().map(|s| &src[s.range.clone()]).collect();
        prop_assert_eq!(joined, src);
    }

    #[test]
    fn indent_and_dedent_keep_selection_in_the_text(src in source(), a in 0usize..100, b in 0usize..100) {
        for edit in [indent(&src, a, b), dedent(&src, a, b)] {
            prop_assert!(edit.sel_start <= edit.sel_end);
            prop_assert!(edit.sel_end <= edit.text.len());
            prop_assert!(edit.text.is_char_boundary(edit.sel_start) && edit.text.is_char_boundary(edit.sel_end));
            // Only spaces are added or removed.
            let strip = |s: &str| s.replace(' ', "");
            prop_assert_eq!(strip(&edit.text), strip(&src));
        }
    }

    #[test]
    fn dedent_undoes_indent_of_lines(src in "[a-z \n]{0,60}", a in 0usize..60, b in 0usize..60) {
        let once = indent(&src, a, b);
        if a.min(src.len()) != b.min(src.len()) {
            let back = dedent(&once.text, once.sel_start, once.sel_end);
            prop_assert_eq!(back.text, src);
        }
    }

    #[test]
    fn positions_clamp(src in ".{0,60}", at in 0usize..200, units in 0u32..200) {
        let tilescope::diag::LineCol { line, col, .. } = tilescope::diag::LineCol::at(&src, at);
        prop_assert!(line >= 1 && col >= 1 && line <= text::line_count(&src));
        let byte = text::utf16_to_byte(&src, units);
        prop_assert!(src.is_char_boundary(byte));
        prop_assert!(text::byte_to_utf16(&src, byte) as usize <= src.encode_utf16().count());
    }

    /// Any step graph's layout places every step inside the picture, no two boxes
    /// overlap, and every edge forward in program order points down (the panel draws
    /// the others as back edges). Ids are arbitrary and edges may go backwards, repeat or
    /// name unknown steps.
    #[test]
    fn layout_places_every_step_without_overlap(
        ids in proptest::sample::subsequence((0u32..60).collect::<Vec<_>>(), 0..20)
            .prop_shuffle(),
        edges in proptest::collection::vec((0u32..64, 0u32..64), 0..40),
    ) {
        let p = layout::layout(&ids, &edges);
        prop_assert_eq!(p.centres.len(), ids.len());
        let boxes: Vec<(f32, f32)> = ids.iter().map(|n| p.centres[n]).collect();
        for (i, &(x, y)) in boxes.iter().enumerate() {
            prop_assert!(x - NODE_W / 2.0 >= 0.0 && x + NODE_W / 2.0 <= p.width);
            prop_assert!(y - NODE_H / 2.0 >= 0.0 && y + NODE_H / 2.0 <= p.height);
            for &(u, v) in &boxes[i + 1..] {
                prop_assert!((x - u).abs() >= NODE_W || (y - v).abs() >= NODE_H);
            }
        }
        let at = |n: &u32| ids.iter().position(|m| m == n);
        for (a, b) in &edges {
            if let (Some(i), Some(j)) = (at(a), at(b)) {
                if i < j {
                    prop_assert!(p.centres[a].1 < p.centres[b].1, "{} -> {}", a, b);
                }
            }
        }
    }
}
