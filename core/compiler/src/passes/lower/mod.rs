//! lower-to-pipes: every op of the planned tile IR becomes ISA instructions of one pipe,
//! in structured loops (`lowered::Lowered`). Address arithmetic, loop variables, tail
//! extents and slot bases are computed on S in virtual registers; each instruction
//! carries its source span, its step and the buffers and tensors it reads and writes
//! (one buffer per plan-memory slab, so distinct buffers never alias).

mod ops;
mod slots;
mod strips;

use super::{Context, Pass};
use crate::dense::DenseMap;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::front::hir::{Cond, Operand};
use crate::ir::memory::MemoryPlan;
use crate::ir::{
    Block, BlockItem, ForOp, IndexExpr, Kernel, LoopEnd, OpId, OpMap, ValueId, ValueMap, VarMap,
};
use crate::isa::{Addr, AluOp, Op, Provenance, Reg, Region, TensorDecl, Tile, VSrc, Val};
use crate::lowered::{
    Access, AxisSpan, Buffer, BufferId, GmRegion, Instr, Item, Loop, LoopId, Lowered, Slot, Target,
};
use crate::machine::Machine;
use crate::types::{CmpOp, MemSpace};
use std::collections::HashMap;

pub struct LowerToPipes;

impl Pass for LowerToPipes {
    type In = crate::passes::stage::Planned;
    type Out = crate::passes::stage::Lowered;

    fn name(&self) -> &'static str {
        "lower-to-pipes"
    }

    fn description(&self) -> &'static str {
        "turn every op into instructions of one pipe, with addresses computed on the scalar pipe"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        let k = cx.ir_mut(self.name())?;
        let lowered = lower(k, &machine)?;
        lowered.check_size(self.name()).map_err(|d| vec![d])?;
        cx.lowered = Some(lowered);
        Ok(())
    }
}

pub fn lower(k: &Kernel, machine: &Machine) -> Result<Lowered, Diagnostics> {
    // The plan as plan-memory left it (and as the IR prints it), checked against the
    // addresses the values carry.
    let plan = match &k.memory {
        Some(plan) => plan.clone(),
        None => {
            return Err(vec![Diagnostic::global(
                "internal error in lower-to-pipes: the kernel has no memory plan",
            )])
        }
    };
    plan.agrees_with(k).map_err(|why| {
        vec![Diagnostic::global(format!(
            "internal error in lower-to-pipes: the memory plan disagrees with the IR: {why}"
        ))]
    })?;
    let names = crate::ir::print::value_names(k);
    let mut out = Lowered {
        tensors: k
            .params
            .iter()
            .map(|p| TensorDecl {
                name: p.name.clone(),
                dtype: p.ty.dtype,
                shape: p.ty.shape.clone(),
            })
            .collect(),
        ..Lowered::default()
    };
    for slab in &plan.slabs {
        // Named by the source variables it holds (`acc`, not `acc|acc.1|acc.2`).
        let mut tile_names: Vec<String> = Vec::new();
        // A `buffers` tile's slab is named by it alone, not by the tiles in its slots.
        let declared: Vec<ValueId> = slab
            .tiles
            .iter()
            .copied()
            .filter(|&v| crate::ir::slots::is_buffers(k, v))
            .collect();
        let shown = if declared.is_empty() {
            &slab.tiles
        } else {
            &declared
        };
        for name in shown.iter().filter_map(|v| names.get(v)) {
            let base = crate::ir::print::source_name(name);
            if !tile_names.iter().any(|n| n == base) {
                tile_names.push(base.to_string());
            }
        }
        if slab.scratch_of.is_some() {
            tile_names.push("scratch".into());
        }
        out.buffers.push(Buffer {
            name: tile_names.join("|"),
            space: slab.space,
            bytes: slab.bytes,
            addrs: slab.addrs(),
            rotates_with: None,
            span: shown.first().and_then(|&v| k.def_span(v)),
        });
    }
    let member_slot = slots::member_slots(k).map_err(|d| vec![d])?;
    let strips = strips::l0c_strips(k).map_err(|e| {
        vec![Diagnostic::global(format!(
            "internal error in lower-to-pipes: {e}"
        ))]
    })?;
    let mut lw = Lw {
        k,
        plan,
        member_slot,
        strips,
        slot_copy: None,
        out,
        stack: vec![Vec::new()],
        var_reg: DenseMap::new(),
        var_loop: DenseMap::new(),
        var_range: DenseMap::new(),
        loop_counter: DenseMap::new(),
        slot_base: DenseMap::new(),
        valid: DenseMap::new(),
        scalars: DenseMap::new(),
        prov: Provenance::default(),
        next_loop: 0,
        errors: Vec::new(),
        ub_align: machine.memories.get(MemSpace::UB).alignment,
        accumulate: false,
    };
    lw.block(&k.body, 0);
    if !lw.errors.is_empty() {
        return Err(lw.errors);
    }
    let mut out = lw.out;
    // The root frame is pushed before lowering starts, so the stack is never empty here.
    out.body = lw.stack.pop().unwrap_or_default();
    Ok(out)
}

