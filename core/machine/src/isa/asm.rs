//! Assembly text: the printer and the parser (format documented in `isa`). `parse(print(p))
//! == p` for every valid program.
//!
//! The grammar is line-oriented with a handful of operand shapes, so a small hand-written
//! splitter is clearer than a parser-combinator dependency.

use super::*;
use crate::diag::{Diagnostic, Diagnostics, Span};
use std::fmt::{self, Write as _};

// ---------------------------------------------------------------- printing

struct Show<'a, T>(&'a Program, &'a T);

fn val(v: &Val) -> String {
    match v {
        Val::Imm(i) => i.to_string(),
        Val::Reg(r) => format!("r{}", r.0),
    }
}

impl fmt::Display for Show<'_, Addr> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.1;
        write!(f, "{}[", self.0.region_name(a.region))?;
        match (a.base, a.offset) {
            (None, o) => write!(f, "{o}")?,
            (Some(r), 0) => write!(f, "r{}", r.0)?,
            (Some(r), o) if o < 0 => write!(f, "r{} - {}", r.0, o.unsigned_abs())?,
            (Some(r), o) => write!(f, "r{} + {o}", r.0)?,
        }
        f.write_str("]")
    }
}

impl fmt::Display for Show<'_, Tile> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.1;
        write!(
            f,
            "{}{{{}, {}, {}}}",
            Show(self.0, &t.addr),
            val(&t.rows),
            val(&t.cols),
            t.stride
        )
    }
}

impl fmt::Display for Show<'_, VSrc> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            VSrc::Tile(t) => Show(self.0, t).fmt(f),
            // Debug prints the shortest text that parses back to the same f32, always
            // with a `.`, an exponent, `inf` or `NaN`, so it never reads as an integer.
            VSrc::Float(x) => write!(f, "{x:?}"),
            VSrc::Int(i) => write!(f, "{i}"),
            VSrc::Reg(r) => write!(f, "r{}", r.0),
        }
    }
}

fn alu_name(op: AluOp) -> &'static str {
    match op {
        AluOp::Add => "add",
        AluOp::Sub => "sub",
        AluOp::Mul => "mul",
        AluOp::Div => "div",
        AluOp::Rem => "rem",
        AluOp::Min => "min",
        AluOp::Max => "max",
    }
}
const ALU_OPS: [AluOp; 7] = [
    AluOp::Add,
    AluOp::Sub,
    AluOp::Mul,
    AluOp::Div,
    AluOp::Rem,
    AluOp::Min,
    AluOp::Max,
];

pub fn unop_name(op: UnOp) -> &'static str {
    match op {
        UnOp::Exp => "vexp",
        UnOp::Log => "vlog",
        UnOp::Sqrt => "vsqrt",
        UnOp::Rsqrt => "vrsqrt",
        UnOp::Abs => "vabs",
        UnOp::Neg => "vneg",
        UnOp::Relu => "vrelu",
        UnOp::Sigmoid => "vsigmoid",
        UnOp::Tanh => "vtanh",
        UnOp::Gelu => "vgelu",
        UnOp::Silu => "vsilu",
        UnOp::Recip => "vrecip",
    }
}
pub const UN_OPS: [UnOp; 12] = [
    UnOp::Exp,
    UnOp::Log,
    UnOp::Sqrt,
    UnOp::Rsqrt,
    UnOp::Abs,
    UnOp::Neg,
    UnOp::Relu,
    UnOp::Sigmoid,
    UnOp::Tanh,
    UnOp::Gelu,
    UnOp::Silu,
    UnOp::Recip,
];

pub fn binop_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "vadd",
        BinOp::Sub => "vsub",
        BinOp::Mul => "vmul",
        BinOp::Div => "vdiv",
        BinOp::Max => "vmax",
        BinOp::Min => "vmin",
    }
}
pub const BIN_OPS: [BinOp; 6] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Max,
    BinOp::Min,
];

pub fn redop_name(op: RedOp) -> &'static str {
    match op {
        RedOp::Sum => "vsum",
        RedOp::Max => "vrmax",
        RedOp::Min => "vrmin",
    }
}
pub const RED_OPS: [RedOp; 3] = [RedOp::Sum, RedOp::Max, RedOp::Min];

/// The text of one instruction, without provenance.
pub fn op_text(p: &Program, op: &Op) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = write_op(&mut s, p, op);
    s
}

