//! The reference interpreter: executes a checked kernel directly on host tensors. It is
//! the oracle the compiled program's functional simulation is compared against, so it
//! follows the semantics documented in `front::hir` and `docs/language.md` as literally
//! as it can and optimises nothing beyond avoiding per-element dispatch.

mod index;
mod mask;
mod ops;
mod slots;
mod value;

pub use value::{Data, Tile};

use crate::diag::{Diagnostic, Span};
use crate::front::hir::{
    BinaryOp, Expr, ExprKind, Index, IndexExpr, Kernel, LoopEnd, Operand, Stmt, StmtKind, UpdateOp,
};
use crate::limits::MAX_LOOP_ITERATIONS;
use crate::tensor::Tensor;
use crate::types::DType;
use fixedbitset::FixedBitSet;
use index::{eval_index, AxisSel, Region};
use value::internal;

/// Expressions and statements nested deeper than the front end's limit are refused
/// rather than risking the stack (each level costs a few KiB in a debug build).
pub use crate::limits::MAX_NESTING_DEPTH as MAX_EXPR_DEPTH;

/// What a kernel computed, counted as the reference ran it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// The multiply-accumulates of its products (`@`) over their valid extents, by the
    /// operands' dtype, in the order the dtypes first appeared.
    pub macs: Vec<(DType, u64)>,
    /// Per parameter, the distinct elements loaded from it and stored to it: what any
    /// program of the kernel must move at least (an `if`'s element reads left out).
    pub read: Vec<u64>,
    pub written: Vec<u64>,
}

/// Runs `kernel` on `tensors` (indexed by `ParamId`), writing results into its `out`
/// parameters. The tensors are first checked against the parameters' types.
pub fn run(kernel: &Kernel, tensors: &mut [Tensor]) -> Result<(), Diagnostic> {
    run_counting(kernel, tensors).map(|_| ())
}

/// [`run`], and what the kernel computed on the way.
pub fn run_counting(kernel: &Kernel, tensors: &mut [Tensor]) -> Result<Counts, Diagnostic> {
    validate(kernel, tensors)?;
    let (slot_base, slot_count) = slots::layout(kernel);
    let mut m = Machine {
        kernel,
        params: tensors.iter().map(decode).collect(),
        locals: vec![None; kernel.locals.len()],
        slots: vec![None; slot_count],
        slot_base,
        vars: vec![0; kernel.loops.len()],
        iterations: 0,
        counts: Counts::default(),
        touched: tensors
            .iter()
            .map(|t| {
                let n = t.shape.iter().product::<u64>() as usize;
                (FixedBitSet::with_capacity(n), FixedBitSet::with_capacity(n))
            })
            .collect(),
    };
    m.block(&kernel.body, 0)?;
    let (read, written) = m
        .touched
        .iter()
        .map(|(r, w)| (r.count_ones(..) as u64, w.count_ones(..) as u64))
        .unzip();
    m.counts.read = read;
    m.counts.written = written;
    for (param, (tile, tensor)) in kernel
        .params
        .iter()
        .zip(m.params.iter().zip(tensors.iter_mut()))
    {
        if param.is_out {
            *tensor = encode(tile);
        }
    }
    Ok(m.counts)
}

fn validate(kernel: &Kernel, tensors: &[Tensor]) -> Result<(), Diagnostic> {
    if tensors.len() != kernel.params.len() {
        return Err(Diagnostic::error(
            format!(
                "kernel `{}` takes {} tensors, {} were given",
                kernel.name,
                kernel.params.len(),
                tensors.len()
            ),
            kernel.span,
        ));
    }
    for (p, t) in kernel.params.iter().zip(tensors) {
        let bytes = t
            .shape
            .iter()
            .try_fold(t.dtype.bytes(), |acc, &d| acc.checked_mul(d));
        if t.dtype != p.ty.dtype || t.shape != p.ty.shape || bytes != Some(t.data.len() as u64) {
            return Err(Diagnostic::error(
                format!(
                    "parameter `{}` expects {}, the tensor given is {}[{}] with {} bytes of data",
                    p.name,
                    p.ty,
                    t.dtype,
                    t.shape
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    t.data.len()
                ),
                p.span,
            ));
        }
    }
    Ok(())
}

