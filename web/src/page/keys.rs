//! Arrow keys in the dense views. The step graph, the timeline, the assembly and the IR
//! are each one tab stop (hundreds of lines or flags as tab stops would make the page
//! unusable by keyboard); inside one, these keys move through its items. Pure, so the
//! rules are tested natively.

/// How far PageUp / PageDown move.
pub const PAGE: usize = 10;

/// The item `key` moves to in a list of `len` items from `current` (none yet: the
/// first, or the last going up); `None` when the key is not a move or the list is empty.
pub fn list_move(key: &str, current: Option<usize>, len: usize) -> Option<usize> {
    let last = len.checked_sub(1)?;
    let next = match (key, current) {
        ("ArrowDown" | "j", None) | ("Home", _) | ("PageDown", None) => 0,
        ("ArrowUp" | "k", None) | ("End", _) | ("PageUp", None) => last,
        ("ArrowDown" | "j", Some(i)) => i.saturating_add(1),
        ("ArrowUp" | "k", Some(i)) => i.saturating_sub(1),
        ("PageDown", Some(i)) => i.saturating_add(PAGE),
        ("PageUp", Some(i)) => i.saturating_sub(PAGE),
        _ => return None,
    };
    Some(next.min(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_move_one_and_stop_at_the_ends() {
        assert_eq!(list_move("ArrowDown", None, 3), Some(0));
        assert_eq!(list_move("ArrowUp", None, 3), Some(2));
        assert_eq!(list_move("ArrowDown", Some(1), 3), Some(2));
        assert_eq!(list_move("ArrowDown", Some(2), 3), Some(2));
        assert_eq!(list_move("k", Some(0), 3), Some(0));
        assert_eq!(list_move("j", Some(0), 3), Some(1));
    }

    #[test]
    fn home_end_and_pages() {
        assert_eq!(list_move("Home", Some(7), 30), Some(0));
        assert_eq!(list_move("End", None, 30), Some(29));
        assert_eq!(list_move("PageDown", Some(25), 30), Some(29));
        assert_eq!(list_move("PageUp", Some(5), 30), Some(0));
        assert_eq!(list_move("PageDown", Some(3), 30), Some(13));
    }

    #[test]
    fn other_keys_and_empty_lists_move_nothing() {
        assert_eq!(list_move("Enter", Some(1), 3), None);
        assert_eq!(list_move("ArrowDown", None, 0), None);
        // A stale index past a list that shrank comes back to its end.
        assert_eq!(list_move("ArrowUp", Some(10), 3), Some(2));
    }
}