fn write_op(s: &mut String, p: &Program, op: &Op) -> fmt::Result {
    let a = |x: &Addr| Show(p, x).to_string();
    let t = |x: &Tile| Show(p, x).to_string();
    let v = |x: &VSrc| Show(p, x).to_string();
    match op {
        Op::Mov { dst, src } => write!(s, "mov r{}, {}", dst.0, val(src)),
        Op::Alu { op, dst, a: x, b } => {
            write!(s, "{} r{}, r{}, {}", alu_name(*op), dst.0, x.0, val(b))
        }
        Op::Sld { dst, slot } => write!(s, "sld r{}, {slot}", dst.0),
        Op::Sst { src, slot } => write!(s, "sst r{}, {slot}", src.0),
        Op::Loop { counter, count } => write!(s, "loop r{}, {}", counter.0, val(count)),
        Op::EndLoop => write!(s, "endloop"),
        Op::Dma {
            dtype,
            dst,
            src,
            dims,
        } => {
            write!(s, "dma.{dtype} {}, {}", a(dst), a(src))?;
            for d in dims {
                write!(
                    s,
                    ", [{}, {}, {}]",
                    val(&d.extent),
                    d.src_stride,
                    d.dst_stride
                )?;
            }
            Ok(())
        }
        Op::Gather {
            dtype,
            dst,
            src,
            index,
            rows,
            len,
            src_stride,
            dst_stride,
        }
        | Op::Scatter {
            dtype,
            dst,
            src,
            index,
            rows,
            len,
            src_stride,
            dst_stride,
        } => {
            let name = if matches!(op, Op::Gather { .. }) {
                "gather"
            } else {
                "scatter"
            };
            write!(
                s,
                "{name}.{dtype} {}, {}, {}, rows={}, len={}, sstride={src_stride}, dstride={dst_stride}",
                a(dst),
                a(src),
                a(index),
                val(rows),
                val(len)
            )
        }
        Op::Mov2d {
            dtype,
            dst,
            src,
            transpose,
        } => {
            write!(
                s,
                "mov2d.{dtype} {}, {}{}",
                t(dst),
                t(src),
                if *transpose { ", trans" } else { "" }
            )
        }
        Op::Mmad {
            dtype,
            c,
            a: x,
            b,
            m,
            k,
            n,
            acc,
        } => write!(
            s,
            "mmad.{dtype} {}, {}, {}, m={}, k={}, n={}, acc={}",
            a(c),
            a(x),
            a(b),
            val(m),
            val(k),
            val(n),
            val(acc)
        ),
        Op::Mmv {
            dtype,
            c,
            a: x,
            b,
            k,
            n,
            acc,
        } => write!(
            s,
            "mmv.{dtype} {}, {}, {}, k={}, n={}, acc={}",
            a(c),
            a(x),
            a(b),
            val(k),
            val(n),
            val(acc)
        ),
        Op::Fix { dtype, dst, src } => write!(s, "fix.{dtype} {}, {}", t(dst), t(src)),
        Op::VUnary {
            op,
            dtype,
            dst,
            src,
        } => write!(s, "{}.{dtype} {}, {}", unop_name(*op), t(dst), t(src)),
        Op::VBinary {
            op,
            dtype,
            dst,
            a: x,
            b,
        } => write!(
            s,
            "{}.{dtype} {}, {}, {}",
            binop_name(*op),
            t(dst),
            v(x),
            v(b)
        ),
        Op::VReduce {
            op,
            dtype,
            axis,
            dst,
            src,
        } => {
            write!(
                s,
                "{}.{dtype} {}, {}, axis={axis}",
                redop_name(*op),
                t(dst),
                t(src)
            )
        }
        Op::VCast { to, from, dst, src } => write!(s, "vcast.{to}.{from} {}, {}", t(dst), t(src)),
        Op::VDup { dtype, dst, value } => write!(s, "vdup.{dtype} {}, {}", t(dst), v(value)),
        Op::VCopy { dtype, dst, src } => write!(s, "vcopy.{dtype} {}, {}", t(dst), t(src)),
        Op::VCmp {
            op,
            dtype,
            dst,
            a: x,
            b,
        } => write!(
            s,
            "vcmp.{}.{dtype} {}, {}, {}",
            op.name(),
            t(dst),
            v(x),
            v(b)
        ),
        Op::VSel {
            dtype,
            dst,
            mask,
            a: x,
            b,
        } => write!(
            s,
            "vsel.{dtype} {}, {}, {}, {}",
            t(dst),
            t(mask),
            v(x),
            v(b)
        ),
        Op::VIota { dtype, axis, dst } => write!(s, "viota.{dtype} {}, axis={axis}", t(dst)),
        Op::SetFlag { src, dst, id } => write!(s, "set_flag {src}, {dst}, {}", val(id)),
        Op::WaitFlag { src, dst, id } => write!(s, "wait_flag {src}, {dst}, {}", val(id)),
        Op::Barrier { pipe } => write!(s, "pipe_barrier {}", pipe.map_or("ALL", |p| p.name())),
    }
}

