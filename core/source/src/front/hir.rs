//! The checked kernel: what `check` produces from the syntax tree once every static rule
//! of the language holds. Names are resolved to ids, constants are folded, every shape is
//! a number and every tile expression carries its type. Both the reference interpreter
//! and lowering to the tile IR consume this form, so it states the language's semantics
//! with nothing left to re-check.

use crate::diag::Span;
use crate::types::{CmpOp, TileType};

/// Index of a kernel parameter in `Kernel::params`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub u32);

/// Index of a `let`-bound tile in `Kernel::locals`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

/// Index of a loop in `Kernel::loops`; also names the loop's induction variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LoopId(pub u32);

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub span: Span,
    pub params: Vec<Param>,
    pub locals: Vec<Local>,
    pub loops: Vec<Loop>,
    pub body: Vec<Stmt>,
}

/// A tensor in global memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: TileType,
    pub is_out: bool,
    pub span: Span,
}

/// A tile bound by `let`. Its type never changes, including through updates.
#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    pub name: String,
    pub ty: TileType,
    /// The `let` statement's name.
    pub span: Span,
    /// `let b = buffers(ty, n);`: `n` slots (2 ..= 16), each a tile of type `ty`, read
    /// and written one slot at a time.
    pub slots: Option<u32>,
}

/// A `for` loop's header. `start` and `step` are folded constants, `step > 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    pub var: String,
    pub start: i64,
    pub end: LoopEnd,
    pub step: i64,
    /// `@buffers(n)`, 2 ..= 16.
    pub buffers: Option<u32>,
    pub span: Span,
}

/// Where a loop stops; `E` is the index expression of the stage (the tile IR has its
/// own).
#[derive(Clone, Debug, PartialEq)]
pub enum LoopEnd<E = IndexExpr> {
    Const(i64),
    /// Affine in enclosing loops' variables (`for j in 0 .. i + 64 step 32`): the trip
    /// count is known only when the loop starts. The checker proved that `step`
    /// divides `end - start` for every value they take, so such a loop has no tail,
    /// and that the end lies in `min ..= max`.
    Affine {
        expr: E,
        min: i64,
        max: i64,
    },
    /// The region of an `if`, in the stages after `hir` (which keeps `StmtKind::If`):
    /// a loop `0 .. 1 step 1` that runs once when the condition holds and not at all
    /// otherwise. Every pass that needs a trip count sees none, and every pass that
    /// handles a loop which may run zero times handles a branch the same way.
    Guard(Cond<E>),
}

impl<E> LoopEnd<E> {
    /// The end when it is a constant.
    pub fn as_const(&self) -> Option<i64> {
        match self {
            LoopEnd::Const(c) => Some(*c),
            LoopEnd::Affine { .. } | LoopEnd::Guard(_) => None,
        }
    }

    /// The smallest value the end takes (a guard's: 0, with start 0).
    pub fn min(&self) -> i64 {
        match self {
            LoopEnd::Const(c) => *c,
            LoopEnd::Affine { min, .. } => *min,
            LoopEnd::Guard(_) => 0,
        }
    }

    /// The largest value the end takes (a guard's: 1, with start 0 and step 1).
    pub fn max(&self) -> i64 {
        match self {
            LoopEnd::Const(c) => *c,
            LoopEnd::Affine { max, .. } => *max,
            LoopEnd::Guard(_) => 1,
        }
    }

    /// The condition of an `if` region.
    pub fn guard(&self) -> Option<&Cond<E>> {
        match self {
            LoopEnd::Guard(c) => Some(c),
            _ => None,
        }
    }
}

/// The condition of an `if`: comparisons of integer operands, combined with `&&`, `||`
/// and `!`. `E` is the stage's index expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cond<E = IndexExpr> {
    Cmp {
        op: CmpOp,
        lhs: Operand<E>,
        rhs: Operand<E>,
    },
    And(Box<Cond<E>>, Box<Cond<E>>),
    Or(Box<Cond<E>>, Box<Cond<E>>),
    Not(Box<Cond<E>>),
}

