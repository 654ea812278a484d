//! The pipe-level instruction set the compiler emits and the simulator executes, and its
//! assembly text (`asm`). Each instruction is described once, in `describe`: its text,
//! its operands (`operands`), its pipe and its rules.
//!
//! # Model
//! A [`Program`] declares its GM tensors (bound by position to the kernel's inputs) and
//! holds a flat instruction list. The S pipe walks the list in order: it executes scalar
//! instructions and loop control itself and dispatches every other instruction, with its
//! register operands resolved at that moment, to the queue of the instruction's pipe
//! ([`Op::pipe`]). Sizes, extents and strides are in *elements* of the instruction's
//! dtype; addresses are *byte* offsets.
//!
//! # Assembly text
//! One instruction per line; `;` starts a comment; blank lines are ignored. A line may end
//! with provenance annotations `!step N` and `!span START..END` (a byte range in the
//! kernel source). Operands are separated by commas.
//!
//! | form | meaning |
//! |---|---|
//! | `.tensor x f32[64, 512]` | declare GM tensor `x` (the k-th declaration binds input k) |
//! | `rN` | scalar register, `r0`..`r31`, i64 |
//! | `ub[r1 + 64]`, `l1[128]`, `x[r2]` | address: memory space (`ub l1 l0a l0b l0c`) or GM tensor name, base register plus byte offset |
//! | `ub[r1]{8, 512, 512}` | 2-D tile view: rows, cols (immediate or register), row stride in elements (immediate) |
//! | `[e, ss, ds]` | DMA dimension: extent (immediate or register), source and destination strides in elements; outermost first |
//! | `key=value` | named operand |
//!
//! Scalar (S pipe): `mov rD, V`; `add|sub|mul|div|rem|min|max rD, rA, V` (div/rem by
//! zero is an error); `sld rD, SLOT` / `sst rS, SLOT` (a 64-slot spill area);
//! `loop rN, V` ... `endloop` (hardware loop: the body runs V times with rN = 0, 1, ...;
//! V <= 0 skips it; loops nest).
//!
//! Transfers: `dma.DT DST, SRC, [e, ss, ds]...` (pipe from the spaces: GM->UB/L1 MTE2,
//! UB->GM and UB->L1 MTE3, UB->UB V); `gather.DT ub[..], x[..], ub[IDX], rows=V, len=V,
//! sstride=I, dstride=I` (MTE2: row k of the destination is source row `idx[k]`, idx an
//! i32 tile); `scatter.DT y[..], ub[..], ub[IDX], rows=.., len=.., sstride=.., dstride=..`
//! (MTE3: source row k goes to destination row `idx[k]`); `mov2d.DT l0a[..]{..}, l1[..]{..}[, trans]`
//! (MTE1, optionally transposing: the destination is then cols x rows).
//!
//! Matrix: `mmad.DT l0c[..], l0a[..], l0b[..], m=V, k=V, n=V, acc=V` (M: C[m,n] = (acc != 0
//! ? C : 0) + A[m,k] @ B[k,n]; A, B row-major with dtype DT in f32/f16/bf16, C f32).
//! `mmv.DT l0c[..], l0a[..], l0b[..], k=V, n=V, acc=V` (M: the matrix-vector product,
//! `mmad` with m = 1: C[1,n] = (acc != 0 ? C : 0) + A[1,k] @ B[k,n], priced by the
//! preset's `matvec_block_n` instead of 16-row blocks).
//! `fix.DT DST{..}, l0c[..]{..}` (FIX: L0C f32 to UB or GM, cast to DT).
//!
//! Vector (V, on UB tiles; a source with 1 row or 1 col broadcasts over the destination):
//! unary `vexp vlog vexp2 vlog2 vsqrt vrsqrt vabs vneg vrelu vsigmoid vtanh vgelu vsilu vrecip` `DST,
//! SRC`; binary `vadd vsub vmul vdiv vmax vmin vand vor vxor vshl vshr vfloordiv vmod DST, A, B`
//! (the last seven on i32 lanes) where A or B may be a scalar
//! (float literal, integer literal or register); reductions `vsum vrmax vrmin DST, SRC,
//! axis=0|1` over the source tile's rows x cols (register extents mask a tail); `vcast.TO.FROM
//! DST, SRC`; `vdup.DT DST, SCALAR`; `vcopy.DT DST, SRC`. With `.i32`, add, sub, mul, max,
//! min, dup and copy work on exact integers. Masks (dtype `mask`, one byte per lane, 0 or
//! 1): `vcmp.lt|le|gt|ge|eq|ne.DT DST, A, B` writes the mask DST (A or B may be a scalar);
//! `vsel.DT DST, MASK, A, B` takes A where MASK holds, else B (A or B may be a scalar);
//! `viota.i32 DST, axis=0|1` writes each lane's row or column index.
//!
//! Sync: `set_flag SRC, DST, ID`, `wait_flag SRC, DST, ID` (ID immediate or register),
//! `pipe_barrier PIPE|ALL`.
//!
//! ```text
//! ; y = exp(x) over 4 tiles of 8 x 64, double-buffered on event ids 0/1
//! .tensor x f32[32, 64]
//! .tensor y f32[32, 64]
//! loop r1, 4                          ; r1 = tile
//!   rem r2, r1, 2                     ; r2 = slot (and event id)
//!   mul r3, r2, 2048                  ; slot base in ub
//!   mul r4, r1, 2048                  ; tile offset in x and y
//!   dma.f32 ub[r3], x[r4], [512, 1, 1]          !step 1
//!   set_flag MTE2, V, r2
//!   wait_flag MTE2, V, r2
//!   vexp.f32 ub[r3]{8, 64, 64}, ub[r3]{8, 64, 64} !step 2 !span 120..131
//!   set_flag V, MTE3, r2
//!   wait_flag V, MTE3, r2
//!   dma.f32 y[r4], ub[r3], [512, 1, 1]          !step 3
//! endloop
//! ```