/// The whole program as assembly text; loop bodies are indented. Provenance is
/// written as byte spans (`!span 120..141`), which `parse` reads back.
pub fn print(p: &Program) -> String {
    print_with(p, &|sp| format!(" !span {}..{}", sp.start, sp.end))
}

/// The program as people read it: each instruction's source position as `!at
/// LINE:COL` of `source` instead of a byte span (`parse` accepts and skips it).
pub fn print_located(p: &Program, source: &str) -> String {
    print_with(p, &|sp| format!(" !at {}", sp.line_col(source)))
}

/// The program's text as lines: what `print` writes, without provenance and notes.
pub struct Listing {
    /// The `.tensor` declarations.
    pub header: Vec<String>,
    /// Instruction `i`'s text at index `i`, with its loop depth.
    pub instrs: Vec<(String, u16)>,
}

pub fn listing(p: &Program) -> Listing {
    let header = p
        .tensors
        .iter()
        .map(|t| {
            let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
            format!(".tensor {} {}[{}]", t.name, t.dtype, dims.join(", "))
        })
        .collect();
    let mut depth: u16 = 0;
    let instrs = p
        .instrs
        .iter()
        .map(|ins| {
            if matches!(ins.op, Op::EndLoop) {
                depth = depth.saturating_sub(1);
            }
            let line = (op_text(p, &ins.op), depth);
            if matches!(ins.op, Op::Loop { .. }) {
                depth = depth.saturating_add(1);
            }
            line
        })
        .collect();
    Listing { header, instrs }
}

fn print_with(p: &Program, span_text: &dyn Fn(Span) -> String) -> String {
    let mut s = String::new();
    let listing = listing(p);
    for line in &listing.header {
        s.push_str(line);
        s.push('\n');
    }
    let mut notes = p.notes.iter().peekable();
    for (i, (ins, (text, depth))) in p.instrs.iter().zip(&listing.instrs).enumerate() {
        s.push_str(&"  ".repeat(usize::from(*depth).min(32)));
        s.push_str(text);
        if let Some(step) = ins.prov.step {
            let _ = write!(s, " !step {step}");
        }
        if let Some(sp) = ins.prov.span {
            s.push_str(&span_text(sp));
        }
        // Notes are in instruction order (emit writes them so).
        while let Some((_, note)) = notes.next_if(|n| n.0 as usize <= i) {
            let _ = write!(s, " ; {note}");
        }
        s.push('\n');
    }
    s
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print(self))
    }
}

// ---------------------------------------------------------------- parsing

/// Operands as written, before the mnemonic gives them meaning.
#[derive(Clone, Debug)]
enum Opnd {
    Reg(Reg),
    Int(i64),
    Float(f32),
    Name(String),
    Addr(Addr),
    Tile(Tile),
    Dim(DmaDim),
    Key(String, Box<Opnd>),
}

type PResult<T> = Result<T, Diagnostic>;

struct LineCtx<'a> {
    names: &'a [TensorDecl],
}

fn err(msg: impl Into<String>, span: Span) -> Diagnostic {
    Diagnostic::error(msg, span)
}

