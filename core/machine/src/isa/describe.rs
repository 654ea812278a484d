//! The instruction set, described once. Each entry of the table below gives one
//! instruction's assembly syntax (its mnemonic and its operands in text order, each with
//! its text form), what each operand is to the machine (its role, as [`operands`] reads
//! it), the pipe that runs it and the rules it obeys. `instructions!` expands the table
//! into everything else that must know every instruction: the operand reader and the
//! register renamer ([`operands`]), the printer and the parser ([`asm`]), [`Op::pipe`]
//! and the rules of [`validate_op`](super::validate_op).
//!
//! Adding an instruction touches three places: its description (its `Op` variant and
//! its entry here), its semantics (`sim::exec`; a scalar instruction's is the S pipe's
//! step in `sim::timing`) and its price (`sim::timing`). The compiler points at each:
//! every expansion of the table, `sim::exec::execute` and the price are matches without
//! a wildcard. The test `core/machine/tests/opcodes.rs` holds the rule: no other source
//! file has a match that names every opcode.
//!
//! # An entry
//! `Op::Variant "name" { field: FORM => role(args), ... } pipe EXPR, rules EXPR;`
//! - `"name"` is the mnemonic's first word; a family of instructions (`add`, `vexp`, ...)
//!   leaves it out and gives its op field the form `Head` instead.
//! - Every field of the variant, in text order, with its text form ([`asm`]): `Head`,
//!   the mnemonic's first word; `Suffix`, a `.word` of the mnemonic (a dtype, a
//!   comparison); `Pos`, a positional operand; `Key("m")`, an operand `m=...`;
//!   `Flag("trans")`, a word that is there when the field is set.
//! - The role, for a field the machine reads or writes, is a method of the operand sinks
//!   ([`operands`]): `def()`, `reg(slot)`, `scalar(slot)`, `mem(access, elem_bytes,
//!   extent)`, `tile(access, elem_bytes)`, `vsrc(elem_bytes)`, `extents()`. Its arguments
//!   may use every field (bound by reference).
//! - `pipe` and `rules` are expressions over the fields and the whole instruction,
//!   `instr`; the rules' messages are the parser's and the verifiers' errors.
//!
//! [`operands`]: super::operands
//! [`asm`]: super::asm

use super::asm::{Flag, Form, Head, Key, Miss, Parser, Pos, Printer, Suffix};
use super::operands::MemAccess::{Index, Read, ReadWrite, Write};
use super::operands::{self, Dim, Extent, MemAccess, Operand, Reader, RegRole, Renamer};
use super::{dma_pipe, need, Addr, BinOp, Op, Reg, Region, UnOp, VSrc, Val};
use super::{MAX_DMA_DIMS, MAX_EVENT_IDS, SPILL_SLOTS};
use crate::diag::Diagnostic;
use crate::types::{DType, MemSpace, Pipe};
use Dim::{Imm, Slot};
use MemSpace::{GM, L0A, L0B, L0C, L1, UB};

/// Expands the table (see the module comment) into one match over `Op` for each reader
/// of the description. Every field is bound in every arm, so the expansions allow
/// unused bindings.
macro_rules! instructions {
    (
        $instr:ident;
        $(
            Op::$variant:ident $($name:literal)? {
                $($field:ident: $form:expr $(=> $role:ident($($arg:expr),* $(,)?))?),* $(,)?
            }
            pipe $pipe:expr,
            rules $rules:expr;
        )*
    ) => {
        /// Each operand of `op` through the reading sink, in operand order.
        #[allow(unused_variables)]
        pub(super) fn read<F: FnMut(Operand)>(op: &Op, v: &mut Reader<'_, F>) {
            match op {
                $(Op::$variant { $($field),* } => {
                    $($(v.$role($field $(, $arg)*);)?)*
                })*
            }
            v.end();
        }

        /// Each register of `op` through the renaming sink, in operand order.
        #[allow(unused_variables)]
        pub(super) fn rename<'a, F: FnMut(&mut Reg, RegRole)>(
            op: &'a mut Op,
            v: &mut Renamer<'a, '_, F>,
        ) {
            match op {
                $(Op::$variant { $($field),* } => {
                    $($(v.$role($field $(, $arg)*);)?)*
                })*
            }
            v.end();
        }

        /// The text of `op`: its mnemonic, then its operands.
        #[allow(unused_variables)]
        pub(super) fn print(op: &Op, p: &mut Printer<'_>) {
            match op {
                $(Op::$variant { $($field),* } => {
                    $(p.name($name);)?
                    $(Form::print(&$form, $field, p);)*
                })*
            }
        }

        /// The instruction whose mnemonic `p` holds, read from its operands.
        #[allow(unused_variables)]
        pub(super) fn parse(p: &mut Parser<'_>) -> Result<Op, Diagnostic> {
            $(
                let entry = |p: &mut Parser<'_>| -> Result<Op, Miss> {
                    Ok(Op::$variant { $($field: Form::parse(&$form, p)?),* })
                };
                if let Some(done) = p.entry(&[$($name)?], entry) {
                    return done;
                }
            )*
            Err(p.unknown())
        }

        /// The pipe that runs `instr`.
        #[allow(unused_variables)]
        pub(super) fn pipe($instr: &Op) -> Pipe {
            match $instr {
                $(Op::$variant { $($field),* } => $pipe,)*
            }
        }

        /// The rules `instr` obeys beyond its operand shapes.
        #[allow(unused_variables)]
        pub(super) fn rules($instr: &Op) -> Result<(), String> {
            match $instr {
                $(Op::$variant { $($field),* } => $rules,)*
            }
        }
    };
}

