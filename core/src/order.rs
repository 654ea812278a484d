//! The one sort the compiler (and the playground, through `web/src/order.rs`) links.
//!
//! Why not `sort_by_key` / `sort` at each call site: every call with its own element or
//! closure type monomorphises the standard library's whole sort (about 4 KB of wasm
//! each; copies of it were 15 KB of the playground's gzipped module). Routing the
//! orderings through one key type links a single copy of the sort; the per-type
//! remainder here is a move of the items.

/// What items are ordered by: compared as a triple, lexicographically. Narrower keys
/// leave the trailing fields 0.
pub type Key = (u64, u64, u64);

/// Sorts `items` by `key`, keeping items with equal keys in their order (as the
/// standard stable `sort_by_key` does: the original position breaks ties).
pub fn sort_by_key<T>(items: &mut Vec<T>, key: impl Fn(&T) -> Key) {
    let mut keys: Vec<(Key, usize)> = items.iter().map(key).zip(0..).collect();
    keys.sort_unstable();
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(
        keys.into_iter()
            .filter_map(|(_, i)| slots.get_mut(i).and_then(Option::take)),
    );
}

/// An optional key field that orders `None` first, as `Option`'s own order does (for
/// positions and counts, far below `u64::MAX`).
pub fn option_key(v: Option<u64>) -> u64 {
    v.map_or(0, |v| v.saturating_add(1))
}

/// Sorts a short list by its items' own order, by insertion: for orders no fixed-width
/// key captures (item paths, compared lexicographically) where the list is a handful of
/// items (one sync pair's instructions), so quadratic time is nothing and the code is a
/// few instructions instead of a second copy of the standard sort.
pub fn sort_short<T: Ord>(items: &mut [T]) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && items.get(j - 1) > items.get(j) {
            items.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
// The tests compare with the standard sort, which the rule keeps out of shipped code.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_key_and_keeps_ties_in_order() {
        let mut v = vec![(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e')];
        let mut expected = v.clone();
        expected.sort_by_key(|p| p.0);
        sort_by_key(&mut v, |p| (p.0, 0, 0));
        assert_eq!(v, expected);
        let mut triples = vec![(2u32, 1u32, 5u32), (1, 9, 0), (2, 1, 4), (1, 9, 0)];
        sort_by_key(&mut triples, |&(a, b, c)| (a.into(), b.into(), c.into()));
        assert_eq!(triples, [(1, 9, 0), (1, 9, 0), (2, 1, 4), (2, 1, 5)]);
        let mut empty: Vec<u8> = Vec::new();
        sort_by_key(&mut empty, |&b| (b.into(), 0, 0));
        assert!(empty.is_empty());
    }

    #[test]
    fn sorts_short_lists_as_the_standard_sort() {
        let mut paths = vec![
            vec![3, 1],
            vec![0],
            vec![3, 0, 2],
            vec![],
            vec![0],
            vec![2, 9],
        ];
        let mut expected = paths.clone();
        expected.sort();
        sort_short(&mut paths);
        assert_eq!(paths, expected);
        let mut one = [7];
        sort_short(&mut one);
        assert_eq!(one, [7]);
    }

    #[test]
    fn option_keys_order_as_options() {
        let mut opts = vec![Some(3), None, Some(0), None, Some(u64::MAX - 1)];
        let mut expected = opts.clone();
        expected.sort();
        sort_by_key(&mut opts, |&o| (option_key(o), 0, 0));
        assert_eq!(opts, expected);
    }
}