/// Splits `s` (starting at byte `base` of the file) at top-level commas, trimming each
/// piece; returns pieces with their spans.
fn split_top(s: &str, base: usize) -> Vec<(&str, Span)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = s.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'[' | b'{' | b'(' => depth += 1,
            b']' | b'}' | b')' => depth -= 1,
            b',' if depth == 0 => {
                out.push(trimmed(s, base, start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(trimmed(s, base, start, s.len()));
    out
}

fn trimmed(s: &str, base: usize, a: usize, b: usize) -> (&str, Span) {
    let piece = s.get(a..b).unwrap_or("");
    let lead = piece.len() - piece.trim_start().len();
    let t = piece.trim();
    (t, Span::new(base + a + lead, base + a + lead + t.len()))
}

fn parse_reg(s: &str) -> Option<Reg> {
    let d = s.strip_prefix('r')?;
    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) || d.len() > 3 {
        return None;
    }
    let n: u16 = d.parse().ok()?;
    (n < NUM_REGS).then_some(Reg(n))
}

fn parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = if let Some(h) = body.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else {
        if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        body.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

fn parse_float(s: &str) -> Option<f32> {
    let first = s.trim_start_matches('-').bytes().next()?;
    if first.is_ascii_digit()
        || first == b'.'
        || s.trim_start_matches('-').starts_with("inf")
        || s.contains("NaN")
    {
        s.parse::<f32>().ok()
    } else {
        None
    }
}

fn is_ident(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

fn parse_val(s: &str, span: Span) -> PResult<Val> {
    if let Some(r) = parse_reg(s) {
        Ok(Val::Reg(r))
    } else if let Some(i) = parse_int(s) {
        Ok(Val::Imm(i))
    } else {
        Err(err(
            format!("expected an integer or a register r0..r31, found `{s}`"),
            span,
        ))
    }
}

impl LineCtx<'_> {
    fn operand(&self, s: &str, span: Span) -> PResult<Opnd> {
        if s.is_empty() {
            return Err(err("missing operand", span));
        }
        if let Some(inner) = s.strip_prefix('[') {
            let inner = inner
                .strip_suffix(']')
                .ok_or_else(|| err("unclosed `[`", span))?;
            let parts = split_top(inner, span.start as usize + 1);
            if parts.len() != 3 {
                return Err(err(
                    "a DMA dimension is `[extent, src_stride, dst_stride]`",
                    span,
                ));
            }
            let extent = parse_val(parts[0].0, parts[0].1)?;
            let ss = parse_int(parts[1].0)
                .ok_or_else(|| err("expected an integer stride", parts[1].1))?;
            let ds = parse_int(parts[2].0)
                .ok_or_else(|| err("expected an integer stride", parts[2].1))?;
            return Ok(Opnd::Dim(DmaDim {
                extent,
                src_stride: ss,
                dst_stride: ds,
            }));
        }
        if let Some(eq) = s.find('=') {
            if !s[..eq].contains('[') {
                let key = s[..eq].trim();
                let rest = &s[eq + 1..];
                let lead = rest.len() - rest.trim_start().len();
                let vspan = Span::new(span.start as usize + eq + 1 + lead, span.end as usize);
                return Ok(Opnd::Key(
                    key.to_string(),
                    Box::new(self.operand(rest.trim(), vspan)?),
                ));
            }
        }
        if let Some(r) = parse_reg(s) {
            return Ok(Opnd::Reg(r));
        }
        if let Some(i) = parse_int(s) {
            return Ok(Opnd::Int(i));
        }
        if let Some(x) = parse_float(s) {
            return Ok(Opnd::Float(x));
        }
        if let Some(open) = s.find('[') {
            return self.address(s, open, span);
        }
        if is_ident(s) {
            return Ok(Opnd::Name(s.to_string()));
        }
        Err(err(format!("cannot read operand `{s}`"), span))
    }

    fn address(&self, s: &str, open: usize, span: Span) -> PResult<Opnd> {
        let name = s[..open].trim();
        let close = s.find(']').ok_or_else(|| err("unclosed `[`", span))?;
        let region = if let Some(sp) = MemSpace::from_name(name).filter(|s| *s != MemSpace::GM) {
            Region::Buf(sp)
        } else if let Some(i) = self.names.iter().position(|t| t.name == name) {
            Region::Tensor(i as u32)
        } else {
            return Err(err(
                format!(
                    "`{name}` is neither a memory space (ub l1 l0a l0b l0c) nor a declared tensor"
                ),
                span,
            ));
        };
        let inner: String = s[open + 1..close]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let bad = || {
            err(
                format!(
                    "expected `rN`, `rN + imm`, `rN - imm` or `imm` inside `[]`, found `{inner}`"
                ),
                span,
            )
        };
        let (base, offset) = if let Some(i) = parse_int(&inner) {
            (None, i)
        } else {
            let cut = inner.find(['+', '-']).unwrap_or(inner.len());
            let r = parse_reg(&inner[..cut]).ok_or_else(bad)?;
            let off = match &inner[cut..] {
                "" => 0,
                rest => {
                    let (sign, num) = rest.split_at(1);
                    let n = parse_int(num).ok_or_else(bad)?;
                    if sign == "-" {
                        -n
                    } else {
                        n
                    }
                }
            };
            (Some(r), off)
        };
        let addr = Addr {
            region,
            base,
            offset,
        };
        let rest = s[close + 1..].trim();
        if rest.is_empty() {
            return Ok(Opnd::Addr(addr));
        }
        let shape = rest
            .strip_prefix('{')
            .and_then(|r| r.strip_suffix('}'))
            .ok_or_else(|| err("expected `{rows, cols, stride}` after the address", span))?;
        let parts = split_top(shape, span.start as usize);
        if parts.len() != 3 {
            return Err(err("a tile is `addr{rows, cols, stride}`", span));
        }
        let rows = parse_val(parts[0].0, span)?;
        let cols = parse_val(parts[1].0, span)?;
        let stride =
            parse_int(parts[2].0).ok_or_else(|| err("expected an integer row stride", span))?;
        Ok(Opnd::Tile(Tile {
            addr,
            rows,
            cols,
            stride,
        }))
    }
}

/// Takes operands in order with a typed accessor for each.
struct Args<'a> {
    ops: Vec<(Opnd, Span)>,
    pos: usize,
    line: Span,
    mnemonic: &'a str,
}

impl Args<'_> {
    fn next(&mut self, what: &str) -> PResult<(Opnd, Span)> {
        let r = self.ops.get(self.pos).cloned();
        self.pos += 1;
        r.ok_or_else(|| {
            err(
                format!("`{}` needs {what} as operand {}", self.mnemonic, self.pos),
                self.line,
            )
        })
    }
    fn reg(&mut self) -> PResult<Reg> {
        match self.next("a register")? {
            (Opnd::Reg(r), _) => Ok(r),
            (_, sp) => Err(err("expected a register r0..r31", sp)),
        }
    }
    fn val(&mut self) -> PResult<Val> {
        match self.next("an integer or register")? {
            (Opnd::Reg(r), _) => Ok(Val::Reg(r)),
            (Opnd::Int(i), _) => Ok(Val::Imm(i)),
            (_, sp) => Err(err("expected an integer or a register", sp)),
        }
    }
    fn int(&mut self) -> PResult<i64> {
        match self.next("an integer")? {
            (Opnd::Int(i), _) => Ok(i),
            (_, sp) => Err(err("expected an integer", sp)),
        }
    }
    fn addr(&mut self) -> PResult<Addr> {
        match self.next("an address")? {
            (Opnd::Addr(a), _) => Ok(a),
            (_, sp) => Err(err("expected an address like `ub[r1 + 64]`", sp)),
        }
    }
    fn tile(&mut self) -> PResult<Tile> {
        match self.next("a tile")? {
            (Opnd::Tile(t), _) => Ok(t),
            (_, sp) => Err(err("expected a tile like `ub[r1]{8, 64, 64}`", sp)),
        }
    }
    fn vsrc(&mut self) -> PResult<VSrc> {
        match self.next("a tile or scalar")? {
            (Opnd::Tile(t), _) => Ok(VSrc::Tile(t)),
            (Opnd::Reg(r), _) => Ok(VSrc::Reg(r)),
            (Opnd::Int(i), _) => Ok(VSrc::Int(i)),
            (Opnd::Float(x), _) => Ok(VSrc::Float(x)),
            (_, sp) => Err(err("expected a tile, a number or a register", sp)),
        }
    }
    fn pipe(&mut self, allow_all: bool) -> PResult<Option<Pipe>> {
        match self.next("a pipe")? {
            (Opnd::Name(n), _) if allow_all && n.eq_ignore_ascii_case("ALL") => Ok(None),
            (Opnd::Name(n), sp) => Pipe::from_name(&n)
                .map(Some)
                .ok_or_else(|| err(format!("unknown pipe `{n}` (S MTE2 MTE1 M V FIX MTE3)"), sp)),
            (_, sp) => Err(err("expected a pipe name", sp)),
        }
    }
    fn key_val(&mut self, key: &str) -> PResult<Val> {
        self.keyed(key).and_then(|(o, sp)| match o {
            Opnd::Reg(r) => Ok(Val::Reg(r)),
            Opnd::Int(i) => Ok(Val::Imm(i)),
            _ => Err(err(format!("`{key}=` takes an integer or register"), sp)),
        })
    }
    fn key_int(&mut self, key: &str) -> PResult<i64> {
        self.keyed(key).and_then(|(o, sp)| match o {
            Opnd::Int(i) => Ok(i),
            _ => Err(err(format!("`{key}=` takes an integer"), sp)),
        })
    }
    fn keyed(&mut self, key: &str) -> PResult<(Opnd, Span)> {
        match self.next(&format!("`{key}=`"))? {
            (Opnd::Key(k, v), sp) if k == key => Ok((*v, sp)),
            (_, sp) => Err(err(format!("expected `{key}=...`"), sp)),
        }
    }
    fn finish(self) -> PResult<()> {
        match self.ops.get(self.pos) {
            Some((_, sp)) => Err(err(
                format!("too many operands for `{}`", self.mnemonic),
                *sp,
            )),
            None => Ok(()),
        }
    }
}

