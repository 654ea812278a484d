//! The one sort the playground links.
//!
//! Why not `sort_by_key` at each call site: every call with its own closure type
//! monomorphises the standard library's whole sort (about 4 KB of wasm each; a sixth of
//! the module's code before this was sorting). Routing the playground's orderings
//! through one key type links a single copy; the per-type remainder here is a move.

/// What items are ordered by: compared as a pair, lexicographically.
pub type Key = (u64, u64);

/// Sorts `items` by `key`, keeping items with equal keys in their order (as the
/// standard stable sort does: the original position breaks ties).
pub fn sort_by_key<T>(items: &mut Vec<T>, key: impl Fn(&T) -> Key) {
    let mut keys: Vec<(Key, usize)> = items.iter().map(key).zip(0..).collect();
    keys.sort_unstable();
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(
        keys.into_iter()
            .filter_map(|(_, i)| slots.get_mut(i).and_then(Option::take)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_key_and_keeps_ties_in_order() {
        let mut v = vec![(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e')];
        let mut expected = v.clone();
        expected.sort_by_key(|p| p.0);
        sort_by_key(&mut v, |p| (p.0, 0));
        assert_eq!(v, expected);
        let mut pairs = vec![(2u32, 1u32), (1, 9), (2, 0), (1, 9)];
        sort_by_key(&mut pairs, |&(a, b)| (a.into(), b.into()));
        assert_eq!(pairs, [(1, 9), (1, 9), (2, 0), (2, 1)]);
        let mut empty: Vec<u8> = Vec::new();
        sort_by_key(&mut empty, |&b| (b.into(), 0));
        assert!(empty.is_empty());
    }
}
