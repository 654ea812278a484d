//! The tile IR: typed SSA over tiles with structured loops. This is the form
//! users read after every pass, so it stays close to the source: one op per source
//! operation, loop induction variables and index expressions as written, and `let`
//! names kept as debug names.
//!
//! Layout follows naga: ops, values and loop variables live in arenas inside the
//! kernel and refer to each other by typed handles; blocks are ordered lists of op
//! handles; every op carries its source span. Loop-carried values are explicit block
//! arguments plus a yield (MLIR `scf.for` iter_args), so SSA holds across `acc += ...`.

pub mod affine;
pub mod analysis;
pub mod dce;
pub mod liveness;
pub mod lower;
pub mod memory;
pub mod print;
pub mod read;
pub mod rewrite;
pub mod slots;
pub mod typing;
pub mod verify;
pub mod verify_plan;

use crate::diag::Span;
use crate::front::hir::{BinaryOp, ReduceOp, UnaryOp, UpdateOp};
use crate::types::{CmpOp, MemSpace, TileType};
use std::marker::PhantomData;

use crate::dense::{DenseMap, DenseSet};
pub use print::{print, print_located, LineItem, Printed};
pub use verify::verify;

/// A typed index into an [`Arena`]. Handles are created only by `Arena::push`, so a
/// handle is in range of the arena that made it; the verifier checks that no pass mixed
/// arenas up.
pub struct Handle<T> {
    index: u32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// A handle from a raw index; for tests that build broken IR on purpose.
    pub fn from_index(index: usize) -> Handle<T> {
        Handle {
            index: index as u32,
            marker: PhantomData,
        }
    }
}

impl<T> crate::dense::DenseKey for Handle<T> {
    fn index(self) -> usize {
        Handle::index(self)
    }
    fn from_index(index: usize) -> Self {
        Handle::from_index(index)
    }
}

// Manual impls: derives would require `T: Clone` etc. for a handle that only indexes.
impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state)
    }
}
impl<T> std::fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.index)
    }
}

/// An append-only typed vector. Written here rather than taken from a crate because the
/// IR needs only push/get/iterate with `Copy + Ord + Hash` handles, and dead entries are
/// simply left unreferenced (the printer and verifier walk blocks, not arenas).
#[derive(Clone, Debug)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T> Arena<T> {
    pub fn push(&mut self, item: T) -> Handle<T> {
        // Arena sizes are bounded by the source size (`limits.rs`), far below u32::MAX.
        let index = self.items.len() as u32;
        self.items.push(item);
        Handle {
            index,
            marker: PhantomData,
        }
    }

    pub fn get(&self, h: Handle<T>) -> Option<&T> {
        self.items.get(h.index())
    }

    pub fn get_mut(&mut self, h: Handle<T>) -> Option<&mut T> {
        self.items.get_mut(h.index())
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, t)| (Handle::from_index(i), t))
    }
}

/// Indexing by handle. Passes index arenas with handles they created or read from a
/// verified kernel; code that may see unverified IR (printer, verifier) uses `get`.
impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        &self.items[h.index()]
    }
}

impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, h: Handle<T>) -> &mut T {
        &mut self.items[h.index()]
    }
}

pub type ValueId = Handle<Value>;
pub type OpId = Handle<Op>;
pub type LoopVarId = Handle<LoopVar>;
pub type ValueSet = DenseSet<ValueId>;
pub type OpSet = DenseSet<OpId>;
pub type VarSet = DenseSet<LoopVarId>;
pub type ValueMap<V> = DenseMap<ValueId, V>;
pub type OpMap<V> = DenseMap<OpId, V>;
pub type VarMap<V> = DenseMap<LoopVarId, V>;

/// Index of a kernel parameter in `Kernel::params`.
pub type ParamId = usize;