instructions! {
    instr;

    // ------------------------------------------------ scalar (S pipe)
    Op::Mov "mov" {
        dst: Pos => def(),
        src: Pos => scalar(0),
    }
    pipe Pipe::S,
    rules Ok(());

    Op::Alu {
        op: Head,
        dst: Pos => def(),
        a: Pos => reg(0),
        b: Pos => scalar(1),
    }
    pipe Pipe::S,
    rules Ok(());

    Op::Sld "sld" {
        dst: Pos => def(),
        slot: Pos,
    }
    pipe Pipe::S,
    rules need(*slot < SPILL_SLOTS, "spill slot out of range 0..64");

    Op::Sst "sst" {
        src: Pos => reg(0),
        slot: Pos,
    }
    pipe Pipe::S,
    rules need(*slot < SPILL_SLOTS, "spill slot out of range 0..64");

    // One element of a GM tensor into a register: what a branch on data reads
    // (`if load mask[i, j] != 0`).
    Op::Sldg "sldg" {
        dtype: Suffix,
        dst: Pos => def(),
        src: Pos => mem(Read, dtype.bytes(), ONE_ELEMENT),
    }
    pipe Pipe::S,
    rules need(*dtype == DType::I32, "sldg loads an i32 element")
        .and(need(space(src) == GM, "sldg reads a GM tensor"));

    Op::Loop "loop" {
        counter: Pos => def(),
        count: Pos => scalar(0),
    }
    pipe Pipe::S,
    rules Ok(());

    Op::EndLoop "endloop" {}
    pipe Pipe::S,
    rules Ok(());

    // ------------------------------------------------ transfers
    // Dimension i's extent at val[i].
    Op::Dma "dma" {
        dtype: Suffix,
        dst: Pos => mem(Write, dtype.bytes(), Extent::strided(dims, |d| d.dst_stride)),
        src: Pos => mem(Read, dtype.bytes(), Extent::strided(dims, |d| d.src_stride)),
        dims: Pos => extents(),
    }
    pipe dma_pipe(space(src), space(dst)).unwrap_or(Pipe::MTE2),
    rules need(
        !dims.is_empty() && dims.len() <= MAX_DMA_DIMS as usize,
        "a DMA has 1 to 4 dimensions",
    )
    .and(need(
        dma_pipe(space(src), space(dst)).is_some(),
        "no DMA path between these spaces (GM->UB, GM->L1, UB->GM, UB->L1, UB->UB)",
    ));

    // GM rows into a ub tile: row k of the tile is source row `index[k]`.
    Op::Gather "gather" {
        dtype: Suffix,
        dst: Pos => mem(Write, dtype.bytes(), row_tile(*dst_stride)),
        src: Pos => mem(Read, dtype.bytes(), picked_rows(*src_stride)),
        index: Pos => mem(Index, 4, INDEX_TILE),
        rows: Key("rows") => scalar(0),
        len: Key("len") => scalar(1),
        src_stride: Key("sstride"),
        dst_stride: Key("dstride"),
    }
    pipe Pipe::MTE2,
    rules need(
        space(dst) == UB && space(src) == GM && space(index) == UB,
        "gather moves GM rows into ub with an index tile in ub",
    );

    // GM rows into a ub tile, each row `left` lanes of `value`, `len` source elements,
    // then `value` to `width` lanes (Ascend's DataCopyPad): a load with `pad`.
    Op::DmaPad "dmapad" {
        dtype: Suffix,
        dst: Pos => mem(Write, dtype.bytes(), padded_rows(*width, *dst_stride)),
        src: Pos => mem(Read, dtype.bytes(), row_tile(*src_stride)),
        rows: Key("rows") => scalar(0),
        len: Key("len") => scalar(1),
        left: Key("left") => scalar(2),
        width: Key("width"),
        src_stride: Key("sstride"),
        dst_stride: Key("dstride"),
        value: Key("value"),
    }
    pipe Pipe::MTE2,
    rules need(
        space(dst) == UB && space(src) == GM,
        "dmapad moves GM rows into ub",
    )
    .and(need(*width >= 1 && *width <= *dst_stride, "dmapad's width is 1 to dstride lanes"))
    .and(need(*dtype != DType::Mask, "dmapad moves f32, f16, bf16 or i32 elements"));

    // A ub tile into GM rows: row k of the tile goes to destination row `index[k]`;
    // with `add`, adds into it (the DMA's atomic add), so repeated rows sum.
    Op::Scatter "scatter" {
        dtype: Suffix,
        dst: Pos => mem(if *add { ReadWrite } else { Write }, dtype.bytes(), picked_rows(*dst_stride)),
        src: Pos => mem(Read, dtype.bytes(), row_tile(*src_stride)),
        index: Pos => mem(Index, 4, INDEX_TILE),
        rows: Key("rows") => scalar(0),
        len: Key("len") => scalar(1),
        src_stride: Key("sstride"),
        dst_stride: Key("dstride"),
        add: Flag("add"),
    }
    pipe Pipe::MTE3,
    rules need(
        space(dst) == GM && space(src) == UB && space(index) == UB,
        "scatter moves ub rows to GM with an index tile in ub",
    );

    Op::Mov2d "mov2d" {
        dtype: Suffix,
        dst: Pos => tile(Write, dtype.bytes()),
        src: Pos => tile(Read, dtype.bytes()),
        transpose: Flag("trans"),
    }
    pipe Pipe::MTE1,
    rules need(
        space(&src.addr) == L1 && matches!(space(&dst.addr), L0A | L0B),
        "mov2d moves l1 to l0a or l0b",
    );

    // ------------------------------------------------ matrix
    // C[m, n] (f32) += A[m, k] @ B[k, n], each row-major and dense; m, k, n at val[0..3].
    Op::Mmad "mmad" {
        dtype: Suffix,
        c: Pos => mem(accumulator(acc), 4, dense(Slot(0), Slot(2))),
        a: Pos => mem(Read, dtype.bytes(), dense(Slot(0), Slot(1))),
        b: Pos => mem(Read, dtype.bytes(), dense(Slot(1), Slot(2))),
        m: Key("m") => scalar(0),
        k: Key("k") => scalar(1),
        n: Key("n") => scalar(2),
        acc: Key("acc") => scalar(3),
    }
    pipe Pipe::M,
    rules product_rules(*dtype, [c, a, b]);

    // `mmad` with one row: C[1, n] (f32) += A[1, k] @ B[k, n]; k, n at val[0..2].
    Op::Mmv "mmv" {
        dtype: Suffix,
        c: Pos => mem(accumulator(acc), 4, dense(Imm(1), Slot(1))),
        a: Pos => mem(Read, dtype.bytes(), dense(Imm(1), Slot(0))),
        b: Pos => mem(Read, dtype.bytes(), dense(Slot(0), Slot(1))),
        k: Key("k") => scalar(0),
        n: Key("n") => scalar(1),
        acc: Key("acc") => scalar(2),
    }
    pipe Pipe::M,
    rules product_rules(*dtype, [c, a, b]);

    // L0C (f32) to ub or GM, cast to the dtype.
    Op::Fix "fix" {
        dtype: Suffix,
        dst: Pos => tile(Write, dtype.bytes()),
        src: Pos => tile(Read, 4),
    }
    pipe Pipe::FIX,
    rules need(
        space(&src.addr) == L0C && matches!(space(&dst.addr), UB | GM),
        "fix moves l0c to ub or GM",
    )
    .and(need(dtype.is_float(), "fix casts to f32, f16 or bf16"));

    // ------------------------------------------------ vector (V pipe, on ub tiles)
    Op::VUnary {
        op: Head,
        dtype: Suffix,
        dst: Pos => tile(Write, dtype.bytes()),
        src: Pos => tile(Read, dtype.bytes()),
    }
    pipe Pipe::V,
    rules all_ub(instr).and(arith_lanes(*dtype)).and(need(
        dtype.is_float() || matches!(op, UnOp::Neg | UnOp::Abs | UnOp::Relu),
        "i32 vector unary ops are neg, abs and relu",
    ));

    Op::VBinary {
        op: Head,
        dtype: Suffix,
        dst: Pos => tile(Write, dtype.bytes()),
        a: Pos => vsrc(dtype.bytes()),
        b: Pos => vsrc(dtype.bytes()),
    }
    pipe Pipe::V,
    rules all_ub(instr)
        .and(arith_lanes(*dtype))
        .and(need(
            dtype.is_float() || *op != BinOp::Div,
            "vdiv takes float lanes",
        ))
        .and(need(
            !op.is_integer_only() || *dtype == DType::I32,
            "vand, vor, vxor, vshl, vshr, vfloordiv and vmod take i32 lanes",
        ));

    Op::VReduce {
        op: Head,
        dtype: Suffix,
        dst: Pos => tile(Write, dtype.bytes()),
        src: Pos => tile(Read, dtype.bytes()),
        axis: Key("axis"),
    }
    pipe Pipe::V,
    rules all_ub(instr)
        .and(arith_lanes(*dtype))
        .and(need(*axis <= 1, "axis is 0 or 1"));

    // The suffix is the source's dtype; the positions written are i32.
    Op::VArgReduce {
        op: Head,
        dtype: Suffix,
        dst: Pos => tile(Write, 4),
        src: Pos => tile(Read, dtype.bytes()),
        axis: Key("axis"),
    }
    pipe Pipe::V,
    rules all_ub(instr)
        .and(arith_lanes(*dtype))
        .and(need(*axis <= 1, "axis is 0 or 1"));

    Op::VCast "vcast" {
        to: Suffix,
        from: Suffix,
        dst: Pos => tile(Write, to.bytes()),
        src: Pos => tile(Read, from.bytes()),
    }
    pipe Pipe::V,
    rules all_ub(instr);

    // Only the destination is checked for ub: a tile given as the value is reported as
    // such.
    Op::VDup "vdup" {
        dtype: Suffix,
        dst: Pos => tile(Write, dtype.bytes()),
        value: Pos => vsrc(dtype.bytes()),
    }
    pipe Pipe::V,
    rules need(dst.addr.region == Region::Buf(UB), "vector operands live in ub")
        .and(arith_lanes(*dtype))
        .and(need(!matches!(value, VSrc::Tile(_)), "vdup takes a scalar"));

    Op::VCopy "vcopy" {
        dtype: Suffix,
        dst: Pos => tile(Write, dtype.bytes()),
        src: Pos => tile(Read, dtype.bytes()),
    }
    pipe Pipe::V,
    rules all_ub(instr);

    Op::VCmp "vcmp" {
        op: Suffix,
        dtype: Suffix,
        dst: Pos => tile(Write, DType::Mask.bytes()),
        a: Pos => vsrc(dtype.bytes()),
        b: Pos => vsrc(dtype.bytes()),
    }
    pipe Pipe::V,
    rules all_ub(instr).and(mask_values(*dtype));

    Op::VSel "vsel" {
        dtype: Suffix,
        dst: Pos => tile(Write, dtype.bytes()),
        mask: Pos => tile(Read, DType::Mask.bytes()),
        a: Pos => vsrc(dtype.bytes()),
        b: Pos => vsrc(dtype.bytes()),
    }
    pipe Pipe::V,
    rules all_ub(instr).and(mask_values(*dtype));

    Op::VIota "viota" {
        dtype: Suffix,
        dst: Pos => tile(Write, dtype.bytes()),
        axis: Key("axis"),
    }
    pipe Pipe::V,
    rules all_ub(instr)
        .and(need(*axis <= 1, "axis is 0 or 1"))
        .and(need(*dtype == DType::I32, "viota makes an i32 tile"));

    // ------------------------------------------------ sync
    // A flag is set when the source pipe reaches it and waited for by the destination.
    Op::SetFlag "set_flag" {
        src: Pos,
        dst: Pos,
        id: Pos => scalar(0),
    }
    pipe *src,
    rules flag_rules(*src, *dst, id);

    Op::WaitFlag "wait_flag" {
        src: Pos,
        dst: Pos,
        id: Pos => scalar(0),
    }
    pipe *dst,
    rules flag_rules(*src, *dst, id);

    // `None` is `pipe_barrier ALL`, run by the S pipe.
    Op::Barrier "pipe_barrier" {
        pipe: Pos,
    }
    pipe pipe.unwrap_or(Pipe::S),
    rules need(*pipe != Some(Pipe::S), "pipe_barrier takes a non-scalar pipe or ALL");
}

