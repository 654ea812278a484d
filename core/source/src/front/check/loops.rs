//! `for` loops: bounds that are constants or affine in the enclosing loops' variables,
//! `rev`, `@buffers`, and the loops that run zero times.
//!
//! Every later stage sees a loop with a constant start and step. A loop that does not
//! have one is checked into a counter loop `k = 0, 1, ...` whose variable is
//! `base + scale * k` ([`Counted`]): a `rev` loop counts down from its last value, and
//! a loop whose start depends on an outer loop counts up from that start.

use super::index::affine;
use super::{show, Checker, LoopRange};
use crate::diag::Span;
use crate::front::ast;
use crate::front::hir::{self, IndexExpr, IndexExprKind, LoopEnd, LoopId};
use crate::limits::{MAX_LOOP_ITERATIONS, MAX_LOOP_NESTING};

/// A loop run as a counter `k`: its variable is `base + scale * k`.
#[derive(Clone, Debug)]
pub(super) struct Counted {
    pub base: IndexExpr,
    pub scale: i64,
    /// For a start that depends on an outer loop: the smallest and largest value of
    /// the variable as a whole (`min start ..= max end - step`). Interval arithmetic on
    /// `base + scale * k` alone would add the largest start to the most iterations,
    /// which never meet (a later start leaves fewer iterations).
    pub range: Option<(i128, i128)>,
}

/// A checked loop header: the loop, its counter form if it has one, and whether an
/// iteration may be partial (the last, or the first of a `rev` loop).
type Header = (hir::Loop, Option<Counted>, bool);

/// A loop bound as checked.
enum Bound {
    Const(i64),
    /// Affine in enclosing loops' variables, with at least one of them.
    Affine(IndexExpr),
}

impl Bound {
    fn expr(&self, span: Span) -> IndexExpr {
        match self {
            Bound::Const(c) => IndexExpr {
                kind: IndexExprKind::Const(*c),
                span,
            },
            Bound::Affine(e) => e.clone(),
        }
    }
}