/// Per-axis valid extents of a tile (`Imm` = the full static extent).
type Valid = Vec<Val>;

/// A transfer's valid extents, one per axis of the box it moves (`boxed`), as extents of
/// the tile (`tile`, the same elements: `typing::same_layout`). The box keeps a single
/// position's axis with extent 1, which the tile drops (numpy), and a stored value may
/// have extra axes of extent 1; a reshape that adds or drops such axes maps the same way. `None` when an axis of extent 1 holds a tail (a valid
/// extent that is not 1) and the shapes differ: no mapping could keep it.
fn box_valid_to_tile(valid: &[Val], boxed: &[u64], tile: &[u64]) -> Option<Valid> {
    if boxed == tile {
        return Some(valid.to_vec());
    }
    let mut lanes = Vec::new();
    for (&d, &v) in boxed.iter().zip(valid) {
        match (d, v) {
            (1, Val::Imm(1)) => {}
            (1, _) => return None,
            _ => lanes.push(v),
        }
    }
    let mut lanes = lanes.into_iter();
    let mapped: Option<Valid> = tile
        .iter()
        .map(|&d| {
            if d == 1 {
                Some(Val::Imm(1))
            } else {
                lanes.next()
            }
        })
        .collect();
    mapped.filter(|_| lanes.next().is_none())
}

struct Lw<'a> {
    k: &'a Kernel,
    plan: MemoryPlan,
    /// The slot index of each tile that lives in a slot of a `buffers` tile.
    member_slot: ValueMap<usize>,
    /// The column strips of each L0C accumulator with N blocks (`strips`).
    strips: ValueMap<u64>,
    /// While a copy into or out of a slot is lowered: the `buffers` tile and the slot.
    slot_copy: Option<(ValueId, OpId)>,
    out: Lowered,
    /// Item lists being built, innermost last.
    stack: Vec<Vec<Item>>,
    var_reg: VarMap<Val>,
    /// Each IR loop variable's lowered loop, with its start and step: the variable is
    /// `start + step * counter` (for the GM regions insert-sync compares).
    var_loop: VarMap<(LoopId, i64, i64)>,
    /// Each IR loop variable's smallest and largest value, when known (a padded load's
    /// rows that provably stay inside their tensor need no fill).
    var_range: VarMap<(i64, i64)>,
    /// Each `for` op's iteration counter, while lowering its body.
    loop_counter: OpMap<Reg>,
    /// Slab index -> register holding `slot * slot bytes` in the current iteration.
    slot_base: DenseMap<usize, Reg>,
    valid: ValueMap<Valid>,
    /// Rank-0 values: immediates or registers.
    scalars: ValueMap<VSrc>,
    prov: Provenance,
    next_loop: u32,
    errors: Diagnostics,
    ub_align: u64,
    /// While an accumulating store (`+=` on a scatter) is lowered.
    accumulate: bool,
}

