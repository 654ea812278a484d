//! The IR verifier: checks the invariants every pass must keep and returns every
//! violation as a value. Checked: handles in range; each op placed once and each value
//! defined once where its `def` says; definitions dominate uses; loop variables used
//! only inside their loop; every op's result type follows its typing rule; loop-carried
//! arity and types; and, once memory spaces are set, that they are consistent.

use super::typing;
use super::{
    Block, DenseSet, ForOp, Index, IndexExpr, Kernel, OpId, OpKind, OpSet, ValueDef, ValueId,
    ValueSet, VarSet,
};
use crate::diag::{Location, Span, VerifierError, VerifierErrors};
use crate::types::{DType, MemSpace, TileType};

/// Loop nesting deeper than this is reported rather than walked (the walk recurses).
const MAX_DEPTH: usize = 256;

pub fn verify(kernel: &Kernel) -> Result<(), VerifierErrors> {
    let mut v = Verifier {
        k: kernel,
        errors: Vec::new(),
        current: None,
        placed: DenseSet::new(),
        transposed_store: false,
        defined: DenseSet::new(),
        ever_defined: DenseSet::new(),
        vars: DenseSet::new(),
    };
    v.block(&kernel.body, 0);
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

struct Verifier<'a> {
    k: &'a Kernel,
    errors: VerifierErrors,
    /// The op being checked, where an error is located.
    current: Option<OpId>,
    placed: OpSet,
    /// The op being checked is a transposing store.
    transposed_store: bool,
    /// Values visible at the current point (scoped: removed when their block ends).
    defined: ValueSet,
    ever_defined: ValueSet,
    /// Loop variables of the enclosing loops.
    vars: VarSet,
}