// ---------------------------------------------------------------- roles

/// How a product (`mmad`, `mmv`) uses C: written, or also read when `acc` may be set.
fn accumulator(acc: &Val) -> MemAccess {
    if *acc == Val::Imm(0) {
        Write
    } else {
        ReadWrite
    }
}

/// A row-major `rows x cols` tile with no gap between rows (a product's operands).
fn dense(rows: Dim, cols: Dim) -> Extent {
    Extent::Tile {
        rows,
        cols,
        stride: cols,
    }
}

/// A gather's or scatter's index tile: `rows` (at `val[0]`) i32 entries in one row.
/// A single element.
const ONE_ELEMENT: Extent = Extent::Tile {
    rows: Imm(1),
    cols: Imm(1),
    stride: Imm(1),
};

const INDEX_TILE: Extent = Extent::Tile {
    rows: Imm(1),
    cols: Slot(0),
    stride: Imm(1),
};

/// The ub side of a gather or scatter: a tile of `rows x len` (at `val[0]`, `val[1]`),
/// rows `stride` elements apart.
fn row_tile(stride: i64) -> Extent {
    Extent::Tile {
        rows: Slot(0),
        cols: Slot(1),
        stride: Imm(stride),
    }
}

/// The ub side of a `dmapad`: `rows` rows (at `val[0]`) of `width` lanes, `stride`
/// elements apart.
fn padded_rows(width: i64, stride: i64) -> Extent {
    Extent::Tile {
        rows: Slot(0),
        cols: Imm(width),
        stride: Imm(stride),
    }
}