/// A kernel: its GM tensor parameters and a body block.
#[derive(Clone, Debug, Default)]
pub struct Kernel {
    pub name: String,
    pub span: Span,
    pub params: Vec<Param>,
    pub values: Arena<Value>,
    pub ops: Arena<Op>,
    pub loop_vars: Arena<LoopVar>,
    pub body: Block,
    pub annotations: Annotations,
    /// The memory plan, once plan-memory has run: every value that needs memory on chip
    /// is in one of its slabs, with the slab's addresses.
    pub memory: Option<memory::MemoryPlan>,
}

/// A tensor in global memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: TileType,
    pub is_out: bool,
    /// Made by the compiler (relayout's copy), not a kernel parameter: zeroed before
    /// the run and never compared.
    pub scratch: bool,
    pub span: Span,
}

/// An SSA tile value.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    pub ty: TileType,
    /// The source `let` name, printed as `%name` (suffixed when shadowed).
    pub name: Option<String>,
    /// Memory space, filled by scope inference; printed once known.
    pub space: Option<MemSpace>,
    pub attrs: ValueAttrs,
    pub def: ValueDef,
}

/// Per-value annotations that later passes fill in. New fields get a `Default` of
/// "not set" and are printed only when set, so earlier dumps do not change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueAttrs {
    /// Number of buffer slots (multi-buffering), when more than one.
    pub slots: Option<u32>,
    /// On-chip byte address of each slot, from memory planning.
    pub addresses: Vec<u64>,
}

/// Where a value is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    /// Result `index` of an op (a `for` defines one result per loop-carried value).
    Result { op: OpId, index: u32 },
    /// Loop-carried block argument `index` of a `for` op's body.
    LoopArg { op: OpId, index: u32 },
}

/// A loop induction variable; index expressions refer to it.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopVar {
    pub name: String,
    pub span: Span,
    /// An `if` region's condition as written (the `else` region's is `!(...)`), which
    /// the views show: `end`'s condition is the IR's, rewritten by later passes.
    pub written: Option<String>,
}

/// An ordered list of items. Passes after `form-steps` group a loop body's ops into
/// steps, so an item is either a single op or a step holding ops.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub items: Vec<BlockItem>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BlockItem {
    Op(OpId),
    Step(Step),
}

/// An ordered group of ops executed as one load -> compute -> store unit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    pub ops: Vec<OpId>,
    pub span: Span,
    /// Kernel-wide step number (instructions carry it as `prov.step`).
    pub id: u32,
    pub kind: StepKind,
}

/// What a step does, from its ops: any of load, compute, store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepKind {
    pub load: bool,
    pub compute: bool,
    pub store: bool,
}