/// One side of a comparison in a condition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand<E = IndexExpr> {
    /// An integer expression of loop variables and constants.
    Index(E),
    /// One element of an `i32` input tensor (never stored by the kernel), at a position
    /// of index expressions the checker proved inside the tensor: `load mask[i, j]`.
    Element { param: u32, index: Vec<E> },
}

impl<E> Operand<E> {
    fn try_map<F, X>(&self, f: &mut impl FnMut(&E) -> Result<F, X>) -> Result<Operand<F>, X> {
        Ok(match self {
            Operand::Index(e) => Operand::Index(f(e)?),
            Operand::Element { param, index } => Operand::Element {
                param: *param,
                index: index.iter().map(&mut *f).collect::<Result<_, _>>()?,
            },
        })
    }

    fn exprs(&self) -> Vec<&E> {
        match self {
            Operand::Index(e) => vec![e],
            Operand::Element { index, .. } => index.iter().collect(),
        }
    }

    fn visit_mut(&mut self, f: &mut impl FnMut(&mut E)) {
        match self {
            Operand::Index(e) => f(e),
            Operand::Element { index, .. } => index.iter_mut().for_each(f),
        }
    }
}

impl<E> Cond<E> {
    /// The condition's value, given how to evaluate an operand (`None`: it could not
    /// be, and neither can the condition) and a comparison (the reference interpreter
    /// brings its own).
    pub fn eval(
        &self,
        value: &mut impl FnMut(&Operand<E>) -> Option<i64>,
        holds: &impl Fn(CmpOp, i64, i64) -> bool,
    ) -> Option<bool> {
        Some(match self {
            Cond::Cmp { op, lhs, rhs } => holds(*op, value(lhs)?, value(rhs)?),
            // Both sides are evaluated: a side that cannot be is an error either way.
            Cond::And(a, b) => {
                let (a, b) = (a.eval(value, holds)?, b.eval(value, holds)?);
                a && b
            }
            Cond::Or(a, b) => {
                let (a, b) = (a.eval(value, holds)?, b.eval(value, holds)?);
                a || b
            }
            Cond::Not(a) => !a.eval(value, holds)?,
        })
    }

    /// The same condition over other expressions.
    pub fn try_map<F, X>(&self, f: &mut impl FnMut(&E) -> Result<F, X>) -> Result<Cond<F>, X> {
        Ok(match self {
            Cond::Cmp { op, lhs, rhs } => Cond::Cmp {
                op: *op,
                lhs: lhs.try_map(f)?,
                rhs: rhs.try_map(f)?,
            },
            Cond::And(a, b) => Cond::And(Box::new(a.try_map(f)?), Box::new(b.try_map(f)?)),
            Cond::Or(a, b) => Cond::Or(Box::new(a.try_map(f)?), Box::new(b.try_map(f)?)),
            Cond::Not(a) => Cond::Not(Box::new(a.try_map(f)?)),
        })
    }

    /// The condition as source text, given each operand's: `||` loosest, then `&&`,
    /// then comparisons; `!` takes a comparison in parentheses.
    pub fn text(&self, operand: &mut impl FnMut(&Operand<E>) -> String) -> String {
        self.text_at(operand, 0)
    }

    fn text_at(&self, operand: &mut impl FnMut(&Operand<E>) -> String, prec: u8) -> String {
        let (text, own) = match self {
            Cond::Or(a, b) => (
                format!("{} || {}", a.text_at(operand, 0), b.text_at(operand, 1)),
                0,
            ),
            Cond::And(a, b) => (
                format!("{} && {}", a.text_at(operand, 1), b.text_at(operand, 2)),
                1,
            ),
            Cond::Not(a) => (format!("!{}", a.text_at(operand, 3)), 3),
            Cond::Cmp { op, lhs, rhs } => (
                format!("{} {} {}", operand(lhs), op.symbol(), operand(rhs)),
                2,
            ),
        };
        if own < prec {
            format!("({text})")
        } else {
            text
        }
    }

