//! Index expressions as affine forms and back: what constant folding, axis-split,
//! subtile-matmul and lower-to-pipes read of an index.

use super::{IndexExpr, LoopVarId};
use crate::affine::Affine;

/// The affine form of an IR index expression, or `None` when it is not affine (a product
/// of two variable parts, `//` or `%` of a non-constant, or overflow).
pub fn of_index(e: &IndexExpr) -> Option<Affine<LoopVarId>> {
    match e {
        IndexExpr::Const(c) => Some(Affine::constant(*c)),
        IndexExpr::Var(v) => Some(Affine::term(*v)),
        IndexExpr::Add(a, b) => of_index(a)?.add(of_index(b)?, 1),
        IndexExpr::Sub(a, b) => of_index(a)?.add(of_index(b)?, -1),
        IndexExpr::Mul(a, b) => Affine::product(of_index(a)?, of_index(b)?),
        IndexExpr::FloorDiv(a, d) if *d > 0 => {
            Some(Affine::constant(of_index(a)?.as_const()?.div_euclid(*d)))
        }
        IndexExpr::Mod(a, d) if *d > 0 => {
            Some(Affine::constant(of_index(a)?.as_const()?.rem_euclid(*d)))
        }
        _ => None,
    }
}

/// The IR expression of an affine form, as the IR prints it: `%r * 8 + %c - 3`
/// (variables in handle order, coefficient 1 omitted, constant last).
pub fn to_index(a: &Affine<LoopVarId>) -> IndexExpr {
    let var_times = |v: LoopVarId, c: i64| {
        IndexExpr::Mul(Box::new(IndexExpr::Var(v)), Box::new(IndexExpr::Const(c)))
    };
    let mut out: Option<IndexExpr> = None;
    for &(v, c) in a.terms() {
        let (term, negative) = match c {
            1 => (IndexExpr::Var(v), false),
            -1 if out.is_some() => (IndexExpr::Var(v), true),
            c if c < 0 && out.is_some() && c != i64::MIN => (var_times(v, -c), true),
            c => (var_times(v, c), false),
        };
        out = Some(match out {
            None => term,
            Some(acc) if negative => IndexExpr::Sub(Box::new(acc), Box::new(term)),
            Some(acc) => IndexExpr::Add(Box::new(acc), Box::new(term)),
        });
    }
    match (out, a.constant) {
        (None, c) => IndexExpr::Const(c),
        (Some(e), 0) => e,
        (Some(e), c) if c < 0 && c != i64::MIN => {
            IndexExpr::Sub(Box::new(e), Box::new(IndexExpr::Const(-c)))
        }
        (Some(e), c) => IndexExpr::Add(Box::new(e), Box::new(IndexExpr::Const(c))),
    }
}

/// The smallest and largest value of `e` when each variable `v` ranges over
/// `range(v)`, or `None` when a variable has no range or a value leaves `i64`.
pub fn interval(
    e: &IndexExpr,
    range: &dyn Fn(LoopVarId) -> Option<(i64, i64)>,
) -> Option<(i64, i64)> {
    let wide = interval_wide(e, range, 0)?;
    Some((i64::try_from(wide.0).ok()?, i64::try_from(wide.1).ok()?))
}

fn interval_wide(
    e: &IndexExpr,
    range: &dyn Fn(LoopVarId) -> Option<(i64, i64)>,
    depth: usize,
) -> Option<(i128, i128)> {
    if depth > crate::limits::MAX_NESTING_DEPTH {
        return None;
    }
    let sub = |x: &IndexExpr| interval_wide(x, range, depth + 1);
    Some(match e {
        IndexExpr::Const(c) => (i128::from(*c), i128::from(*c)),
        IndexExpr::Var(v) => {
            let (lo, hi) = range(*v)?;
            (i128::from(lo), i128::from(hi))
        }
        IndexExpr::Add(a, b) => {
            let ((al, ah), (bl, bh)) = (sub(a)?, sub(b)?);
            (al.checked_add(bl)?, ah.checked_add(bh)?)
        }
        IndexExpr::Sub(a, b) => {
            let ((al, ah), (bl, bh)) = (sub(a)?, sub(b)?);
            (al.checked_sub(bh)?, ah.checked_sub(bl)?)
        }
        IndexExpr::Mul(a, b) => {
            let ((al, ah), (bl, bh)) = (sub(a)?, sub(b)?);
            let p = [
                al.checked_mul(bl)?,
                al.checked_mul(bh)?,
                ah.checked_mul(bl)?,
                ah.checked_mul(bh)?,
            ];
            (*p.iter().min()?, *p.iter().max()?)
        }
        IndexExpr::FloorDiv(a, d) if *d > 0 => {
            let (lo, hi) = sub(a)?;
            let d = i128::from(*d);
            (lo.div_euclid(d), hi.div_euclid(d))
        }
        IndexExpr::Mod(a, d) if *d > 0 => {
            let (lo, hi) = sub(a)?;
            let d = i128::from(*d);
            if lo.div_euclid(d) == hi.div_euclid(d) {
                (lo.rem_euclid(d), hi.rem_euclid(d))
            } else {
                (0, d - 1)
            }
        }
        IndexExpr::FloorDiv(..) | IndexExpr::Mod(..) => return None,
    })
}