impl StepKind {
    pub fn name(self) -> String {
        let parts: Vec<&str> = [
            (self.load, "load"),
            (self.compute, "compute"),
            (self.store, "store"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
        parts.join(", ")
    }
}

/// What passes leave on single ops for later passes, one typed table per kind of
/// annotation (each written by one pass; a pass that does not know a table keeps
/// working). Printed with the op.
#[derive(Clone, Debug, Default)]
pub struct Annotations {
    /// DMA descriptors of a load or store (decompose-transfer; lower-to-pipes reads them).
    pub transfer: OpMap<Transfer>,
    /// The UB scratch area of a fused op's intermediates: bytes and address
    /// (plan-memory).
    pub scratch: OpMap<(u64, u64)>,
    /// A multi-buffered loop: its tiles' slot is `iteration % rotation` (multi-buffer).
    pub rotation: OpMap<u32>,
    /// 2-D stores of the transpose of their value: the DMA swaps the tile strides
    /// (decompose-transfer; fix-to-gm and the verifier read it).
    pub transposed: OpSet,
    /// Why out-of-ssa inserted this copy (or re-materialised this constant).
    pub copy_note: OpMap<CopyNote>,
    /// A loop whose product subtile-matmul split along K because an operand's tile did
    /// not fit its L0 buffer whole; printed on the loop.
    pub l0_split: OpMap<L0Split>,
    /// A product subtile-matmul left whole though its tiles overflow L0: why, for
    /// plan-memory's capacity error to show at the product.
    pub l0_whole: OpMap<String>,
    /// A load's or store's index as written (with spans), one per axis (`None` for `:`
    /// and indirect axes), from lowering: diagnostics about an index quote the source,
    /// whatever axis-split made of it.
    pub source_index: OpMap<Vec<Option<crate::front::hir::IndexExpr>>>,
}

impl Annotations {
    /// Gives op `to` every annotation of op `from` (a copy of it).
    pub fn copy(&mut self, from: OpId, to: OpId) {
        fn copy_entry<V: Clone>(table: &mut OpMap<V>, from: OpId, to: OpId) {
            if let Some(v) = table.get(&from).cloned() {
                table.insert(to, v);
            }
        }
        copy_entry(&mut self.transfer, from, to);
        copy_entry(&mut self.scratch, from, to);
        copy_entry(&mut self.rotation, from, to);
        copy_entry(&mut self.copy_note, from, to);
        copy_entry(&mut self.l0_split, from, to);
        copy_entry(&mut self.l0_whole, from, to);
        copy_entry(&mut self.source_index, from, to);
        if self.transposed.contains(&from) {
            self.transposed.insert(to);
        }
    }
}

/// Why subtile-matmul split a product into K sub-tiles: the whole operand needed `bytes`
/// of `space` (every slot counted), which holds `capacity`; `chunks` sub-tiles fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L0Split {
    pub space: MemSpace,
    pub bytes: u64,
    pub capacity: u64,
    pub chunks: u64,
    /// The pieces move from tiles kept whole in L1 (a `slice` loop) rather than being
    /// loaded from GM piece by piece.
    pub from_l1: bool,
    /// Blocks along M and N (each `[1, 1]` for K pieces): the product was split into
    /// `blocks[0] x blocks[1]` block products, each stored by itself.
    pub blocks: [u64; 2],
}

/// Why out-of-ssa gave a loop-carried tile a copy instead of sharing its buffer with the
/// value it comes from; printed after the op, with the values' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyNote {
    /// `read` is still read after `defined`, which would take its buffer, is defined.
    ReadAfterDef { read: ValueId, defined: ValueId },
    /// `defined` is computed by an op that cannot write over `read` in place.
    NotInPlace { read: ValueId, defined: ValueId },
    /// `a` and `b` are live at the same time, so they cannot share one buffer.
    BothLive { a: ValueId, b: ValueId },
    /// `value` cannot share the loop's buffer: another memory space, type or slot count.
    Placement { value: ValueId },
    /// A temporary that breaks a cycle among the copies of one back edge (a swap).
    Cycle,
}