fn dtype_at(s: Option<&str>, span: Span) -> PResult<DType> {
    let s = s.ok_or_else(|| err("this instruction needs a dtype suffix like `.f32`", span))?;
    // Instructions may move masks (`vcopy.mask`, `vcast.f32.mask`); tensors may not.
    DType::from_name(s)
        .or((s == "mask").then_some(DType::Mask))
        .ok_or_else(|| err(format!("unknown dtype `{s}` (f32 f16 bf16 i32 mask)"), span))
}

fn parse_op(mnemonic: &str, mut a: Args<'_>) -> PResult<Op> {
    let mspan = a.line;
    let mut parts = mnemonic.split('.');
    let base = parts.next().unwrap_or("");
    let s1 = parts.next();
    let s2 = parts.next();
    let dt = || dtype_at(s1, mspan);
    let op = if let Some(&op) = ALU_OPS.iter().find(|o| alu_name(**o) == base) {
        Op::Alu {
            op,
            dst: a.reg()?,
            a: a.reg()?,
            b: a.val()?,
        }
    } else if let Some(&op) = UN_OPS.iter().find(|o| unop_name(**o) == base) {
        Op::VUnary {
            op,
            dtype: dt()?,
            dst: a.tile()?,
            src: a.tile()?,
        }
    } else if let Some(&op) = BIN_OPS.iter().find(|o| binop_name(**o) == base) {
        Op::VBinary {
            op,
            dtype: dt()?,
            dst: a.tile()?,
            a: a.vsrc()?,
            b: a.vsrc()?,
        }
    } else if let Some(&op) = RED_OPS.iter().find(|o| redop_name(**o) == base) {
        let (dtype, dst, src) = (dt()?, a.tile()?, a.tile()?);
        let axis = a.key_int("axis")?;
        Op::VReduce {
            op,
            dtype,
            axis: u8::try_from(axis).unwrap_or(u8::MAX),
            dst,
            src,
        }
    } else {
        match base {
            "mov" => Op::Mov {
                dst: a.reg()?,
                src: a.val()?,
            },
            "sld" => Op::Sld {
                dst: a.reg()?,
                slot: u32::try_from(a.int()?).unwrap_or(u32::MAX),
            },
            "sst" => Op::Sst {
                src: a.reg()?,
                slot: u32::try_from(a.int()?).unwrap_or(u32::MAX),
            },
            "loop" => Op::Loop {
                counter: a.reg()?,
                count: a.val()?,
            },
            "endloop" => Op::EndLoop,
            "dma" => {
                let (dtype, dst, src) = (dt()?, a.addr()?, a.addr()?);
                let mut dims = Vec::new();
                while a.pos < a.ops.len() {
                    match a.next("a dimension")? {
                        (Opnd::Dim(d), _) => dims.push(d),
                        (_, sp) => {
                            return Err(err(
                                "expected a dimension `[extent, src_stride, dst_stride]`",
                                sp,
                            ))
                        }
                    }
                }
                Op::Dma {
                    dtype,
                    dst,
                    src,
                    dims,
                }
            }
            "gather" | "scatter" => {
                let (dtype, dst, src, index) = (dt()?, a.addr()?, a.addr()?, a.addr()?);
                let rows = a.key_val("rows")?;
                let len = a.key_val("len")?;
                let src_stride = a.key_int("sstride")?;
                let dst_stride = a.key_int("dstride")?;
                if base == "gather" {
                    Op::Gather {
                        dtype,
                        dst,
                        src,
                        index,
                        rows,
                        len,
                        src_stride,
                        dst_stride,
                    }
                } else {
                    Op::Scatter {
                        dtype,
                        dst,
                        src,
                        index,
                        rows,
                        len,
                        src_stride,
                        dst_stride,
                    }
                }
            }
            "mov2d" => {
                let (dtype, dst, src) = (dt()?, a.tile()?, a.tile()?);
                let transpose = match a.ops.get(a.pos) {
                    Some((Opnd::Name(n), _)) if n == "trans" => {
                        a.pos += 1;
                        true
                    }
                    _ => false,
                };
                Op::Mov2d {
                    dtype,
                    dst,
                    src,
                    transpose,
                }
            }
            "mmad" => Op::Mmad {
                dtype: dt()?,
                c: a.addr()?,
                a: a.addr()?,
                b: a.addr()?,
                m: a.key_val("m")?,
                k: a.key_val("k")?,
                n: a.key_val("n")?,
                acc: a.key_val("acc")?,
            },
            "mmv" => Op::Mmv {
                dtype: dt()?,
                c: a.addr()?,
                a: a.addr()?,
                b: a.addr()?,
                k: a.key_val("k")?,
                n: a.key_val("n")?,
                acc: a.key_val("acc")?,
            },
            "fix" => Op::Fix {
                dtype: dt()?,
                dst: a.tile()?,
                src: a.tile()?,
            },
            "vcast" => Op::VCast {
                to: dt()?,
                from: dtype_at(s2, mspan)?,
                dst: a.tile()?,
                src: a.tile()?,
            },
            "vdup" => Op::VDup {
                dtype: dt()?,
                dst: a.tile()?,
                value: a.vsrc()?,
            },
            "vcopy" => Op::VCopy {
                dtype: dt()?,
                dst: a.tile()?,
                src: a.tile()?,
            },
            "vcmp" => {
                let name = s1.unwrap_or("");
                let op = CmpOp::ALL
                    .into_iter()
                    .find(|o| o.name() == name)
                    .ok_or_else(|| {
                        err(
                            format!("unknown comparison `{name}` (lt le gt ge eq ne)"),
                            mspan,
                        )
                    })?;
                Op::VCmp {
                    op,
                    dtype: dtype_at(s2, mspan)?,
                    dst: a.tile()?,
                    a: a.vsrc()?,
                    b: a.vsrc()?,
                }
            }
            "vsel" => Op::VSel {
                dtype: dt()?,
                dst: a.tile()?,
                mask: a.tile()?,
                a: a.vsrc()?,
                b: a.vsrc()?,
            },
            "viota" => {
                let (dtype, dst) = (dt()?, a.tile()?);
                let axis = a.key_int("axis")?;
                Op::VIota {
                    dtype,
                    axis: u8::try_from(axis).unwrap_or(u8::MAX),
                    dst,
                }
            }
            "set_flag" | "wait_flag" => {
                let src = a.pipe(false)?.unwrap_or(Pipe::S);
                let dst = a.pipe(false)?.unwrap_or(Pipe::S);
                let id = a.val()?;
                if base == "set_flag" {
                    Op::SetFlag { src, dst, id }
                } else {
                    Op::WaitFlag { src, dst, id }
                }
            }
            "pipe_barrier" => Op::Barrier {
                pipe: a.pipe(true)?,
            },
            _ => return Err(err(format!("unknown instruction `{mnemonic}`"), mspan)),
        }
    };
    // Two-suffix mnemonics: `vcast.TO.FROM`, `vcmp.OP.DT`.
    let extra = if matches!(op, Op::VCast { .. } | Op::VCmp { .. }) {
        parts.next()
    } else {
        s2
    };
    if extra.is_some() || (s1.is_some() && !uses_dtype(&op)) {
        return Err(err(format!("unexpected suffix in `{mnemonic}`"), mspan));
    }
    a.finish()?;
    Ok(op)
}