pub mod asm;
mod describe;
pub mod operands;

use crate::diag::{Location, Span, VerifierError, VerifierErrors};
use crate::types::{CmpOp, DType, MemSpace, Pipe};
use serde::{Deserialize, Serialize};

pub const NUM_REGS: u16 = 32;
/// Hard ceiling on DMA dimensions the ISA encodes; presets may allow fewer.
pub const MAX_DMA_DIMS: u32 = 4;
/// Hard ceiling on event ids per (src, dst) pipe pair (multi-buffering uses up to 16
/// slots, `@buffers(16)`).
pub const MAX_EVENT_IDS: u32 = 16;
pub const SPILL_SLOTS: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Reg(pub u16);

impl crate::dense::DenseKey for Reg {
    fn index(self) -> usize {
        usize::from(self.0)
    }
    fn from_index(index: usize) -> Self {
        Reg(index as u16)
    }
}

/// A scalar operand: immediate or register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Val {
    Imm(i64),
    Reg(Reg),
}

/// Where an address points: an on-chip buffer or a declared GM tensor (index into
/// [`Program::tensors`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Region {
    Buf(MemSpace),
    Tensor(u32),
}

impl Region {
    pub fn space(self) -> MemSpace {
        match self {
            Region::Buf(s) => s,
            Region::Tensor(_) => MemSpace::GM,
        }
    }
}

/// `region[base + offset]`, a byte address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Addr {
    pub region: Region,
    pub base: Option<Reg>,
    pub offset: i64,
}

impl Addr {
    pub fn buf(space: MemSpace, offset: i64) -> Addr {
        Addr {
            region: Region::Buf(space),
            base: None,
            offset,
        }
    }
}

/// A 2-D view: `rows x cols` elements, rows `stride` elements apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Tile {
    pub addr: Addr,
    pub rows: Val,
    pub cols: Val,
    pub stride: i64,
}

/// One DMA dimension, strides in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DmaDim {
    pub extent: Val,
    pub src_stride: i64,
    pub dst_stride: i64,
}

/// A vector source operand.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum VSrc {
    Tile(Tile),
    Float(f32),
    Int(i64),
    Reg(Reg),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum AluOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
}