/// A load or store as DMA descriptors: `dims` (outermost first) of which the first
/// `peel` become loops around a descriptor of the remaining dimensions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transfer {
    pub dims: Vec<TransferDim>,
    pub peel: usize,
    /// Gathers and scatters move `rows` rows of `len` elements instead.
    pub rows: Option<(u64, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransferDim {
    pub extent: u64,
    /// The tile axis whose valid extent (tail) bounds this dimension at run time.
    pub clamp_axis: Option<usize>,
    /// Strides in elements in the GM tensor and in the tile.
    pub gm_stride: i64,
    pub tile_stride: i64,
}

impl Block {
    pub fn from_ops(ops: impl IntoIterator<Item = OpId>) -> Block {
        Block {
            items: ops.into_iter().map(BlockItem::Op).collect(),
        }
    }

    /// Every op of this block in order, looking through steps (not into loop bodies).
    pub fn ops(&self) -> impl Iterator<Item = OpId> + '_ {
        self.items.iter().flat_map(|item| match item {
            BlockItem::Op(op) => std::slice::from_ref(op).iter().copied(),
            BlockItem::Step(step) => step.ops.iter().copied(),
        })
    }

    /// Keeps the ops for which `keep` holds, dropping emptied steps.
    pub fn retain_ops(&mut self, mut keep: impl FnMut(OpId) -> bool) {
        self.items.retain_mut(|item| match item {
            BlockItem::Op(op) => keep(*op),
            BlockItem::Step(step) => {
                step.ops.retain(|op| keep(*op));
                !step.ops.is_empty()
            }
        });
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub kind: OpKind,
    pub span: Span,
    /// The values this op defines, in order (none for `store`).
    pub results: Vec<ValueId>,
}

impl Op {
    /// For a `for`, each carried value's init, block argument, yield and result (those
    /// the loop has), which the lowering keeps in one buffer; none for other ops.
    pub fn carried_groups(&self) -> Vec<Vec<ValueId>> {
        let OpKind::For(l) = &self.kind else {
            return Vec::new();
        };
        (0..l.args.len())
            .map(|i| {
                [
                    l.inits.get(i),
                    l.args.get(i),
                    l.yields.get(i),
                    self.results.get(i),
                ]
                .into_iter()
                .flatten()
                .copied()
                .collect()
            })
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum OpKind {
    /// `load param[index]`: one result of numpy's region shape (single positions'
    /// axes dropped; `typing::region`), or of the box once a reshape to it is folded in.
    /// With `pad` (printed `pad V`), the last axis's index and an unclamped range on
    /// the rows' axis (the first above extent 1) may leave the tensor, and those
    /// positions hold `V` (one `dmapad`, three when the rows may leave); such a load
    /// lives in UB.
    Load {
        param: ParamId,
        index: Vec<Index>,
        pad: Option<f64>,
    },
    /// `store param[index] = value`; masked (tail) lanes are not stored.
    Store {
        param: ParamId,
        index: Vec<Index>,
        value: ValueId,
        /// `+=` on a scatter (printed `store ... add`): each row adds into the tensor's
        /// row, in order, so repeated indices sum (one `scatter ... add`).
        accumulate: bool,
    },
    Unary {
        op: UnaryOp,
        arg: ValueId,
    },
    /// Elementwise with numpy broadcasting.
    Binary {
        op: BinaryOp,
        lhs: ValueId,
        rhs: ValueId,
    },
    /// Keeps the reduced axis with extent 1; masked lanes are ignored.
    Reduce {
        op: ReduceOp,
        arg: ValueId,
        axis: usize,
    },
    /// `lhs @ rhs`, plus `acc` when set (an accumulator kept in L0C: the result is
    /// `acc + lhs @ rhs`, the product summed first, as the source's `acc += x @ w`).
    /// With `acc_block` (one `Range` or `Full` per axis; empty: the whole accumulator)
    /// the product adds into that block of `acc` and the result is the whole
    /// accumulator: subtile-matmul's M x N blocks of one L0C accumulator.
    MatMul {
        lhs: ValueId,
        rhs: ValueId,
        acc: Option<ValueId>,
        acc_block: Vec<Index>,
    },
    Transpose {
        arg: ValueId,
    },
    /// `arg[index]`, transposed when `transpose`: a sub-tile of a 2-D tile (each axis a
    /// `Range` of constant length, or `Full`), made by subtile-matmul to move L0-sized
    /// pieces of an L1 tile into L0A / L0B (one `mov2d` from a strided view).
    Slice {
        arg: ValueId,
        index: Vec<Index>,
        transpose: bool,
    },
    /// Converts to the result's dtype.
    Cast {
        arg: ValueId,
    },
    /// The same elements in the result's shape, row-major (numpy's `reshape`,
    /// `squeeze`, `unsqueeze`): one `vcopy` reading the source with the new shape.
    Reshape {
        arg: ValueId,
    },
    /// A tile (or rank-0 scalar) with every lane `value`.
    Full {
        value: f64,
    },
    /// An index expression as an `i32` scalar.
    IndexValue {
        expr: IndexExpr,
    },
    /// `lhs op rhs`, elementwise with numpy broadcasting: a mask (masked lanes false).
    Compare {
        op: CmpOp,
        lhs: ValueId,
        rhs: ValueId,
    },
    /// `where(mask, on_true, on_false)`, broadcasting all three.
    Select {
        mask: ValueId,
        on_true: ValueId,
        on_false: ValueId,
    },
    /// An `i32` tile whose lanes hold their index along `axis`.
    Iota {
        axis: usize,
    },
    /// A loop-carried update `old op= value`: the result is `old` with the valid lanes
    /// of `value` combined in; masked lanes keep the old value.
    Update {
        op: UpdateOp,
        old: ValueId,
        value: ValueId,
    },
    /// A tile moved to another memory space (same type); inserted by scope inference.
    Copy {
        arg: ValueId,
    },
    /// `buffers(ty, n)`: a tile of `n` slots (the value's `attrs.slots`), each written
    /// and read whole by `slot_write` and `slot_read`. Emits no instruction.
    Buffers,
    /// `buf[slot] = value`: `value` (of `buf`'s type) becomes the content of a slot.
    /// Lowering computes `value` straight into the slot where it can (`ir::slots`).
    SlotWrite {
        buf: ValueId,
        slot: IndexExpr,
        value: ValueId,
    },
    /// `buf[slot]`: the tile last written to a slot (read in place where it can).
    SlotRead {
        buf: ValueId,
        slot: IndexExpr,
    },
    /// An elementwise expression tree over `args`, produced by fusion.
    Fused {
        args: Vec<ValueId>,
        expr: FusedExpr,
    },
    For(ForOp),
}

/// A structured counted loop. `inits`, `args` (the body's block arguments), `yields`
/// and the op's results correspond one to one and have equal types.
#[derive(Clone, Debug, PartialEq)]
pub struct ForOp {
    pub var: LoopVarId,
    pub start: i64,
    pub end: LoopEnd,
    pub step: i64,
    /// `@buffers(n)`.
    pub buffers: Option<u32>,
    pub inits: Vec<ValueId>,
    pub args: Vec<ValueId>,
    pub body: Block,
    pub yields: Vec<ValueId>,
}

/// Where a loop stops: a constant, or an expression of enclosing loops' variables
/// (`for %j in 0..(%i + 64) step 32`) with its range, as the checker made it.
pub type LoopEnd = crate::front::hir::LoopEnd<IndexExpr>;

impl ForOp {
    fn trips_to(&self, end: i64) -> u64 {
        crate::front::hir::trips(self.start, end, self.step)
    }

    /// The number of iterations when the bounds are constants. A pass that needs it
    /// leaves a loop with an affine end alone (and says so where it explains itself).
    pub fn static_trip_count(&self) -> Option<u64> {
        self.end.as_const().map(|end| self.trips_to(end))
    }

    /// True when every entry into the loop runs its body at least once (a loop whose
    /// end is affine may run zero times on some entries).
    pub fn always_runs(&self) -> bool {
        self.static_trip_count().is_some_and(|n| n > 0)
    }

    /// The most iterations one entry into the loop runs.
    pub fn max_trip_count(&self) -> u64 {
        self.trips_to(self.end.max())
    }

    /// The fewest iterations one entry into the loop runs.
    pub fn min_trip_count(&self) -> u64 {
        self.trips_to(self.end.min())
    }

    /// The first and the largest value the variable takes, when it takes any.
    pub fn var_range(&self) -> Option<(i64, i64)> {
        let trips = i64::try_from(self.max_trip_count()).ok()?;
        let last = self.step.checked_mul(trips.checked_sub(1)?)?;
        (trips > 0).then_some((self.start, self.start.checked_add(last)?))
    }
}

/// One axis of a tensor access.
#[derive(Clone, Debug, PartialEq)]
pub enum Index {
    Full,
    /// `start .. start + len`; `clamped` ranges may pass the tensor's extent in a tail
    /// iteration, where only the lanes inside it are valid.
    Range {
        start: IndexExpr,
        len: u64,
        clamped: bool,
    },
    /// A single position (the axis is kept with extent 1).
    Single(IndexExpr),
    /// `len` positions `step` apart from `start` (`step` > 1), all inside the tensor:
    /// printed `start .. END step S` as the source writes it, END one past the last.
    Strided {
        start: IndexExpr,
        len: u64,
        step: u64,
    },
    /// Gather/scatter blocks along this axis by an `i32` tile (one axis per access).
    Indirect(ValueId),
}

/// An integer expression over loop variables, as written in the source.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IndexExpr {
    Const(i64),
    Var(LoopVarId),
    Add(Box<IndexExpr>, Box<IndexExpr>),
    Sub(Box<IndexExpr>, Box<IndexExpr>),
    Mul(Box<IndexExpr>, Box<IndexExpr>),
    FloorDiv(Box<IndexExpr>, i64),
    Mod(Box<IndexExpr>, i64),
}

impl IndexExpr {
    /// The expression as the source writes it (`i // 64 % 2`), each variable named
    /// by `var`.
    pub fn source_text(&self, var: &dyn Fn(LoopVarId) -> String) -> String {
        self.source_at(var, 0, 0)
    }

    /// `prec`: the binding strength the context needs (0 none, 1 additive, 2
    /// multiplicative); `depth` bounds the recursion on a malformed tree.
    fn source_at(&self, var: &dyn Fn(LoopVarId) -> String, prec: u8, depth: usize) -> String {
        if depth > crate::limits::MAX_NESTING_DEPTH {
            return "...".into();
        }
        let d = depth + 1;
        let (text, own) = match self {
            IndexExpr::Const(c) => (c.to_string(), 3),
            IndexExpr::Var(v) => (var(*v), 3),
            IndexExpr::Add(a, b) => (
                format!("{} + {}", a.source_at(var, 1, d), b.source_at(var, 2, d)),
                1,
            ),
            IndexExpr::Sub(a, b) => (
                format!("{} - {}", a.source_at(var, 1, d), b.source_at(var, 2, d)),
                1,
            ),
            IndexExpr::Mul(a, b) => (
                format!("{} * {}", a.source_at(var, 2, d), b.source_at(var, 3, d)),
                2,
            ),
            IndexExpr::FloorDiv(a, c) => (format!("{} // {c}", a.source_at(var, 2, d)), 2),
            IndexExpr::Mod(a, c) => (format!("{} % {c}", a.source_at(var, 2, d)), 2),
        };
        if own < prec {
            format!("({text})")
        } else {
            text
        }
    }
}

/// The expression of a `fused` op. Its size is capped by fusion (`MAX_FUSED_NODES`), which
/// bounds the recursion depth of everything that walks it.
#[derive(Clone, Debug, PartialEq)]
pub enum FusedExpr {
    /// Operand `$i` of the fused op.
    Arg(u32),
    /// A scalar literal.
    Const(f64),
    Unary(UnaryOp, Box<FusedExpr>),
    Binary(BinaryOp, Box<FusedExpr>, Box<FusedExpr>),
}

impl FusedExpr {
    pub fn node_count(&self) -> usize {
        match self {
            FusedExpr::Arg(_) | FusedExpr::Const(_) => 1,
            FusedExpr::Unary(_, a) => 1 + a.node_count(),
            FusedExpr::Binary(_, a, b) => 1 + a.node_count() + b.node_count(),
        }
    }
}

impl OpKind {
    /// The values this op reads, in a fixed order (loop inits and yields for `for`; not
    /// the values used inside its body).
    pub fn operands(&self) -> Vec<ValueId> {
        let mut out = Vec::new();
        self.visit_operands(|v| out.push(v));
        out
    }

    fn visit_operands(&self, mut f: impl FnMut(ValueId)) {
        let index_values = |index: &[Index], f: &mut dyn FnMut(ValueId)| {
            for ix in index {
                if let Index::Indirect(v) = ix {
                    f(*v);
                }
            }
        };
        match self {
            OpKind::Load { index, .. } => index_values(index, &mut f),
            OpKind::Store { index, value, .. } => {
                index_values(index, &mut f);
                f(*value);
            }
            OpKind::Unary { arg, .. }
            | OpKind::Reduce { arg, .. }
            | OpKind::Transpose { arg }
            | OpKind::Slice { arg, .. }
            | OpKind::Cast { arg }
            | OpKind::Reshape { arg }
            | OpKind::Copy { arg } => f(*arg),
            OpKind::Binary { lhs, rhs, .. } | OpKind::Compare { lhs, rhs, .. } => {
                f(*lhs);
                f(*rhs);
            }
            OpKind::Select {
                mask,
                on_true,
                on_false,
            } => {
                f(*mask);
                f(*on_true);
                f(*on_false);
            }
            OpKind::MatMul { lhs, rhs, acc, .. } => {
                f(*lhs);
                f(*rhs);
                acc.iter().copied().for_each(f);
            }
            OpKind::Update { old, value, .. } => {
                f(*old);
                f(*value);
            }
            OpKind::Full { .. }
            | OpKind::IndexValue { .. }
            | OpKind::Iota { .. }
            | OpKind::Buffers => {}
            OpKind::SlotWrite { buf, value, .. } => {
                f(*buf);
                f(*value);
            }
            OpKind::SlotRead { buf, .. } => f(*buf),
            OpKind::Fused { args, .. } => args.iter().copied().for_each(f),
            OpKind::For(l) => {
                l.inits.iter().copied().for_each(&mut f);
                l.yields.iter().copied().for_each(f);
            }
        }
    }

    /// Rewrites every operand (including loop inits and yields) through `f`.
    pub fn map_operands(&mut self, mut f: impl FnMut(ValueId) -> ValueId) {
        let map_index = |index: &mut [Index], f: &mut dyn FnMut(ValueId) -> ValueId| {
            for ix in index {
                if let Index::Indirect(v) = ix {
                    *v = f(*v);
                }
            }
        };
        match self {
            OpKind::Load { index, .. } => map_index(index, &mut f),
            OpKind::Store { index, value, .. } => {
                map_index(index, &mut f);
                *value = f(*value);
            }
            OpKind::Unary { arg, .. }
            | OpKind::Reduce { arg, .. }
            | OpKind::Transpose { arg }
            | OpKind::Slice { arg, .. }
            | OpKind::Cast { arg }
            | OpKind::Reshape { arg }
            | OpKind::Copy { arg } => *arg = f(*arg),
            OpKind::Binary { lhs, rhs, .. } | OpKind::Compare { lhs, rhs, .. } => {
                *lhs = f(*lhs);
                *rhs = f(*rhs);
            }
            OpKind::Select {
                mask,
                on_true,
                on_false,
            } => {
                *mask = f(*mask);
                *on_true = f(*on_true);
                *on_false = f(*on_false);
            }
            OpKind::MatMul { lhs, rhs, acc, .. } => {
                *lhs = f(*lhs);
                *rhs = f(*rhs);
                if let Some(a) = acc {
                    *a = f(*a);
                }
            }
            OpKind::Update { old, value, .. } => {
                *old = f(*old);
                *value = f(*value);
            }
            OpKind::Full { .. }
            | OpKind::IndexValue { .. }
            | OpKind::Iota { .. }
            | OpKind::Buffers => {}
            OpKind::SlotWrite { buf, value, .. } => {
                *buf = f(*buf);
                *value = f(*value);
            }
            OpKind::SlotRead { buf, .. } => *buf = f(*buf),
            OpKind::Fused { args, .. } => args.iter_mut().for_each(|a| *a = f(*a)),
            OpKind::For(l) => {
                l.inits.iter_mut().for_each(|a| *a = f(*a));
                l.yields.iter_mut().for_each(|a| *a = f(*a));
            }
        }
    }

    /// True for ops whose only effect is their results: they may be removed when unused
    /// and merged when identical. Loads are excluded because a store may change memory,
    /// slot reads because a slot write may, and two `buffers` are two tiles.
    pub fn is_pure(&self) -> bool {
        !matches!(
            self,
            OpKind::Load { .. }
                | OpKind::Store { .. }
                | OpKind::For(_)
                | OpKind::Buffers
                | OpKind::SlotWrite { .. }
                | OpKind::SlotRead { .. }
        )
    }

    /// Elementwise ops that fusion may merge into a `fused` expression.
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            OpKind::Unary { .. } | OpKind::Binary { .. } | OpKind::Fused { .. }
        )
    }
}