impl Verifier<'_> {
    fn err(&mut self, span: Span, message: impl Into<String>) {
        let location = self
            .current
            .map_or(Location::Program, |id| Location::Op(id.index() as u32));
        self.errors
            .push(VerifierError::new(location, Some(span), message));
    }

    fn block(&mut self, block: &Block, depth: usize) {
        let mut local = Vec::new();
        for op in block.ops() {
            self.op(op, depth, &mut local);
        }
        for v in local {
            self.defined.remove(&v);
        }
    }

    fn define(&mut self, v: ValueId, want: ValueDef, span: Span, local: &mut Vec<ValueId>) {
        let Some(val) = self.k.values.get(v) else {
            return self.err(span, format!("result value #{} is out of range", v.index()));
        };
        if val.def != want {
            self.err(
                span,
                format!(
                    "value #{} records definition {:?}, defined as {:?}",
                    v.index(),
                    val.def,
                    want
                ),
            );
        }
        if !self.ever_defined.insert(v) {
            self.err(span, format!("value #{} is defined twice", v.index()));
        }
        self.defined.insert(v);
        local.push(v);
    }

    fn define_results(
        &mut self,
        op: OpId,
        results: &[ValueId],
        span: Span,
        local: &mut Vec<ValueId>,
    ) {
        for (i, &r) in results.iter().enumerate() {
            self.define(
                r,
                ValueDef::Result {
                    op,
                    index: i as u32,
                },
                span,
                local,
            );
        }
    }

    /// The type of a used value, reporting out-of-range and non-dominating uses.
    fn use_ty(&mut self, v: ValueId, span: Span) -> Option<TileType> {
        let Some(val) = self.k.values.get(v) else {
            self.err(
                span,
                format!("operand value #{} is out of range", v.index()),
            );
            return None;
        };
        if !self.defined.contains(&v) {
            self.err(
                span,
                format!(
                    "value #{} is used where its definition does not dominate",
                    v.index()
                ),
            );
        }
        Some(val.ty.clone())
    }

    fn op(&mut self, id: OpId, depth: usize, local: &mut Vec<ValueId>) {
        let outer = self.current.replace(id);
        self.check_op(id, depth, local);
        self.current = outer;
    }

    fn check_op(&mut self, id: OpId, depth: usize, local: &mut Vec<ValueId>) {
        let Some(op) = self.k.ops.get(id) else {
            return self.errors.push(VerifierError::new(
                Location::Op(id.index() as u32),
                None,
                "out of range",
            ));
        };
        let span = op.span;
        if !self.placed.insert(id) {
            return self.err(
                span,
                format!("op #{} appears in more than one place", id.index()),
            );
        }
        if let OpKind::For(l) = &op.kind {
            return self.for_op(id, l, &op.results, span, depth, local);
        }
        let operand_tys: Vec<Option<TileType>> = op
            .kind
            .operands()
            .into_iter()
            .map(|v| self.use_ty(v, span))
            .collect();
        if operand_tys.iter().any(Option::is_none) {
            return;
        }
        let tys: Vec<TileType> = operand_tys.into_iter().flatten().collect();
        let result_ty = op
            .results
            .first()
            .and_then(|&r| self.k.values.get(r))
            .map(|x| x.ty.clone());
        // A store that decompose-transfer made transposing stores its value's transpose.
        self.transposed_store = self.k.annotations.transposed.contains(&id);
        let expected = self.rule(&op.kind, &tys, result_ty.as_ref(), span);
        let want_results = usize::from(!matches!(
            op.kind,
            OpKind::Store { .. } | OpKind::SlotWrite { .. }
        ));
        if op.results.len() != want_results {
            self.err(
                span,
                format!(
                    "op has {} results, expected {want_results}",
                    op.results.len()
                ),
            );
        }
        self.define_results(id, &op.results, span, local);
        match (
            expected,
            op.results.first().and_then(|&r| self.k.values.get(r)),
        ) {
            (Ok(Some(want)), Some(val)) if want != val.ty => self.err(
                span,
                format!(
                    "result type {} does not match the op's rule ({want})",
                    val.ty
                ),
            ),
            (Err(e), _) => self.err(span, e),
            _ => {}
        }
        self.spaces(&op.kind, &op.results, span);
        self.planned(&op.results, span);
    }

    /// Once planned, an N-slot tile has N addresses; a transfer's descriptors have at
    /// least one dimension unless they move rows.
    fn planned(&mut self, results: &[ValueId], span: Span) {
        for &r in results {
            let Some(v) = self.k.values.get(r) else {
                continue;
            };
            let slots = v.attrs.slots.unwrap_or(1) as usize;
            if !v.attrs.addresses.is_empty() && v.attrs.addresses.len() != slots {
                self.err(
                    span,
                    format!(
                        "a tile with {slots} slots has {} addresses",
                        v.attrs.addresses.len()
                    ),
                );
            }
        }
    }

    /// The result type the op's rule gives (`None` where the rule leaves it free).
    fn rule(
        &mut self,
        kind: &OpKind,
        tys: &[TileType],
        result: Option<&TileType>,
        span: Span,
    ) -> Result<Option<TileType>, String> {
        let first = tys.first();
        let arg = || first.ok_or_else(|| "missing operand".to_string());
        match kind {
            OpKind::Load { param, index, .. } => {
                let p = self
                    .k
                    .params
                    .get(*param)
                    .ok_or("load from a missing parameter")?;
                self.index_vars(index, span);
                let types = |v| self.k.values.get(v).map(|x| x.ty.clone());
                let boxed = typing::region_box(p, index, types)?;
                // numpy's region, or the box itself once canonicalize folds a reshape
                // to it into the load (`analysis::tensor_axis` reads either).
                let shape = match result {
                    Some(r) if r.shape == boxed => boxed,
                    _ => typing::region(p, index, types)?,
                };
                Ok(Some(TileType::new(p.ty.dtype, shape)))
            }
            OpKind::Store {
                param,
                index,
                value,
                accumulate,
            } => {
                if *accumulate && !index.iter().any(|ix| matches!(ix, Index::Indirect(_))) {
                    return Err("an accumulating store that is not a scatter".into());
                }
                let p = self
                    .k
                    .params
                    .get(*param)
                    .ok_or("store to a missing parameter")?;
                if !p.is_out {
                    return Err(format!(
                        "store to `{}`, which is not an `out` parameter",
                        p.name
                    ));
                }
                self.index_vars(index, span);
                let types = |v| self.k.values.get(v).map(|x| x.ty.clone());
                let shape = typing::region(p, index, types)?;
                let boxed = typing::region_box(p, index, types)?;
                let mut vt = self
                    .k
                    .values
                    .get(*value)
                    .map(|x| x.ty.clone())
                    .ok_or("missing value")?;
                if self.transposed_store {
                    vt.shape.reverse();
                }
                // FIX casts an L0C tile to the tensor's float dtype as it stores it.
                let fix_cast = p.ty.dtype.is_float()
                    && self.k.values.get(*value).and_then(|x| x.space) == Some(MemSpace::L0C);
                let dtype_ok = vt.dtype == p.ty.dtype || fix_cast;
                let fits = typing::broadcasts_to(&vt.shape, &shape)
                    || typing::same_layout(&vt.shape, &boxed);
                if !dtype_ok || !fits {
                    return Err(format!(
                        "stored value {vt} does not fit region {}{shape:?}",
                        p.ty.dtype
                    ));
                }
                Ok(None)
            }
            OpKind::Unary { .. } | OpKind::Copy { .. } => Ok(Some(arg()?.clone())),
            OpKind::Binary { .. } => {
                typing::binary(arg()?, tys.get(1).ok_or("missing operand")?).map(Some)
            }
            OpKind::Reduce { op, axis, .. } => typing::reduce(*op, arg()?, *axis).map(Some),
            OpKind::Compare { .. } => {
                typing::compare(arg()?, tys.get(1).ok_or("missing operand")?).map(Some)
            }
            OpKind::Select { .. } => match tys {
                [m, a, b] => typing::select(m, a, b).map(Some),
                _ => Err("missing operand".into()),
            },
            OpKind::Iota { axis } => {
                typing::iota(*axis, result.ok_or("iota without a result")?).map(Some)
            }
            OpKind::MatMul { acc, acc_block, .. } => {
                let product = typing::matmul(arg()?, tys.get(1).ok_or("missing operand")?)?;
                if acc_block.is_empty() {
                    if acc.is_some() && tys.get(2) != Some(&product) {
                        return Err(format!("matmul accumulator is not {product}"));
                    }
                    return Ok(Some(product));
                }
                // The product adds into a block of the accumulator: the block has the
                // product's type, and the result is the whole accumulator.
                self.index_vars(acc_block, span);
                let whole = tys
                    .get(2)
                    .ok_or("an accumulator block without an accumulator")?;
                if typing::slice(whole, acc_block, false)? != product {
                    return Err(format!("the accumulator block of {whole} is not {product}"));
                }
                Ok(Some(whole.clone()))
            }
            OpKind::Transpose { .. } => typing::transpose(arg()?).map(Some),
            OpKind::Reshape { .. } => {
                let (a, r) = (arg()?, result.ok_or("a reshape without a result")?);
                let count = |s: &[u64]| s.iter().product::<u64>();
                if a.dtype != r.dtype || count(&a.shape) != count(&r.shape) {
                    return Err(format!("reshape of {a} into {r}"));
                }
                Ok(Some(r.clone()))
            }
            OpKind::Slice {
                index, transpose, ..
            } => {
                self.index_vars(index, span);
                typing::slice(arg()?, index, *transpose).map(Some)
            }
            OpKind::Cast { .. } => {
                // Any dtype, same shape.
                let a = arg()?;
                Ok(result.map(|r| TileType::new(r.dtype, a.shape.clone())))
            }
            OpKind::Full { .. } => Ok(None),
            OpKind::IndexValue { expr } => {
                self.expr_vars(expr, span);
                Ok(Some(TileType::scalar(DType::I32)))
            }
            OpKind::Update { .. } => {
                let (old, value) = (arg()?, tys.get(1).ok_or("missing operand")?);
                if old.dtype != value.dtype && value.rank() != 0 {
                    return Err(format!("update of {old} with a {} value", value.dtype));
                }
                if !typing::broadcasts_to(&value.shape, &old.shape) {
                    return Err(format!("update value {value} does not broadcast to {old}"));
                }
                Ok(Some(old.clone()))
            }
            OpKind::Fused { expr, .. } => typing::fused(expr, tys).map(Some),
            OpKind::For(_) => Ok(None),
            OpKind::Buffers => Ok(None),
            OpKind::SlotWrite { buf, slot, .. } | OpKind::SlotRead { buf, slot } => {
                self.expr_vars(slot, span);
                if !super::slots::is_buffers(self.k, *buf) {
                    return Err("a slot access of a value `buffers` did not define".into());
                }
                let buf_ty = arg()?;
                match (kind, tys.get(1)) {
                    (OpKind::SlotWrite { .. }, Some(v)) if v != buf_ty => {
                        Err(format!("a slot of {buf_ty} written with {v}"))
                    }
                    (OpKind::SlotWrite { .. }, _) => Ok(None),
                    _ => Ok(Some(buf_ty.clone())),
                }
            }
        }
    }

    fn index_vars(&mut self, index: &[Index], span: Span) {
        for ix in index {
            if let Index::Range { start: e, .. }
            | Index::Strided { start: e, .. }
            | Index::Single(e) = ix
            {
                self.expr_vars(e, span);
            }
        }
    }

    fn expr_vars(&mut self, e: &IndexExpr, span: Span) {
        let mut bad = Vec::new();
        typing::visit_index_vars(e, &mut |v| {
            if !self.vars.contains(&v) {
                bad.push(v);
            }
        });
        for v in bad {
            self.err(
                span,
                format!("loop variable #{} is used outside its loop", v.index()),
            );
        }
    }

    fn for_op(
        &mut self,
        id: OpId,
        l: &ForOp,
        results: &[ValueId],
        span: Span,
        depth: usize,
        local: &mut Vec<ValueId>,
    ) {
        if depth >= MAX_DEPTH {
            return self.err(span, "loops are nested too deeply to verify");
        }
        if l.step <= 0 {
            self.err(span, format!("loop step {} is not positive", l.step));
        }
        if self.k.loop_vars.get(l.var).is_none() {
            self.err(
                span,
                format!("loop variable #{} is out of range", l.var.index()),
            );
        }
        if let Some(cond) = l.end.guard() {
            // A branch is a loop that runs once or not at all, and reads only the
            // variables of the loops around it.
            if l.start != 0 || l.step != 1 || l.buffers.is_some() {
                self.err(
                    span,
                    "a branch's region is not `0..1 step 1` without buffers",
                );
            }
            for e in cond.exprs() {
                self.expr_vars(e, span);
            }
        }
        let n = l.inits.len();
        if l.args.len() != n || l.yields.len() != n || results.len() != n {
            self.err(
                span,
                format!(
                    "loop-carried arity differs: {n} inits, {} block arguments, {} yields, {} results",
                    l.args.len(),
                    l.yields.len(),
                    results.len()
                ),
            );
        }
        let init_tys: Vec<Option<TileType>> =
            l.inits.iter().map(|&v| self.use_ty(v, span)).collect();
        if !self.vars.insert(l.var) {
            self.err(
                span,
                format!(
                    "loop variable #{} is bound by an enclosing loop",
                    l.var.index()
                ),
            );
        }
        let mut body_local = Vec::new();
        for (i, &a) in l.args.iter().enumerate() {
            self.define(
                a,
                ValueDef::LoopArg {
                    op: id,
                    index: i as u32,
                },
                span,
                &mut body_local,
            );
        }
        let mut inner = Vec::new();
        for op in l.body.ops() {
            self.op(op, depth + 1, &mut inner);
        }
        let yield_tys: Vec<Option<TileType>> =
            l.yields.iter().map(|&v| self.use_ty(v, span)).collect();
        for v in inner.into_iter().chain(body_local) {
            self.defined.remove(&v);
        }
        self.vars.remove(&l.var);
        self.define_results(id, results, span, local);
        for i in 0..n {
            let ty_of =
                |v: Option<&ValueId>| v.and_then(|&v| self.k.values.get(v)).map(|x| x.ty.clone());
            let tys = [
                init_tys.get(i).cloned().flatten(),
                ty_of(l.args.get(i)),
                yield_tys.get(i).cloned().flatten(),
                ty_of(results.get(i)),
            ];
            if let [Some(a), Some(b), Some(c), Some(d)] = &tys {
                if !(a == b && b == c && c == d) {
                    self.err(span, format!("loop-carried value {i} changes type: init {a}, argument {b}, yield {c}, result {d}"));
                }
            }
            let space_of =
                |v: Option<&ValueId>| v.and_then(|&v| self.k.values.get(v)).and_then(|x| x.space);
            let spaces = [
                space_of(l.inits.get(i)),
                space_of(l.args.get(i)),
                space_of(l.yields.get(i)),
                space_of(results.get(i)),
            ];
            let mut known = spaces.iter().flatten();
            let first = known.next();
            if known.any(|s| Some(s) != first) {
                self.err(
                    span,
                    format!("loop-carried value {i} changes memory space: {spaces:?}"),
                );
            }
        }
    }

    /// Space rules, checked only where spaces are set: tiles live on chip; vector ops
    /// read and write UB; matmul reads L0A and L0B and writes L0C. Rank-0 scalars are
    /// immediates and have no space.
    fn spaces(&mut self, kind: &OpKind, results: &[ValueId], span: Span) {
        let space = |v: ValueId| {
            self.k
                .values
                .get(v)
                .filter(|x| x.ty.rank() > 0)
                .and_then(|x| x.space)
        };
        for &r in results {
            if space(r) == Some(MemSpace::GM) {
                self.err(span, "a tile cannot live in GM");
            }
        }
        let mut want = |v: ValueId, s: MemSpace, role: &str| {
            if let Some(have) = space(v) {
                if have != s {
                    self.err(span, format!("{role} is in {have}, expected {s}"));
                }
            }
        };
        match kind {
            OpKind::Unary { .. }
            | OpKind::Binary { .. }
            | OpKind::Fused { .. }
            | OpKind::Compare { .. }
            | OpKind::Select { .. }
            | OpKind::Iota { .. }
            | OpKind::Reduce { .. } => {
                for v in kind.operands().into_iter().chain(results.iter().copied()) {
                    want(v, MemSpace::UB, "a vector operand");
                }
            }
            OpKind::MatMul { lhs, rhs, acc, .. } => {
                want(*lhs, MemSpace::L0A, "the matmul left operand");
                want(*rhs, MemSpace::L0B, "the matmul right operand");
                if let Some(a) = acc {
                    want(*a, MemSpace::L0C, "the matmul accumulator");
                }
                for &r in results {
                    want(r, MemSpace::L0C, "the matmul result");
                }
            }
            _ => {}
        }
    }
}
