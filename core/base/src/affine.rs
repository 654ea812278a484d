//! Affine forms `constant + sum(coefficient * term)` of index expressions, shared by the
//! checker (constant range extents), constant folding and axis-split. The tile IR's
//! index expressions convert to and from them in `ir::affine`.
//!
//! The terms are a vector sorted by key with no zero coefficient, not a `BTreeMap`: an
//! index expression has a handful of variables, and every map key type would link its
//! own copy of the tree code into the playground's module.

/// `constant + sum(coefficient * key)`; `K` names a term (a loop variable, or the
/// canonical text of a subterm that does not fold).
#[derive(Clone, Debug, PartialEq)]
pub struct Affine<K> {
    pub constant: i64,
    terms: Vec<(K, i64)>,
}

impl<K: Ord> Affine<K> {
    pub fn constant(constant: i64) -> Self {
        Affine {
            constant,
            terms: Vec::new(),
        }
    }

    /// `1 * key`.
    pub fn term(key: K) -> Self {
        Affine {
            constant: 0,
            terms: vec![(key, 1)],
        }
    }

    /// The value when no term is left.
    pub fn as_const(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// The terms in key order, none with coefficient 0.
    pub fn terms(&self) -> &[(K, i64)] {
        &self.terms
    }

    /// Adds `coefficient * key`; `None` on overflow.
    pub fn add_term(&mut self, key: K, coefficient: i64) -> Option<()> {
        match self.terms.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(i) => {
                let c = self.terms.get_mut(i)?;
                c.1 = c.1.checked_add(coefficient)?;
                if c.1 == 0 {
                    self.terms.remove(i);
                }
            }
            Err(i) if coefficient != 0 => self.terms.insert(i, (key, coefficient)),
            Err(_) => {}
        }
        Some(())
    }

    /// `self + sign * other`; `None` on overflow.
    pub fn add(mut self, other: Affine<K>, sign: i64) -> Option<Self> {
        self.constant = self
            .constant
            .checked_add(other.constant.checked_mul(sign)?)?;
        for (key, c) in other.terms {
            self.add_term(key, c.checked_mul(sign)?)?;
        }
        Some(self)
    }

    /// `by * self`; `None` on overflow.
    pub fn scale(mut self, by: i64) -> Option<Self> {
        self.constant = self.constant.checked_mul(by)?;
        for (_, c) in &mut self.terms {
            *c = c.checked_mul(by)?;
        }
        self.terms.retain(|(_, c)| *c != 0);
        Some(self)
    }

    /// `a * b` when one side is constant; `None` for a product of two variable parts
    /// (not affine) or on overflow.
    pub fn product(a: Self, b: Self) -> Option<Self> {
        match (a.as_const(), b.as_const()) {
            (Some(c), _) => b.scale(c),
            (_, Some(c)) => a.scale(c),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Affine;

    #[test]
    fn terms_stay_sorted_merged_and_nonzero() {
        // (2b + a + 3) - (a + 1) + 4c = 2b + 4c + 2
        let x = Affine::term('b')
            .scale(2)
            .and_then(|x| x.add(Affine::term('a'), 1))
            .and_then(|x| x.add(Affine::constant(3), 1))
            .and_then(|x| x.add(Affine::term('a').add(Affine::constant(1), 1)?, -1))
            .and_then(|x| x.add(Affine::term('c').scale(4)?, 1))
            .unwrap();
        assert_eq!(x.terms(), &[('b', 2), ('c', 4)]);
        assert_eq!(x.constant, 2);
        assert_eq!(x.as_const(), None);
        let zero = x.clone().add(x, -1).unwrap();
        assert_eq!(zero.as_const(), Some(0));
    }

    #[test]
    fn products_need_a_constant_side_and_zero_drops_terms() {
        let i = || Affine::term(0u32).add(Affine::constant(1), 1).unwrap();
        let by3 = Affine::product(Affine::constant(3), i()).unwrap();
        assert_eq!((by3.terms(), by3.constant), (&[(0u32, 3)][..], 3));
        assert_eq!(Affine::product(i(), i()), None);
        assert_eq!(
            Affine::product(i(), Affine::constant(0))
                .unwrap()
                .as_const(),
            Some(0)
        );
    }

    #[test]
    fn overflow_is_none() {
        let big = Affine::term(0u8).scale(i64::MAX).unwrap();
        assert_eq!(big.clone().scale(2), None);
        assert_eq!(big.clone().add(big, 1), None);
        assert_eq!(Affine::<u8>::constant(i64::MIN).scale(-1), None);
    }
}