impl Kernel {
    /// The source span of the op that defines `v` (a loop's, for a carried value).
    pub fn def_span(&self, v: ValueId) -> Option<crate::diag::Span> {
        let op = match self.values.get(v)?.def {
            ValueDef::Result { op, .. } | ValueDef::LoopArg { op, .. } => op,
        };
        self.ops.get(op).map(|o| o.span)
    }

    /// Appends a value defined by `def`.
    pub fn add_value(&mut self, ty: TileType, name: Option<String>, def: ValueDef) -> ValueId {
        self.values.push(Value {
            ty,
            name,
            space: None,
            attrs: ValueAttrs::default(),
            def,
        })
    }

    /// Appends an op with one fresh result of type `ty`.
    pub fn add_op(
        &mut self,
        kind: OpKind,
        span: Span,
        ty: TileType,
        name: Option<String>,
    ) -> (OpId, ValueId) {
        let op = self.ops.push(Op {
            kind,
            span,
            results: Vec::new(),
        });
        let v = self.add_value(ty, name, ValueDef::Result { op, index: 0 });
        self.ops[op].results.push(v);
        (op, v)
    }

    /// Appends an op without results (`store`).
    pub fn add_effect(&mut self, kind: OpKind, span: Span) -> OpId {
        self.ops.push(Op {
            kind,
            span,
            results: Vec::new(),
        })
    }