impl Lw<'_> {
    fn fail(&mut self, span: Span, msg: impl Into<String>) {
        self.errors.push(Diagnostic::error(
            format!("lower-to-pipes does not support {}", msg.into()),
            span,
        ));
    }

    fn emit(&mut self, op: Op, accesses: Vec<Access>) {
        let ins = Instr {
            op,
            prov: self.prov,
            accesses,
        };
        if let Some(items) = self.stack.last_mut() {
            items.push(Item::Instr(ins));
        }
    }

    fn reg(&mut self) -> Reg {
        self.out.new_reg()
    }

    /// `a op b` on S, folded when both are immediates.
    fn alu(&mut self, op: AluOp, a: Val, b: Val) -> Val {
        if let (Val::Imm(x), Val::Imm(y)) = (a, b) {
            let folded = op.apply(x, y);
            if let Some(v) = folded {
                return Val::Imm(v);
            }
        }
        match (op, b) {
            (AluOp::Add | AluOp::Sub, Val::Imm(0)) | (AluOp::Mul | AluOp::Div, Val::Imm(1)) => {
                return a
            }
            _ => {}
        }
        let ra = match a {
            Val::Reg(r) => r,
            Val::Imm(x) => {
                let r = self.reg();
                self.emit(
                    Op::Mov {
                        dst: r,
                        src: Val::Imm(x),
                    },
                    Vec::new(),
                );
                r
            }
        };
        let dst = self.reg();
        self.emit(Op::Alu { op, dst, a: ra, b }, Vec::new());
        Val::Reg(dst)
    }

    /// How many column strips L0C tile `v` is laid out in (`strips`): 1, row-major, for
    /// every tile no product splits into N blocks.
    fn strips(&self, v: ValueId) -> u64 {
        self.strips.get(&v).copied().unwrap_or(1)
    }

    /// An internal inconsistency at the op being lowered: a compile error, never a
    /// silent default.
    fn internal(&mut self, msg: &str) {
        let message = format!("internal error in lower-to-pipes: {msg}");
        self.errors.push(match self.prov.span {
            Some(span) => Diagnostic::error(message, span),
            None => Diagnostic::global(message),
        });
    }

    fn iexpr(&mut self, e: &IndexExpr, depth: usize) -> Val {
        if depth > crate::limits::MAX_NESTING_DEPTH {
            self.internal("an index expression nested past the limit");
            return Val::Imm(0);
        }
        match e {
            IndexExpr::Const(c) => Val::Imm(*c),
            IndexExpr::Var(v) => match self.var_reg.get(v) {
                Some(&r) => r,
                None => {
                    self.internal("a loop variable used outside its loop");
                    Val::Imm(0)
                }
            },
            IndexExpr::Add(a, b) | IndexExpr::Sub(a, b) | IndexExpr::Mul(a, b) => {
                let (x, y) = (self.iexpr(a, depth + 1), self.iexpr(b, depth + 1));
                let op = match e {
                    IndexExpr::Add(..) => AluOp::Add,
                    IndexExpr::Sub(..) => AluOp::Sub,
                    _ => AluOp::Mul,
                };
                // Keep the immediate on the right where the ALU takes it.
                match (op, x, y) {
                    (AluOp::Add | AluOp::Mul, Val::Imm(_), Val::Reg(_)) => self.alu(op, y, x),
                    _ => self.alu(op, x, y),
                }
            }
            IndexExpr::FloorDiv(a, c) | IndexExpr::Mod(a, c) => {
                let x = self.iexpr(a, depth + 1);
                let op = if matches!(e, IndexExpr::FloorDiv(..)) {
                    AluOp::Div
                } else {
                    AluOp::Rem
                };
                self.alu(op, x, Val::Imm(*c))
            }
        }
    }

    /// A branch's condition as 1 (true) or 0 (false), computed on the scalar pipe with
    /// the ALU's `sub`, `min` and `max`: `a < b` is `min(max(b - a, 0), 1)`, `&&` is
    /// `min`, `||` is `max` and `!x` is `1 - x`.
    fn cond(&mut self, c: &Cond<IndexExpr>, depth: usize) -> Val {
        if depth > crate::limits::MAX_NESTING_DEPTH {
            self.internal("a condition nested past the limit");
            return Val::Imm(0);
        }
        match c {
            Cond::Cmp { op, lhs, rhs } => {
                let (a, b) = (
                    self.cond_operand(lhs, depth + 1),
                    self.cond_operand(rhs, depth + 1),
                );
                let margin = match op {
                    CmpOp::Lt => self.alu(AluOp::Sub, b, a),
                    CmpOp::Gt => self.alu(AluOp::Sub, a, b),
                    CmpOp::Le => {
                        let d = self.alu(AluOp::Sub, b, a);
                        self.alu(AluOp::Add, d, Val::Imm(1))
                    }
                    CmpOp::Ge => {
                        let d = self.alu(AluOp::Sub, a, b);
                        self.alu(AluOp::Add, d, Val::Imm(1))
                    }
                    CmpOp::Eq | CmpOp::Ne => {
                        let (x, y) = (self.alu(AluOp::Sub, a, b), self.alu(AluOp::Sub, b, a));
                        self.alu(AluOp::Max, x, y)
                    }
                };
                let positive = self.alu(AluOp::Max, margin, Val::Imm(0));
                let ne = self.alu(AluOp::Min, positive, Val::Imm(1));
                match op {
                    CmpOp::Eq => self.alu(AluOp::Sub, Val::Imm(1), ne),
                    _ => ne,
                }
            }
            Cond::And(x, y) | Cond::Or(x, y) => {
                let (x, y) = (self.cond(x, depth + 1), self.cond(y, depth + 1));
                let op = if matches!(c, Cond::And(..)) {
                    AluOp::Min
                } else {
                    AluOp::Max
                };
                match (x, y) {
                    (Val::Imm(_), Val::Reg(_)) => self.alu(op, y, x),
                    _ => self.alu(op, x, y),
                }
            }
            Cond::Not(x) => {
                let x = self.cond(x, depth + 1);
                self.alu(AluOp::Sub, Val::Imm(1), x)
            }
        }
    }

    /// A condition's operand in a register or an immediate: an index expression, or an
    /// element of an input tensor that `sldg` reads from GM.
    fn cond_operand(&mut self, o: &Operand<IndexExpr>, depth: usize) -> Val {
        let Operand::Element { param, index } = o else {
            let Operand::Index(e) = o else {
                return Val::Imm(0);
            };
            return self.iexpr(e, depth);
        };
        let Some(tensor) = self.k.params.get(*param as usize) else {
            self.internal("a condition reads a tensor the kernel does not have");
            return Val::Imm(0);
        };
        let (shape, dtype) = (tensor.ty.shape.clone(), tensor.ty.dtype);
        if index.len() != shape.len() {
            self.internal("a condition reads an element with the wrong rank");
            return Val::Imm(0);
        }
        // The element's byte offset: the row-major sum of each index times its stride.
        let mut offset = IndexExpr::Const(0);
        let mut stride = dtype.bytes() as i64;
        for (e, &extent) in index.iter().zip(&shape).rev() {
            let term = IndexExpr::Mul(Box::new(e.clone()), Box::new(IndexExpr::Const(stride)));
            offset = IndexExpr::Add(Box::new(offset), Box::new(term));
            stride = stride.saturating_mul(extent as i64);
        }
        let at = self.iexpr(&offset, depth);
        let src = self.addr(Region::Tensor(*param), at, 0);
        let dst = self.reg();
        // The element's box, as every GM access records one (insert-sync leaves the
        // scalar pipe's reads of inputs the kernel never stores unordered).
        let mut read = self.tensor_access(*param as usize, false);
        let position: Vec<crate::ir::Index> = index
            .iter()
            .cloned()
            .map(crate::ir::Index::Single)
            .collect();
        if let Some(region) = self.gm_region(&shape, &position) {
            read.region = Some(self.out.regions.len() as u32);
            self.out.regions.push(region);
        }
        if let Val::Imm(byte) = at {
            read.range = u64::try_from(byte).ok().map(|b| (b, b + dtype.bytes()));
        }
        self.emit(Op::Sldg { dtype, dst, src }, vec![read]);
        Val::Reg(dst)
    }

    /// The address `region[val + offset]`.
    fn addr(&mut self, region: Region, val: Val, offset: i64) -> Addr {
        match val {
            Val::Imm(x) => Addr {
                region,
                base: None,
                offset: offset + x,
            },
            Val::Reg(r) => Addr {
                region,
                base: Some(r),
                offset,
            },
        }
    }

    /// The slab of a tile and its byte address (slot base register when rotating).
    fn tile_addr(&mut self, v: ValueId, extra: Val) -> Option<(Addr, usize)> {
        let slab_ix = *self.plan.tile_slab.get(&v)?;
        let slab = self.plan.slabs.get(slab_ix)?;
        let (space, at, bytes) = (slab.space, slab.addr as i64, slab.bytes);
        let base = match (self.slot_expr(v), self.slot_base.get(&slab_ix)) {
            (Some(e), _) => {
                let offset = self.slot_offset(e, bytes);
                self.alu(AluOp::Add, offset, extra)
            }
            (None, Some(&r)) => self.alu(AluOp::Add, Val::Reg(r), extra),
            (None, None) => extra,
        };
        Some((self.addr(Region::Buf(space), base, at), slab_ix))
    }

    fn access(&self, slab: usize, bytes: u64, write: bool) -> Access {
        let rotating = self.plan.slabs.get(slab).is_some_and(|s| s.slots > 1);
        Access {
            target: Target::Buffer(BufferId(slab as u32)),
            slot: if rotating { Slot::Current } else { Slot::All },
            range: Some((0, bytes)),
            write,
            region: None,
        }
    }

    fn tensor_access(&self, param: usize, write: bool) -> Access {
        Access {
            target: Target::Tensor(param as u32),
            slot: Slot::All,
            range: None,
            write,
            region: None,
        }
    }

    /// The box `index` selects of a tensor of shape `tensor`, with every start affine in
    /// the counters of the enclosing lowered loops; `None` when an index is indirect or
    /// not affine, or an arithmetic step overflows (the access then covers the whole
    /// tensor).
    fn gm_region(&self, tensor: &[u64], index: &[crate::ir::Index]) -> Option<GmRegion> {
        use crate::ir::Index;
        if index.len() != tensor.len() {
            return None;
        }
        let mut axes = Vec::with_capacity(index.len());
        for (&extent, ix) in tensor.iter().zip(index) {
            let (start, len) = match ix {
                Index::Full => {
                    axes.push(AxisSpan {
                        constant: 0,
                        terms: Vec::new(),
                        len: extent,
                    });
                    continue;
                }
                Index::Indirect(_) => return None,
                Index::Range { start, len, .. } => (start, *len),
                // The hull of the positions: a superset, so no hazard is missed.
                Index::Strided { start, len, step } => (
                    start,
                    len.saturating_sub(1)
                        .saturating_mul(*step)
                        .saturating_add(1),
                ),
                Index::Single(start) => (start, 1),
            };
            let form = crate::ir::affine::of_index(start)?;
            let mut span = AxisSpan {
                constant: form.constant,
                terms: Vec::new(),
                len,
            };
            for &(var, c) in form.terms() {
                // A variable of no enclosing loop: nothing known about it.
                let &(l, start, step) = self.var_loop.get(&var)?;
                span.constant = span.constant.checked_add(c.checked_mul(start)?)?;
                let coefficient = c.checked_mul(step)?;
                match span.terms.iter_mut().find(|(x, _)| *x == l) {
                    Some((_, k)) => *k = k.checked_add(coefficient)?,
                    None => span.terms.push((l, coefficient)),
                }
            }
            span.terms.retain(|&(_, k)| k != 0);
            axes.push(span);
        }
        Some(GmRegion { axes })
    }

    /// A 2-D view of a tile: `(rows, cols)` with `rows` the product of the leading axes.
    fn view2d(shape: &[u64]) -> (u64, u64) {
        match shape {
            [] => (1, 1),
            [n] => (1, *n),
            [lead @ .., last] => (lead.iter().product(), *last),
        }
    }

    /// Valid 2-D extents of a tile from its per-axis valid extents.
    fn valid2d(&mut self, v: ValueId, span: Span) -> (Val, Val) {
        let shape = self.shape(v);
        let (r, c) = Self::view2d(&shape);
        let Some(valid) = self.valid.get(&v).cloned() else {
            return (Val::Imm(r as i64), Val::Imm(c as i64));
        };
        let cols = valid.last().copied().unwrap_or(Val::Imm(c as i64));
        let rows = match valid.len() {
            0 | 1 => Val::Imm(1),
            2 => valid[0],
            _ => {
                if valid[..valid.len() - 1]
                    .iter()
                    .any(|x| matches!(x, Val::Reg(_)))
                {
                    self.fail(span, "a tail on a leading axis of a tile of rank above 2");
                }
                Val::Imm(r as i64)
            }
        };
        (rows, cols)
    }

    fn shape(&self, v: ValueId) -> Vec<u64> {
        self.k
            .values
            .get(v)
            .map(|x| x.ty.shape.clone())
            // Verified IR: every value handle names an arena entry.
            .unwrap_or_default()
    }

    /// A tile operand viewed as `rows x cols` (the caller's valid extents), or a
    /// broadcasting row/column of it.
    fn tile(&mut self, v: ValueId, rows: Val, cols: Val, span: Span) -> Option<Tile> {
        let (r, c) = Self::view2d(&self.shape(v));
        let Some((addr, _)) = self.tile_addr(v, Val::Imm(0)) else {
            self.fail(span, "a tile without an address");
            return None;
        };
        Some(Tile {
            addr,
            rows: if r == 1 { Val::Imm(1) } else { rows },
            cols: if c == 1 { Val::Imm(1) } else { cols },
            stride: c as i64,
        })
    }

    fn tile_access(&self, v: ValueId, write: bool) -> Option<Access> {
        let slab = *self.plan.tile_slab.get(&v)?;
        let bytes = self.k.values.get(v)?.ty.bytes();
        let mut acc = self.access(slab, bytes, write);
        if let Some(e) = self.slot_expr(v) {
            let slots = self.plan.slabs.get(slab)?.slots;
            acc.slot = self.slot_kind(e, slots);
        }
        Some(acc)
    }

    fn block(&mut self, block: &Block, depth: usize) {
        for item in &block.items {
            match item {
                BlockItem::Op(op) => self.op(*op, None, depth),
                BlockItem::Step(step) => {
                    for &op in &step.ops {
                        self.op(op, Some(step.id), depth);
                    }
                }
            }
        }
    }

    fn op(&mut self, id: OpId, step: Option<u32>, depth: usize) {
        let Some(op) = self.k.ops.get(id) else { return };
        self.prov = Provenance {
            span: Some(op.span),
            step,
            op: Some(id.index() as u32),
        };
        if let crate::ir::OpKind::For(l) = &op.kind {
            self.for_loop(id, l, op.span, depth);
        } else {
            self.lower_op(id);
        }
    }

    fn for_loop(&mut self, id: OpId, l: &ForOp, span: Span, depth: usize) {
        if depth > crate::limits::MAX_LOOP_NESTING * 2 {
            return self.fail(span, "loops nested this deep");
        }
        let loop_id = LoopId(self.next_loop);
        self.next_loop += 1;
        let counter = self.reg();
        self.prov = Provenance {
            span: Some(span),
            step: None,
            op: Some(id.index() as u32),
        };
        // The trip count: an immediate, or computed on the scalar pipe before the loop
        // from the outer loops' variables: `ceil((end - start) / step)`, a partial last
        // iteration included (a count of zero or less runs the body zero times).
        let count = match &l.end {
            LoopEnd::Const(end) => Val::Imm(crate::front::hir::trips(l.start, *end, l.step) as i64),
            LoopEnd::Affine { expr, .. } => {
                let length = IndexExpr::Sub(
                    Box::new(expr.clone()),
                    Box::new(IndexExpr::Const(l.start - (l.step - 1))),
                );
                // Folded into the end's own constant: `(i + 64 + 31) // 32` is one add.
                let length = crate::ir::affine::of_index(&length)
                    .map_or(length, |a| crate::ir::affine::to_index(&a));
                self.iexpr(&IndexExpr::FloorDiv(Box::new(length), l.step), 0)
            }
            // A branch: the loop runs `cond` (0 or 1) times, `0..1 step 1`.
            LoopEnd::Guard(cond) => self.cond(cond, 0),
        };
        self.stack.push(Vec::new());
        let var = self.alu(AluOp::Mul, Val::Reg(counter), Val::Imm(l.step));
        let var = self.alu(AluOp::Add, var, Val::Imm(l.start));
        let name = self.k.loop_vars.get(l.var).map_or("", |v| &v.name);
        self.out
            .reg_names
            .push((counter, format!("iteration of {name}")));
        if let Val::Reg(r) = var {
            self.out.reg_names.push((r, name.to_string()));
        }
        self.var_reg.insert(l.var, var);
        self.var_loop.insert(l.var, (loop_id, l.start, l.step));
        // The largest value: the last iteration's below the end (outer variables at
        // their extremes for an affine end); a branch's variable is its start.
        let last_below = |end: i64| {
            let trips = crate::front::hir::trips(l.start, end, l.step) as i64;
            l.start + (trips - 1).max(0) * l.step
        };
        let hi = match &l.end {
            LoopEnd::Const(end) => Some(last_below(*end)),
            LoopEnd::Affine { expr, .. } => {
                crate::ir::affine::interval(expr, &|v| self.var_range.get(&v).copied())
                    .map(|(_, end)| last_below(end))
            }
            LoopEnd::Guard(_) => Some(l.start),
        };
        if let Some(hi) = hi.filter(|_| l.step > 0) {
            self.var_range.insert(l.var, (l.start, hi.max(l.start)));
        }
        self.loop_counter.insert(id, counter);
        let rotating: Vec<usize> = self
            .plan
            .slabs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.rotates_with == Some(id) && s.slots > 1)
            .map(|(i, _)| i)
            .collect();
        let slots = l.buffers.filter(|&n| n > 1 && !rotating.is_empty());
        let slot_reg = slots.map(|n| {
            let r = self.reg();
            self.emit(
                Op::Alu {
                    op: AluOp::Rem,
                    dst: r,
                    a: counter,
                    b: Val::Imm(n as i64),
                },
                Vec::new(),
            );
            self.out.reg_names.push((r, format!("slot of {name}")));
            (n, r)
        });
        // One `slot * bytes` register per distinct slot size.
        let mut by_size: HashMap<i64, Reg> = HashMap::new();
        for &s in &rotating {
            let bytes = self.plan.slabs[s].bytes as i64;
            if let Some((_, r)) = slot_reg {
                let base = match by_size.get(&bytes) {
                    Some(&b) => Some(b),
                    None => match self.alu(AluOp::Mul, Val::Reg(r), Val::Imm(bytes)) {
                        Val::Reg(b) => Some(b),
                        Val::Imm(_) => None,
                    },
                };
                if let Some(b) = base {
                    by_size.insert(bytes, b);
                    self.slot_base.insert(s, b);
                }
            }
            if let Some(b) = self.out.buffers.get_mut(s) {
                b.rotates_with = Some(loop_id);
            }
        }
        self.block(&l.body, depth + 1);
        // Past its loop a variable names no counter (a region using it covers the tensor).
        self.var_loop.remove(&l.var);
        self.var_range.remove(&l.var);
        for s in &rotating {
            self.slot_base.remove(s);
        }
        let body = self.stack.pop().unwrap_or_default();
        if let Some(items) = self.stack.last_mut() {
            items.push(Item::Loop(Loop {
                id: loop_id,
                counter,
                count,
                min_count: l.min_trip_count(),
                branch: crate::steps::branch_text(self.k, l),
                slots: slot_reg,
                body,
                span,
            }));
        }
    }

    /// A loop of `count` iterations around what `body` emits; returns its counter.
    fn peel_loop(&mut self, count: Val, span: Span, body: impl FnOnce(&mut Self, Reg)) {
        let loop_id = LoopId(self.next_loop);
        self.next_loop += 1;
        let counter = self.reg();
        self.stack.push(Vec::new());
        body(self, counter);
        let items = self.stack.pop().unwrap_or_default();
        if let Some(top) = self.stack.last_mut() {
            top.push(Item::Loop(Loop {
                id: loop_id,
                counter,
                count,
                min_count: 0,
                branch: None,
                slots: None,
                body: items,
                span,
            }));
        }
    }

    fn ub_align(&self) -> u64 {
        self.ub_align
    }
}

/// A scalar operand from a rank-0 value.
fn scalar_of(v: &VSrc) -> VSrc {
    *v
}