/// Tensor bytes -> widened tile. `validate` has checked the byte length.
fn decode(t: &Tensor) -> Tile {
    let shape: Vec<usize> = t.shape.iter().map(|&d| d as usize).collect();
    let data = match t.dtype {
        DType::I32 => Data::I(
            t.data
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        DType::Mask => Data::I(t.data.iter().map(|&b| i32::from(b != 0)).collect()),
        DType::I8 => Data::I(t.data.iter().map(|&b| i32::from(b as i8)).collect()),
        DType::U8 => Data::I(t.data.iter().map(|&b| i32::from(b)).collect()),
        DType::F32 => Data::F(
            t.data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        DType::F16 => Data::F(
            t.data
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
        ),
        DType::BF16 => Data::F(
            t.data
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
        ),
    };
    Tile {
        dtype: t.dtype,
        valid: shape.clone(),
        shape,
        data,
    }
}

fn encode(tile: &Tile) -> Tensor {
    let shape = tile.shape.iter().map(|&d| d as u64).collect();
    let data = match (&tile.data, tile.dtype) {
        (Data::I(v), DType::Mask) => v.iter().map(|&x| u8::from(x != 0)).collect(),
        (Data::I(v), DType::I8 | DType::U8) => v.iter().map(|&x| x as u8).collect(),
        (Data::I(v), _) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        (Data::F(v), DType::F16) => v
            .iter()
            .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
            .collect(),
        (Data::F(v), DType::BF16) => v
            .iter()
            .flat_map(|&x| half::bf16::from_f32(x).to_le_bytes())
            .collect(),
        (Data::F(v), _) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    };
    Tensor {
        dtype: tile.dtype,
        shape,
        data,
    }
}

struct Machine<'k> {
    kernel: &'k Kernel,
    /// Parameter tensors, widened for the duration of the run.
    params: Vec<Tile>,
    locals: Vec<Option<Tile>>,
    /// The slots of every `buffers` tile, those of local `l` from `slot_base[l]`.
    slots: Vec<Option<Tile>>,
    slot_base: Vec<usize>,
    /// Current value of each loop's induction variable, by `LoopId`.
    vars: Vec<i64>,
    iterations: u64,
    counts: Counts,
    /// Per parameter, the elements loaded and stored so far (row-major positions).
    touched: Vec<(FixedBitSet, FixedBitSet)>,
}

impl Machine<'_> {
    /// Counts `a @ b`'s multiply-accumulates over the valid extents (a 2-D product;
    /// `ops::matmul` reports any other shape).
    fn count_product(&mut self, a: &Tile, b: &Tile) {
        let (&[m, k], &[k2, n]) = (a.valid.as_slice(), b.valid.as_slice()) else {
            return;
        };
        let macs = (m as u64) * (k.min(k2) as u64) * (n as u64);
        match self.counts.macs.iter_mut().find(|(t, _)| *t == a.dtype) {
            Some((_, c)) => *c = c.saturating_add(macs),
            None => self.counts.macs.push((a.dtype, macs)),
        }
    }

    fn block(&mut self, stmts: &[Stmt], depth: usize) -> Result<(), Diagnostic> {
        stmts.iter().try_for_each(|s| self.stmt(s, depth))
    }

    fn stmt(&mut self, stmt: &Stmt, depth: usize) -> Result<(), Diagnostic> {
        if depth > MAX_EXPR_DEPTH {
            return Err(Diagnostic::error("loops nested too deeply", stmt.span));
        }
        match &stmt.kind {
            StmtKind::Let { local, value } => {
                let tile = self.expr(value, 0)?;
                let slot = self
                    .locals
                    .get_mut(local.0 as usize)
                    .ok_or_else(|| internal("unknown local", stmt.span))?;
                *slot = Some(tile);
            }
            StmtKind::Buffers { local } => self.declare_slots(*local, stmt.span)?,
            StmtKind::SlotWrite { local, slot, value } => {
                let value = self.expr(value, 0)?;
                self.write_slot(*local, slot, value, stmt.span)?;
            }
            StmtKind::Update { local, op, value } => {
                let value = self.expr(value, 0)?;
                let cur = self
                    .locals
                    .get_mut(local.0 as usize)
                    .and_then(Option::as_mut)
                    .ok_or_else(|| internal("update of a tile not yet defined", stmt.span))?;
                let value = value.broadcast_to(&cur.shape, stmt.span)?;
                let op = match op {
                    UpdateOp::Set => None,
                    UpdateOp::Add => Some(BinaryOp::Add),
                    UpdateOp::Sub => Some(BinaryOp::Sub),
                    UpdateOp::Mul => Some(BinaryOp::Mul),
                };
                ops::update_in_place(cur, &value, op, stmt.span)?;
            }
            StmtKind::Store {
                param,
                index,
                value,
                accumulate,
            } => {
                let value = self.expr(value, 0)?;
                let p = param.0 as usize;
                let (region, merged) = self.gather_region(p, index, stmt.span, 0)?;
                // numpy's region drops the single positions' axes; the box keeps them
                // with extent 1 (the same elements in the same order). A value of the
                // box's elements in order is stored as it is, as the compiler's store
                // does; any other broadcasts to numpy's region.
                let boxed = region.shape();
                let value = if ops::same_elements(&value.shape, &boxed) {
                    value
                } else {
                    let dims: Vec<u64> = boxed.iter().map(|&d| d as u64).collect();
                    let numpy: Vec<usize> = crate::front::hir::numpy_shape(index, &dims)
                        .into_iter()
                        .map(|d| d as usize)
                        .collect();
                    value.broadcast_to(&numpy, stmt.span)?
                };
                let value = ops::reshape(value, boxed, stmt.span)?;
                let valid: Vec<usize> = region
                    .valid()
                    .iter()
                    .zip(&value.valid)
                    .map(|(&a, &b)| a.min(b))
                    .collect();
                let target = self
                    .params
                    .get_mut(p)
                    .ok_or_else(|| internal("unknown parameter", stmt.span))?;
                if target.dtype != value.dtype {
                    return Err(internal("store of a value of another dtype", stmt.span));
                }
                let tensor_shape = merged.unwrap_or_else(|| target.shape.clone());
                let dtype = target.dtype;
                if let Some((_, written)) = self.touched.get_mut(p) {
                    region.for_each_run(&tensor_shape, &valid, |_, g, n| {
                        written.insert_range(g..g + n)
                    });
                }
                match (&mut target.data, &value.data) {
                    // A scatter that adds: rows in order, each sum rounded to the dtype
                    // (the machine's atomic add does the same, row after row).
                    (Data::F(dst), Data::F(src)) if *accumulate => {
                        region.for_each_run(&tensor_shape, &valid, |t, g, n| {
                            for i in 0..n {
                                dst[g + i] = value::round_to(dtype, dst[g + i] + src[t + i]);
                            }
                        })
                    }
                    (Data::I(dst), Data::I(src)) if *accumulate => {
                        region.for_each_run(&tensor_shape, &valid, |t, g, n| {
                            for i in 0..n {
                                dst[g + i] = dst[g + i].wrapping_add(src[t + i]);
                            }
                        })
                    }
                    (Data::F(dst), Data::F(src)) => {
                        region.for_each_run(&tensor_shape, &valid, |t, g, n| {
                            dst[g..g + n].copy_from_slice(&src[t..t + n]);
                        })
                    }
                    (Data::I(dst), Data::I(src)) => {
                        region.for_each_run(&tensor_shape, &valid, |t, g, n| {
                            dst[g..g + n].copy_from_slice(&src[t..t + n]);
                        })
                    }
                    _ => return Err(internal("store of a value of another dtype", stmt.span)),
                }
            }
            StmtKind::For { id, body } => {
                let l = self
                    .kernel
                    .loops
                    .get(id.0 as usize)
                    .ok_or_else(|| internal("unknown loop", stmt.span))?;
                if l.step <= 0 {
                    return Err(internal("loop step is not positive", l.span));
                }
                let end = match &l.end {
                    LoopEnd::Const(end) => *end,
                    LoopEnd::Affine { expr, .. } => eval_index(expr, &self.vars, 0)?,
                    LoopEnd::Guard(_) => {
                        return Err(internal("a loop of the checked kernel has a guard", l.span))
                    }
                };
                let mut v = l.start;
                while v < end {
                    self.iterations += 1;
                    if self.iterations > MAX_LOOP_ITERATIONS {
                        return Err(Diagnostic::error(
                            format!(
                                "the kernel runs more than {MAX_LOOP_ITERATIONS} loop iterations"
                            ),
                            l.span,
                        ));
                    }
                    self.vars[id.0 as usize] = v;
                    self.block(body, depth + 1)?;
                    v = v.saturating_add(l.step);
                }
            }
            StmtKind::If {
                cond,
                then,
                els,
                joins,
                ..
            } => {
                let mut failed = None;
                let (vars, params) = (&self.vars, &self.params);
                let mut value = |operand: &Operand| {
                    let value = match operand {
                        Operand::Index(e) => eval_index(e, vars, 0),
                        Operand::Element { param, index } => {
                            element(params, *param as usize, index, vars, stmt.span)
                        }
                    };
                    match value {
                        Ok(v) => Some(v),
                        Err(d) => {
                            failed.get_or_insert(d);
                            None
                        }
                    }
                };
                let taken = cond.eval(&mut value, &|op, a, b| mask::compares(op, a, b) != 0);
                let taken = match (taken, failed) {
                    (Some(t), _) => t,
                    (None, Some(d)) => return Err(d),
                    (None, None) => return Err(internal("a condition has no value", stmt.span)),
                };
                self.block(if taken { then } else { els }, depth + 1)?;
                for j in joins {
                    let from = if taken { j.then } else { j.els };
                    let value = self
                        .locals
                        .get(from.0 as usize)
                        .cloned()
                        .flatten()
                        .ok_or_else(|| {
                            internal("a branch did not define a joined name", stmt.span)
                        })?;
                    let slot = self
                        .locals
                        .get_mut(j.local.0 as usize)
                        .ok_or_else(|| internal("unknown local", stmt.span))?;
                    *slot = Some(value);
                }
            }
        }
        Ok(())
    }

    /// Resolves the region `param[index]` touches, validating indirect rows.
    fn region(
        &mut self,
        p: usize,
        index: &[Index],
        span: Span,
        depth: usize,
    ) -> Result<Region, Diagnostic> {
        let (name, tensor_shape) = match (self.kernel.params.get(p), self.params.get(p)) {
            (Some(param), Some(tile)) => (param.name.clone(), tile.shape.clone()),
            _ => return Err(internal("unknown parameter", span)),
        };
        if index.len() != tensor_shape.len() {
            return Err(internal(
                format!(
                    "{} indices for rank-{} `{name}`",
                    index.len(),
                    tensor_shape.len()
                ),
                span,
            ));
        }
        let mut sels = Vec::with_capacity(index.len());
        for (axis, (ix, &extent)) in index.iter().zip(&tensor_shape).enumerate() {
            let sel = match ix {
                Index::Full => AxisSel::Range {
                    start: 0,
                    len: extent,
                    valid: extent,
                },
                Index::Range {
                    start,
                    len,
                    clamped,
                } => {
                    let s = eval_index(start, &self.vars, 0)?;
                    AxisSel::range(s, *len, *clamped, extent, start.span)?
                }
                Index::Single(e) => {
                    AxisSel::range(eval_index(e, &self.vars, 0)?, 1, false, extent, e.span)?
                }
                Index::Strided { start, len, step } => {
                    // Every `step`-th position: the checker proved them inside.
                    let s = eval_index(start, &self.vars, 0)?;
                    let rows: Option<Vec<usize>> = (0..*len)
                        .map(|k| {
                            let at = s.checked_add(i64::try_from(k * step).ok()?)?;
                            usize::try_from(at).ok().filter(|&p| p < extent)
                        })
                        .collect();
                    let rows = rows
                        .ok_or_else(|| internal("a strided range leaves its axis", start.span))?;
                    AxisSel::Rows {
                        len: rows.len(),
                        rows,
                    }
                }
                // A gather picks positions along any one axis (the checker allows one).
                Index::Indirect(e) => self.indirect_rows(e, &name, axis, extent, depth)?,
            };
            sels.push(sel);
        }
        Ok(Region { sels })
    }

    /// `region`, except that index tiles on several adjacent axes pick elements
    /// together, as numpy's `x[i, j]` does (element `k` at `x[i[k], j[k]]`): those axes
    /// become one, of the tensor's shape with them merged (returned), whose position
    /// `k` is the row-major combination of the positions the tiles name. Each index is
    /// checked against its own axis.
    fn gather_region(
        &mut self,
        p: usize,
        index: &[Index],
        span: Span,
        depth: usize,
    ) -> Result<(Region, Option<Vec<usize>>), Diagnostic> {
        let gathered: Vec<usize> = (0..index.len())
            .filter(|&a| matches!(index[a], Index::Indirect(_)))
            .collect();
        if gathered.len() < 2 {
            return Ok((self.region(p, index, span, depth)?, None));
        }
        let (name, shape) = match (self.kernel.params.get(p), self.params.get(p)) {
            (Some(param), Some(tile)) => (param.name.clone(), tile.shape.clone()),
            _ => return Err(internal("unknown parameter", span)),
        };
        // Every other axis as the plain access selects it.
        let mut plain = index.to_vec();
        for &a in &gathered {
            plain[a] = Index::Full;
        }
        let mut sels = self.region(p, &plain, span, depth)?.sels;
        let mut combined: Option<(Vec<usize>, usize)> = None;
        for &a in &gathered {
            let Index::Indirect(e) = &index[a] else {
                continue;
            };
            let AxisSel::Rows { rows, len } = self.indirect_rows(e, &name, a, shape[a], depth)?
            else {
                return Err(internal("an index tile that selects no rows", span));
            };
            combined = Some(match combined {
                None => (rows, len),
                Some((acc, n)) => (
                    acc.iter()
                        .zip(&rows)
                        .map(|(&x, &y)| x * shape[a] + y)
                        .collect(),
                    n.min(len),
                ),
            });
        }
        let (rows, len) = combined.ok_or_else(|| internal("no index tile", span))?;
        let (first, last) = (gathered[0], gathered[gathered.len() - 1]);
        let merged: usize = shape[first..=last].iter().product();
        sels.splice(first..=last, [AxisSel::Rows { rows, len }]);
        let mut merged_shape = shape[..first].to_vec();
        merged_shape.push(merged);
        merged_shape.extend_from_slice(&shape[last + 1..]);
        Ok((Region { sels }, Some(merged_shape)))
    }

    fn indirect_rows(
        &mut self,
        e: &Expr,
        tensor: &str,
        axis: usize,
        extent: usize,
        depth: usize,
    ) -> Result<AxisSel, Diagnostic> {
        let idx = self.expr(e, depth + 1)?;
        let values = idx.ints(e.span)?;
        let (len, valid) = match (idx.shape.as_slice(), idx.valid.as_slice()) {
            (&[n], &[v]) => (n, v),
            (&[n, 1], &[v, w]) => (n, if w == 0 { 0 } else { v }),
            _ => {
                return Err(internal(
                    format!("indirect index of type {}", idx.type_string()),
                    e.span,
                ))
            }
        };
        let mut rows = Vec::with_capacity(valid);
        for &v in &values[..valid] {
            match usize::try_from(v) {
                Ok(r) if r < extent => rows.push(r),
                _ => {
                    return Err(Diagnostic::error(
                        format!("index {v} is out of range for `{tensor}`, whose axis {axis} has extent {extent}"),
                        e.span,
                    ))
                }
            }
        }
        Ok(AxisSel::Rows { rows, len })
    }

    /// Kept small: it is the recursive part of evaluation, and its stack frame bounds
    /// how deep an expression can nest (the leaves live in `leaf`).
    fn expr(&mut self, e: &Expr, depth: usize) -> Result<Tile, Diagnostic> {
        if depth > MAX_EXPR_DEPTH {
            return Err(Diagnostic::error("expression nested too deeply", e.span));
        }
        let d = depth + 1;
        let out = match &e.kind {
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg, d)?;
                ops::unary(*op, a, &e.ty, e.span)?
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs, d)?;
                let b = self.expr(rhs, d)?;
                ops::binary(*op, &a, &b, &e.ty, e.span)?
            }
            ExprKind::Reduce { op, arg, axis } => {
                let a = self.expr(arg, d)?;
                ops::reduce(*op, &a, *axis, &e.ty, e.span)?
            }
            ExprKind::MatMul { lhs, rhs } => {
                let a = self.expr(lhs, d)?;
                let b = self.expr(rhs, d)?;
                self.count_product(&a, &b);
                ops::matmul(&a, &b, &e.ty, e.span)?
            }
            ExprKind::Transpose(arg) => ops::transpose(&self.expr(arg, d)?, e.span)?,
            ExprKind::Slice { arg, index } => {
                let a = self.expr(arg, d)?;
                let mut window = Vec::with_capacity(index.len());
                for (ix, &extent) in index.iter().zip(&a.shape) {
                    let (start, len, step) = match ix {
                        Index::Full => {
                            window.push((0, extent, 1));
                            continue;
                        }
                        Index::Range { start, len, .. } => (start, len, 1),
                        Index::Strided { start, len, step } => (start, len, *step as usize),
                        _ => return Err(internal("a slice axis that is not a range", e.span)),
                    };
                    let s = eval_index(start, &self.vars, 0)?;
                    let s = usize::try_from(s)
                        .map_err(|_| internal("a slice starts before its tile", e.span))?;
                    window.push((s, *len as usize, step));
                }
                ops::slice(&a, &window, e.span)?
            }
            ExprKind::Cast(arg) => ops::cast(self.expr(arg, d)?, e.ty.dtype),
            ExprKind::Reshape(arg) => {
                let shape: Vec<usize> = e.ty.shape.iter().map(|&x| x as usize).collect();
                ops::reshape(self.expr(arg, d)?, shape, e.span)?
            }
            ExprKind::Compare { .. } | ExprKind::Select { .. } | ExprKind::Iota { .. } => {
                self.mask_expr(e, d)?
            }
            _ => self.leaf(e, depth)?,
        };
        out.expect_type(&e.ty, e.span)?;
        Ok(out)
    }

    /// Comparisons, `where` and `iota`, out of line to keep `expr`'s frame small.
    #[inline(never)]
    fn mask_expr(&mut self, e: &Expr, d: usize) -> Result<Tile, Diagnostic> {
        match &e.kind {
            ExprKind::Compare { op, lhs, rhs } => {
                let a = self.expr(lhs, d)?;
                let b = self.expr(rhs, d)?;
                mask::compare(*op, &a, &b, &e.ty, e.span)
            }
            ExprKind::Select {
                mask: m,
                on_true,
                on_false,
            } => {
                let m = self.expr(m, d)?;
                let a = self.expr(on_true, d)?;
                let b = self.expr(on_false, d)?;
                mask::select(&m, &a, &b, &e.ty, e.span)
            }
            ExprKind::Iota { axis } => mask::iota(*axis, &e.ty, e.span),
            _ => Err(internal("not a mask expression", e.span)),
        }
    }

    #[inline(never)]
    fn leaf(&mut self, e: &Expr, depth: usize) -> Result<Tile, Diagnostic> {
        let shape = || e.ty.shape.iter().map(|&x| x as usize).collect::<Vec<_>>();
        Ok(match &e.kind {
            ExprKind::Local(id) => self
                .locals
                .get(id.0 as usize)
                .and_then(Option::as_ref)
                .cloned()
                .ok_or_else(|| internal("use of a tile not yet defined", e.span))?,
            ExprKind::Scalar(v) | ExprKind::Full { value: v } => {
                Tile::full(e.ty.dtype, shape(), *v)
            }
            ExprKind::IndexValue(ix) => {
                let v = eval_index(ix, &self.vars, 0)?;
                let v = i32::try_from(v).map_err(|_| {
                    Diagnostic::error(format!("index value {v} does not fit in i32"), ix.span)
                })?;
                let mut t = Tile::full(e.ty.dtype, shape(), 0.0);
                t.data = match e.ty.dtype {
                    DType::I32 => Data::I(vec![v; t.len()]),
                    dtype => Data::F(vec![value::round_to(dtype, v as f32); t.len()]),
                };
                t
            }
            ExprKind::Load {
                param,
                index,
                pad: None,
            } => self.load(param.0 as usize, index, e, depth)?,
            ExprKind::Load {
                param,
                index,
                pad: Some(pad),
            } => self.padded_load(param.0 as usize, index, *pad, e)?,
            ExprKind::SlotRead { local, slot } => self.read_slot(*local, slot, e.span)?,
            _ => return Err(internal("not a leaf expression", e.span)),
        })
    }

    /// `load x[a .. b, ..., c .. d] pad v`: positions of a range outside the tensor hold
    /// `v` (Triton's `other=`), on any axis; a tail's range (`clamped`) masks the
    /// positions past the extent instead, as in any load. Each element of the box is
    /// read where it lies inside the tensor.
    fn padded_load(
        &mut self,
        p: usize,
        index: &[Index],
        pad: f64,
        e: &Expr,
    ) -> Result<Tile, Diagnostic> {
        let Some(t) = self.params.get(p) else {
            return Err(internal("unknown parameter", e.span));
        };
        let shape = t.shape.clone();
        if index.len() != shape.len() {
            return Err(internal("a padded load with the wrong rank", e.span));
        }
        // Per axis: the first position, the box's extent and its valid extent.
        let mut axes: Vec<(i64, usize, usize)> = Vec::with_capacity(index.len());
        for (ix, &extent) in index.iter().zip(&shape) {
            axes.push(match ix {
                Index::Full => (0, extent, extent),
                Index::Range {
                    start,
                    len,
                    clamped,
                } => {
                    let s = eval_index(start, &self.vars, 0)?;
                    let len = *len as usize;
                    let valid = if *clamped {
                        usize::try_from((extent as i64).saturating_sub(s).max(0))
                            .unwrap_or(0)
                            .min(len)
                    } else {
                        len
                    };
                    (s, len, valid)
                }
                Index::Single(e) => (eval_index(e, &self.vars, 0)?, 1, 1),
                Index::Indirect(_) | Index::Strided { .. } => {
                    return Err(internal("a padded gather or strided range", e.span))
                }
            });
        }
        let boxed: Vec<usize> = axes.iter().map(|a| a.1).collect();
        let mut out = Tile::full(e.ty.dtype, boxed.clone(), pad);
        out.valid = axes.iter().map(|a| a.2).collect();
        let strides = value::contiguous_strides(&shape);
        let count: usize = boxed.iter().product();
        let mut at = vec![0usize; boxed.len()];
        for flat in 0..count {
            // The box position `at` (row-major, the last axis fastest) in the tensor.
            let mut source = Some(0usize);
            for (a, (&i, &(s, _, valid))) in at.iter().zip(&axes).enumerate() {
                let pos = s + i as i64;
                source = match (source, usize::try_from(pos)) {
                    (Some(acc), Ok(pos)) if pos < shape[a] && i < valid => {
                        Some(acc + pos * strides[a])
                    }
                    _ => None,
                };
            }
            if let Some(g) = source {
                if let Some((read, _)) = self.touched.get_mut(p) {
                    read.insert(g);
                }
                match (&mut out.data, &t.data) {
                    (Data::F(dst), Data::F(src)) => dst[flat] = src[g],
                    (Data::I(dst), Data::I(src)) => dst[flat] = src[g],
                    _ => return Err(internal("load into a tile of another dtype", e.span)),
                }
            }
            for a in (0..at.len()).rev() {
                at[a] += 1;
                if at[a] < boxed[a] {
                    break;
                }
                at[a] = 0;
            }
        }
        out.zero_masked();
        let shape: Vec<usize> = e.ty.shape.iter().map(|&d| d as usize).collect();
        ops::reshape(out, shape, e.span)
    }

    fn load(
        &mut self,
        p: usize,
        index: &[Index],
        e: &Expr,
        depth: usize,
    ) -> Result<Tile, Diagnostic> {
        let (region, merged) = self.gather_region(p, index, e.span, depth)?;
        let (src, tensor_shape) = match self.params.get(p) {
            Some(t) => (&t.data, merged.unwrap_or_else(|| t.shape.clone())),
            None => return Err(internal("unknown parameter", e.span)),
        };
        let tensor_shape = &tensor_shape;
        let mut out = Tile::zeros(e.ty.dtype, region.shape());
        out.valid = region.valid();
        let valid = out.valid.clone();
        if let Some((read, _)) = self.touched.get_mut(p) {
            region.for_each_run(tensor_shape, &valid, |_, g, n| read.insert_range(g..g + n));
        }
        match (&mut out.data, src) {
            (Data::F(dst), Data::F(src)) => region.for_each_run(tensor_shape, &valid, |t, g, n| {
                dst[t..t + n].copy_from_slice(&src[g..g + n]);
            }),
            (Data::I(dst), Data::I(src)) => region.for_each_run(tensor_shape, &valid, |t, g, n| {
                dst[t..t + n].copy_from_slice(&src[g..g + n]);
            }),
            _ => return Err(internal("load into a tile of another dtype", e.span)),
        }
        // The box keeps a single position's axis; the tile drops it (numpy).
        let shape: Vec<usize> = e.ty.shape.iter().map(|&d| d as usize).collect();
        ops::reshape(out, shape, e.span)
    }
}

/// One element of an `i32` tensor at the given position (a condition's `load t[i, j]`).
fn element(
    params: &[Tile],
    param: usize,
    index: &[IndexExpr],
    vars: &[i64],
    span: Span,
) -> Result<i64, Diagnostic> {
    let t = params
        .get(param)
        .ok_or_else(|| internal("unknown parameter", span))?;
    if index.len() != t.shape.len() {
        return Err(internal("an element read with the wrong rank", span));
    }
    let mut flat = 0usize;
    for (e, &extent) in index.iter().zip(&t.shape) {
        let v = eval_index(e, vars, 0)?;
        let v = usize::try_from(v)
            .ok()
            .filter(|&v| v < extent)
            .ok_or_else(|| internal("an element read outside its tensor", span))?;
        flat = flat * extent + v;
    }
    match &t.data {
        Data::I(d) => d
            .get(flat)
            .map(|&x| i64::from(x))
            .ok_or_else(|| internal("an element read outside its tensor", span)),
        Data::F(_) => Err(internal("a condition read a float tensor", span)),
    }
}