impl Checker<'_> {
    /// A bound: a constant expression, or an integer expression of enclosing loops'
    /// variables that is affine (no `//` or `%` of a variable).
    fn loop_bound(&mut self, e: &ast::Expr) -> Option<Bound> {
        if !self.is_index_expr(e) {
            return self.const_expr(e).map(Bound::Const);
        }
        let x = self.index_expr(e)?;
        if let IndexExprKind::Const(c) = x.kind {
            return Some(Bound::Const(c));
        }
        let Some(form) = affine(&x) else {
            return self.error(format!("loop bound `{}` overflows", show::expr(e)), e.span);
        };
        if form.terms().iter().any(|(key, _)| !key.starts_with('v')) {
            return self.error(
                format!(
                    "loop bound `{}` is not affine in the enclosing loops' variables: `//` and `%` of a variable are not allowed in a bound",
                    show::expr(e)
                ),
                e.span,
            );
        }
        Some(Bound::Affine(x))
    }

    pub(super) fn for_loop(
        &mut self,
        span: Span,
        var: &ast::Ident,
        range: LoopRange,
        attrs: &[ast::Attr],
        body: &ast::Block,
    ) -> Option<hir::StmtKind> {
        let LoopRange {
            reverse,
            start,
            end,
            step,
        } = range;
        let lo = self.loop_bound(start);
        let hi = self.loop_bound(end);
        let step_value = match step {
            None => Some(1),
            Some(e) => match self.const_expr(e)? {
                s if s > 0 => Some(s),
                s => self.error(
                    format!(
                        "a loop step must be positive, but `{}` is {s}",
                        show::expr(e)
                    ),
                    e.span,
                ),
            },
        };
        let buffers = self.loop_attrs(attrs);
        if self.loop_stack.len() >= MAX_LOOP_NESTING {
            return self.error(
                format!("loops nest too deeply (the limit is {MAX_LOOP_NESTING})"),
                var.span,
            );
        }
        let (lo, hi, step_value, buffers) = (lo?, hi?, step_value?, buffers?);
        let (header, counted, tail) = match (lo, hi) {
            (Bound::Const(lo), Bound::Const(hi)) => {
                self.constant_header(span, var, reverse, (lo, hi, step_value), buffers)?
            }
            (lo, hi) => {
                if let Some(rev) = reverse {
                    return self.error(
                        "`rev` needs constant bounds for now: this loop's bounds depend on an outer loop",
                        rev,
                    );
                }
                if let (Some(_), Some(a)) = (buffers, attrs.first()) {
                    return self.error(
                        "`@buffers` needs constant bounds for now: this loop's bounds depend on an outer loop",
                        a.span,
                    );
                }
                let lo = lo.expr(start.span);
                let hi = hi.expr(end.span);
                self.affine_header(span, var, &lo, &hi, step_value, start.span.to(end.span))?
            }
        };
        let trips = header.max_trip_count();
        let enclosing: u64 = self
            .loop_stack
            .iter()
            .filter_map(|id| self.loops.get(id.0 as usize))
            .fold(trips, |acc, l| acc.saturating_mul(l.max_trip_count()));
        self.iterations = self.iterations.saturating_add(enclosing);
        if self.iterations > MAX_LOOP_ITERATIONS && !self.iteration_limit_reported {
            self.iteration_limit_reported = true;
            self.error::<()>(
                format!(
                    "the kernel runs at least {} loop iterations here; the limit is {MAX_LOOP_ITERATIONS}",
                    self.iterations
                ),
                span,
            );
        }
        let id = LoopId(self.loops.len() as u32);
        self.loops.push(header);
        if let Some(c) = counted {
            self.counted.insert(id, c);
        }
        if tail {
            self.tails.insert(id);
        }
        self.loop_stack.push(id);
        // In a loop, a slot a later statement writes may hold a value from an earlier
        // iteration: reads there are not reported as unwritten (only what is certain).
        let before = (trips == 0).then(|| self.written.clone());
        for (_, w) in &mut self.written {
            w.any = true;
        }
        let body = self.block(body, Some((var, id)));
        self.loop_stack.pop();
        if let Some(written) = before {
            // An empty range runs the body zero times, as Python's `range` does. The
            // body is checked (its errors are errors) and then left out, with the loops
            // it holds, and it wrote no slot.
            // Later loops take these ids again: what was recorded for them goes too.
            self.loops.truncate(id.0 as usize);
            self.counted.retain(|k, _| k.0 < id.0);
            self.tails.retain(|k| k.0 < id.0);
            self.written = written;
            return None;
        }
        Some(hir::StmtKind::For { id, body })
    }

    /// The header of a loop with constant bounds; a `rev` loop becomes a counter.
    fn constant_header(
        &mut self,
        span: Span,
        var: &ast::Ident,
        reverse: Option<Span>,
        (lo, hi, step): (i64, i64, i64),
        buffers: Option<u32>,
    ) -> Option<Header> {
        if hi.checked_sub(lo).is_none() {
            // `hir::Loop::static_trip_count` computes `end - start`; keep it representable.
            return self.error(
                format!(
                    "loop `{}` spans {lo}..{hi}, more than a 64-bit integer holds",
                    var.name
                ),
                span,
            );
        }
        let header = hir::Loop {
            var: var.name.clone(),
            start: lo,
            end: LoopEnd::Const(hi),
            step,
            buffers,
            span,
        };
        let trips = header.max_trip_count();
        let tail = header.has_tail();
        // `rev`: a loop counting iterations up, `k = 0, 1, ...`, in which the variable
        // is `last - k * step`, so every later stage sees a forward loop.
        let Some(rev) = reverse.filter(|_| trips > 0) else {
            return Some((header, None, tail));
        };
        let last = lo + (trips as i64 - 1) * step;
        let counted = Counted {
            base: IndexExpr {
                kind: IndexExprKind::Const(last),
                span: rev,
            },
            scale: -step,
            range: None,
        };
        let header = hir::Loop {
            var: format!("{}_rev", var.name),
            start: 0,
            end: LoopEnd::Const(trips as i64),
            step: 1,
            ..header
        };
        Some((header, Some(counted), tail))
    }

    /// The header of a loop whose bounds depend on enclosing loops. Where its step does
    /// not divide `end - start` for every value those take, its last iteration may be
    /// partial, as a constant loop's is: a window there that passes a tensor's extent
    /// is clamped. With a start that is not constant it becomes a counter `k` in
    /// `0 .. ceil((end - start) / step)`.
    fn affine_header(
        &mut self,
        span: Span,
        var: &ast::Ident,
        lo: &IndexExpr,
        hi: &IndexExpr,
        step: i64,
        range: Span,
    ) -> Option<Header> {
        let length = match (affine(hi), affine(lo)) {
            (Some(h), Some(l)) => h.add(l, -1),
            _ => None,
        };
        let Some(length) = length else {
            return self.error(format!("the range of loop `{}` overflows", var.name), range);
        };
        // A variable term `a * v` with `v = start + step_v * n` adds `a * start` to
        // the constant and `a * step_v` per iteration of `v`'s loop: the step divides
        // the length for every value iff it divides both parts.
        let mut constant = i128::from(length.constant);
        let mut divides = true;
        for (key, a) in length.terms() {
            let id = key[1..].parse::<usize>().ok();
            let Some(l) = id.and_then(|id| self.loops.get(id)) else {
                return self.error(
                    format!(
                        "internal error: loop `{}`'s bound names an unknown loop",
                        var.name
                    ),
                    range,
                );
            };
            constant += i128::from(*a) * i128::from(l.start);
            divides &= (i128::from(*a) * i128::from(l.step)) % i128::from(step) == 0;
        }
        let tail = !divides || constant % i128::from(step) != 0;
        let header = |name: String, start: i64, end: IndexExpr, step: i64, cx: &Self| {
            let (min, max) = cx.interval(&end);
            let fits = |x: i128| i64::try_from(x).ok();
            // `i .. i + 32` runs the same count on every entry: a constant loop, which
            // passes that need a trip count can unroll or peel.
            let end = match end.kind {
                IndexExprKind::Const(c) => LoopEnd::Const(c),
                _ => LoopEnd::Affine {
                    expr: end,
                    min: fits(min)?,
                    max: fits(max)?,
                },
            };
            Some(hir::Loop {
                var: name,
                start,
                end,
                step,
                buffers: None,
                span,
            })
        };
        let built = if let IndexExprKind::Const(start) = lo.kind {
            header(var.name.clone(), start, hi.clone(), step, self).map(|h| (h, None, tail))
        } else {
            let node = |kind| IndexExpr { kind, span: range };
            // ceil(length / step) = (length + step - 1) // step, partial last included;
            // a constant when the length is the same on every entry.
            let trips = if length.terms().is_empty() {
                // At most the length of a 64-bit range: it fits.
                node(IndexExprKind::Const(
                    hir::trips(0, length.constant, step) as i64
                ))
            } else {
                let sub = IndexExprKind::Sub(Box::new(hi.clone()), Box::new(lo.clone()));
                match step {
                    1 => node(sub),
                    _ => {
                        let up = IndexExprKind::Add(
                            Box::new(node(sub)),
                            Box::new(node(IndexExprKind::Const(step - 1))),
                        );
                        node(IndexExprKind::FloorDiv(Box::new(node(up)), step))
                    }
                }
            };
            // The last value is `end - step` when the step divides the range, and at
            // most `end - 1` when it may not.
            let below_end = if tail { 1 } else { i128::from(step) };
            let range = (self.interval(lo).0, self.interval(hi).1 - below_end);
            let counted = Counted {
                base: lo.clone(),
                scale: step,
                range: Some(range),
            };
            header(format!("{}_k", var.name), 0, trips, 1, self).map(|h| (h, Some(counted), tail))
        };
        match built {
            Some(built) => Some(built),
            None => self.error(
                format!(
                    "the bounds of loop `{}` pass what a 64-bit integer holds",
                    var.name
                ),
                range,
            ),
        }
    }

    /// Loop `id` has a partial iteration: the last, or the first of a `rev` loop.
    pub(super) fn loop_has_tail(&self, id: LoopId) -> bool {
        self.tails.contains(&id)
    }

    /// `@buffers(N)`, 2 <= N <= 16; anything else is an error.
    fn loop_attrs(&mut self, attrs: &[ast::Attr]) -> Option<Option<u32>> {
        let mut buffers = None;
        let mut ok = true;
        for a in attrs {
            if a.name.name != "buffers" {
                self.error::<()>(
                    format!(
                        "unknown attribute `@{}`: the only one is `@buffers(N)`",
                        a.name.name
                    ),
                    a.span,
                );
                ok = false;
                continue;
            }
            if buffers.is_some() {
                self.error::<()>("`@buffers` is given twice", a.span);
                ok = false;
                continue;
            }
            let [arg] = a.args.as_slice() else {
                self.error::<()>(
                    "`@buffers` takes one argument: the number of slots, 2 to 16",
                    a.span,
                );
                ok = false;
                continue;
            };
            match self.const_expr(arg) {
                Some(n @ 2..=16) => buffers = Some(n as u32),
                Some(n) => {
                    self.error::<()>(
                        format!("`@buffers({n})`: the number of slots must be 2 to 16"),
                        a.span,
                    );
                    ok = false;
                }
                None => ok = false,
            }
        }
        ok.then_some(buffers)
    }
}
