//! Tensor accesses `x[i, a .. b, :, idx]`: index expressions, constant range extents
//! (by affine normal form) and bounds (by interval analysis over the loop variables).

use super::consts::int_op;
use super::expr::Val;
use super::{show, Binding, Checker};
use crate::affine::Affine;
use crate::front::ast::{self, BinaryOp, ExprKind};
use crate::front::hir::{Index, IndexExpr, IndexExprKind, Loop, LoopId, ParamId};
use crate::limits::MAX_NESTING_DEPTH;
use crate::types::{DType, TileType};

/// Canonical text of an index expression, ignoring spans.
fn canonical(e: &IndexExpr) -> String {
    match &e.kind {
        IndexExprKind::Const(c) => c.to_string(),
        IndexExprKind::Var(id) => format!("v{}", id.0),
        IndexExprKind::Add(a, b) => format!("({}+{})", canonical(a), canonical(b)),
        IndexExprKind::Sub(a, b) => format!("({}-{})", canonical(a), canonical(b)),
        IndexExprKind::Mul(a, b) => format!("({}*{})", canonical(a), canonical(b)),
        IndexExprKind::FloorDiv(a, d) => format!("({}//{d})", canonical(a)),
        IndexExprKind::Mod(a, d) => format!("({}%{d})", canonical(a)),
    }
}

/// The affine form, or `None` on overflow. Atoms are loop variables and `//`/`%`
/// subterms that do not fold, keyed by their canonical text so that two occurrences of
/// `(i // 4)` compare equal. Products are affine here because `index_expr` rejected
/// products of two variable terms.
pub(super) fn affine(e: &IndexExpr) -> Option<Affine<String>> {
    Some(match &e.kind {
        IndexExprKind::Const(c) => Affine::constant(*c),
        IndexExprKind::Var(id) => Affine::term(format!("v{}", id.0)),
        IndexExprKind::Add(a, b) => affine(a)?.add(affine(b)?, 1)?,
        IndexExprKind::Sub(a, b) => affine(a)?.add(affine(b)?, -1)?,
        IndexExprKind::Mul(a, b) => {
            let (a, b) = (affine(a)?, affine(b)?);
            match a.as_const() {
                Some(c) => b.scale(c)?,
                None => a.scale(b.constant)?,
            }
        }
        IndexExprKind::FloorDiv(..) | IndexExprKind::Mod(..) => Affine::term(canonical(e)),
    })
}

/// Where a message about an access's index count points: its indices, or the tensor's
/// name when there are none.
fn indices_span(tensor: &ast::Ident, indices: &[ast::Index]) -> crate::diag::Span {
    match (indices.first(), indices.last()) {
        (Some(a), Some(b)) => a.span.to(b.span),
        _ => tensor.span,
    }
}

/// Inclusive bounds of a value over all iterations, in i128 with saturation so that
/// intermediate products cannot overflow.
type Interval = (i128, i128);

fn floor_div_i128(a: i128, d: i128) -> i128 {
    a.div_euclid(d)
}