    /// Calls `f` on every op reachable from the body in program order, loop ops before
    /// their bodies. Iterative so deep nesting cannot overflow the stack.
    pub fn walk_ops(&self, f: impl FnMut(OpId, &Op)) {
        self.walk_ops_from(self.body.ops().collect(), f);
    }

    /// As [`Kernel::walk_ops`], from `roots` (e.g. one loop's body) only.
    pub fn walk_ops_from(&self, roots: Vec<OpId>, mut f: impl FnMut(OpId, &Op)) {
        let mut stack: Vec<std::vec::IntoIter<OpId>> = vec![roots.into_iter()];
        while let Some(top) = stack.last_mut() {
            let Some(id) = top.next() else {
                stack.pop();
                continue;
            };
            let Some(op) = self.ops.get(id) else { continue };
            f(id, op);
            if let OpKind::For(l) = &op.kind {
                stack.push(l.body.ops().collect::<Vec<_>>().into_iter());
            }
        }
    }

    /// How many times each value is read (operands, yields, inits), indexed by value.
    pub fn use_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.values.len()];
        self.walk_ops(|_, op| {
            op.kind.visit_operands(|v| {
                if let Some(c) = counts.get_mut(v.index()) {
                    *c += 1;
                }
            })
        });
        counts
    }

    /// The block at `path` (a list of nested `for` ops), or the body for an empty path.
    pub fn block_mut(&mut self, path: &[OpId]) -> Option<&mut Block> {
        match path.last() {
            None => Some(&mut self.body),
            Some(op) => match &mut self.ops.get_mut(*op)?.kind {
                OpKind::For(l) => Some(&mut l.body),
                _ => None,
            },
        }
    }

    /// Every block as (path of enclosing `for` ops, ops in order), outermost first.
    pub fn blocks(&self) -> Vec<(Vec<OpId>, Vec<OpId>)> {
        let mut out = vec![(Vec::new(), self.body.ops().collect::<Vec<_>>())];
        let mut i = 0;
        while let Some((path, ops)) = out.get(i).cloned() {
            for op in ops {
                if let Some(Op {
                    kind: OpKind::For(l),
                    ..
                }) = self.ops.get(op)
                {
                    let mut p = path.clone();
                    p.push(op);
                    out.push((p, l.body.ops().collect()));
                }
            }
            i += 1;
        }
        out
    }

    /// Replaces every use of `from` by `to` in the reachable ops.
    pub fn replace_uses(&mut self, from: ValueId, to: ValueId) {
        let mut ids = Vec::new();
        self.walk_ops(|id, _| ids.push(id));
        for id in ids {
            self.ops[id]
                .kind
                .map_operands(|v| if v == from { to } else { v });
        }
    }
}
