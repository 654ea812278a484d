//! Sets and maps keyed by small dense indices (arena handles, register and tree node
//! numbers), stored as a bit vector or a vector indexed by key (naga's `HandleSet`,
//! Cranelift's `SecondaryMap`). Passes keep many small side tables keyed by value or op;
//! hashing a `u32` index through SipHash costs more than the lookup itself, and each
//! `HashMap` key and value type links its own copy of the hash table into the
//! playground's wasm. Lookups take `&K` like the std collections they replace.

use std::marker::PhantomData;

/// A key that is a small index: the collections below are as large as the largest key.
pub trait DenseKey: Copy + Eq + std::fmt::Debug {
    fn index(self) -> usize;
    fn from_index(index: usize) -> Self;
}

impl DenseKey for usize {
    fn index(self) -> usize {
        self
    }
    fn from_index(index: usize) -> Self {
        index
    }
}

impl DenseKey for crate::types::Pipe {
    fn index(self) -> usize {
        crate::types::Pipe::index(self)
    }
    fn from_index(index: usize) -> Self {
        crate::types::Pipe::ALL[index]
    }
}

impl DenseKey for u32 {
    fn index(self) -> usize {
        self as usize
    }
    fn from_index(index: usize) -> Self {
        index as u32
    }
}

/// A set of keys, as a bit vector.
pub struct DenseSet<K> {
    words: Vec<u64>,
    len: usize,
    marker: PhantomData<fn() -> K>,
}

impl<K: DenseKey> DenseSet<K> {
    pub fn new() -> Self {
        DenseSet {
            words: Vec::new(),
            len: 0,
            marker: PhantomData,
        }
    }

    fn slot(h: &K) -> (usize, u64) {
        (h.index() / 64, 1 << (h.index() % 64))
    }

    /// Adds `h`; true when it was not already present.
    pub fn insert(&mut self, h: K) -> bool {
        let (word, bit) = Self::slot(&h);
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        let fresh = self.words[word] & bit == 0;
        self.words[word] |= bit;
        self.len += usize::from(fresh);
        fresh
    }

    /// Removes `h`; true when it was present.
    pub fn remove(&mut self, h: &K) -> bool {
        let (word, bit) = Self::slot(h);
        let present = self.contains(h);
        if present {
            self.words[word] &= !bit;
            self.len -= 1;
        }
        present
    }

    pub fn contains(&self, h: &K) -> bool {
        let (word, bit) = Self::slot(h);
        self.words.get(word).is_some_and(|w| w & bit != 0)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The members in index order.
    pub fn iter(&self) -> impl Iterator<Item = K> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            (0..64)
                .filter(move |b| word & (1 << b) != 0)
                .map(move |b| K::from_index(w * 64 + b))
        })
    }

    pub fn is_disjoint(&self, other: &DenseSet<K>) -> bool {
        self.words.iter().zip(&other.words).all(|(a, b)| a & b == 0)
    }
}

impl<K: DenseKey> Default for DenseSet<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: DenseKey> Clone for DenseSet<K> {
    fn clone(&self) -> Self {
        DenseSet {
            words: self.words.clone(),
            len: self.len,
            marker: PhantomData,
        }
    }
}

impl<K: DenseKey> std::fmt::Debug for DenseSet<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<K: DenseKey> PartialEq for DenseSet<K> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<K: DenseKey> Extend<K> for DenseSet<K> {
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        for h in iter {
            self.insert(h);
        }
    }
}

impl<K: DenseKey> FromIterator<K> for DenseSet<K> {
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        let mut set = Self::new();
        set.extend(iter);
        set
    }
}

impl<'a, K: DenseKey> IntoIterator for &'a DenseSet<K> {
    type Item = K;
    type IntoIter = Box<dyn Iterator<Item = K> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// A map from keys to `V`, as a vector indexed by key. It has no `Index` impl: a
/// missing key is handled where it is looked up, never a panic.
pub struct DenseMap<K, V> {
    slots: Vec<Option<V>>,
    len: usize,
    marker: PhantomData<fn() -> K>,
}

impl<K: DenseKey, V> DenseMap<K, V> {
    pub fn new() -> Self {
        DenseMap {
            slots: Vec::new(),
            len: 0,
            marker: PhantomData,
        }
    }

    fn slot_mut(&mut self, h: K) -> &mut Option<V> {
        if h.index() >= self.slots.len() {
            self.slots.resize_with(h.index() + 1, || None);
        }
        &mut self.slots[h.index()]
    }

    /// Sets `h`'s value; returns the one it replaces.
    pub fn insert(&mut self, h: K, value: V) -> Option<V> {
        let old = self.slot_mut(h).replace(value);
        self.len += usize::from(old.is_none());
        old
    }

    pub fn remove(&mut self, h: &K) -> Option<V> {
        let old = self.slots.get_mut(h.index()).and_then(Option::take);
        self.len -= usize::from(old.is_some());
        old
    }

