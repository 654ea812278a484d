//! The syntax tree of a `.tile` file, exactly as written. Names are unresolved and
//! constant expressions unevaluated; `check` turns a kernel into `hir`.

use crate::diag::Span;
use crate::types::{CmpOp, DType};

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole source file: `const` items and kernels, in source order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct File {
    pub consts: Vec<ConstItem>,
    pub kernels: Vec<Kernel>,
}

/// `const R = 8;`
#[derive(Clone, Debug, PartialEq)]
pub struct ConstItem {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: Ident,
    pub params: Vec<Param>,
    pub body: Block,
    pub span: Span,
}

/// `x: f32[64, 512]` or `y: out f32[64, 512]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub is_out: bool,
    pub ty: TypeExpr,
    pub span: Span,
}

/// `f32[64, R * 2]`: an element type and constant-expression extents.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub dtype: DType,
    pub dtype_span: Span,
    pub shape: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    /// `acc = e;`
    Set,
    /// `acc += e;`
    Add,
    /// `acc -= e;`
    Sub,
    /// `acc *= e;`
    Mul,
}

// `For` is the large variant, and statements are few: boxing it would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let name = value;`
    Let { name: Ident, value: Expr },
    /// `name op= value;` (a loop-carried update)
    Assign {
        name: Ident,
        op: AssignOp,
        value: Expr,
    },
    /// `name[slot] = value;` (writes one slot of a `buffers(...)` tile)
    SlotWrite {
        name: Ident,
        slot: Expr,
        value: Expr,
    },
    /// `store tensor[indices] = value;`, or `+=`: an accumulating scatter.
    Store {
        tensor: Ident,
        indices: Vec<Index>,
        value: Expr,
        accumulate: bool,
    },
    /// `for var in start..end step s @buffers(n) { body }`
    For {
        var: Ident,
        /// `rev` before the range: the same iterations, last first.
        reverse: Option<Span>,
        start: Expr,
        end: Expr,
        step: Option<Expr>,
        attrs: Vec<Attr>,
        body: Block,
    },
    /// `if cond { then } else { els }`; `else if` is an `els` block holding only the
    /// inner `if`.
    If {
        cond: Cond,
        then: Block,
        els: Option<Block>,
    },
}

/// The condition of an `if`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cond {
    pub kind: CondKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CondKind {
    /// A comparison (the checker requires one), `i % 2 == 0`.
    Test(Expr),
    /// `a && b`
    And(Box<Cond>, Box<Cond>),
    /// `a || b`
    Or(Box<Cond>, Box<Cond>),
    /// `!a`
    Not(Box<Cond>),
}

/// `@buffers(2)`. Unknown attribute names are parsed and rejected by the checker.
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub name: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Index {
    pub kind: IndexKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum IndexKind {
    /// `:`
    Full,
    /// `a .. b`
    Range(Expr, Expr),
    /// `a .. b step s`: every `s`-th position from `a`, before `b`.
    Strided(Expr, Expr, Expr),
    /// A single integer index, or an indirect `i32` tile index: the checker decides
    /// from the expression's type.
    Point(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// `/`: true division on tiles.
    Div,
    /// `//`: floor division, integer (index and constant) expressions only.
    FloorDiv,
    /// `%`: modulo with a floor-division sign convention, integer expressions only.
    Mod,
    /// `@`
    MatMul,
    /// `**`: a power with a constant exponent (numpy's `t ** 2`).
    Pow,
    /// `&`, `|`, `^`: bitwise on i32 tiles and integer constants, logic on masks.
    BitAnd,
    BitOr,
    BitXor,
    /// `<<`, `>>` (arithmetic) on i32 tiles and integer constants.
    Shl,
    Shr,
    /// `<`, `<=`, `>`, `>=`, `==`, `!=`: a mask; the loosest level, non-associative.
    Cmp(CmpOp),
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::Mod => "%",
            BinaryOp::MatMul => "@",
            BinaryOp::Pow => "**",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Cmp(op) => op.symbol(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// `42`
    Int(i64),
    /// `1.0`, `1e-5`, `inf`
    Float(f64),
    /// A const, loop variable, parameter or tile name.
    Name(String),
    /// `-e`
    Neg(Box<Expr>),
    /// `~e`: bitwise not of an i32 tile or integer, logical not of a mask.
    Not(Box<Expr>),
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `e.T`
    Transpose(Box<Expr>),
    /// `e as f16`
    Cast {
        value: Box<Expr>,
        dtype: DType,
        dtype_span: Span,
    },
    /// `load x[r .. r + 8, :]`, and `load x[:, t - 3 .. t + 29] pad 0.0`
    Load {
        tensor: Ident,
        indices: Vec<Index>,
        pad: Option<Box<Expr>>,
    },
    /// `name[slot]`: one slot of a `buffers(...)` tile.
    SlotRead { name: Ident, slot: Box<Expr> },
    /// `t[:, a .. b]`: a sub-tile, one index per axis (`:` or a range). A name followed
    /// by one plain index is a [`ExprKind::SlotRead`] instead: the checker reads it by
    /// the name's type.
    Slice { arg: Box<Expr>, indices: Vec<Index> },
    /// `[a, b]`: a list of integers, only `reshape`'s shape argument.
    List(Vec<Expr>),
    /// `exp(t)`, `maximum(a, b)`, `sum(t, axis=1)`, `zeros(f32[8, 8])`, `full(f32[8, 1], -inf)`.
    Call {
        func: Ident,
        /// The leading type argument of a constructor (`zeros`, `full`).
        ty: Option<TypeExpr>,
        args: Vec<Expr>,
        /// `axis=K` of a reduction.
        axis: Option<Box<Expr>>,
    },
}
