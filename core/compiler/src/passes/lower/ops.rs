//! Lowering of single ops: transfers (DMA, gather, scatter, moves between spaces),
//! matrix multiply, and vector ops (fused expressions through their scratch area).

use super::{Lw, Valid};
use crate::diag::{Diagnostic, Span};
use crate::front::hir::{BinaryOp, ReduceOp, UnaryOp, UpdateOp};
use crate::ir::analysis::exact_reciprocal;
use crate::ir::analysis::{fused_layout, Place};
use crate::ir::{FusedExpr, Index, OpId, OpKind, ValueId};
use crate::isa::{AluOp, ArgOp, BinOp, DmaDim, Op, RedOp, Region, Tile, UnOp, VSrc, Val};
use crate::lowered::Access;
use crate::types::{DType, MemSpace};

fn unop(op: UnaryOp) -> UnOp {
    match op {
        UnaryOp::Neg => UnOp::Neg,
        UnaryOp::Exp => UnOp::Exp,
        UnaryOp::Log => UnOp::Log,
        UnaryOp::Exp2 => UnOp::Exp2,
        UnaryOp::Log2 => UnOp::Log2,
        UnaryOp::Sqrt => UnOp::Sqrt,
        UnaryOp::Rsqrt => UnOp::Rsqrt,
        UnaryOp::Abs => UnOp::Abs,
        UnaryOp::Relu => UnOp::Relu,
        UnaryOp::Sigmoid => UnOp::Sigmoid,
        UnaryOp::Tanh => UnOp::Tanh,
        UnaryOp::Gelu => UnOp::Gelu,
        UnaryOp::Silu => UnOp::Silu,
        UnaryOp::Recip => UnOp::Recip,
    }
}

/// The instruction of `op` on `dtype` lanes. A mask's lanes are 0 or 1, and a lane
/// written as a mask is `!= 0`, so its logic is `vmin` (and), `vmax` (or) and `vsub`
/// (xor). `None` for an op the lanes have no instruction for (bit operations on
/// floats, which the checker refuses).
fn binop(op: BinaryOp, dtype: DType) -> Option<BinOp> {
    let mask = dtype == DType::Mask;
    Some(match op {
        BinaryOp::Add => BinOp::Add,
        BinaryOp::Sub => BinOp::Sub,
        BinaryOp::Mul => BinOp::Mul,
        BinaryOp::Div => BinOp::Div,
        BinaryOp::Maximum => BinOp::Max,
        BinaryOp::Minimum => BinOp::Min,
        BinaryOp::BitAnd if mask => BinOp::Min,
        BinaryOp::BitOr if mask => BinOp::Max,
        BinaryOp::BitXor if mask => BinOp::Sub,
        _ if dtype != DType::I32 => return None,
        BinaryOp::BitAnd => BinOp::And,
        BinaryOp::BitOr => BinOp::Or,
        BinaryOp::BitXor => BinOp::Xor,
        BinaryOp::Shl => BinOp::Shl,
        BinaryOp::Shr => BinOp::Shr,
        BinaryOp::FloorDiv => BinOp::FloorDiv,
        BinaryOp::Mod => BinOp::Mod,
    })
}

/// A vector operand: a tile, or a scalar.
enum Operand {
    Value(ValueId),
    Scratch { offset: u64, shape: Vec<u64> },
    Dest,
    Scalar(VSrc),
}