    /// Calls `f` on every expression the condition reads, left to right.
    pub fn visit_mut(&mut self, f: &mut impl FnMut(&mut E)) {
        match self {
            Cond::Cmp { lhs, rhs, .. } => {
                lhs.visit_mut(f);
                rhs.visit_mut(f);
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                a.visit_mut(f);
                b.visit_mut(f);
            }
            Cond::Not(a) => a.visit_mut(f),
        }
    }

    /// Every expression the condition reads (the positions of its elements included),
    /// left to right.
    pub fn exprs(&self) -> Vec<&E> {
        self.operands()
            .into_iter()
            .flat_map(Operand::exprs)
            .collect()
    }

    /// Every operand of the condition's comparisons, left to right.
    pub fn operands(&self) -> Vec<&Operand<E>> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(c) = stack.pop() {
            match c {
                Cond::Cmp { lhs, rhs, .. } => {
                    out.push(lhs);
                    out.push(rhs);
                }
                Cond::And(a, b) | Cond::Or(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Cond::Not(a) => stack.push(a),
            }
        }
        out
    }
}

/// Iterations of `start, start + step, ...` below `end`, a partial last one included
/// (0 when `step` is not positive). Every stage counts a loop's trips with this.
pub fn trips(start: i64, end: i64, step: i64) -> u64 {
    if step <= 0 || end <= start {
        0
    } else {
        // Positive and below 2^64: exact as a u64.
        let length = (i128::from(end) - i128::from(start)) as u64;
        length.div_ceil(step as u64)
    }
}

impl Loop {
    fn trips_to(&self, end: i64) -> u64 {
        trips(self.start, end, self.step)
    }

    /// Number of iterations, counting a partial tail iteration, when the bounds are
    /// constants.
    pub fn static_trip_count(&self) -> Option<u64> {
        self.end.as_const().map(|end| self.trips_to(end))
    }

    /// The most iterations one entry into the loop runs (the count itself when the
    /// bounds are constants).
    pub fn max_trip_count(&self) -> u64 {
        self.trips_to(self.end.max())
    }