impl AluOp {
    /// The result of `op rD, x, y`; `None` for an overflow or a zero divisor (a
    /// simulation error). `div` and `rem` are Python's `//` and `%`: the quotient rounds
    /// toward negative infinity and the remainder takes the divisor's sign, as the index
    /// expressions and conditions the compiler lowers mean them.
    pub fn apply(self, x: i64, y: i64) -> Option<i64> {
        let floor_div = |x: i64, y: i64| {
            let q = x.checked_div(y)?;
            if x.checked_rem(y)? != 0 && ((x < 0) != (y < 0)) {
                q.checked_sub(1)
            } else {
                Some(q)
            }
        };
        match self {
            AluOp::Add => x.checked_add(y),
            AluOp::Sub => x.checked_sub(y),
            AluOp::Mul => x.checked_mul(y),
            AluOp::Div => floor_div(x, y),
            AluOp::Rem => x.checked_sub(floor_div(x, y)?.checked_mul(y)?),
            AluOp::Min => Some(x.min(y)),
            AluOp::Max => Some(x.max(y)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum UnOp {
    Exp,
    Log,
    Exp2,
    Log2,
    Sqrt,
    Rsqrt,
    Abs,
    Neg,
    Relu,
    Sigmoid,
    Tanh,
    Gelu,
    Silu,
    Recip,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    /// Bitwise, on i32 lanes only (a mask's logic is `vmin`, `vmax` and `vsub`).
    And,
    Or,
    Xor,
    /// A lane's amount outside `0 .. 32` gives 0 (`vshl`) or the sign fill (`vshr`,
    /// arithmetic).
    Shl,
    Shr,
    /// numpy's int32 `//` and `%` (floor; the remainder has the divisor's sign; a zero
    /// divisor gives 0), on i32 lanes only.
    FloorDiv,
    Mod,
}

impl BinOp {
    /// The ops on i32 lanes only.
    pub fn is_integer_only(self) -> bool {
        matches!(
            self,
            BinOp::And
                | BinOp::Or
                | BinOp::Xor
                | BinOp::Shl
                | BinOp::Shr
                | BinOp::FloorDiv
                | BinOp::Mod
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum RedOp {
    Sum,
    Max,
    Min,
}

/// Which position an arg-reduction finds: of the largest or of the smallest lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ArgOp {
    Max,
    Min,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Op {
    Mov {
        dst: Reg,
        src: Val,
    },
    Alu {
        op: AluOp,
        dst: Reg,
        a: Reg,
        b: Val,
    },
    Sld {
        dst: Reg,
        slot: u32,
    },
    Sst {
        src: Reg,
        slot: u32,
    },
    Sldg {
        dtype: DType,
        dst: Reg,
        src: Addr,
    },
    Loop {
        counter: Reg,
        count: Val,
    },
    EndLoop,
    Dma {
        dtype: DType,
        dst: Addr,
        src: Addr,
        dims: Vec<DmaDim>,
    },
    Gather {
        dtype: DType,
        dst: Addr,
        src: Addr,
        index: Addr,
        rows: Val,
        len: Val,
        src_stride: i64,
        dst_stride: i64,
    },
    /// GM rows into a ub tile with a fill, Ascend's `DataCopyPad`: each of `rows` rows
    /// of the tile, `width` lanes wide, is `left` lanes of `value`, then `len` elements
    /// of the source row, then `value` to the end. What a load that may leave its
    /// tensor (`pad`) becomes: `left + len <= width` at run time.
    DmaPad {
        dtype: DType,
        dst: Addr,
        src: Addr,
        rows: Val,
        len: Val,
        left: Val,
        width: i64,
        src_stride: i64,
        dst_stride: i64,
        value: f64,
    },
    /// With `add`, each row adds into its destination row (the DMA's atomic add), in
    /// order, so repeated indices sum.
    Scatter {
        dtype: DType,
        dst: Addr,
        src: Addr,
        index: Addr,
        rows: Val,
        len: Val,
        src_stride: i64,
        dst_stride: i64,
        add: bool,
    },
    Mov2d {
        dtype: DType,
        dst: Tile,
        src: Tile,
        transpose: bool,
    },
    Mmad {
        dtype: DType,
        c: Addr,
        a: Addr,
        b: Addr,
        m: Val,
        k: Val,
        n: Val,
        acc: Val,
    },
    /// A matrix-vector product: [`Op::Mmad`] with one row in A and C (`m = 1`).
    Mmv {
        dtype: DType,
        c: Addr,
        a: Addr,
        b: Addr,
        k: Val,
        n: Val,
        acc: Val,
    },
    Fix {
        dtype: DType,
        dst: Tile,
        src: Tile,
    },
    VUnary {
        op: UnOp,
        dtype: DType,
        dst: Tile,
        src: Tile,
    },
    VBinary {
        op: BinOp,
        dtype: DType,
        dst: Tile,
        a: VSrc,
        b: VSrc,
    },
    VReduce {
        op: RedOp,
        dtype: DType,
        axis: u8,
        dst: Tile,
        src: Tile,
    },
    /// The position along `axis` of the largest (smallest) lane of `src`, as i32 in
    /// `dst`: the first on ties, the first NaN if any (numpy's `argmax`).
    VArgReduce {
        op: ArgOp,
        dtype: DType,
        axis: u8,
        dst: Tile,
        src: Tile,
    },
    VCast {
        to: DType,
        from: DType,
        dst: Tile,
        src: Tile,
    },
    VDup {
        dtype: DType,
        dst: Tile,
        value: VSrc,
    },
    VCopy {
        dtype: DType,
        dst: Tile,
        src: Tile,
    },
    /// Each lane of the mask `dst` (one byte per lane, 0 or 1) is `a op b`.
    VCmp {
        op: CmpOp,
        dtype: DType,
        dst: Tile,
        a: VSrc,
        b: VSrc,
    },
    /// Each lane of `dst` is `a` where the mask holds, else `b`.
    VSel {
        dtype: DType,
        dst: Tile,
        mask: Tile,
        a: VSrc,
        b: VSrc,
    },
    /// Each lane of the i32 tile `dst` holds its row (`axis` 0) or column (1) in the view.
    VIota {
        dtype: DType,
        axis: u8,
        dst: Tile,
    },
    SetFlag {
        src: Pipe,
        dst: Pipe,
        id: Val,
    },
    WaitFlag {
        src: Pipe,
        dst: Pipe,
        id: Val,
    },
    /// `None` is `pipe_barrier ALL`: the S pipe waits until every pipe has drained.
    Barrier {
        pipe: Option<Pipe>,
    },
}

impl Op {
    /// The pipe that executes this instruction. Only meaningful for a validated op
    /// (a DMA between spaces the machine cannot connect reports MTE2).
    pub fn pipe(&self) -> Pipe {
        describe::pipe(self)
    }

    /// Transcendental and division ops pay the preset's transcendental factor.
    pub fn is_transcendental(&self) -> bool {
        match self {
            Op::VUnary { op, .. } => !matches!(op, UnOp::Abs | UnOp::Neg | UnOp::Relu),
            Op::VBinary { op, .. } => *op == BinOp::Div,
            _ => false,
        }
    }
}

/// The pipe a DMA between these spaces runs on, or `None` if no path exists.
pub fn dma_pipe(src: MemSpace, dst: MemSpace) -> Option<Pipe> {
    use MemSpace::*;
    match (src, dst) {
        (GM, UB) | (GM, L1) => Some(Pipe::MTE2),
        (UB, GM) | (UB, L1) => Some(Pipe::MTE3),
        (UB, UB) => Some(Pipe::V),
        _ => None,
    }
}

/// Where an instruction came from: the kernel source span, the step (of form-steps) and
/// the tile-IR op it implements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Provenance {
    pub span: Option<Span>,
    pub step: Option<u32>,
    /// The index of the op, in the tile IR that lower-to-pipes read, that this
    /// instruction implements; `None` for what the compiler added around the ops (sync,
    /// loop control, spills) and for hand-written assembly. The assembly text does not
    /// carry it. (Always serialised: the playground's postcard messages have no
    /// optional fields.)
    #[serde(default)]
    pub op: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Instr {
    pub op: Op,
    pub prov: Provenance,
}

impl Instr {
    pub fn new(op: Op) -> Instr {
        Instr {
            op,
            prov: Provenance::default(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TensorDecl {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<u64>,
}

impl TensorDecl {
    pub fn bytes(&self) -> u64 {
        self.shape
            .iter()
            .fold(1u64, |a, &d| a.saturating_mul(d))
            .saturating_mul(self.dtype.bytes())
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Program {
    pub tensors: Vec<TensorDecl>,
    pub instrs: Vec<Instr>,
    /// Comments on instructions by index, printed after `;` (emit names the value each
    /// `sst` / `sld` spills); the parser skips comments, so they do not read back.
    #[serde(default)]
    pub notes: Vec<(u32, String)>,
    /// The `loop`s that are `if` regions (a trip count of 0 or 1), in instruction
    /// order, with their conditions in source names: the simulator counts which way
    /// each went, and the printer writes the condition as a comment.
    #[serde(default)]
    pub branches: Vec<Branch>,
}

/// An `if` region's `loop` instruction and its condition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Branch {
    pub instr: u32,
    pub cond: String,
}

impl Program {
    /// The condition of the `if` region that `loop` instruction `index` opens.
    pub fn branch_at(&self, index: u32) -> Option<&Branch> {
        let at = self
            .branches
            .binary_search_by_key(&index, |b| b.instr)
            .ok()?;
        self.branches.get(at)
    }

    /// The assembly text of instruction `index` (without provenance), for messages.
    pub fn instr_text(&self, index: usize) -> String {
        match self.instrs.get(index) {
            Some(i) => asm::op_text(self, &i.op),
            None => format!("<no instruction #{index}>"),
        }
    }

    pub fn region_name(&self, region: Region) -> String {
        match region {
            Region::Buf(s) => s.name().to_string(),
            Region::Tensor(t) => self
                .tensors
                .get(t as usize)
                .map_or_else(|| format!("tensor{t}"), |d| d.name.clone()),
        }
    }
}

/// Rules a well-formed instruction obeys beyond its operand shapes: which spaces each
/// operand may live in and which dtypes an op accepts (each instruction's are in its
/// entry of `describe`), registers in range and tensors declared. The parser and the
/// simulator both check them, so a program built in memory by the compiler gets the same
/// errors.
pub fn validate_op(program: &Program, op: &Op) -> Result<(), String> {
    validate_op_rules(program, op)?;
    let mut in_range = true;
    operands::registers(op, &mut |r, _| in_range &= r.0 < NUM_REGS);
    need(in_range, "register out of range r0..r31")
}

/// [`validate_op`] without the register numbering: what holds already while registers
/// are still virtual (the lowered program).
pub fn validate_op_rules(program: &Program, op: &Op) -> Result<(), String> {
    describe::rules(op)?;
    let mut declared = true;
    operands::mem_operands(op, &mut |m| {
        declared &= match m.addr.region {
            Region::Tensor(t) => (t as usize) < program.tensors.len(),
            Region::Buf(s) => s != MemSpace::GM,
        }
    });
    need(declared, "address names an undeclared tensor")
}

fn need(ok: bool, msg: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(msg.to_string())
    }
}

impl Program {
    /// Every instruction well formed and loops balanced; errors name the instruction.
    pub fn validate(&self) -> Result<(), VerifierErrors> {
        let mut errs = VerifierErrors::new();
        let mut depth = 0usize;
        let at = |i: usize| Location::Instr {
            index: i,
            text: self.instr_text(i),
        };
        for (i, ins) in self.instrs.iter().enumerate() {
            if let Err(e) = validate_op(self, &ins.op) {
                errs.push(VerifierError::new(at(i), ins.prov.span, e));
            }
            match ins.op {
                Op::Loop { .. } => depth += 1,
                Op::EndLoop if depth == 0 => errs.push(VerifierError::new(
                    at(i),
                    ins.prov.span,
                    "no `loop` opens it",
                )),
                Op::EndLoop => depth -= 1,
                _ => {}
            }
        }
        if depth > 0 {
            errs.push(VerifierError::new(
                Location::Program,
                None,
                format!("{depth} `loop` without a matching `endloop`"),
            ));
        }
        // The simulator finds a `loop`'s branch by binary search.
        let mut after = None;
        for b in &self.branches {
            let i = b.instr as usize;
            let is_loop = matches!(self.instrs.get(i).map(|x| &x.op), Some(Op::Loop { .. }));
            if !is_loop || after.is_some_and(|a| a >= i) {
                errs.push(VerifierError::new(
                    Location::Program,
                    None,
                    format!("branch `if {}` names instruction {i}, which is not a `loop` after the previous branch's", b.cond),
                ));
            }
            after = Some(i);
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs)
        }
    }
}