/// The GM side of a gather or scatter: the `rows` rows of `len` elements that the index
/// picks, `stride` elements apart.
fn picked_rows(stride: i64) -> Extent {
    Extent::Indexed {
        rows: Slot(0),
        len: Slot(1),
        stride,
    }
}

// ---------------------------------------------------------------- rules

fn space(a: &Addr) -> MemSpace {
    a.region.space()
}

/// Every memory operand of a vector instruction (its tiles) is in ub.
fn all_ub(op: &Op) -> Result<(), String> {
    let mut ub = true;
    operands::mem_operands(op, &mut |m| ub &= m.addr.region == Region::Buf(UB));
    need(ub, "vector operands live in ub")
}

fn product_rules(dtype: DType, [c, a, b]: [&Addr; 3]) -> Result<(), String> {
    need(
        space(c) == L0C && space(a) == L0A && space(b) == L0B,
        "mmad and mmv read l0a and l0b and accumulate into l0c",
    )
    .and(need(
        dtype.is_float(),
        "mmad and mmv operands are f32, f16 or bf16",
    ))
}

fn mask_values(dtype: DType) -> Result<(), String> {
    need(
        dtype != DType::Mask && !dtype.is_byte_int(),
        "vcmp and vsel take f32, f16, bf16 or i32 values",
    )
}

/// 8-bit lanes are moved and converted only (`dma`, `vcopy`, `vcast`).
fn arith_lanes(dtype: DType) -> Result<(), String> {
    need(
        !dtype.is_byte_int(),
        "vector arithmetic takes no i8 or u8 lanes: vcast them to i32 or a float first",
    )
}

fn flag_rules(src: Pipe, dst: Pipe, id: &Val) -> Result<(), String> {
    need(
        src != Pipe::S && dst != Pipe::S && src != dst,
        "flags connect two different non-scalar pipes",
    )
    .and(need(
        !matches!(id, Val::Imm(i) if !(0..MAX_EVENT_IDS as i64).contains(i)),
        "event id out of range 0..16",
    ))
}