    /// True when the bounds are constants and `(end - start)` is not a multiple of
    /// `step`: the last iteration is partial. False for an affine end, whose tail
    /// depends on the outer loops' values; later stages see a tail as the `clamped`
    /// ranges that follow the variable, whatever the loop's end.
    pub fn has_tail(&self) -> bool {
        match self.end {
            LoopEnd::Const(end) => end > self.start && (end - self.start) % self.step != 0,
            LoopEnd::Affine { .. } | LoopEnd::Guard(_) => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateOp {
    Set,
    Add,
    Sub,
    Mul,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let local = value;` `value.ty == locals[local].ty`.
    Let { local: LocalId, value: Expr },
    /// `local op= value;` `value` broadcasts to the local's shape and has its dtype. Only
    /// the valid (unmasked) lanes of `value` are written; masked lanes keep their old value.
    Update {
        local: LocalId,
        op: UpdateOp,
        value: Expr,
    },
    /// `let local = buffers(ty, n);`: declares the slots, none written yet.
    Buffers { local: LocalId },
    /// `local[slot] = value;` `value.ty` is the local's type; the checker proved
    /// `0 <= slot < slots` for every iteration.
    SlotWrite {
        local: LocalId,
        slot: IndexExpr,
        value: Expr,
    },
    /// `store param[index] = value;` `value` broadcasts to the region's shape
    /// (`numpy_shape`: single positions dropped), or holds the box's elements in order
    /// (equal once axes of extent 1 are dropped), and has the
    /// tensor's dtype. Masked lanes (tail) are not stored. With `accumulate` (`+=`, only
    /// on a scatter: one index is `Indirect`) each picked block adds into the tensor's,
    /// in order, so repeated indices sum (torch's `index_add_`).
    Store {
        param: ParamId,
        index: Vec<Index>,
        value: Expr,
        accumulate: bool,
    },
    /// `for` over `loops[id]`.
    For { id: LoopId, body: Vec<Stmt> },
    /// `if cond { then } else { els }` (`else if` is an `If` alone in `els`). A `let`
    /// inside a branch is local to it, except for the `joins`.
    If {
        cond: Cond,
        /// The condition as written (`on >= 8 || j == 0`), for the views: later
        /// stages rewrite `cond` (axis-split names `i` as `i0 * 32 + i1`).
        text: String,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
        joins: Vec<Join>,
    },
}

/// A name every path through an `if` defines: after the `if`, `local` holds the
/// value `then` or `els` (locals of the two branches, of `local`'s type) had at the
/// end of the branch that ran.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Join {
    pub local: LocalId,
    pub then: LocalId,
    pub els: LocalId,
}

/// One axis of a tensor access. There is exactly one per tensor dimension.
#[derive(Clone, Debug, PartialEq)]
pub enum Index {
    /// `:`: the whole axis.
    Full,
    /// `start .. start + len`. When `clamped` is set the range is driven by a loop
    /// variable of a loop with a tail and may pass the tensor's extent in the tail
    /// iteration; there only `min(len, extent - start)` lanes are valid. When not set,
    /// the checker proved `start + len <= extent` for every iteration.
    Range {
        start: IndexExpr,
        len: u64,
        clamped: bool,
    },
    /// `start, start + step, ...`, `len` positions (`step` > 1), every one inside the
    /// tensor (never clamped): the source's `a .. b step s`.
    Strided {
        start: IndexExpr,
        len: u64,
        step: u64,
    },
    /// A single position. The box it moves keeps the axis with extent 1; the tile a
    /// load gives, and the region a store fills, drop it, as numpy's integer index
    /// does (`numpy_shape`).
    Single(IndexExpr),
    /// An `i32` tile of shape `[n]` or `[n, 1]` (one axis per access): gathers or scatters
    /// `n` rows. Out-of-range values are run-time errors.
    Indirect(Box<Expr>),
}

/// numpy's shape of `x[index]` from the box it moves (one extent per axis, a single
/// position as 1): an integer index drops its axis. When every axis is a single
/// position the element is kept as a 1-element tile, as `@` keeps a dot product.
pub fn numpy_shape(index: &[Index], boxed: &[u64]) -> Vec<u64> {
    drop_single_axes(index.iter().map(|ix| matches!(ix, Index::Single(_))), boxed)
}

/// The rule behind `numpy_shape`, for any index type: `single` tells, axis by axis,
/// whether the index is a single position (the tile IR's index uses it too).
pub fn drop_single_axes(single: impl IntoIterator<Item = bool>, boxed: &[u64]) -> Vec<u64> {
    let shape: Vec<u64> = single
        .into_iter()
        .zip(boxed)
        .filter(|&(one, _)| !one)
        .map(|(_, &d)| d)
        .collect();
    if shape.is_empty() && !boxed.is_empty() {
        return vec![1];
    }
    shape
}

/// An integer expression over loop variables and constants, as written in an index.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexExpr {
    pub kind: IndexExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum IndexExprKind {
    Const(i64),
    Var(LoopId),
    Add(Box<IndexExpr>, Box<IndexExpr>),
    Sub(Box<IndexExpr>, Box<IndexExpr>),
    Mul(Box<IndexExpr>, Box<IndexExpr>),
    /// Floor division by a positive constant.
    FloorDiv(Box<IndexExpr>, i64),
    /// Modulo by a positive constant (result in `0 .. divisor`).
    Mod(Box<IndexExpr>, i64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: TileType,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Exp,
    Log,
    /// `2 ** x`
    Exp2,
    Log2,
    Sqrt,
    Rsqrt,
    Abs,
    Relu,
    Sigmoid,
    Tanh,
    /// The tanh approximation.
    Gelu,
    Silu,
    Recip,
}

impl UnaryOp {
    /// The op's value at `x`, computed in `F`: the one table the compiler folds
    /// constants with, in f64 for a source literal (rounded to its dtype when it meets
    /// a tile) and in f32 for a constant f32 tile, as the vector unit computes. (The
    /// reference interpreter keeps its own table, so that agreement means something.)
    pub fn apply<F: num_traits::Float + num_traits::FloatConst>(self, x: F) -> F {
        let one = F::one();
        let sigmoid = |x: F| one / (one + (-x).exp());
        match self {
            UnaryOp::Neg => -x,
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
            UnaryOp::Exp2 => x.exp2(),
            UnaryOp::Log2 => x.log2(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Rsqrt => one / x.sqrt(),
            UnaryOp::Abs => x.abs(),
            UnaryOp::Relu => x.max(F::zero()),
            UnaryOp::Sigmoid => sigmoid(x),
            UnaryOp::Tanh => x.tanh(),
            UnaryOp::Gelu => {
                // Both constants convert exactly enough into f32 and f64, the only `F`s
                // used; NaN would only mark a float type that cannot hold them.
                let c = ((one + one) / F::PI()).sqrt();
                let k = F::from(0.044715).unwrap_or_else(F::nan);
                let half = F::from(0.5).unwrap_or_else(F::nan);
                half * x * (one + (c * (x + k * x * x * x)).tanh())
            }
            UnaryOp::Silu => x * sigmoid(x),
            UnaryOp::Recip => one / x,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Maximum,
    Minimum,
    /// Bitwise on i32 tiles, logic on masks.
    BitAnd,
    BitOr,
    BitXor,
    /// i32 only: a lane's amount outside `0 .. 32` gives 0 for `<<` and the sign fill
    /// for `>>` (arithmetic), as numpy's `left_shift` and `right_shift` do.
    Shl,
    Shr,
    /// i32 only, as numpy's `//` and `%`: the quotient rounds toward negative infinity,
    /// the remainder takes the divisor's sign, and a zero divisor gives 0.
    FloorDiv,
    Mod,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Amax,
    Amin,
    Mean,
    /// The position of the largest lane along the axis, as i32 (numpy's `argmax`).
    Argmax,
    Argmin,
}

impl UnaryOp {
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Exp2 => "exp2",
            UnaryOp::Log2 => "log2",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Rsqrt => "rsqrt",
            UnaryOp::Abs => "abs",
            UnaryOp::Relu => "relu",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Gelu => "gelu",
            UnaryOp::Silu => "silu",
            UnaryOp::Recip => "recip",
        }
    }

    pub const ALL: [UnaryOp; 14] = [
        UnaryOp::Neg,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Exp2,
        UnaryOp::Log2,
        UnaryOp::Sqrt,
        UnaryOp::Rsqrt,
        UnaryOp::Abs,
        UnaryOp::Relu,
        UnaryOp::Sigmoid,
        UnaryOp::Tanh,
        UnaryOp::Gelu,
        UnaryOp::Silu,
        UnaryOp::Recip,
    ];

    pub fn from_name(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Transcendental ops cost more than the vector slope (the machine's
    /// `transcendental_factor`, 4 on the presets).
    pub fn is_transcendental(self) -> bool {
        !matches!(self, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu)
    }
}

impl BinaryOp {
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::BitAnd => "and",
            BinaryOp::BitOr => "or",
            BinaryOp::BitXor => "xor",
            BinaryOp::Shl => "shl",
            BinaryOp::Shr => "shr",
            BinaryOp::FloorDiv => "floordiv",
            BinaryOp::Mod => "mod",
        }
    }

    /// The bit and logic operators, which have no float form.
    pub fn is_bitwise(self) -> bool {
        matches!(
            self,
            BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor | BinaryOp::Shl | BinaryOp::Shr
        )
    }

    /// The ops defined on i32 tiles (and masks, for the bitwise ones) but not floats.
    pub fn is_integer_only(self) -> bool {
        self.is_bitwise() || matches!(self, BinaryOp::FloorDiv | BinaryOp::Mod)
    }

    pub const ALL: [BinaryOp; 13] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::BitAnd,
        BinaryOp::BitOr,
        BinaryOp::BitXor,
        BinaryOp::Shl,
        BinaryOp::Shr,
        BinaryOp::FloorDiv,
        BinaryOp::Mod,
    ];