impl Checker<'_> {
    /// Checks `tensor[indices]` and returns the indices and the region's type.
    pub(super) fn access(
        &mut self,
        param: ParamId,
        tensor: &ast::Ident,
        indices: &[ast::Index],
    ) -> Option<(Vec<Index>, TileType)> {
        let ty = self.params.get(param.0 as usize)?.ty.clone();
        let span = indices_span(tensor, indices);
        let (index, region) =
            self.per_axis(&tensor.name, &ty, indices, span, |c, ix, axis, extent| {
                c.one_index(ix, axis, extent, &tensor.name)
            })?;
        let region = self.gather_axes(&tensor.name, &index, indices, region)?;
        Some((index, region))
    }

    /// An access gathers along one axis, or along adjacent axes with index tiles of one
    /// shape (numpy's `x[i, j]`: element `k` is `x[i[k], j[k]]`, the indexed axes
    /// replaced by the index's `n`); the axes after the gathered ones are whole (or the
    /// last is a range): each picked position brings one contiguous block. Returns the
    /// region's type with the indexed axes as one.
    fn gather_axes(
        &mut self,
        tensor: &str,
        index: &[Index],
        indices: &[ast::Index],
        region: TileType,
    ) -> Option<TileType> {
        let gathered: Vec<usize> = (0..index.len())
            .filter(|&a| matches!(index[a], Index::Indirect(_)))
            .collect();
        let (Some(&first), Some(&k)) = (gathered.first(), gathered.last()) else {
            return Some(region);
        };
        if let Some(gap) = (first..=k).find(|a| !gathered.contains(a)) {
            return self.error(
                format!(
                    "`{tensor}` is indexed by tiles on axes {first} and {k} with another index between: index tiles go on adjacent axes (numpy's `x[i, j]`)"
                ),
                indices[gap].span,
            );
        }
        let shape_of = |a: usize| match &index[a] {
            Index::Indirect(e) => Some(e.ty.shape.clone()),
            _ => None,
        };
        if let Some(&other) = gathered.iter().find(|&&a| shape_of(a) != shape_of(first)) {
            return self.error(
                format!(
                    "the index tiles of `{tensor}` have shapes {:?} and {:?}: tiles that index several axes have one shape, element k of each naming one element",
                    shape_of(first).unwrap_or_default(),
                    shape_of(other).unwrap_or_default()
                ),
                indices[other].span,
            );
        }
        let rest_full = index[k + 1..].iter().all(|ix| matches!(ix, Index::Full));
        let last_range =
            index.len() == k + 2 && matches!(index[k + 1], Index::Range { clamped: false, .. });
        if !(rest_full || last_range) {
            return self.error(
                format!(
                    "`{tensor}` gathers along axis {k}, so the axes after it are whole (`:`), or the last one a range: each picked position brings one contiguous block"
                ),
                indices.get(k + 1).map_or(indices[k].span, |ix| ix.span),
            );
        }
        // The indexed axes become one, of the index's extent: drop all but the last.
        // (`numpy_shape` kept every axis that is not a single position.)
        let mut shape = Vec::with_capacity(region.rank());
        let mut axis = 0;
        for (a, ix) in index.iter().enumerate() {
            if matches!(ix, Index::Single(_)) {
                continue;
            }
            if a == k || !gathered.contains(&a) {
                shape.extend(region.shape.get(axis).copied());
            }
            axis += 1;
        }
        Some(TileType::new(region.dtype, shape))
    }

    /// `access` for a load, with `pad`: then the last axis's index may leave the tensor
    /// (those lanes hold the pad value), and no other axis may be a gather.
    pub(super) fn access_padded(
        &mut self,
        param: ParamId,
        tensor: &ast::Ident,
        indices: &[ast::Index],
        pad: bool,
    ) -> Option<(Vec<Index>, TileType)> {
        if !pad {
            return self.access(param, tensor, indices);
        }
        let ty = self.params.get(param.0 as usize)?.ty.clone();
        let span = indices_span(tensor, indices);
        let last = ty.rank().saturating_sub(1);
        // Whether an axis before this one selects more than one position, or may leave
        // the tensor: rows that leave it are filled on one axis, the first that is not a
        // single position (the rows' axis).
        let mut rows_before = false;
        self.per_axis(&tensor.name, &ty, indices, span, |c, ix, axis, extent| {
            let gather = matches!(&ix.kind, ast::IndexKind::Point(e) if !c.is_index_expr(e));
            if gather {
                return c.error(
                    format!(
                        "`pad` fills lanes outside `{}`, and a gather (a tile index) takes no fill: gather without `pad`",
                        tensor.name
                    ),
                    ix.span,
                );
            }
            if axis != last {
                let found = c.padded_rows(ix, axis, extent, &tensor.name, rows_before);
                rows_before |= found
                    .as_ref()
                    .is_some_and(|f| f.1 > 1 || matches!(f.0, Index::Range { .. }));
                return found;
            }
            match &ix.kind {
                ast::IndexKind::Full => Some((Index::Full, extent)),
                ast::IndexKind::Strided(..) => c.error(
                    format!(
                        "`pad` fills a contiguous window: `{}` has a step (for now: load a strided window without `pad`)",
                        show::index(ix)
                    ),
                    ix.span,
                ),
                ast::IndexKind::Range(a, b) => {
                    let (start, len) = c.range_extent(ix, a, b)?;
                    Some((
                        Index::Range {
                            start,
                            len,
                            clamped: false,
                        },
                        len,
                    ))
                }
                ast::IndexKind::Point(e) => Some((Index::Single(c.index_expr(e)?), 1)),
            }
        })
    }

    /// A leading axis of a load with `pad`: a range may leave the tensor (its rows
    /// outside hold the fill) when no axis before it selects more than one position
    /// (`rows_before`); any other index is checked as without `pad`.
    fn padded_rows(
        &mut self,
        ix: &ast::Index,
        axis: usize,
        extent: u64,
        tensor: &str,
        rows_before: bool,
    ) -> Option<(Index, u64)> {
        if let ast::IndexKind::Range(a, b) = &ix.kind {
            let (start, len) = self.range_extent(ix, a, b)?;
            let (lo, hi) = self.interval(&start);
            let extent_i = i128::from(extent);
            let inside = (lo >= 0 && hi.saturating_add(i128::from(len)) <= extent_i)
                || self.never_evaluated(&start);
            let tail = lo >= 0 && hi < extent_i && self.depends_on_tail_loop(&start);
            if !inside && !tail && !rows_before {
                let clamped = false;
                return Some((
                    Index::Range {
                        start,
                        len,
                        clamped,
                    },
                    len,
                ));
            }
        }
        let before = self.diags.len();
        let found = self.one_index(ix, axis, extent, tensor);
        if found.is_none() && self.diags.len() > before {
            if let Some(d) = self.diags.last_mut() {
                d.notes.push(
                    "`pad` fills positions outside the tensor along its last axis and along the first axis that selects more than one position (the rows), with a range"
                        .into(),
                );
            }
        }
        found
    }

    /// One index per axis of `ty` (`name`'s type; `span` for a wrong count), each read
    /// by `one` into the index and the extent it selects.
    fn per_axis(
        &mut self,
        name: &str,
        ty: &TileType,
        indices: &[ast::Index],
        span: crate::diag::Span,
        mut one: impl FnMut(&mut Self, &ast::Index, usize, u64) -> Option<(Index, u64)>,
    ) -> Option<(Vec<Index>, TileType)> {
        if indices.len() != ty.rank() {
            return self.error(
                format!(
                    "`{name}` has {} axes ({ty}) but {} {} given: write one per axis (`:` for a whole axis)",
                    ty.rank(),
                    indices.len(),
                    if indices.len() == 1 { "index is" } else { "indices are" }
                ),
                span,
            );
        }
        let mut out = Vec::new();
        let mut shape = Vec::new();
        let mut ok = true;
        for (axis, (ix, &extent)) in indices.iter().zip(&ty.shape).enumerate() {
            match one(self, ix, axis, extent) {
                Some((index, len)) => {
                    out.push(index);
                    shape.push(len);
                }
                None => ok = false,
            }
        }
        let shape = crate::front::hir::numpy_shape(&out, &shape);
        ok.then(|| (out, TileType::new(ty.dtype, shape)))
    }

    /// `t[:, a .. b]` on a tile of type `ty` (`arg` as written, to name it): each axis
    /// `:`, a range of constant extent or one position, inside the tile on every
    /// iteration. Tiles have no tail rule, so a range that may pass the extent is an
    /// error. Returns the window (a position as a range of one) and the axes indexed by
    /// one position, which numpy drops.
    pub(super) fn tile_slice(
        &mut self,
        ty: &TileType,
        arg: &ast::Expr,
        indices: &[ast::Index],
        span: crate::diag::Span,
    ) -> Option<(Vec<Index>, TileType, Vec<usize>)> {
        let name = match &arg.kind {
            ExprKind::Name(n) => n.clone(),
            _ => show::expr(arg),
        };
        if ty.rank() == 0 {
            return self.error(format!("`{name}` is {ty}: it has no axes to slice"), span);
        }
        let mut points = Vec::new();
        let (index, ty) = self.per_axis(&name, ty, indices, span, |c, ix, axis, extent| match &ix.kind {
            ast::IndexKind::Full => Some((Index::Full, extent)),
            ast::IndexKind::Strided(a, b, st) => c.strided(ix, [a, b, st], axis, extent, &name),
            ast::IndexKind::Range(a, b) => match c.range(ix, a, b, axis, extent, &name)? {
                (Index::Range { clamped: true, .. }, _) => c.error(
                    format!(
                        "range `{}` on axis {axis} of `{name}` may pass its extent {extent}: a tile has no tail, so a slice must stay inside it",
                        show::index(ix)
                    ),
                    ix.span,
                ),
                found => Some(found),
            },
            ast::IndexKind::Point(e) if c.is_index_expr(e) => {
                // One position: a window of one, whose axis the caller drops (numpy).
                let ie = c.position(e, ix.span, axis, extent, &format!("the tile `{name}`"))?;
                points.push(axis);
                Some((
                    Index::Range {
                        start: ie,
                        len: 1,
                        clamped: false,
                    },
                    1,
                ))
            }
            ast::IndexKind::Point(e) => c.error(
                format!(
                    "`{}` indexes the tile `{name}` with a tile: a tile slice takes `:`, a range or one position (gathers read tensors: `load x[idx, :]`)",
                    show::expr(e)
                ),
                ix.span,
            ),
        })?;
        Some((index, ty, points))
    }

    fn one_index(
        &mut self,
        ix: &ast::Index,
        axis: usize,
        extent: u64,
        tensor: &str,
    ) -> Option<(Index, u64)> {
        match &ix.kind {
            ast::IndexKind::Full => Some((Index::Full, extent)),
            ast::IndexKind::Range(a, b) => self.range(ix, a, b, axis, extent, tensor),
            ast::IndexKind::Strided(a, b, s) => self.strided(ix, [a, b, s], axis, extent, tensor),
            ast::IndexKind::Point(e) if self.is_index_expr(e) => {
                let ie = self.position(e, ix.span, axis, extent, &format!("`{tensor}`"))?;
                Some((Index::Single(ie), 1))
            }
            ast::IndexKind::Point(e) => self.indirect(e),
        }
    }

    /// One position `e` on axis `axis` of `of` (`` `x` `` or ``the tile `t` ``), inside
    /// `0 .. extent` on every iteration that evaluates it.
    fn position(
        &mut self,
        e: &ast::Expr,
        span: crate::diag::Span,
        axis: usize,
        extent: u64,
        of: &str,
    ) -> Option<IndexExpr> {
        let ie = self.index_expr(e)?;
        let (lo, hi) = self.interval(&ie);
        if (lo < 0 || hi >= i128::from(extent)) && !self.never_evaluated(&ie) {
            let reached = if lo < 0 { lo } else { hi };
            return self.error(
                format!(
                    "index `{}` on axis {axis} of {of} reaches {reached}, outside 0..{extent}",
                    show::expr(e)
                ),
                span,
            );
        }
        Some(ie)
    }

    /// `a .. b step s` on a tensor axis: `s` a positive constant, the positions
    /// `a, a + s, ...` before `b` all inside the tensor on every iteration (no tail).
    fn strided(
        &mut self,
        ix: &ast::Index,
        [a, b, s]: [&ast::Expr; 3],
        axis: usize,
        extent: u64,
        tensor: &str,
    ) -> Option<(Index, u64)> {
        let shown = show::index(ix);
        let step = self.index_expr(s)?;
        let step = match affine(&step).and_then(|x| x.as_const()) {
            Some(v) if v > 0 => v as u64,
            Some(v) => {
                return self.error(
                    format!("the step of range `{shown}` is {v}: a step is a positive constant"),
                    s.span,
                )
            }
            None => {
                return self.error(
                    format!("the step of range `{shown}` is not a constant"),
                    s.span,
                )
            }
        };
        if step == 1 {
            return self.range(ix, a, b, axis, extent, tensor);
        }
        let (start, len) = self.strided_count(ix, a, b, step)?;
        // The last position read, plus one.
        let span_len = (len - 1).saturating_mul(step).saturating_add(1);
        let (lo, hi) = self.interval(&start);
        let last_end = hi.saturating_add(i128::from(span_len));
        if (lo < 0 || last_end > i128::from(extent)) && !self.never_evaluated(&start) {
            return self.outside(&shown, axis, tensor, (lo, last_end), extent, ix.span);
        }
        Some((Index::Strided { start, len, step }, len))
    }

    /// The error for a range whose positions reach from `lo` to `end` (one past the
    /// last) on an axis of `extent`.
    fn outside<T>(
        &mut self,
        shown: &str,
        axis: usize,
        tensor: &str,
        (lo, end): (i128, i128),
        extent: u64,
        span: crate::diag::Span,
    ) -> Option<T> {
        let (what, reached) = if lo < 0 {
            ("starts at", lo)
        } else {
            ("reaches", end)
        };
        self.error(
            format!(
                "range `{shown}` on axis {axis} of `{tensor}` {what} {reached}, outside the extent {extent}"
            ),
            span,
        )
    }

    /// The start of `a .. b step s` and its number of positions, `ceil((b - a) / s)`,
    /// which must be the same on every iteration: `s .. K step 8` for `s` in `0 .. 8`
    /// has `K / 8` positions each time though its extent varies (numpy's `x[s::8]`).
    fn strided_count(
        &mut self,
        ix: &ast::Index,
        a: &ast::Expr,
        b: &ast::Expr,
        step: u64,
    ) -> Option<(IndexExpr, u64)> {
        let start = self.index_expr(a);
        let end = self.index_expr(b);
        let (start, end) = (start?, end?);
        let shown = show::index(ix);
        let exact = match (affine(&end), affine(&start)) {
            (Some(e), Some(s)) => e.add(s, -1).and_then(|d| d.as_const()),
            _ => None,
        };
        let (lo, hi) = match exact {
            Some(d) => (i128::from(d), i128::from(d)),
            None => self.interval(&IndexExpr {
                kind: IndexExprKind::Sub(Box::new(end), Box::new(start.clone())),
                span: ix.span,
            }),
        };
        if lo <= 0 {
            return self.error(
                format!("range `{shown}` is empty (its extent reaches {lo})"),
                ix.span,
            );
        }
        let step_i = i128::from(step);
        let (first, last) = ((lo + step_i - 1) / step_i, (hi + step_i - 1) / step_i);
        if first != last || u64::try_from(first).is_err() {
            return self.error(
                format!(
                    "range `{shown}` has from {first} to {last} positions as the loops run: the number of positions of a strided range is a constant (write it as `a .. a + N step S`)"
                ),
                ix.span,
            );
        }
        Some((start, first as u64))
    }

    /// The start of `a .. b` and its extent, a positive constant.
    fn range_extent(
        &mut self,
        ix: &ast::Index,
        a: &ast::Expr,
        b: &ast::Expr,
    ) -> Option<(IndexExpr, u64)> {
        let start = self.index_expr(a);
        let end = self.index_expr(b);
        let (start, end) = (start?, end?);
        let shown = show::index(ix);
        let len = match (affine(&end), affine(&start)) {
            (Some(e), Some(s)) => e.add(s, -1),
            _ => None,
        };
        let Some(len) = len else {
            return self.error(format!("the extent of range `{shown}` overflows"), ix.span);
        };
        if len.as_const().is_none() {
            return self.error(
                format!(
                    "the extent of range `{shown}` is not a constant: write it as `a .. a + N`"
                ),
                ix.span,
            );
        }
        if len.constant <= 0 {
            return self.error(
                format!("range `{shown}` is empty: its extent is {}", len.constant),
                ix.span,
            );
        }
        Some((start, len.constant as u64))
    }

    /// `a .. b` with a constant positive extent, within the tensor or clamped in a tail.
    fn range(
        &mut self,
        ix: &ast::Index,
        a: &ast::Expr,
        b: &ast::Expr,
        axis: usize,
        extent: u64,
        tensor: &str,
    ) -> Option<(Index, u64)> {
        let (start, len_u) = self.range_extent(ix, a, b)?;
        let shown = show::index(ix);
        let (lo, hi) = self.interval(&start);
        let extent_i = i128::from(extent);
        let last_end = hi.saturating_add(i128::from(len_u));
        let clamped = if (lo >= 0 && last_end <= extent_i) || self.never_evaluated(&start) {
            false
        } else if lo >= 0 && hi < extent_i && self.depends_on_tail_loop(&start) {
            true
        } else {
            return self.outside(&shown, axis, tensor, (lo, last_end), extent, ix.span);
        };
        Some((
            Index::Range {
                start,
                len: len_u,
                clamped,
            },
            len_u,
        ))
    }

    /// An `i32` tile of shape `[n]` or `[n, 1]` on one axis: gathers or scatters `n` blocks.
    fn indirect(&mut self, e: &ast::Expr) -> Option<(Index, u64)> {
        let t = match self.value(e)? {
            Val::Tile(t) => t,
            Val::Lit(_) => {
                return self.error(
                    format!("index `{}` must be an integer", show::expr(e)),
                    e.span,
                )
            }
        };
        let n = match t.ty.shape[..] {
            [n] | [n, 1] if t.ty.dtype == DType::I32 => n,
            _ => {
                return self.error(
                    format!("an indirect index must be an i32 tile of shape [n] or [n, 1], but this one is {}", t.ty),
                    e.span,
                )
            }
        };
        Some((Index::Indirect(Box::new(t)), n))
    }

    /// True when `e` reads as an integer index (over loop variables and constants)
    /// rather than a tile; the latter makes a `Point` an indirect index.
    pub(super) fn is_index_expr(&self, e: &ast::Expr) -> bool {
        self.is_index_expr_at(e, 0)
    }

    fn is_index_expr_at(&self, e: &ast::Expr, depth: usize) -> bool {
        if depth > MAX_NESTING_DEPTH {
            // Too deep to be either; `index_expr` reports the nesting error.
            return true;
        }
        let is_index = |x: &ast::Expr| self.is_index_expr_at(x, depth + 1);
        match &e.kind {
            ExprKind::Int(_) => true,
            ExprKind::Name(n) => match self.lookup(n) {
                Some((Binding::Loop(_), _)) => true,
                Some(_) => false,
                None => !self.param_ids.contains_key(n),
            },
            ExprKind::Neg(a) => is_index(a),
            ExprKind::Binary { op, lhs, rhs } => {
                !matches!(op, BinaryOp::MatMul | BinaryOp::Cmp(_)) && is_index(lhs) && is_index(rhs)
            }
            _ => false,
        }
    }

    /// `e` names a loop variable somewhere.
    pub(super) fn reads_loop_var(&self, e: &ast::Expr, depth: usize) -> bool {
        if depth > MAX_NESTING_DEPTH {
            return false;
        }
        match &e.kind {
            ExprKind::Name(n) => matches!(self.lookup(n), Some((Binding::Loop(_), _))),
            ExprKind::Neg(a) => self.reads_loop_var(a, depth + 1),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.reads_loop_var(lhs, depth + 1) || self.reads_loop_var(rhs, depth + 1)
            }
            _ => false,
        }
    }

    /// Converts an integer index expression, folding constant subterms.
    pub(super) fn index_expr(&mut self, e: &ast::Expr) -> Option<IndexExpr> {
        self.nested(e.span, |cx| cx.index_expr_inner(e))
    }

    fn index_expr_inner(&mut self, e: &ast::Expr) -> Option<IndexExpr> {
        let span = e.span;
        let make = |kind| Some(IndexExpr { kind, span });
        match &e.kind {
            ExprKind::Int(v) => make(IndexExprKind::Const(*v)),
            ExprKind::Name(n) => match self.lookup(n) {
                Some((Binding::Loop(id), _)) => Some(self.loop_value(id, span)),
                Some((Binding::Local(_), _)) => self.error(
                    format!("`{n}` is a tile; a range bound must be an integer expression of loop variables and constants"),
                    span,
                ),
                Some((Binding::Poisoned, _)) => None,
                None => Some(IndexExpr { kind: IndexExprKind::Const(self.const_expr(e)?), span }),
            },
            ExprKind::Neg(a) => {
                let a = self.index_expr(a)?;
                self.index_binary(BinaryOp::Sub, IndexExpr { kind: IndexExprKind::Const(0), span }, a, e)
            }
            ExprKind::Binary { op: op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul), lhs, rhs } => {
                let a = self.index_expr(lhs);
                let b = self.index_expr(rhs);
                self.index_binary(*op, a?, b?, e)
            }
            ExprKind::Binary { op: op @ (BinaryOp::FloorDiv | BinaryOp::Mod), lhs, rhs } => {
                let a = self.index_expr(lhs);
                let d = self.const_expr(rhs);
                let (a, d) = (a?, d?);
                if d <= 0 {
                    return self.error(
                        format!("`{}` in an index needs a positive constant divisor, but `{}` is {d}", op.symbol(), show::expr(rhs)),
                        rhs.span,
                    );
                }
                if let IndexExprKind::Const(c) = a.kind {
                    return self.fold(*op, c, d, e);
                }
                let kind = if *op == BinaryOp::FloorDiv {
                    IndexExprKind::FloorDiv(Box::new(a), d)
                } else {
                    IndexExprKind::Mod(Box::new(a), d)
                };
                make(kind)
            }
            // A power of constants is a constant (`2 ** 4`); of a loop variable it is
            // not affine.
            ExprKind::Binary { op: BinaryOp::Pow, .. } if !self.reads_loop_var(e, 0) => {
                make(IndexExprKind::Const(self.const_expr(e)?))
            }
            ExprKind::Binary { op: BinaryOp::Div, .. } => {
                self.error(format!("`/` is true division; an integer index uses `//`: `{}`", show::expr(e)), span)
            }
            _ => self.error(
                format!("`{}` is not an integer index (loop variables, constants, `+ - * // %`)", show::expr(e)),
                span,
            ),
        }
    }

    fn fold(&mut self, op: BinaryOp, a: i64, b: i64, e: &ast::Expr) -> Option<IndexExpr> {
        match int_op(op, a, b) {
            Ok(v) => Some(IndexExpr {
                kind: IndexExprKind::Const(v),
                span: e.span,
            }),
            Err(why) => self.error(format!("`{}`: {why}", show::expr(e)), e.span),
        }
    }

    fn index_binary(
        &mut self,
        op: BinaryOp,
        a: IndexExpr,
        b: IndexExpr,
        e: &ast::Expr,
    ) -> Option<IndexExpr> {
        if let (IndexExprKind::Const(x), IndexExprKind::Const(y)) = (&a.kind, &b.kind) {
            return self.fold(op, *x, *y, e);
        }
        let (a, b) = (Box::new(a), Box::new(b));
        let kind = match op {
            BinaryOp::Add => IndexExprKind::Add(a, b),
            BinaryOp::Sub => IndexExprKind::Sub(a, b),
            _ => {
                let variable = |x: &IndexExpr| affine(x).is_none_or(|f| f.as_const().is_none());
                if variable(&a) && variable(&b) {
                    return self.error(
                        format!(
                            "index `{}` multiplies two loop-variable terms: indices must be affine",
                            show::expr(e)
                        ),
                        e.span,
                    );
                }
                IndexExprKind::Mul(a, b)
            }
        };
        Some(IndexExpr { kind, span: e.span })
    }

    /// The value of loop `id`'s variable: the loop's own, or for a loop run as a
    /// counter `k` (`rev`, or a start that depends on an outer loop) `base + scale * k`,
    /// written `base - |scale| * k` when it counts down.
    pub(super) fn loop_value(&self, id: LoopId, span: crate::diag::Span) -> IndexExpr {
        let var = IndexExpr {
            kind: IndexExprKind::Var(id),
            span,
        };
        let Some(counted) = self.counted.get(&id) else {
            return var;
        };
        let scaled = |by: i64| IndexExpr {
            kind: IndexExprKind::Mul(
                Box::new(IndexExpr {
                    kind: IndexExprKind::Const(by),
                    span,
                }),
                Box::new(var.clone()),
            ),
            span,
        };
        let base = Box::new(counted.base.clone());
        let kind = if counted.scale < 0 {
            IndexExprKind::Sub(base, Box::new(scaled(counted.scale.saturating_neg())))
        } else {
            IndexExprKind::Add(base, Box::new(scaled(counted.scale)))
        };
        IndexExpr { kind, span }
    }

    fn loop_interval(&self, id: LoopId) -> Interval {
        match self.loops.get(id.0 as usize) {
            Some(l) => {
                let trips = i128::from(l.max_trip_count()).max(1);
                let start = i128::from(l.start);
                (start, start + (trips - 1) * i128::from(l.step))
            }
            None => (0, 0),
        }
    }

    pub(super) fn interval(&self, e: &IndexExpr) -> Interval {
        if let IndexExprKind::Add(a, b) = &e.kind {
            if let Some(range) = self.counted_range(a, b) {
                return range;
            }
        }
        if let Some(range) = self.affine_interval(e) {
            return range;
        }
        match &e.kind {
            IndexExprKind::Const(c) => (i128::from(*c), i128::from(*c)),
            IndexExprKind::Var(id) => self.loop_interval(*id),
            IndexExprKind::Add(a, b) => {
                let ((al, ah), (bl, bh)) = (self.interval(a), self.interval(b));
                (al.saturating_add(bl), ah.saturating_add(bh))
            }
            IndexExprKind::Sub(a, b) => {
                let ((al, ah), (bl, bh)) = (self.interval(a), self.interval(b));
                (al.saturating_sub(bh), ah.saturating_sub(bl))
            }
            IndexExprKind::Mul(a, b) => {
                let ((al, ah), (bl, bh)) = (self.interval(a), self.interval(b));
                let p = [
                    al.saturating_mul(bl),
                    al.saturating_mul(bh),
                    ah.saturating_mul(bl),
                    ah.saturating_mul(bh),
                ];
                (
                    p.iter().copied().min().unwrap_or(0),
                    p.iter().copied().max().unwrap_or(0),
                )
            }
            IndexExprKind::FloorDiv(a, d) => {
                let (lo, hi) = self.interval(a);
                let d = i128::from(*d).max(1);
                (floor_div_i128(lo, d), floor_div_i128(hi, d))
            }
            IndexExprKind::Mod(a, d) => {
                let (lo, hi) = self.interval(a);
                let d = i128::from(*d).max(1);
                if floor_div_i128(lo, d) == floor_div_i128(hi, d) {
                    (lo.rem_euclid(d), hi.rem_euclid(d))
                } else {
                    (0, d - 1)
                }
            }
        }
    }

    /// The exact range of an affine `e` whose variables are independent: its normal
    /// form, so that `i - i` is 0 and `2 * i - i` is `i` (term by term, the two sides
    /// would range independently). `None` when `e` is not affine, holds a `//` or `%`,
    /// or reads a counted loop's variable, whose range as a whole is tighter.
    fn affine_interval(&self, e: &IndexExpr) -> Option<Interval> {
        let form = affine(e)?;
        let mut range = (i128::from(form.constant), i128::from(form.constant));
        for (key, a) in form.terms() {
            let id = LoopId(key.strip_prefix('v')?.parse().ok()?);
            if self.counted.get(&id).is_some_and(|c| c.range.is_some()) {
                return None;
            }
            let (lo, hi) = self.loop_interval(id);
            let a = i128::from(*a);
            let (x, y) = (a.saturating_mul(lo), a.saturating_mul(hi));
            range = (
                range.0.saturating_add(x.min(y)),
                range.1.saturating_add(x.max(y)),
            );
        }
        Some(range)
    }

    /// The range of `a + b` when it is the variable of a counted loop as `loop_value`
    /// writes it, `base + scale * k`, and that loop knows its variable's range.
    fn counted_range(&self, a: &IndexExpr, b: &IndexExpr) -> Option<Interval> {
        let IndexExprKind::Mul(scale, k) = &b.kind else {
            return None;
        };
        let (IndexExprKind::Const(scale), IndexExprKind::Var(id)) = (&scale.kind, &k.kind) else {
            return None;
        };
        let counted = self.counted.get(id)?;
        (counted.scale == *scale && counted.base == *a)
            .then_some(counted.range)
            .flatten()
    }

    fn depends_on_tail_loop(&self, e: &IndexExpr) -> bool {
        self.depends_on_loop(e, &|id, _| self.loop_has_tail(id))
    }

    /// `e` reads the variable of a loop that runs zero times: it never takes a value,
    /// so no range check applies to it (the body is checked, then left out).
    pub(super) fn never_evaluated(&self, e: &IndexExpr) -> bool {
        self.depends_on_loop(e, &|_, l| l.max_trip_count() == 0)
    }

    /// `e` reads the variable of a loop for which `which` holds.
    fn depends_on_loop(&self, e: &IndexExpr, which: &dyn Fn(LoopId, &Loop) -> bool) -> bool {
        match &e.kind {
            IndexExprKind::Const(_) => false,
            IndexExprKind::Var(id) => self.loops.get(id.0 as usize).is_some_and(|l| which(*id, l)),
            IndexExprKind::Add(a, b) | IndexExprKind::Sub(a, b) | IndexExprKind::Mul(a, b) => {
                self.depends_on_loop(a, which) || self.depends_on_loop(b, which)
            }
            IndexExprKind::FloorDiv(a, _) | IndexExprKind::Mod(a, _) => {
                self.depends_on_loop(a, which)
            }
        }
    }
}