fn uses_dtype(op: &Op) -> bool {
    !matches!(
        op,
        Op::Mov { .. }
            | Op::Alu { .. }
            | Op::Sld { .. }
            | Op::Sst { .. }
            | Op::Loop { .. }
            | Op::EndLoop
            | Op::SetFlag { .. }
            | Op::WaitFlag { .. }
            | Op::Barrier { .. }
    )
}

fn parse_tensor_decl(rest: &str, span: Span) -> PResult<TensorDecl> {
    let bad = || err("expected `.tensor NAME DTYPE[d0, d1, ...]`", span);
    let rest = rest.trim();
    let (name, ty) = rest.split_once(char::is_whitespace).ok_or_else(bad)?;
    let ty = ty.trim();
    let open = ty.find('[').ok_or_else(bad)?;
    let dtype = DType::from_name(ty[..open].trim())
        .ok_or_else(|| err(format!("unknown dtype in `{ty}`"), span))?;
    let dims = ty[open + 1..].strip_suffix(']').ok_or_else(bad)?;
    let shape = dims
        .split(',')
        .map(|d| {
            d.trim()
                .parse::<u64>()
                .map_err(|_| err(format!("bad dimension `{}`", d.trim()), span))
        })
        .collect::<PResult<Vec<u64>>>()?;
    if !is_ident(name) || MemSpace::from_name(name).is_some() {
        return Err(err(format!("`{name}` cannot name a tensor"), span));
    }
    Ok(TensorDecl {
        name: name.to_string(),
        dtype,
        shape,
    })
}