    /// The op [`BinaryOp::name`] names.
    pub fn from_name(name: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.into_iter().find(|op| op.name() == name)
    }
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Amax => "amax",
            ReduceOp::Amin => "amin",
            ReduceOp::Mean => "mean",
            ReduceOp::Argmax => "argmax",
            ReduceOp::Argmin => "argmin",
        }
    }

    pub const ALL: [ReduceOp; 6] = [
        ReduceOp::Sum,
        ReduceOp::Amax,
        ReduceOp::Amin,
        ReduceOp::Mean,
        ReduceOp::Argmax,
        ReduceOp::Argmin,
    ];

    pub fn from_name(name: &str) -> Option<ReduceOp> {
        ReduceOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// `argmax` and `argmin`: positions, not lanes.
    pub fn is_arg(self) -> bool {
        matches!(self, ReduceOp::Argmax | ReduceOp::Argmin)
    }

    /// The dtype of the result over a tile of `dtype`: i32 positions for `argmax` and
    /// `argmin`, else the tile's own.
    pub fn result_dtype(self, dtype: crate::types::DType) -> crate::types::DType {
        if self.is_arg() {
            crate::types::DType::I32
        } else {
            dtype
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A `let`-bound tile.
    Local(LocalId),
    /// `local[slot]`: the tile last written to that slot (in range, as for `SlotWrite`).
    SlotRead {
        local: LocalId,
        slot: IndexExpr,
    },
    /// A literal; `ty` is rank 0 with the dtype it takes from the other operand.
    Scalar(f64),
    /// A loop variable or index expression used as an `i32` scalar in tile arithmetic.
    IndexValue(IndexExpr),
    /// `load param[index]`; `ty` is the region's shape (`numpy_shape`) and the
    /// tensor's dtype. With `pad` (rounded to the dtype) the last axis's index, and a
    /// range on the first axis that selects more than one position (the rows), may
    /// leave the tensor, and the positions outside hold `pad`; such a range is never
    /// clamped.
    Load {
        param: ParamId,
        index: Vec<Index>,
        pad: Option<f64>,
    },
    Unary {
        op: UnaryOp,
        arg: Box<Expr>,
    },
    /// Elementwise with numpy broadcasting; operands have the same dtype (or one is a
    /// rank-0 scalar).
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// Keeps the reduced axis with extent 1. Masked lanes are ignored.
    Reduce {
        op: ReduceOp,
        arg: Box<Expr>,
        axis: usize,
    },
    /// 2-D `[m, k] @ [k, n]`; f16/bf16 operands accumulate in f32; result f32.
    MatMul {
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `.T` of a 2-D tile.
    Transpose(Box<Expr>),
    /// `arg[index]`: a sub-tile of a tile, each index `Full`, a `Range` or a `Strided`
    /// range the checker proved inside the tile (never `clamped`; a single position is
    /// a range of one, its axis dropped by a `Reshape` around). A lane masked in `arg`
    /// stays masked.
    Slice {
        arg: Box<Expr>,
        index: Vec<Index>,
    },
    /// `arg as ty.dtype`.
    Cast(Box<Expr>),
    /// `reshape`, `squeeze` and `unsqueeze`: the same elements in row-major order, in
    /// `ty`'s shape (the same count).
    Reshape(Box<Expr>),
    /// `zeros(ty)` (value 0) and `full(ty, value)`.
    Full {
        value: f64,
    },
    /// `lhs op rhs` with numpy broadcasting: a mask. The operands share one dtype that
    /// is not `mask` (or one is a rank-0 scalar). A masked (tail) lane is false.
    Compare {
        op: CmpOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `where(mask, on_true, on_false)`, broadcasting all three; the values share the
    /// result's dtype (a scalar literal takes it).
    Select {
        mask: Box<Expr>,
        on_true: Box<Expr>,
        on_false: Box<Expr>,
    },
    /// `iota(i32[...], axis=K)`: every lane holds its index along `axis`.
    Iota {
        axis: usize,
    },
}