impl Lw<'_> {
    pub(super) fn lower_op(&mut self, id: OpId) {
        let Some(op) = self.k.ops.get(id) else { return };
        let span = op.span;
        let result = op.results.first().copied();
        match (&op.kind, result) {
            (
                OpKind::Load {
                    param,
                    index,
                    pad: Some(pad),
                },
                Some(r),
            ) => self.padded_load(*param, index, *pad, r),
            (OpKind::Load { param, index, .. }, Some(r)) => {
                self.transfer(id, *param, index, r, false)
            }
            (
                OpKind::Store {
                    param,
                    index,
                    value,
                    accumulate,
                },
                _,
            ) => {
                self.accumulate = *accumulate;
                self.transfer(id, *param, index, *value, true);
                self.accumulate = false;
            }
            (OpKind::Full { value }, Some(r)) => {
                let dtype = self.dtype(r);
                let src = if dtype == DType::I32 {
                    VSrc::Int(*value as i64)
                } else {
                    VSrc::Float(dtype.literal(*value))
                };
                if self.shape(r).is_empty() {
                    self.scalars.insert(r, src);
                    return;
                }
                if self.space(r) == Some(MemSpace::L0C) {
                    // A zero accumulator in L0C: the first `mmad` of its loop writes it
                    // with `acc=0` (see `matmul`), so nothing runs here.
                    return;
                }
                let (rows, cols) = self.valid2d(r, span);
                let Some(dst) = self.tile(r, rows, cols, span) else {
                    return;
                };
                let acc = self.tile_access(r, true).into_iter().collect();
                self.emit(
                    Op::VDup {
                        dtype,
                        dst,
                        value: src,
                    },
                    acc,
                );
            }
            (OpKind::IndexValue { expr }, Some(r)) => {
                let v = self.iexpr(expr, 0);
                let src = match v {
                    Val::Imm(x) => VSrc::Int(x),
                    Val::Reg(reg) => VSrc::Reg(reg),
                };
                if self.shape(r).is_empty() {
                    self.scalars.insert(r, src);
                } else {
                    self.fail(span, "an index value that is not a scalar");
                }
            }
            (OpKind::Unary { op, arg }, Some(r)) => {
                let e = FusedExpr::Unary(*op, Box::new(FusedExpr::Arg(0)));
                self.fused(id, r, &[*arg], &e, span);
            }
            (OpKind::Binary { op, lhs, rhs }, Some(r)) => {
                let e = FusedExpr::Binary(
                    *op,
                    Box::new(FusedExpr::Arg(0)),
                    Box::new(FusedExpr::Arg(1)),
                );
                self.fused(id, r, &[*lhs, *rhs], &e, span);
            }
            (OpKind::Fused { args, expr }, Some(r)) => self.fused(id, r, args, expr, span),
            (OpKind::Reduce { op, arg, axis }, Some(r)) => self.reduce(*op, *arg, *axis, r, span),
            (
                OpKind::MatMul {
                    lhs,
                    rhs,
                    acc,
                    acc_block,
                },
                Some(r),
            ) => self.matmul(*lhs, *rhs, *acc, acc_block, r, span),
            (OpKind::Transpose { arg }, Some(r)) => self.mov(*arg, r, true, span),
            (OpKind::Reshape { arg }, Some(r)) => self.reshape(*arg, r, span),
            (OpKind::Copy { arg }, Some(r)) => self.mov(*arg, r, false, span),
            (
                OpKind::Slice {
                    arg,
                    index,
                    transpose,
                },
                Some(r),
            ) => self.slice(*arg, index, *transpose, r, span),
            (OpKind::Cast { arg }, Some(r)) if self.scalars.contains_key(arg) => {
                // A scalar operand converts where it is read: a vector instruction reads
                // a register as a number of its own dtype.
                let Some(&src) = self.scalars.get(arg) else {
                    return;
                };
                let to = self.dtype(r);
                let converted = match (src, to) {
                    (VSrc::Int(x), DType::I32) => VSrc::Int(x),
                    (VSrc::Int(x), _) => VSrc::Float(to.literal(x as f64)),
                    (VSrc::Float(x), DType::I32) => VSrc::Int(i64::from(x as i32)),
                    (VSrc::Float(x), _) => VSrc::Float(to.literal(f64::from(x))),
                    (VSrc::Reg(reg), _) if self.dtype(*arg) == DType::I32 => VSrc::Reg(reg),
                    _ => {
                        return self.fail(
                            span,
                            "a cast of a float computed from a loop variable back to an integer (cast the integer expression itself)",
                        )
                    }
                };
                self.scalars.insert(r, converted);
            }
            (OpKind::Cast { arg }, Some(r)) => {
                let (rows, cols) = self.valid2d(*arg, span);
                self.valid_from(r, *arg);
                let (Some(dst), Some(src)) = (
                    self.tile(r, rows, cols, span),
                    self.tile(*arg, rows, cols, span),
                ) else {
                    return;
                };
                let acc = [self.tile_access(*arg, false), self.tile_access(r, true)]
                    .into_iter()
                    .flatten()
                    .collect();
                let (to, from) = (self.dtype(r), self.dtype(*arg));
                self.emit(Op::VCast { to, from, dst, src }, acc);
            }
            (OpKind::Update { op, old, value }, Some(r)) => self.update(*op, *old, *value, r, span),
            (OpKind::Compare { op, lhs, rhs }, Some(r)) => {
                let dtype = self.dtype(*lhs);
                self.masked(r, None, [*lhs, *rhs], span, |dst, _, a, b| Op::VCmp {
                    op: *op,
                    dtype,
                    dst,
                    a,
                    b,
                });
            }
            (
                OpKind::Select {
                    mask,
                    on_true,
                    on_false,
                },
                Some(r),
            ) => {
                let dtype = self.dtype(r);
                self.masked(
                    r,
                    Some(*mask),
                    [*on_true, *on_false],
                    span,
                    |dst, mask, a, b| {
                        Op::VSel {
                            dtype,
                            dst,
                            // `masked` passes the mask tile whenever it is given one.
                            mask: mask.unwrap_or(dst),
                            a,
                            b,
                        }
                    },
                );
            }
            (OpKind::Iota { axis }, Some(r)) => {
                let rank = self.shape(r).len();
                // The 2-D view's rows are the leading axes, its columns the last one.
                let view_axis = match (axis + 1 == rank, rank <= 2) {
                    (true, _) => 1,
                    (false, true) => 0,
                    (false, false) => {
                        return self.fail(span, "an iota along a leading axis of rank above 2")
                    }
                };
                let (rows, cols) = self.valid2d(r, span);
                let Some(dst) = self.tile(r, rows, cols, span) else {
                    return;
                };
                let acc = self.tile_access(r, true).into_iter().collect();
                let dtype = self.dtype(r);
                self.emit(
                    Op::VIota {
                        dtype,
                        axis: view_axis,
                        dst,
                    },
                    acc,
                );
            }
            (OpKind::For(_) | OpKind::Buffers, _) => {}
            // A member is the slot itself; anything else is copied in or out.
            (OpKind::SlotWrite { buf, value, .. }, _) => {
                if self.slot_expr(*value).is_none() {
                    self.slot_copy = Some((*buf, id));
                    self.mov(*value, *buf, false, span);
                    self.slot_copy = None;
                }
            }
            (OpKind::SlotRead { buf, .. }, Some(r)) => {
                if self.slot_expr(r).is_none() {
                    self.slot_copy = Some((*buf, id));
                    self.mov(*buf, r, false, span);
                    self.slot_copy = None;
                }
            }
            _ => self.fail(span, "this op"),
        }
    }

    fn dtype(&self, v: ValueId) -> DType {
        self.k.values.get(v).map_or(DType::F32, |x| x.ty.dtype)
    }

    fn space(&self, v: ValueId) -> Option<MemSpace> {
        self.k.values.get(v).and_then(|x| x.space)
    }

    /// The result inherits the valid extents of `from` on the axes where the shapes agree.
    fn valid_from(&mut self, r: ValueId, from: ValueId) {
        let (rs, fs) = (self.shape(r), self.shape(from));
        let Some(fv) = self.valid.get(&from).cloned() else {
            return;
        };
        if rs.len() != fs.len() {
            return;
        }
        let mut out: Valid = rs.iter().map(|&d| Val::Imm(d as i64)).collect();
        for i in 0..rs.len() {
            if rs[i] == fs[i] {
                out[i] = fv[i];
            }
        }
        let mine = self
            .valid
            .entry(r)
            .or_insert_with(|| rs.iter().map(|&d| Val::Imm(d as i64)).collect());
        for (m, o) in mine.iter_mut().zip(out) {
            if matches!(m, Val::Imm(_)) {
                *m = o;
            }
        }
    }

    /// `load x[..., a .. b] pad v`: one `dmapad` (Ascend's DataCopyPad). The tile's
    /// leading axes are its rows (they must collapse into one GM stride); along the last
    /// axis each row is `left` lanes of `v`, the `len` elements inside the tensor, then
    /// `v` again, with `left = min(max(-a, 0), C)`, `begin = min(max(a, 0), W)` and
    /// `len = max(min(a + C, W) - begin, 0)` for a tile `C` lanes wide over a tensor
    /// `W` wide, computed on the S pipe when `a` moves with a loop.
    fn padded_load(&mut self, param: usize, index: &[Index], pad: f64, r: ValueId) {
        let span = self.prov.span.unwrap_or_default();
        let Some(p) = self.k.params.get(param) else {
            return self.fail(span, "a load of a missing parameter");
        };
        let (tensor, dtype, p_name) = (p.ty.shape.clone(), p.ty.dtype, p.name.clone());
        // The box, one extent per tensor axis (the tile may drop single positions').
        let shape = crate::ir::analysis::region_shape(self.k, &tensor, index);
        let (Some((last, lead)), Some(&width), Some(&cols)) =
            (index.split_last(), tensor.last(), shape.last())
        else {
            return self.fail(span, "a padded load of a rank-0 tensor");
        };
        let gm_strides = crate::ir::analysis::strides(&tensor);
        let eb = dtype.bytes() as i64;
        // The rows: the leading axes of extent above 1 must collapse into one stride,
        // which holds when every one after the first spans its whole axis.
        let rows_axes: Vec<usize> = (0..lead.len()).filter(|&a| shape[a] > 1).collect();
        let collapses = rows_axes.iter().skip(1).all(|&a| {
            shape[a] == tensor[a] && !matches!(lead[a], Index::Range { clamped: true, .. })
        });
        if !collapses {
            return self.fail(
                span,
                "a padded load whose leading axes do not collapse into rows of one stride (index whole axes after the first)",
            );
        }
        let rows_n: u64 = shape[..lead.len()].iter().product();
        let row_stride = rows_axes
            .last()
            .and_then(|&a| gm_strides.get(a).copied())
            .unwrap_or(width as i64);
        // A leading range may leave the tensor too (the checker allows it on one axis, with
        // no axis of more than one position before it), unless its window provably stays
        // inside: then its rows outside hold the fill.
        let range = |v| self.var_range.get(&v).copied();
        let leaving = lead.iter().enumerate().find_map(|(a, ix)| match ix {
            Index::Range {
                start,
                len,
                clamped: false,
            } => {
                let inside = crate::ir::affine::interval(start, &range).is_some_and(|(lo, hi)| {
                    lo >= 0 && hi.saturating_add(*len as i64) <= tensor[a] as i64
                });
                (!inside).then(|| (a, start.clone(), *len))
            }
            _ => None,
        });
        let mut valid: Valid = shape.iter().map(|&d| Val::Imm(d as i64)).collect();
        let mut rows = Val::Imm(rows_n as i64);
        let mut offset = Val::Imm(0);
        for (a, ix) in lead.iter().enumerate() {
            let start = match ix {
                Index::Full => continue,
                _ if leaving.as_ref().is_some_and(|l| l.0 == a) => continue,
                Index::Range { start, .. } | Index::Single(start) => start,
                Index::Indirect(_) | Index::Strided { .. } => {
                    return self.fail(span, "a padded gather or strided range")
                }
            };
            let s = self.iexpr(start, 0);
            let g = gm_strides.get(a).copied().unwrap_or(1);
            let term = self.alu(AluOp::Mul, s, Val::Imm(g * eb));
            offset = self.alu(AluOp::Add, term, offset);
            if let Index::Range {
                len, clamped: true, ..
            } = ix
            {
                // A tail on the rows: min(len, extent - start) of them, times the whole
                // axes after it.
                let left = self.alu(AluOp::Sub, Val::Imm(tensor[a] as i64), s);
                let count = self.alu(AluOp::Min, left, Val::Imm(*len as i64));
                valid[a] = count;
                let after: u64 = shape[a + 1..lead.len()].iter().product();
                rows = self.alu(AluOp::Mul, count, Val::Imm(after as i64));
            }
        }
        let (w, c) = (width as i64, cols as i64);
        let start = match last {
            Index::Full => Val::Imm(0),
            Index::Range { start, .. } | Index::Single(start) => self.iexpr(start, 0),
            Index::Indirect(_) | Index::Strided { .. } => {
                return self.fail(span, "a padded gather or strided range")
            }
        };
        let neg = self.alu(AluOp::Sub, Val::Imm(0), start);
        let neg = self.alu(AluOp::Max, neg, Val::Imm(0));
        let left = self.alu(AluOp::Min, neg, Val::Imm(c));
        let begin = self.alu(AluOp::Max, start, Val::Imm(0));
        let begin = self.alu(AluOp::Min, begin, Val::Imm(w));
        let end = self.alu(AluOp::Add, start, Val::Imm(c));
        let end = self.alu(AluOp::Min, end, Val::Imm(w));
        let len = self.alu(AluOp::Sub, end, begin);
        let len = self.alu(AluOp::Max, len, Val::Imm(0));
        let begin_bytes = self.alu(AluOp::Mul, begin, Val::Imm(eb));
        let offset = self.alu(AluOp::Add, begin_bytes, offset);
        if valid.iter().any(|v| matches!(v, Val::Reg(_))) {
            let Some(valid) = super::box_valid_to_tile(&valid, &shape, &self.shape(r)) else {
                return self.fail(span, "a tail on an axis of extent 1 that the tile drops");
            };
            self.valid.insert(r, valid);
        }
        let mut acc: Vec<Access> = self.tile_access(r, true).into_iter().collect();
        let mut gm = self.tensor_access(param, false);
        // The box insert-sync compares: the rows read, across the whole last axis (a
        // superset of the window's part inside the tensor; the whole rows' axis when
        // its window may leave).
        let mut whole = lead.to_vec();
        if let Some((a, ..)) = leaving {
            whole[a] = Index::Full;
        }
        whole.push(Index::Full);
        if let Some(region) = self.gm_region(&tensor, &whole) {
            gm.region = Some(self.out.regions.len() as u32);
            self.out.regions.push(region);
        }
        acc.push(gm);
        let pad_rows = |lw: &mut Self, first: Val, rows: Val, len: Val, left: Val, src: Val| {
            let row_bytes = lw.alu(AluOp::Mul, first, Val::Imm(c * eb));
            let Some((dst, _)) = lw.tile_addr(r, row_bytes) else {
                return lw.fail(span, "a tile without an address");
            };
            let src = lw.addr(Region::Tensor(param as u32), src, 0);
            lw.emit(
                Op::DmaPad {
                    dtype,
                    dst,
                    src,
                    rows,
                    len,
                    left,
                    width: c,
                    src_stride: row_stride,
                    dst_stride: c,
                    value: pad,
                },
                acc.clone(),
            );
        };
        let Some((a, start, window)) = leaving else {
            return pad_rows(self, Val::Imm(0), rows, len, left, offset);
        };
        // Rows `start .. start + window` of axis `a`, each bringing `after` tile rows:
        // `top` before the tensor and `bottom` past it are all fill, the `inside`
        // rows from `begin` on are read (three `dmapad`s, the outer two of no source).
        let after: u64 = shape[a + 1..lead.len()].iter().product();
        // The inside and bottom `dmapad`s start a row of the rows' axis in: each of
        // its rows must keep the destination on UB's alignment.
        let align = self.ub_align.max(1) as i64;
        let row_bytes = after as i64 * c * eb;
        if row_bytes % align != 0 {
            return self.errors.push(Diagnostic::error(
                format!(
                    "rows of this padded load may leave `{}`, so it fills them with a `dmapad` that starts a row in, {row_bytes} bytes per row, off UB's {align}-byte alignment: pad rows of a multiple of {} {dtype} lanes",
                    p_name,
                    align / eb.max(1)
                ),
                span,
            ));
        }
        let height = tensor[a] as i64;
        let s = self.iexpr(&start, 0);
        let neg = self.alu(AluOp::Sub, Val::Imm(0), s);
        let neg = self.alu(AluOp::Max, neg, Val::Imm(0));
        let top = self.alu(AluOp::Min, neg, Val::Imm(window as i64));
        let begin = self.alu(AluOp::Max, s, Val::Imm(0));
        let begin = self.alu(AluOp::Min, begin, Val::Imm(height));
        let end = self.alu(AluOp::Add, s, Val::Imm(window as i64));
        let end = self.alu(AluOp::Max, end, Val::Imm(0));
        let end = self.alu(AluOp::Min, end, Val::Imm(height));
        let inside = self.alu(AluOp::Sub, end, begin);
        let inside = self.alu(AluOp::Max, inside, Val::Imm(0));
        let filled = self.alu(AluOp::Add, top, inside);
        let bottom = self.alu(AluOp::Sub, Val::Imm(window as i64), filled);
        let g = gm_strides.get(a).copied().unwrap_or(1);
        let begin_bytes = self.alu(AluOp::Mul, begin, Val::Imm(g * eb));
        let src = self.alu(AluOp::Add, begin_bytes, offset);
        let per = Val::Imm(after as i64);
        let (top_rows, inside_rows, bottom_rows, first_bottom) = (
            self.alu(AluOp::Mul, top, per),
            self.alu(AluOp::Mul, inside, per),
            self.alu(AluOp::Mul, bottom, per),
            self.alu(AluOp::Mul, filled, per),
        );
        let none = Val::Imm(0);
        pad_rows(self, Val::Imm(0), top_rows, none, none, src);
        pad_rows(self, top_rows, inside_rows, len, left, src);
        pad_rows(self, first_bottom, bottom_rows, none, none, src);
    }

    fn transfer(&mut self, id: OpId, param: usize, index: &[Index], tile_v: ValueId, store: bool) {
        // Every op has a span; a missing one only blurs a diagnostic.
        let span = self.prov.span.unwrap_or_default();
        let Some(t) = self.k.annotations.transfer.get(&id).cloned() else {
            return self.fail(span, "a transfer without descriptors");
        };
        // Verified IR: every parameter index names a parameter.
        let tensor = self
            .k
            .params
            .get(param)
            .map(|p| p.ty.shape.clone())
            .unwrap_or_default();
        let gm_strides = crate::ir::analysis::strides(&tensor);
        // The tensor's dtype: a store from L0C (fix-to-gm) casts to it on the way.
        let dtype = self
            .k
            .params
            .get(param)
            .map_or_else(|| self.dtype(tile_v), |p| p.ty.dtype);
        let eb = dtype.bytes() as i64;
        // Byte offset of the region's first element, and the valid extents.
        let mut offset = Val::Imm(0);
        let shape = crate::ir::analysis::region_shape(self.k, &tensor, index);
        let mut valid: Valid = shape.iter().map(|&d| Val::Imm(d as i64)).collect();
        let mut indirect = None;
        for (i, ix) in index.iter().enumerate() {
            let start = match ix {
                crate::ir::Index::Full => continue,
                crate::ir::Index::Indirect(v) => {
                    indirect = Some(*v);
                    continue;
                }
                crate::ir::Index::Range { start, .. }
                | crate::ir::Index::Strided { start, .. }
                | crate::ir::Index::Single(start) => start,
            };
            let s = self.iexpr(start, 0);
            let g = gm_strides.get(i).copied().unwrap_or(1);
            let term = self.alu(AluOp::Mul, s, Val::Imm(g * eb));
            offset = match (offset, term) {
                (Val::Imm(_), Val::Reg(_)) => self.alu(AluOp::Add, term, offset),
                _ => self.alu(AluOp::Add, offset, term),
            };
            if let crate::ir::Index::Range {
                len, clamped: true, ..
            } = ix
            {
                // The checker keeps indices within the tensor's rank.
                let extent = tensor.get(i).copied().unwrap_or(0) as i64;
                // The tail's valid extent: min(len, extent - start).
                let left = self.alu(AluOp::Sub, Val::Imm(extent), s);
                if let Some(slot) = valid.get_mut(i) {
                    *slot = self.alu(AluOp::Min, left, Val::Imm(*len as i64));
                }
            }
        }
        let gm_bytes = offset;
        // `valid` is per axis of the box; the tile may drop its single positions' axes.
        let tile_shape = self.shape(tile_v);
        if store {
            // Masked lanes of the value (a tail of its own, as a load whose window
            // starts later than the store's) are not stored either, as in the reference.
            if let Some(mut own) = self.valid.get(&tile_v).cloned() {
                let mut own_shape = tile_shape.clone();
                if self.k.annotations.transposed.contains(&id) {
                    own.reverse();
                    own_shape.reverse();
                }
                let Some(own) = super::box_valid_to_tile(&own, &own_shape, &shape) else {
                    return self.fail(span, "a stored value's tail on an axis the box drops");
                };
                for (v, o) in valid.iter_mut().zip(own) {
                    *v = match (*v, o) {
                        (Val::Imm(a), Val::Imm(b)) => Val::Imm(a.min(b)),
                        (a, b) => self.alu(AluOp::Min, a, b),
                    };
                }
            }
        }
        let Some(mut tile_valid) = super::box_valid_to_tile(&valid, &shape, &tile_shape) else {
            return self.fail(span, "a tail on an axis of extent 1 that the tile drops");
        };
        if !store {
            self.valid.insert(tile_v, tile_valid.clone());
        }
        let mut acc: Vec<Access> = Vec::new();
        // A load writes the tile and reads the tensor; a store the other way round.
        acc.extend(self.tile_access(tile_v, !store));
        let mut gm = self.tensor_access(param, store);
        if let (Val::Imm(off), None) = (gm_bytes, indirect) {
            // A region at a fixed place: its exact byte range (tails clamp inside it).
            let last: i64 = t
                .dims
                .iter()
                .map(|d| (d.extent as i64 - 1) * d.gm_stride)
                .sum();
            gm.range = Some((off as u64, (off + (last + 1) * eb) as u64));
        }
        if let Some(region) = self.gm_region(&tensor, index) {
            gm.region = Some(self.out.regions.len() as u32);
            self.out.regions.push(region);
        }
        if self.accumulate {
            // An accumulating scatter reads the rows it adds into.
            acc.push(Access { write: false, ..gm });
        }
        acc.push(gm);
        if store && self.space(tile_v) == Some(MemSpace::L0C) {
            // The tile's rows step along the first axis of the box above extent 1
            // before its last (the first axis when there is none).
            let rows_axis = (0..shape.len().saturating_sub(1))
                .find(|&a| shape[a] != 1)
                .unwrap_or(0);
            let row_stride = gm_strides.get(rows_axis).copied().unwrap_or(1);
            return self.fix_store(
                param,
                row_stride,
                tile_v,
                &tile_valid,
                gm_bytes,
                dtype,
                acc,
                span,
            );
        }
        if let (Some(idx), Some((rows, len))) = (indirect, t.rows) {
            let Some((tile_addr, _)) = self.tile_addr(tile_v, Val::Imm(0)) else {
                return self.fail(span, "a tile without an address");
            };
            let Some((index_addr, _)) = self.tile_addr(idx, Val::Imm(0)) else {
                return self.fail(span, "an index tile without an address");
            };
            acc.extend(self.tile_access(idx, false));
            // The axis the index tile picks positions along (the first for a row
            // gather or a scatter), and the axes before it of extent above 1, whose
            // positions a loop walks, one gather each.
            // `indirect` came from this index, so the position exists.
            let k = index
                .iter()
                .position(|ix| matches!(ix, crate::ir::Index::Indirect(_)))
                .unwrap_or(0);
            let region = shape.clone();
            let lead: Vec<usize> = (0..k).filter(|&a| region.get(a) != Some(&1)).collect();
            if lead.len() > 1 {
                return self.fail(
                    span,
                    "a gather or scatter along an axis with more than one axis of extent above 1 before it",
                );
            }
            let row = gm_strides.get(k).copied().unwrap_or(1);
            // In a loop's tail the index tile holds fewer valid rows than its shape:
            // move only those (the lanes past them hold stale data, not row numbers),
            // and the gathered tile is valid on just as many rows.
            let n = rows;
            let rows = match self.valid.get(&idx).and_then(|v| v.first()).copied() {
                Some(valid @ Val::Reg(_)) => valid,
                _ => Val::Imm(rows as i64),
            };
            if !store {
                if let Some(axis_k) = valid.get_mut(k) {
                    *axis_k = rows;
                }
                let Some(mapped) = super::box_valid_to_tile(&valid, &shape, &tile_shape) else {
                    return self.fail(span, "a tail on an axis of extent 1 that the tile drops");
                };
                tile_valid = mapped;
                self.valid.insert(tile_v, tile_valid.clone());
            }
            // The instruction that moves the picked blocks between GM and the tile.
            let (len_v, add) = (Val::Imm(len as i64), self.accumulate);
            let row_op = move |gm: crate::isa::Addr, tile: crate::isa::Addr, index| {
                if store {
                    Op::Scatter {
                        dtype,
                        dst: gm,
                        src: tile,
                        index,
                        rows,
                        len: len_v,
                        src_stride: len as i64,
                        dst_stride: row,
                        add,
                    }
                } else {
                    Op::Gather {
                        dtype,
                        dst: tile,
                        src: gm,
                        index,
                        rows,
                        len: len_v,
                        src_stride: row,
                        dst_stride: len as i64,
                    }
                }
            };
            if let Some(&a) = lead.first() {
                // One gather per position of the leading axis: its GM rows `stride`
                // apart, its tile rows `n * len` elements apart.
                let count = valid
                    .get(a)
                    .copied()
                    .unwrap_or(Val::Imm(region.get(a).copied().unwrap_or(1) as i64));
                let g = gm_strides.get(a).copied().unwrap_or(1);
                let eb = dtype.bytes() as i64;
                let block = (n * len) as i64 * eb;
                let align = self.ub_align.max(1) as i64;
                if block % align != 0 {
                    let (what, moves, side) = if store {
                        ("scatter", "reads", "source")
                    } else {
                        ("gather", "writes", "destination")
                    };
                    return self.errors.push(Diagnostic::error(
                        format!(
                            "this {what} along axis {k} {moves} each of the tile's {} rows {block} bytes after the last, off UB's {align}-byte alignment, which each {what}'s {side} needs: {what} blocks of a multiple of {} {dtype} lanes, or one row at a time",
                            region.get(a).copied().unwrap_or(1),
                            align / eb.max(1)
                        ),
                        span,
                    ));
                }
                return self.peel_loop(count, span, |lw, c| {
                    let goff = lw.alu(AluOp::Mul, Val::Reg(c), Val::Imm(g * eb));
                    let goff = lw.alu(AluOp::Add, goff, gm_bytes);
                    let toff = lw.alu(AluOp::Mul, Val::Reg(c), Val::Imm(block));
                    let (Some((tile_addr, _)), Some((index_addr, _))) =
                        (lw.tile_addr(tile_v, toff), lw.tile_addr(idx, Val::Imm(0)))
                    else {
                        return lw.fail(span, "a tile without an address");
                    };
                    let gm_addr = lw.addr(Region::Tensor(param as u32), goff, 0);
                    lw.emit(row_op(gm_addr, tile_addr, index_addr), acc);
                });
            }
            let gm_addr = self.addr(Region::Tensor(param as u32), gm_bytes, 0);
            return self.emit(row_op(gm_addr, tile_addr, index_addr), acc);
        }
        if !store && self.feeds_l1(tile_v) {
            self.zero_before_tail_load(tile_v, &tile_valid, dtype, span);
        }
        let peel = t.peel.min(t.dims.len());
        self.peeled(
            &t.dims[..peel],
            &t.dims[peel..],
            &valid,
            gm_bytes,
            Val::Imm(0),
            eb,
            param,
            tile_v,
            dtype,
            store,
            acc,
            span,
        );
    }

    /// A store from L0C (fix-to-gm; a 2-D region, so rows are `row_stride` apart in the
    /// tensor): one FIX writes the valid rows and columns into GM, casting to `dtype`.
    #[allow(clippy::too_many_arguments)]
    fn fix_store(
        &mut self,
        param: usize,
        row_stride: i64,
        tile_v: ValueId,
        valid: &Valid,
        gm_bytes: Val,
        dtype: DType,
        acc: Vec<Access>,
        span: Span,
    ) {
        let shape = self.shape(tile_v);
        let (&[_, cols], &[rows_v, cols_v]) = (shape.as_slice(), valid.as_slice()) else {
            return self.fail(span, "a store from L0C of a tile that is not 2-D");
        };
        let Some((src_addr, _)) = self.tile_addr(tile_v, Val::Imm(0)) else {
            return self.fail(span, "a tile without an address");
        };
        let dst_addr = self.addr(Region::Tensor(param as u32), gm_bytes, 0);
        let src = Tile {
            addr: src_addr,
            rows: rows_v,
            cols: cols_v,
            stride: cols as i64,
        };
        let dst = Tile {
            addr: dst_addr,
            rows: rows_v,
            cols: cols_v,
            stride: row_stride,
        };
        self.fix(dtype, dst, src, tile_v, acc, span);
    }

    /// FIX of L0C tile `v` (`src`, row-major as the tile's shape reads) into `dst`: one
    /// instruction, or one per column strip when `v` is laid out in strips (`strips`),
    /// each strip into its columns of `dst`.
    fn fix(
        &mut self,
        dtype: DType,
        dst: Tile,
        src: Tile,
        v: ValueId,
        acc: Vec<Access>,
        span: Span,
    ) {
        let q = self.strips(v);
        if q == 1 {
            return self.emit(Op::Fix { dtype, dst, src }, acc);
        }
        // Strips are laid out over the whole tile: only a FIX of all of it reads them.
        let shape = self.shape(v);
        let whole = |n: &Val, extent: Option<&u64>| matches!((n, extent), (Val::Imm(n), Some(&e)) if *n == e as i64);
        let (Val::Imm(rows), Val::Imm(cols), true) = (
            src.rows,
            src.cols,
            whole(&src.rows, shape.first()) && whole(&src.cols, shape.get(1)),
        ) else {
            return self.fail(span, "a part of a tile in column strips (a compiler bug)");
        };
        let width = cols / q as i64;
        if src.stride != cols || width * q as i64 != cols {
            return self.fail(
                span,
                "a strided view of a tile in column strips (a compiler bug)",
            );
        }
        for j in 0..q as i64 {
            let shift = |a: crate::isa::Addr, bytes: i64| crate::isa::Addr {
                offset: a.offset + bytes,
                ..a
            };
            let src = Tile {
                addr: shift(src.addr, j * rows * width * 4),
                cols: Val::Imm(width),
                stride: width,
                ..src
            };
            let dst = Tile {
                addr: shift(dst.addr, j * width * dtype.bytes() as i64),
                cols: Val::Imm(width),
                ..dst
            };
            self.emit(Op::Fix { dtype, dst, src }, acc.clone());
        }
    }

    /// Whether `v` is moved to L1 (on its way to the matrix unit).
    fn feeds_l1(&self, v: ValueId) -> bool {
        let mut found = false;
        self.k.walk_ops(|_, op| {
            if let (OpKind::Copy { arg }, Some(&r)) = (&op.kind, op.results.first()) {
                found |= *arg == v && self.space(r) == Some(MemSpace::L1);
            }
        });
        found
    }

    /// Zeroes a 2-D UB tile before a tail iteration's load fills its valid lanes: a
    /// matmul sums every lane of its K axis, so the lanes past the extent must not hold
    /// stale data. The whole tile is filled (the vector pipe needs aligned addresses,
    /// which a strip after the valid lanes would not have), and only in the tail: the
    /// fill's row count is `rows * min(lanes missing, 1)`, zero in the other iterations.
    fn zero_before_tail_load(&mut self, v: ValueId, valid: &Valid, dtype: DType, span: Span) {
        let shape = self.shape(v);
        let (&[rows, cols], [vr, vc]) = (shape.as_slice(), valid.as_slice()) else {
            return;
        };
        if !matches!(vr, Val::Reg(_)) && !matches!(vc, Val::Reg(_)) {
            return;
        }
        let (rows, cols) = (rows as i64, cols as i64);
        let missing_r = self.alu(AluOp::Sub, Val::Imm(rows), *vr);
        let missing_c = self.alu(AluOp::Sub, Val::Imm(cols), *vc);
        // Immediate second, so a zero folds away.
        let missing = match missing_r {
            Val::Imm(_) => self.alu(AluOp::Add, missing_c, missing_r),
            Val::Reg(_) => self.alu(AluOp::Add, missing_r, missing_c),
        };
        let tail = self.alu(AluOp::Min, missing, Val::Imm(1));
        let fill_rows = self.alu(AluOp::Mul, tail, Val::Imm(rows));
        let Some(mut dst) = self.tile(v, fill_rows, Val::Imm(cols), span) else {
            return;
        };
        dst.rows = fill_rows;
        let value = if dtype == DType::I32 {
            VSrc::Int(0)
        } else {
            VSrc::Float(0.0)
        };
        let acc = self.tile_access(v, true).into_iter().collect();
        self.emit(Op::VDup { dtype, dst, value }, acc);
    }

    #[allow(clippy::too_many_arguments)]
    fn peeled(
        &mut self,
        outer: &[crate::ir::TransferDim],
        inner: &[crate::ir::TransferDim],
        valid: &Valid,
        gm_bytes: Val,
        tile_bytes: Val,
        eb: i64,
        param: usize,
        tile_v: ValueId,
        dtype: DType,
        store: bool,
        acc: Vec<Access>,
        span: Span,
    ) {
        let extent = |d: &crate::ir::TransferDim| match d.clamp_axis {
            Some(ax) => valid.get(ax).copied().unwrap_or(Val::Imm(d.extent as i64)),
            None => Val::Imm(d.extent as i64),
        };
        if let Some((d, rest)) = outer.split_first() {
            let count = extent(d);
            let d = *d;
            return self.peel_loop(count, span, |lw, c| {
                let g = lw.alu(AluOp::Mul, Val::Reg(c), Val::Imm(d.gm_stride * eb));
                let g = lw.alu(AluOp::Add, g, gm_bytes);
                let t = lw.alu(AluOp::Mul, Val::Reg(c), Val::Imm(d.tile_stride * eb));
                let t = lw.alu(AluOp::Add, t, tile_bytes);
                lw.peeled(
                    rest, inner, valid, g, t, eb, param, tile_v, dtype, store, acc, span,
                );
            });
        }
        let Some((tile_addr, _)) = self.tile_addr(tile_v, tile_bytes) else {
            return self.fail(span, "a tile without an address");
        };
        let gm_addr = self.addr(Region::Tensor(param as u32), gm_bytes, 0);
        let dims: Vec<DmaDim> = inner
            .iter()
            .map(|d| DmaDim {
                extent: extent(d),
                src_stride: if store { d.tile_stride } else { d.gm_stride },
                dst_stride: if store { d.gm_stride } else { d.tile_stride },
            })
            .collect();
        let (dst, src) = if store {
            (gm_addr, tile_addr)
        } else {
            (tile_addr, gm_addr)
        };
        self.emit(
            Op::Dma {
                dtype,
                dst,
                src,
                dims,
            },
            acc,
        );
    }

    /// Moves between spaces (copy) and transposes.
    fn mov(&mut self, arg: ValueId, r: ValueId, transpose: bool, span: Span) {
        let (Some(from), Some(to)) = (self.space(arg), self.space(r)) else {
            return self.fail(span, "a move of a tile without a memory space");
        };
        let dtype = self.dtype(r);
        let (rows, cols) = Self::view2d(&self.shape(arg));
        let acc: Vec<Access> = [self.tile_access(arg, false), self.tile_access(r, true)]
            .into_iter()
            .flatten()
            .collect();
        let imm = |x: u64| Val::Imm(x as i64);
        let (Some((src_addr, _)), Some((dst_addr, _))) = (
            self.tile_addr(arg, Val::Imm(0)),
            self.tile_addr(r, Val::Imm(0)),
        ) else {
            return self.fail(span, "a tile without an address");
        };
        let src = Tile {
            addr: src_addr,
            rows: imm(rows),
            cols: imm(cols),
            stride: cols as i64,
        };
        let (dr, dc) = if transpose {
            (cols, rows)
        } else {
            (rows, cols)
        };
        let dst = Tile {
            addr: dst_addr,
            rows: imm(dr),
            cols: imm(dc),
            stride: dc as i64,
        };
        self.valid_from(r, arg);
        let op = match (from, to) {
            (MemSpace::L1, MemSpace::L0A | MemSpace::L0B) => Op::Mov2d {
                dtype,
                dst,
                src,
                transpose,
            },
            (MemSpace::L0C, _) if !transpose => return self.fix(dtype, dst, src, arg, acc, span),
            (MemSpace::UB, MemSpace::UB) if transpose => Op::Dma {
                dtype,
                dst: dst_addr,
                src: src_addr,
                dims: vec![
                    DmaDim {
                        extent: imm(cols),
                        src_stride: 1,
                        dst_stride: rows as i64,
                    },
                    DmaDim {
                        extent: imm(rows),
                        src_stride: cols as i64,
                        dst_stride: 1,
                    },
                ],
            },
            (MemSpace::UB, MemSpace::UB) => Op::VCopy { dtype, dst, src },
            (MemSpace::UB, MemSpace::L1) if !transpose => Op::Dma {
                dtype,
                dst: dst_addr,
                src: src_addr,
                dims: vec![DmaDim {
                    extent: imm(rows * cols),
                    src_stride: 1,
                    dst_stride: 1,
                }],
            },
            _ => return self.fail(span, format!("a move from {from} to {to}")),
        };
        self.emit(op, acc);
    }

    /// The source's `t[:, a .. b]` on a UB tile of 1 or 2 axes: one `vcopy` from the
    /// window's strided view of `t` (rows of `t`'s width) into a tile of its own. A lane
    /// masked in `t` stays masked: on an axis with a tail the slice's valid extent is
    /// `min(len, max(0, valid - start))`, computed on the S pipe.
    fn vector_slice(&mut self, arg: ValueId, index: &[Index], r: ValueId, span: Span) {
        let shape = self.shape(arg);
        let (_, cols) = Self::view2d(&shape);
        let arg_valid = self.valid.get(&arg).cloned();
        let dtype = self.dtype(r);
        let starts: Vec<Option<&crate::ir::IndexExpr>> = index
            .iter()
            .map(|ix| match ix {
                Index::Range { start, .. } => Some(start),
                _ => None,
            })
            .collect();
        // A tile of more axes is viewed as rows of its last axis: the window's leading
        // axes must collapse into one run of rows (whole after the first that selects
        // more than one position), which start at one combined row.
        let combined;
        let (row0, col0) = match starts.as_slice() {
            [c] => (None, *c),
            [r0, c] => (*r0, *c),
            [lead @ .., c] => {
                let Some(row) = self.collapsed_rows(index, &shape, lead, span) else {
                    return;
                };
                combined = row;
                (Some(&combined), *c)
            }
            [] => return self.fail(span, "a slice of a tile with no axes"),
        };
        let align = self.ub_align.max(1);
        if !self.aligned_window(row0, col0, cols, dtype.bytes(), align) {
            let lanes = align / dtype.bytes().max(1);
            return self.errors.push(Diagnostic::error(
                format!(
                    "this slice of a tile computed in UB does not start on UB's {align}-byte alignment on every iteration: a vector instruction's operands do. Start it at a multiple of {lanes} {dtype} lanes (rows included), or slice a loaded tile instead: a load reads any window of GM"
                ),
                span,
            ));
        }
        let mut window = Vec::with_capacity(index.len());
        for (axis, (ix, &extent)) in index.iter().zip(&shape).enumerate() {
            let (start, len) = match ix {
                Index::Full => (Val::Imm(0), extent),
                Index::Range {
                    start,
                    len,
                    clamped: false,
                } => (self.iexpr(start, 0), *len),
                _ => return self.fail(span, "a slice axis that is not a range"),
            };
            let valid = match arg_valid.as_ref().and_then(|v| v.get(axis)) {
                // A tail holds at least one lane on each axis, and every consumer relies
                // on that (an axis of extent 1 is always whole): a window that starts
                // past 0 could hold none.
                Some(&Val::Reg(_)) if start != Val::Imm(0) => {
                    return self.errors.push(Diagnostic::error(
                        format!(
                            "this slice starts past position 0 on axis {axis} of a tile with a tail (the last iteration's tile holds fewer lanes there), so its window could be empty: for now, slice a tail tile's axis from position 0"
                        ),
                        span,
                    ));
                }
                Some(&Val::Reg(v)) => {
                    let left = self.alu(AluOp::Sub, Val::Reg(v), start);
                    let left = self.alu(AluOp::Max, left, Val::Imm(0));
                    self.alu(AluOp::Min, left, Val::Imm(len as i64))
                }
                _ => Val::Imm(len as i64),
            };
            window.push((start, valid));
        }
        let (row0, col0) = match (window.as_slice(), row0) {
            ([(c0, _)], _) => (Val::Imm(0), *c0),
            ([(r0, _), (c0, _)], _) => (*r0, *c0),
            ([.., (c0, _)], Some(row)) => (self.iexpr(row, 0), *c0),
            _ => return self.fail(span, "a slice of a tile with no axes"),
        };
        if window.iter().any(|(_, v)| matches!(v, Val::Reg(_))) {
            self.valid
                .insert(r, window.iter().map(|&(_, v)| v).collect());
        }
        let first = self.alu(AluOp::Mul, row0, Val::Imm(cols as i64));
        let first = self.alu(AluOp::Add, first, col0);
        let offset = self.alu(AluOp::Mul, first, Val::Imm(dtype.bytes() as i64));
        self.copy_view(arg, offset, cols, r, span);
    }

    /// The first row, in rows of the last axis, of a window on a tile of three or more
    /// axes (`lead`: the starts of its leading axes, `None` for whole ones), when the
    /// window's rows are one run: every leading axis after the first that selects more
    /// than one position is whole. Otherwise a located error.
    fn collapsed_rows(
        &mut self,
        index: &[Index],
        shape: &[u64],
        lead: &[Option<&crate::ir::IndexExpr>],
        span: Span,
    ) -> Option<crate::ir::IndexExpr> {
        use crate::ir::IndexExpr;
        let len = |a: usize| match &index[a] {
            Index::Range { len, .. } => *len,
            _ => shape[a],
        };
        let first = (0..lead.len()).find(|&a| len(a) > 1);
        let collapses = first.is_none_or(|f| (f + 1..lead.len()).all(|a| len(a) == shape[a]));
        if !collapses {
            self.errors.push(Diagnostic::error(
                "this slice of a tile computed in UB picks rows that are not one run (a vector instruction reads rows one stride apart): take whole axes after the first leading axis that selects more than one position, or slice a loaded tile instead",
                span,
            ));
            return None;
        }
        // Row of the window's first element: sum of start * (rows per position).
        let mut row = IndexExpr::Const(0);
        for (a, start) in lead.iter().enumerate() {
            let Some(start) = start else { continue };
            let per: u64 = shape[a + 1..lead.len()].iter().product();
            let term = IndexExpr::Mul(
                Box::new((*start).clone()),
                Box::new(IndexExpr::Const(per as i64)),
            );
            row = IndexExpr::Add(Box::new(row), Box::new(term));
        }
        Some(row)
    }

    /// One `vcopy` of `r`'s valid lanes from a view of `arg`'s buffer that starts
    /// `offset` bytes in, with rows `stride` elements apart (a slice's window, a
    /// reshape's new shape).
    fn copy_view(&mut self, arg: ValueId, offset: Val, stride: u64, r: ValueId, span: Span) {
        let (rows, cols) = self.valid2d(r, span);
        let dtype = self.dtype(r);
        let acc: Vec<Access> = [self.tile_access(arg, false), self.tile_access(r, true)]
            .into_iter()
            .flatten()
            .collect();
        let Some((src_addr, _)) = self.tile_addr(arg, offset) else {
            return self.fail(span, "a tile without an address");
        };
        let src = Tile {
            addr: src_addr,
            rows,
            cols,
            stride: stride as i64,
        };
        let Some(dst) = self.tile(r, rows, cols, span) else {
            return;
        };
        self.emit(Op::VCopy { dtype, dst, src }, acc);
    }

    /// `reshape`: one `vcopy` that reads the source's buffer with the result's 2-D view
    /// (a UB tile is row-major with no gap between rows, so the elements are where the
    /// new shape expects them). A tail's valid extents carry over where the reshape only
    /// adds or drops axes of extent 1; regrouping a tile with a tail is an error, as in
    /// the reference interpreter.
    fn reshape(&mut self, arg: ValueId, r: ValueId, span: Span) {
        if (self.space(arg), self.space(r)) != (Some(MemSpace::UB), Some(MemSpace::UB)) {
            return self.fail(span, "a reshape outside UB");
        }
        let (from, to) = (self.shape(arg), self.shape(r));
        let tail = self
            .valid
            .get(&arg)
            .cloned()
            .filter(|v| v.iter().zip(&from).any(|(x, &d)| *x != Val::Imm(d as i64)));
        if let Some(valid) = tail {
            // Only adding or dropping axes of extent 1 keeps each valid extent on its
            // lanes (the same mapping a transfer's box and its tile use).
            let mapped = crate::ir::typing::same_layout(&from, &to)
                .then(|| super::box_valid_to_tile(&valid, &from, &to))
                .flatten();
            let Some(mapped) = mapped else {
                return self.errors.push(Diagnostic::error(
                    "this reshape regroups a tile whose last loop iteration holds fewer lanes (a tail): reshape only whole tiles, or add and drop axes of extent 1",
                    span,
                ));
            };
            self.valid.insert(r, mapped);
        }
        let (_, full_cols) = Self::view2d(&to);
        self.copy_view(arg, Val::Imm(0), full_cols, r, span);
    }

    /// Whether the byte offset `(row0 * cols + col0) * eb` of a window is a multiple of
    /// `align` on every iteration: each loop variable is `start + step * counter`, so the
    /// offset is affine in the counters, and it is aligned when its constant and every
    /// counter's coefficient are (sufficient, not necessary).
    fn aligned_window(
        &self,
        row0: Option<&crate::ir::IndexExpr>,
        col0: Option<&crate::ir::IndexExpr>,
        cols: u64,
        eb: u64,
        align: u64,
    ) -> bool {
        let part = |e: Option<&crate::ir::IndexExpr>| match e {
            Some(e) => crate::ir::affine::of_index(e),
            None => Some(crate::affine::Affine::constant(0)),
        };
        let offset = (|| {
            part(row0)?
                .scale(i64::try_from(cols).ok()?)?
                .add(part(col0)?, 1)?
                .scale(i64::try_from(eb).ok()?)
        })();
        let Some(offset) = offset else {
            return false;
        };
        let align = i128::from(align);
        let mut constant = i128::from(offset.constant);
        for &(var, c) in offset.terms() {
            let Some(&(_, start, step)) = self.var_loop.get(&var) else {
                return false;
            };
            constant += i128::from(c) * i128::from(start);
            if (i128::from(c) * i128::from(step)) % align != 0 {
                return false;
            }
        }
        constant % align == 0
    }

    /// A piece of an L1 tile moved into L0A / L0B: one `mov2d` whose source is the
    /// piece's strided view of the whole tile (rows of the tile's width).
    fn slice(&mut self, arg: ValueId, index: &[Index], transpose: bool, r: ValueId, span: Span) {
        if index.iter().any(|ix| matches!(ix, Index::Strided { .. })) {
            // canonicalize made every strided slice of a loaded tile a strided load.
            return self.errors.push(Diagnostic::error(
                "this slice with a step reads a tile on chip, whose instructions read runs of consecutive lanes: slice a tile loaded from a tensor the kernel does not store (the load takes the step), or load the tensor with the step",
                span,
            ));
        }
        let (from, to) = (self.space(arg), self.space(r));
        if (from, to, transpose) == (Some(MemSpace::UB), Some(MemSpace::UB), false) {
            return self.vector_slice(arg, index, r, span);
        }
        if from != Some(MemSpace::L1) || !matches!(to, Some(MemSpace::L0A | MemSpace::L0B)) {
            return self.fail(span, "a slice that is not a move from L1 into L0A or L0B");
        }
        let shape = self.shape(arg);
        let ([rows, cols], [ri, ci]) = (shape.as_slice(), index) else {
            return self.fail(span, "a slice of a tile that is not 2-D");
        };
        let (rows, cols) = (*rows, *cols);
        let mut part = |ix: &Index, extent: u64| match ix {
            Index::Full => Some((Val::Imm(0), extent)),
            Index::Range {
                start,
                len,
                clamped: false,
            } => Some((self.iexpr(start, 0), *len)),
            _ => None,
        };
        let (Some((row0, len_r)), Some((col0, len_c))) = (part(ri, rows), part(ci, cols)) else {
            return self.fail(span, "a slice axis that is not a range");
        };
        let dtype = self.dtype(r);
        let eb = Val::Imm(dtype.bytes() as i64);
        let first = self.alu(AluOp::Mul, row0, Val::Imm(cols as i64));
        let first = self.alu(AluOp::Add, first, col0);
        let offset = self.alu(AluOp::Mul, first, eb);
        let acc: Vec<Access> = [self.tile_access(arg, false), self.tile_access(r, true)]
            .into_iter()
            .flatten()
            .collect();
        let (Some((src_addr, _)), Some((dst_addr, _))) =
            (self.tile_addr(arg, offset), self.tile_addr(r, Val::Imm(0)))
        else {
            return self.fail(span, "a tile without an address");
        };
        let imm = |x: u64| Val::Imm(x as i64);
        let src = Tile {
            addr: src_addr,
            rows: imm(len_r),
            cols: imm(len_c),
            stride: cols as i64,
        };
        let (dr, dc) = if transpose {
            (len_c, len_r)
        } else {
            (len_r, len_c)
        };
        let dst = Tile {
            addr: dst_addr,
            rows: imm(dr),
            cols: imm(dc),
            stride: dc as i64,
        };
        self.emit(
            Op::Mov2d {
                dtype,
                dst,
                src,
                transpose,
            },
            acc,
        );
    }

    /// The loop counters whose sum is 0 exactly on the first write of accumulator `a`:
    /// `a` is the block argument of a loop whose init is the zero `full` (which emits
    /// nothing: the first `mmad` writes with `acc=0`) or the block argument of an
    /// enclosing loop in turn (subtile-matmul's piece loop inside the K loop). Counters
    /// are iteration numbers, never negative. The loops of `blocks` are left out: each of
    /// their iterations writes its own block of the accumulator ([`Lw::acc_block`]), so
    /// every block is first written where the other counters are 0. `None` for any
    /// other accumulator, which would have no defined first write.
    fn first_write(&self, a: ValueId, blocks: &[OpId]) -> Option<Vec<crate::isa::Reg>> {
        let mut counters = Vec::new();
        let mut v = a;
        // Each step goes out one loop: the nest bounds the walk.
        for _ in 0..=crate::limits::MAX_NESTING_DEPTH {
            let crate::ir::ValueDef::LoopArg { op, index } = self.k.values.get(v)?.def else {
                return None;
            };
            if !blocks.contains(&op) {
                counters.push(*self.loop_counter.get(&op)?);
            }
            let OpKind::For(l) = &self.k.ops.get(op)?.kind else {
                return None;
            };
            let init = *l.inits.get(index as usize)?;
            match self.k.values.get(init)?.def {
                crate::ir::ValueDef::Result { op: z, .. } => {
                    let zero = matches!(
                        self.k.ops.get(z).map(|o| &o.kind),
                        Some(OpKind::Full { value }) if *value == 0.0
                    );
                    return zero.then_some(counters);
                }
                crate::ir::ValueDef::LoopArg { .. } => v = init,
            }
        }
        None
    }

    /// Where the product of an `m x n` block of accumulator `a` goes: the offset in bytes
    /// of the block's first element in the accumulator's column strips (`strips`: strip
    /// `j` holds columns `j*n .. (j+1)*n` of every row, rows `n` apart, so each block is
    /// dense), and the loops that step the block. Each axis of `block` is `:` or a
    /// range of the product's extent starting at the variable of a loop of the
    /// accumulator's nest that steps over the axis block by block, exactly once
    /// (`0 .. extent step len`): then every element is in one block per iteration of
    /// the other loops, so it is first written where their counters are 0. `None` for
    /// any other block, which would have no defined first write.
    fn acc_block(
        &mut self,
        a: ValueId,
        block: &[Index],
        [m, n]: [u64; 2],
    ) -> Option<(Val, Vec<OpId>)> {
        let shape = self.shape(a);
        let ([rows, cols], [ri, ci]) = (shape.as_slice(), block) else {
            return None;
        };
        let (rows, cols) = (*rows, *cols);
        // The loops carrying `a` out to its zero init, by their variables.
        let mut nest = Vec::new();
        let mut v = a;
        while let crate::ir::ValueDef::LoopArg { op, index } = self.k.values.get(v)?.def {
            let OpKind::For(l) = &self.k.ops.get(op)?.kind else {
                return None;
            };
            nest.push((op, l));
            v = *l.inits.get(index as usize)?;
            if nest.len() > crate::limits::MAX_NESTING_DEPTH {
                return None;
            }
        }
        let mut loops = Vec::new();
        let mut starts = Vec::new();
        for (ix, extent, len) in [(ri, rows, m), (ci, cols, n)] {
            match ix {
                Index::Full if extent == len => starts.push(Val::Imm(0)),
                Index::Range {
                    start: crate::ir::IndexExpr::Var(var),
                    len: l,
                    clamped: false,
                } if *l == len => {
                    let &(op, f) = nest.iter().find(|(_, f)| f.var == *var)?;
                    let tiles = f.start == 0
                        && f.step == len as i64
                        && f.end.as_const() == Some(extent as i64);
                    if !tiles || loops.contains(&op) {
                        return None;
                    }
                    loops.push(op);
                    starts.push(self.iexpr(&crate::ir::IndexExpr::Var(*var), 0));
                }
                _ => return None,
            }
        }
        // The accumulator is laid out in strips as wide as the block.
        if self.strips(a) != cols / n.max(1) || !cols.is_multiple_of(n.max(1)) {
            return None;
        }
        let [row0, col0] = <[Val; 2]>::try_from(starts).ok()?;
        // Strip `col0 / n` starts `col0 / n * rows * n` = `col0 * rows` elements in.
        let first = self.alu(AluOp::Mul, col0, Val::Imm(rows as i64));
        let in_strip = self.alu(AluOp::Mul, row0, Val::Imm(n as i64));
        let first = self.alu(AluOp::Add, first, in_strip);
        let offset = self.alu(AluOp::Mul, first, Val::Imm(4));
        Some((offset, loops))
    }

    /// An `mmad`, or an `mmv` when the product has one row (`m = 1`). `acc`: an L0C
    /// accumulator carried by a loop (scope inference put it, the
    /// result and its zero init in one L0C buffer): the first iteration writes the
    /// product (`acc=0`, the counter is 0), later ones add it (`acc` = counter != 0).
    /// `block`: the block of the accumulator the product adds into (empty: all of it).
    fn matmul(
        &mut self,
        lhs: ValueId,
        rhs: ValueId,
        acc_v: Option<ValueId>,
        block: &[Index],
        r: ValueId,
        span: Span,
    ) {
        let (ls, rs) = (self.shape(lhs), self.shape(rhs));
        let ([m, k], [_, n]) = (ls.as_slice(), rs.as_slice()) else {
            return self.fail(span, "a matmul of tiles that are not 2-D");
        };
        let (m, k, n) = (*m, *k, *n);
        let (c_offset, block_loops) = match (acc_v, block.is_empty()) {
            (_, true) => (Val::Imm(0), Vec::new()),
            (Some(a), false) => {
                match self.acc_block(a, block, [m, n]) {
                    Some(found) => found,
                    None => return self.fail(
                        span,
                        "an accumulator block its loops do not step over exactly (a compiler bug)",
                    ),
                }
            }
            (None, false) => return self.fail(span, "an accumulator block without an accumulator"),
        };
        let accumulate = match acc_v {
            None => Val::Imm(0),
            Some(a) => match self.first_write(a, &block_loops) {
                Some(counters) => counters
                    .into_iter()
                    .fold(Val::Imm(0), |sum, c| self.alu(AluOp::Add, Val::Reg(c), sum)),
                None => return self.fail(span, "an accumulator that is not loop-carried"),
            },
        };
        // `mmad` adds into its destination: the accumulator must be the result's buffer.
        if acc_v.is_some_and(|a| self.plan.tile_slab.get(&a) != self.plan.tile_slab.get(&r)) {
            return self.fail(
                span,
                "a matmul accumulator outside its result's buffer (a compiler bug)",
            );
        }
        let acc: Vec<Access> = [
            self.tile_access(lhs, false),
            self.tile_access(rhs, false),
            acc_v.and_then(|a| self.tile_access(a, false)),
            self.tile_access(r, true),
        ]
        .into_iter()
        .flatten()
        .collect();
        let (Some((a, _)), Some((b, _)), Some((c, _))) = (
            self.tile_addr(lhs, Val::Imm(0)),
            self.tile_addr(rhs, Val::Imm(0)),
            self.tile_addr(r, c_offset),
        ) else {
            return self.fail(span, "a matmul operand without an address");
        };
        let imm = |x: u64| Val::Imm(x as i64);
        let dtype = self.dtype(lhs);
        // One row (a decode step's query): the matrix-vector product, which does not pay
        // for 16 rows of the cube.
        let op = if m == 1 {
            Op::Mmv {
                dtype,
                c,
                a,
                b,
                k: imm(k),
                n: imm(n),
                acc: accumulate,
            }
        } else {
            Op::Mmad {
                dtype,
                c,
                a,
                b,
                m: imm(m),
                k: imm(k),
                n: imm(n),
                acc: accumulate,
            }
        };
        self.emit(op, acc);
    }

    fn reduce(&mut self, op: ReduceOp, arg: ValueId, axis: usize, r: ValueId, span: Span) {
        let shape = self.shape(arg);
        let rank = shape.len();
        let view_axis: u8 = if axis + 1 == rank {
            1
        } else if rank == 2 && axis == 0 {
            0
        } else {
            return self.fail(
                span,
                "a reduction over a leading axis of a tile of rank above 2",
            );
        };
        let (rows, cols) = self.valid2d(arg, span);
        let Some(src) = self.tile(arg, rows, cols, span) else {
            return;
        };
        let (orows, ocols) = if view_axis == 1 {
            (rows, Val::Imm(1))
        } else {
            (Val::Imm(1), cols)
        };
        let Some(dst) = self.tile(r, orows, ocols, span) else {
            return;
        };
        let dtype = self.dtype(arg);
        // The checker refuses an i32 mean (it reaches here only from IR text): the
        // vector pipe divides floats only.
        if dtype == DType::I32 && op == ReduceOp::Mean {
            return self.fail(span, "the mean of an i32 tile");
        }
        let red = match op {
            ReduceOp::Sum | ReduceOp::Mean => Ok(RedOp::Sum),
            ReduceOp::Amax => Ok(RedOp::Max),
            ReduceOp::Amin => Ok(RedOp::Min),
            ReduceOp::Argmax => Err(ArgOp::Max),
            ReduceOp::Argmin => Err(ArgOp::Min),
        };
        self.valid_from(r, arg);
        let acc: Vec<Access> = [self.tile_access(arg, false), self.tile_access(r, true)]
            .into_iter()
            .flatten()
            .collect();
        let axis = view_axis;
        self.emit(
            match red {
                Ok(op) => Op::VReduce {
                    op,
                    dtype,
                    axis,
                    dst,
                    src,
                },
                Err(op) => Op::VArgReduce {
                    op,
                    dtype,
                    axis,
                    dst,
                    src,
                },
            },
            acc.clone(),
        );
        if op == ReduceOp::Mean {
            let count = if view_axis == 1 { cols } else { rows };
            // A power-of-two count divides exactly as a multiply by its reciprocal,
            // which the vector pipe does at the plain slope.
            let (by, n) = match count {
                Val::Imm(c) => match exact_reciprocal(c as f64) {
                    Some(r) => (BinOp::Mul, VSrc::Float(r as f32)),
                    None => (BinOp::Div, VSrc::Float(c as f32)),
                },
                Val::Reg(reg) => (BinOp::Div, VSrc::Reg(reg)),
            };
            let write = self.tile_access(r, true);
            let read = self.tile_access(r, false);
            self.emit(
                Op::VBinary {
                    op: by,
                    dtype,
                    dst,
                    a: VSrc::Tile(dst),
                    b: n,
                },
                [read, write].into_iter().flatten().collect(),
            );
        }
    }

    fn update(&mut self, op: UpdateOp, old: ValueId, value: ValueId, r: ValueId, span: Span) {
        let dtype = self.dtype(r);
        let (vr, vc) = self.valid2d(value, span);
        let (rr, rc) = Self::view2d(&self.shape(r));
        let (vsr, vsc) = Self::view2d(&self.shape(value));
        // Only the value's valid lanes are written; broadcast axes cover the whole tile.
        let rows = if vsr == rr { vr } else { Val::Imm(rr as i64) };
        let cols = if vsc == rc { vc } else { Val::Imm(rc as i64) };
        let Some(dst) = self.tile(r, rows, cols, span) else {
            return;
        };
        let b = match self.scalars.get(&value).copied() {
            Some(s) => s,
            None => match self.tile(value, rows, cols, span) {
                Some(t) => VSrc::Tile(t),
                None => return,
            },
        };
        // The masked lanes keep the old value, so every update (`=` included) runs in
        // place on `r`: where out-of-ssa could not give `old` and `r` one buffer (`old`
        // is read later), the whole of `old` is copied into `r` first.
        let same_buffer = self.plan.tile_slab.get(&old) == self.plan.tile_slab.get(&r);
        if !same_buffer {
            let (fr, fc) = Self::view2d(&self.shape(r));
            let (Some(src), Some(full)) = (
                self.tile(old, Val::Imm(fr as i64), Val::Imm(fc as i64), span),
                self.tile(r, Val::Imm(fr as i64), Val::Imm(fc as i64), span),
            ) else {
                return;
            };
            let copy_acc = [self.tile_access(old, false), self.tile_access(r, true)]
                .into_iter()
                .flatten()
                .collect();
            self.emit(
                Op::VCopy {
                    dtype,
                    dst: full,
                    src,
                },
                copy_acc,
            );
        }
        // What the update instruction itself reads: the value, and (but for `=`) the
        // old lanes, now in `r`'s buffer when `old` was copied there.
        let base = if same_buffer { old } else { r };
        let acc: Vec<Access> = [
            self.tile_access(value, false),
            (op != UpdateOp::Set)
                .then(|| self.tile_access(base, false))
                .flatten(),
            self.tile_access(r, true),
        ]
        .into_iter()
        .flatten()
        .collect();
        let bin = match op {
            UpdateOp::Set => {
                let ins = match b {
                    VSrc::Tile(src) => Op::VCopy { dtype, dst, src },
                    other => Op::VDup {
                        dtype,
                        dst,
                        value: other,
                    },
                };
                return self.emit(ins, acc);
            }
            UpdateOp::Add => BinOp::Add,
            UpdateOp::Sub => BinOp::Sub,
            UpdateOp::Mul => BinOp::Mul,
        };
        let Some(a) = self.tile(base, rows, cols, span) else {
            return;
        };
        self.emit(
            Op::VBinary {
                op: bin,
                dtype,
                dst,
                a: VSrc::Tile(a),
                b,
            },
            acc,
        );
    }

    /// A mask instruction into `r` (`vcmp`, `vsel`) over the value sources `values` and,
    /// for `vsel`, the mask tile: each a tile viewed over `r`'s valid lanes, or a scalar.
    fn masked(
        &mut self,
        r: ValueId,
        mask: Option<ValueId>,
        values: [ValueId; 2],
        span: Span,
        make: impl FnOnce(Tile, Option<Tile>, VSrc, VSrc) -> Op,
    ) {
        for &v in mask.iter().chain(&values) {
            self.valid_from(r, v);
        }
        let (rows, cols) = self.valid2d(r, span);
        let Some(dst) = self.tile(r, rows, cols, span) else {
            return;
        };
        let mask_tile = match mask {
            Some(m) => match self.tile(m, rows, cols, span) {
                Some(t) => Some(t),
                None => return,
            },
            None => None,
        };
        let mut src = |v: ValueId| match self.scalars.get(&v) {
            Some(s) => Some(super::scalar_of(s)),
            None => self.tile(v, rows, cols, span).map(VSrc::Tile),
        };
        let (Some(a), Some(b)) = (src(values[0]), src(values[1])) else {
            return;
        };
        let acc = mask
            .iter()
            .chain(&values)
            .map(|&v| self.tile_access(v, false))
            .chain([self.tile_access(r, true)])
            .flatten()
            .collect();
        self.emit(make(dst, mask_tile, a, b), acc);
    }

    /// An elementwise expression over `args` into `r`, intermediates in the op's scratch.
    fn fused(&mut self, id: OpId, r: ValueId, args: &[ValueId], expr: &FusedExpr, span: Span) {
        let dtype = self.dtype(r);
        let shapes: Vec<Vec<u64>> = args.iter().map(|a| self.shape(*a)).collect();
        let layout = fused_layout(expr, &shapes, dtype.bytes(), self.ub_align());
        for &a in args {
            self.valid_from(r, a);
        }
        let (rows, cols) = self.valid2d(r, span);
        let scratch = self.plan.scratch_slab.get(&id).copied();
        let mut nodes = layout.nodes.into_iter();
        let ctx = FusedCtx {
            r,
            args,
            rows,
            cols,
            dtype,
            scratch,
            span,
        };
        self.eval(expr, &mut nodes, &ctx, 0);
    }

    fn eval(
        &mut self,
        e: &FusedExpr,
        nodes: &mut std::vec::IntoIter<(Place, Vec<u64>)>,
        cx: &FusedCtx,
        depth: usize,
    ) -> Operand {
        if depth > crate::limits::MAX_NESTING_DEPTH {
            self.fail(cx.span, "an expression this deep");
            return Operand::Dest;
        }
        let int = cx.dtype == DType::I32;
        match e {
            FusedExpr::Arg(i) => {
                let Some(&v) = cx.args.get(*i as usize) else {
                    return Operand::Dest;
                };
                match self.scalars.get(&v) {
                    Some(s) => Operand::Scalar(super::scalar_of(s)),
                    None => Operand::Value(v),
                }
            }
            FusedExpr::Const(c) => Operand::Scalar(if int {
                VSrc::Int(*c as i64)
            } else {
                VSrc::Float(cx.dtype.literal(*c))
            }),
            FusedExpr::Unary(op, a) => {
                let x = self.eval(a, nodes, cx, depth + 1);
                let (place, shape) = nodes.next().unwrap_or((Place::Dest, Vec::new()));
                let dst = self.place_tile(cx, place, &shape);
                let acc = self.fused_accesses(cx, &[&x], place, &shape);
                let src = match self.operand(cx, x) {
                    VSrc::Tile(t) => t,
                    _ => {
                        self.fail(cx.span, "a unary op on a scalar");
                        return Operand::Dest;
                    }
                };
                if let Some(dst) = dst {
                    let ins = Op::VUnary {
                        op: unop(*op),
                        dtype: cx.dtype,
                        dst,
                        src,
                    };
                    self.emit(ins, acc);
                }
                to_operand(place, shape)
            }
            FusedExpr::Binary(op, a, b) => {
                let x = self.eval(a, nodes, cx, depth + 1);
                let y = self.eval(b, nodes, cx, depth + 1);
                let (place, shape) = nodes.next().unwrap_or((Place::Dest, Vec::new()));
                let dst = self.place_tile(cx, place, &shape);
                let acc = self.fused_accesses(cx, &[&x, &y], place, &shape);
                let (a, b) = (self.operand(cx, x), self.operand(cx, y));
                let Some(bin) = binop(*op, cx.dtype) else {
                    self.fail(cx.span, format!("`{}` on {} lanes", op.name(), cx.dtype));
                    return Operand::Dest;
                };
                if let Some(dst) = dst {
                    let ins = Op::VBinary {
                        op: bin,
                        dtype: cx.dtype,
                        dst,
                        a,
                        b,
                    };
                    self.emit(ins, acc);
                }
                to_operand(place, shape)
            }
        }
    }

    /// What one instruction of a fused expression reads (its operands) and writes (its
    /// place: the destination or a byte range of the scratch).
    fn fused_accesses(
        &self,
        cx: &FusedCtx,
        reads: &[&Operand],
        place: Place,
        shape: &[u64],
    ) -> Vec<Access> {
        let scratch = |off: u64, shape: &[u64], write: bool| {
            let bytes = shape.iter().product::<u64>().max(1) * cx.dtype.bytes();
            cx.scratch.map(|s| Access {
                range: Some((off, off + bytes)),
                ..self.access(s, bytes, write)
            })
        };
        let mut out: Vec<Access> = reads
            .iter()
            .filter_map(|o| match o {
                Operand::Value(v) => self.tile_access(*v, false),
                Operand::Dest => self.tile_access(cx.r, false),
                Operand::Scratch { offset, shape } => scratch(*offset, shape, false),
                Operand::Scalar(_) => None,
            })
            .collect();
        out.extend(match place {
            Place::Dest => self.tile_access(cx.r, true),
            Place::Scratch(off) => scratch(off, shape, true),
        });
        out
    }

    fn place_tile(&mut self, cx: &FusedCtx, place: Place, shape: &[u64]) -> Option<Tile> {
        match place {
            Place::Dest => self.tile(cx.r, cx.rows, cx.cols, cx.span),
            Place::Scratch(off) => self.scratch_tile(cx, off, shape),
        }
    }

    fn scratch_tile(&mut self, cx: &FusedCtx, off: u64, shape: &[u64]) -> Option<Tile> {
        let s = cx.scratch?;
        let slab = self.plan.slabs.get(s)?;
        let (space, at) = (slab.space, slab.addr + off);
        let (r, c) = Self::view2d(shape);
        let addr = self.addr(Region::Buf(space), Val::Imm(0), at as i64);
        Some(Tile {
            addr,
            rows: if r == 1 { Val::Imm(1) } else { cx.rows },
            cols: if c == 1 { Val::Imm(1) } else { cx.cols },
            stride: c as i64,
        })
    }

    fn operand(&mut self, cx: &FusedCtx, x: Operand) -> VSrc {
        let tile = match x {
            Operand::Scalar(s) => return s,
            Operand::Value(v) => self.tile(v, cx.rows, cx.cols, cx.span),
            Operand::Dest => self.tile(cx.r, cx.rows, cx.cols, cx.span),
            Operand::Scratch { offset, shape } => self.scratch_tile(cx, offset, &shape),
        };
        match tile {
            Some(t) => VSrc::Tile(t),
            None => VSrc::Float(0.0),
        }
    }
}

struct FusedCtx<'a> {
    r: ValueId,
    args: &'a [ValueId],
    rows: Val,
    cols: Val,
    dtype: DType,
    scratch: Option<usize>,
    span: Span,
}

fn to_operand(place: Place, shape: Vec<u64>) -> Operand {
    match place {
        Place::Dest => Operand::Dest,
        Place::Scratch(offset) => Operand::Scratch { offset, shape },
    }
}
