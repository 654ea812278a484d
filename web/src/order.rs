//! The playground's orderings, through the compiler's one sort.
//!
//! Why not `sort_by_key` at each call site: every call with its own closure type
//! monomorphises the standard library's whole sort (about 4 KB of wasm each; a sixth of
//! the module's code before this was sorting). `tilescope::order` links a single copy
//! for the compiler's orderings; these share it.

/// What items are ordered by: compared as a pair, lexicographically.
pub type Key = (u64, u64);

/// Sorts `items` by `key`, keeping items with equal keys in their order (as the
/// standard stable sort does).
pub fn sort_by_key<T>(items: &mut Vec<T>, key: impl Fn(&T) -> Key) {
    tilescope::order::sort_by_key(items, |t| {
        let (a, b) = key(t);
        (a, b, 0)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_order_by_the_first_field_then_the_second() {
        let mut items = vec![(2u32, 1u32, 'a'), (1, 9, 'b'), (2, 0, 'c'), (1, 9, 'd')];
        sort_by_key(&mut items, |&(a, b, _)| (a.into(), b.into()));
        assert_eq!(items, [(1, 9, 'b'), (1, 9, 'd'), (2, 0, 'c'), (2, 1, 'a')]);
    }
}