    pub fn get(&self, h: &K) -> Option<&V> {
        self.slots.get(h.index()).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, h: &K) -> Option<&mut V> {
        self.slots.get_mut(h.index()).and_then(Option::as_mut)
    }

    pub fn contains_key(&self, h: &K) -> bool {
        self.get(h).is_some()
    }

    /// `h`'s entry, for `or_default` and friends as on `HashMap`.
    pub fn entry(&mut self, h: K) -> Entry<'_, K, V> {
        Entry { map: self, h }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in index order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((K::from_index(i), v.as_ref()?)))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (K, &mut V)> + '_ {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(i, v)| Some((K::from_index(i), v.as_mut()?)))
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> + '_ {
        self.slots.iter_mut().flatten()
    }

    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.iter().map(|(h, _)| h)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.slots.iter().flatten()
    }
}

/// A handle's place in a [`DenseMap`], filled or not.
pub struct Entry<'a, K, V> {
    map: &'a mut DenseMap<K, V>,
    h: K,
}

impl<'a, K: DenseKey, V> Entry<'a, K, V> {
    pub fn or_insert_with(self, make: impl FnOnce() -> V) -> &'a mut V {
        let map = self.map;
        let fresh = map.slots.get(self.h.index()).is_none_or(Option::is_none);
        map.len += usize::from(fresh);
        map.slot_mut(self.h).get_or_insert_with(make)
    }

    pub fn or_insert(self, value: V) -> &'a mut V {
        self.or_insert_with(|| value)
    }

    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }
}

impl<K: DenseKey, V> Default for DenseMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: DenseKey, V: Clone> Clone for DenseMap<K, V> {
    fn clone(&self) -> Self {
        DenseMap {
            slots: self.slots.clone(),
            len: self.len,
            marker: PhantomData,
        }
    }
}

impl<K: DenseKey, V: std::fmt::Debug> std::fmt::Debug for DenseMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: DenseKey, V: PartialEq> PartialEq for DenseMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<K: DenseKey, V> Extend<(K, V)> for DenseMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (h, v) in iter {
            self.insert(h, v);
        }
    }
}

impl<'a, K: DenseKey, V> IntoIterator for &'a DenseMap<K, V> {
    type Item = (K, &'a V);
    type IntoIter = Box<dyn Iterator<Item = (K, &'a V)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl<K: DenseKey, V> IntoIterator for DenseMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::iter::FilterMap<
        std::iter::Enumerate<std::vec::IntoIter<Option<V>>>,
        fn((usize, Option<V>)) -> Option<(K, V)>,
    >;
    fn into_iter(self) -> Self::IntoIter {
        fn entry<K: DenseKey, V>((i, v): (usize, Option<V>)) -> Option<(K, V)> {
            Some((K::from_index(i), v?))
        }
        self.slots.into_iter().enumerate().filter_map(entry::<K, V>)
    }
}

impl<K: DenseKey, V> FromIterator<(K, V)> for DenseMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = Self::new();
        map.extend(iter);
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    type H = usize;

    proptest! {
        /// Any sequence of inserts and removes leaves the set and map agreeing with a
        /// `BTreeMap` given the same operations.
        #[test]
        fn agrees_with_a_btree(ops in prop::collection::vec((any::<bool>(), 0usize..300, any::<u8>()), 0..200)) {
            let mut set = DenseSet::<H>::new();
            let mut map = DenseMap::<H, u8>::new();
            let mut model = BTreeMap::new();
            for (insert, index, value) in ops {
                let h = H::from_index(index);
                if insert {
                    prop_assert_eq!(set.insert(h), !model.contains_key(&index));
                    prop_assert_eq!(map.insert(h, value), model.insert(index, value));
                } else {
                    prop_assert_eq!(set.remove(&h), model.contains_key(&index));
                    prop_assert_eq!(map.remove(&h), model.remove(&index));
                }
                prop_assert_eq!(set.len(), model.len());
                prop_assert_eq!(map.len(), model.len());
            }
            let keys: Vec<usize> = model.keys().copied().collect();
            prop_assert_eq!(set.iter().map(H::index).collect::<Vec<_>>(), keys.clone());
            prop_assert_eq!(map.keys().map(H::index).collect::<Vec<_>>(), keys);
            for (&index, value) in &model {
                prop_assert!(set.contains(&H::from_index(index)));
                prop_assert_eq!(map.get(&H::from_index(index)), Some(value));
            }
        }
    }

    #[test]
    fn entries_count_once() {
        let mut map = DenseMap::<H, Vec<u8>>::new();
        map.entry(H::from_index(70)).or_default().push(1);
        map.entry(H::from_index(70)).or_default().push(2);
        map.entry(H::from_index(3)).or_insert_with(|| vec![9]);
        assert_eq!(map.len(), 2);
        assert_eq!(map.get(&H::from_index(70)), Some(&vec![1, 2]));
        assert!(!map.contains_key(&H::from_index(4)));
        assert!(map.get(&H::from_index(1000)).is_none());
    }
}
