//! Tensor accesses: evaluating index expressions, resolving each axis of a `load` or
//! `store` to the tensor positions it touches (with tail clamping and indirect rows),
//! and moving data between a tensor and a tile.

use super::value::{contiguous_strides, for_each_offset2, internal};
use crate::diag::{Diagnostic, Span};
use crate::front::hir::{IndexExpr, IndexExprKind};

/// Evaluates an index expression with the current loop variables. Overflow is an error,
/// not a wrap: an index that large can only be a mistake.
pub fn eval_index(e: &IndexExpr, vars: &[i64], depth: usize) -> Result<i64, Diagnostic> {
    if depth > super::MAX_EXPR_DEPTH {
        return Err(Diagnostic::error(
            "index expression nested too deeply",
            e.span,
        ));
    }
    let overflow = || Diagnostic::error("index arithmetic overflows", e.span);
    let sub = |x: &IndexExpr| eval_index(x, vars, depth + 1);
    Ok(match &e.kind {
        IndexExprKind::Const(c) => *c,
        IndexExprKind::Var(id) => *vars
            .get(id.0 as usize)
            .ok_or_else(|| internal("unknown loop variable", e.span))?,
        IndexExprKind::Add(a, b) => sub(a)?.checked_add(sub(b)?).ok_or_else(overflow)?,
        IndexExprKind::Sub(a, b) => sub(a)?.checked_sub(sub(b)?).ok_or_else(overflow)?,
        IndexExprKind::Mul(a, b) => sub(a)?.checked_mul(sub(b)?).ok_or_else(overflow)?,
        IndexExprKind::FloorDiv(a, d) if *d > 0 => sub(a)?.div_euclid(*d),
        IndexExprKind::Mod(a, d) if *d > 0 => sub(a)?.rem_euclid(*d),
        IndexExprKind::FloorDiv(..) | IndexExprKind::Mod(..) => {
            return Err(internal("division by a non-positive constant", e.span))
        }
    })
}

/// Which positions of one tensor axis an access touches. Lane `i < valid` of the tile
/// maps to tensor position `start + i` (or `rows[i]`); later lanes are masked.
#[derive(Clone, Debug, PartialEq)]
pub enum AxisSel {
    Range {
        start: usize,
        len: usize,
        valid: usize,
    },
    Rows {
        rows: Vec<usize>,
        len: usize,
    },
}

impl AxisSel {
    pub fn len(&self) -> usize {
        match self {
            AxisSel::Range { len, .. } | AxisSel::Rows { len, .. } => *len,
        }
    }

    pub fn valid(&self) -> usize {
        match self {
            AxisSel::Range { valid, .. } => *valid,
            AxisSel::Rows { rows, .. } => rows.len(),
        }
    }

    fn position(&self, lane: usize) -> usize {
        match self {
            AxisSel::Range { start, .. } => start + lane,
            // `lane < rows.len()` because callers stay inside `valid()`.
            AxisSel::Rows { rows, .. } => rows[lane],
        }
    }

    /// A `start .. start + len` range on an axis of `extent`. Clamped ranges keep
    /// `min(len, extent - start)` valid lanes; any other range must lie inside the axis.
    pub fn range(
        start: i64,
        len: u64,
        clamped: bool,
        extent: usize,
        span: Span,
    ) -> Result<AxisSel, Diagnostic> {
        let outside = || {
            Diagnostic::error(
                format!("range {start} .. {start}+{len} leaves an axis of extent {extent}"),
                span,
            )
        };
        let start_u = usize::try_from(start).map_err(|_| outside())?;
        let len = usize::try_from(len).map_err(|_| outside())?;
        let end = start_u.checked_add(len).ok_or_else(outside)?;
        let valid = if clamped {
            len.min(extent.saturating_sub(start_u))
        } else if end <= extent {
            len
        } else {
            return Err(outside());
        };
        Ok(AxisSel::Range {
            start: start_u,
            len,
            valid,
        })
    }
}

/// The region of a tensor that one access touches, one selection per axis.
pub struct Region {
    pub sels: Vec<AxisSel>,
}

impl Region {
    pub fn shape(&self) -> Vec<usize> {
        self.sels.iter().map(AxisSel::len).collect()
    }

    pub fn valid(&self) -> Vec<usize> {
        self.sels.iter().map(AxisSel::valid).collect()
    }

    /// Calls `f(tile_offset, tensor_offset, run_len)` for each contiguous run of lanes
    /// inside `valid` (at most the region's own valid extents), in row-major tile order,
    /// for a tensor of shape `tensor_shape`. Positions were bounds-checked when the
    /// selections were built.
    pub fn for_each_run(
        &self,
        tensor_shape: &[usize],
        valid: &[usize],
        mut f: impl FnMut(usize, usize, usize),
    ) {
        let rank = self.sels.len();
        if rank == 0 {
            f(0, 0, 1);
            return;
        }
        if valid.contains(&0) {
            return;
        }
        let tile_strides = contiguous_strides(&self.shape());
        let tensor_strides = contiguous_strides(tensor_shape);
        let last = &self.sels[rank - 1];
        let run = valid[rank - 1];
        // Walk the outer lanes with an odometer over the valid box; the offsets of the
        // tensor side are recomputed per row because indirect rows are not strided.
        let outer = &valid[..rank - 1];
        let mut lane = vec![0usize; rank - 1];
        for_each_offset2(
            outer,
            &tile_strides[..rank - 1],
            &tile_strides[..rank - 1],
            |tile_off, _| {
                let mut tensor_off = 0;
                for (a, sel) in self.sels[..rank - 1].iter().enumerate() {
                    tensor_off += sel.position(lane[a]) * tensor_strides[a];
                }
                match last {
                    AxisSel::Range { start, .. } => f(tile_off, tensor_off + start, run),
                    AxisSel::Rows { .. } => {
                        for j in 0..run {
                            f(tile_off + j, tensor_off + last.position(j), 1);
                        }
                    }
                }
                for a in (0..rank - 1).rev() {
                    lane[a] += 1;
                    if lane[a] < outer[a] {
                        break;
                    }
                    lane[a] = 0;
                }
            },
        );
    }
}