fn parse_prov(s: &str, base: usize) -> PResult<Provenance> {
    let mut prov = Provenance::default();
    let span = Span::new(base, base + s.len());
    for ann in s.split('!').skip(1) {
        let mut it = ann.split_whitespace();
        match (it.next(), it.next(), it.next()) {
            (Some("step"), Some(n), None) => {
                prov.step = Some(
                    n.parse()
                        .map_err(|_| err(format!("bad step `{n}`"), span))?,
                );
            }
            (Some("span"), Some(r), None) => {
                let (a, b) = r
                    .split_once("..")
                    .ok_or_else(|| err("expected `!span START..END`", span))?;
                let (a, b) = (a.parse::<u32>(), b.parse::<u32>());
                match (a, b) {
                    (Ok(a), Ok(b)) if a <= b => prov.span = Some(Span { start: a, end: b }),
                    _ => return Err(err("expected `!span START..END` with START <= END", span)),
                }
            }
            // A position in the source for the reader (`print_located`): the program
            // keeps no span, since the source is not at hand.
            (Some("at"), Some(at), None)
                if at
                    .split_once(':')
                    .is_some_and(|(l, c)| l.parse::<u32>().is_ok() && c.parse::<u32>().is_ok()) => {
            }
            _ => return Err(err(format!("unknown annotation `!{}`", ann.trim()), span)),
        }
    }
    Ok(prov)
}

/// Parses assembly text. Every malformed line is reported with its span; never panics.
pub fn parse(text: &str) -> Result<Program, Diagnostics> {
    use crate::limits::{MAX_PROGRAM_INSTRUCTIONS, MAX_SOURCE_BYTES};
    if text.len() > MAX_SOURCE_BYTES {
        return Err(vec![Diagnostic::global(format!(
            "the assembly is {} bytes; the limit is {MAX_SOURCE_BYTES} bytes (MAX_SOURCE_BYTES)",
            text.len()
        ))]);
    }
    let mut diags = Vec::new();
    let mut prog = Program::default();
    let mut lines = Vec::new();
    let mut off = 0usize;
    for raw in text.split_inclusive('\n') {
        let code = raw
            .split(';')
            .next()
            .unwrap_or("")
            .trim_end_matches(['\n', '\r']);
        lines.push((off, code));
        off += raw.len();
    }
    // Declarations first, so an instruction may name a tensor declared below it.
    for &(start, code) in &lines {
        let t = code.trim_start();
        if let Some(rest) = t.strip_prefix(".tensor") {
            let span = Span::new(start, start + code.len());
            match parse_tensor_decl(rest, span) {
                Ok(d) if prog.tensors.iter().any(|t| t.name == d.name) => {
                    diags.push(err(format!("tensor `{}` declared twice", d.name), span))
                }
                Ok(d) => prog.tensors.push(d),
                Err(e) => diags.push(e),
            }
        } else if t.starts_with('.') {
            diags.push(err(
                "unknown directive (only `.tensor`)",
                Span::new(start, start + code.len()),
            ));
        }
    }
    let ctx = LineCtx {
        names: &prog.tensors,
    };
    let mut instrs = Vec::new();
    for &(start, code) in &lines {
        let lead = code.len() - code.trim_start().len();
        let body = code.trim();
        if body.is_empty() || body.starts_with('.') {
            continue;
        }
        let line_span = Span::new(start + lead, start + lead + body.len());
        let (ins, prov_text) = match body.find('!') {
            Some(i) => (&body[..i], &body[i..]),
            None => (body, ""),
        };
        let prov_base = start + lead + ins.len();
        let ins = ins.trim_end();
        let (mnemonic, rest) = ins.split_once(char::is_whitespace).unwrap_or((ins, ""));
        let rest_base = start + lead + ins.len() - rest.len();
        let result = (|| {
            let prov = parse_prov(prov_text, prov_base)?;
            let mut ops = Vec::new();
            if !rest.trim().is_empty() {
                for (s, sp) in split_top(rest, rest_base) {
                    ops.push((ctx.operand(s, sp)?, sp));
                }
            }
            let mspan = Span::new(start + lead, start + lead + mnemonic.len());
            let op = parse_op(
                mnemonic,
                Args {
                    ops,
                    pos: 0,
                    line: mspan,
                    mnemonic,
                },
            )?;
            Ok::<_, Diagnostic>(Instr { op, prov })
        })();
        match result {
            Ok(i) => instrs.push((i, line_span)),
            Err(e) => diags.push(e),
        }
    }
    if let Some((_, span)) = instrs.get(MAX_PROGRAM_INSTRUCTIONS) {
        diags.push(err(
            format!(
                "the program has {} instructions; the limit is {MAX_PROGRAM_INSTRUCTIONS} \
                 (MAX_PROGRAM_INSTRUCTIONS)",
                instrs.len()
            ),
            *span,
        ));
        return Err(diags);
    }
    let mut depth = 0usize;
    for (ins, span) in &instrs {
        if let Err(e) = validate_op(&prog, &ins.op) {
            diags.push(err(e, *span));
        }
        match ins.op {
            Op::Loop { .. } => depth += 1,
            Op::EndLoop if depth == 0 => {
                diags.push(err("`endloop` without a matching `loop`", *span))
            }
            Op::EndLoop => depth -= 1,
            _ => {}
        }
    }
    if depth > 0 {
        diags.push(err(
            format!("{depth} `loop` without a matching `endloop`"),
            Span::new(text.len(), text.len()),
        ));
    }
    prog.instrs = instrs.into_iter().map(|(i, _)| i).collect();
    if diags.is_empty() {
        Ok(prog)
    } else {
        Err(diags)
    }
}
