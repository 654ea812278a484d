//! Assembly text: the printer and the parser (format documented in `isa`). `parse(print(p))
//! == p` for every valid program.
//!
//! Neither knows any instruction: each instruction's text is its entry of the ISA's
//! description (`describe`), which gives its mnemonic and each field's text form in
//! order, and `describe::print` and `describe::parse` are made from it. This module
//! holds what they call: the forms (`Head`, `Suffix`, `Pos`, `Key`, `Flag`), each
//! printing and reading a field; the text of each operand kind (register, value,
//! address, tile, ...) and of each mnemonic word; and the lines around them (tensor
//! declarations, provenance, loop indentation).
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

/// A word of a mnemonic: an instruction family's op (`add`, `vexp`, ...) or a suffix
/// (`.f32`, `.lt`).
pub(super) trait Word: Copy {
    fn word(self) -> &'static str;
    fn from_word(s: &str) -> Option<Self>;
    /// The message for a suffix that is missing (`None`) or names nothing.
    fn bad_suffix(found: Option<&str>) -> String {
        format!("unknown suffix `{}`", found.unwrap_or(""))
    }
}

/// A [`Word`] type's every value, with its word.
macro_rules! words {
    ($ty:ident, $all:ident: $($v:ident $w:literal),* $(,)?) => {
        #[doc = concat!("Every [`", stringify!($ty), "`], in declaration order.")]
        pub const $all: [$ty; [$($w),*].len()] = [$($ty::$v),*];

        impl Word for $ty {
            fn word(self) -> &'static str {
                match self {
                    $($ty::$v => $w,)*
                }
            }
            fn from_word(s: &str) -> Option<Self> {
                $all.into_iter().find(|o| o.word() == s)
            }
        }
    };
}

words!(AluOp, ALU_OPS: Add "add", Sub "sub", Mul "mul", Div "div", Rem "rem", Min "min", Max "max");
words!(UnOp, UN_OPS:
    Exp "vexp", Log "vlog", Exp2 "vexp2", Log2 "vlog2", Sqrt "vsqrt", Rsqrt "vrsqrt", Abs "vabs", Neg "vneg",
    Relu "vrelu", Sigmoid "vsigmoid", Tanh "vtanh", Gelu "vgelu", Silu "vsilu", Recip "vrecip",
);
words!(BinOp, BIN_OPS: Add "vadd", Sub "vsub", Mul "vmul", Div "vdiv", Max "vmax", Min "vmin",
    And "vand", Or "vor", Xor "vxor", Shl "vshl", Shr "vshr", FloorDiv "vfloordiv", Mod "vmod");
words!(RedOp, RED_OPS: Sum "vsum", Max "vrmax", Min "vrmin");
words!(ArgOp, ARG_OPS: Max "vargmax", Min "vargmin");

impl Word for CmpOp {
    fn word(self) -> &'static str {
        self.name()
    }
    fn from_word(s: &str) -> Option<Self> {
        CmpOp::ALL.into_iter().find(|o| o.name() == s)
    }
    fn bad_suffix(found: Option<&str>) -> String {
        format!(
            "unknown comparison `{}` (lt le gt ge eq ne)",
            found.unwrap_or("")
        )
    }
}

impl Word for DType {
    fn word(self) -> &'static str {
        self.name()
    }
    /// Instructions may move masks (`vcopy.mask`, `vcast.f32.mask`); tensors may not.
    fn from_word(s: &str) -> Option<Self> {
        DType::from_name(s).or((s == "mask").then_some(DType::Mask))
    }
    fn bad_suffix(found: Option<&str>) -> String {
        match found {
            None => "this instruction needs a dtype suffix like `.f32`".to_string(),
            Some(s) => format!("unknown dtype `{s}` (f32 f16 bf16 i32 mask)"),
        }
    }
}

/// The text of one instruction, without provenance.
pub fn op_text(p: &Program, op: &Op) -> String {
    let mut out = String::new();
    describe::print(
        op,
        &mut Printer {
            program: p,
            out: &mut out,
            operands: 0,
        },
    );
    out
}

/// Where the printer of the description (`describe::print`) writes an instruction: its
/// mnemonic, a space, then its operands separated by commas.
pub(super) struct Printer<'a> {
    program: &'a Program,
    out: &'a mut String,
    operands: usize,
}

impl Printer<'_> {
    pub(super) fn name(&mut self, name: &str) {
        self.out.push_str(name);
    }

    fn suffix(&mut self, word: &str) {
        self.out.push('.');
        self.out.push_str(word);
    }

    /// Starts the next operand; returns where to write it.
    fn operand(&mut self) -> &mut String {
        self.out
            .push_str(if self.operands == 0 { " " } else { ", " });
        self.operands += 1;
        self.out
    }

    /// Writes `x` as the next operand (writing to a String cannot fail).
    fn show(&mut self, x: impl fmt::Display) {
        let _ = write!(self.operand(), "{x}");
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
    let mut branches = p.branches.iter().peekable();
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
        while let Some(b) = branches.next_if(|b| b.instr as usize <= i) {
            let _ = write!(s, " ; if {}", b.cond);
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

/// What the parser of the description (`describe::parse`) reads an instruction from:
/// its mnemonic split at `.`, and its operands as written, each taken in order by a
/// typed accessor.
pub(super) struct Parser<'a> {
    mnemonic: &'a str,
    words: Vec<&'a str>,
    /// The next word of the mnemonic to read.
    word: usize,
    ops: Vec<(Opnd, Span)>,
    /// The next operand to read.
    pos: usize,
    /// The mnemonic's span.
    line: Span,
}

/// Why an entry of the description did not read the instruction.
pub(super) enum Miss {
    /// The mnemonic names another instruction.
    Other,
    /// It names this one, wrongly written.
    Bad(Diagnostic),
}

impl From<Diagnostic> for Miss {
    fn from(d: Diagnostic) -> Miss {
        Miss::Bad(d)
    }
}

impl Parser<'_> {
    /// Reads the instruction with one entry of the description: `name` is its
    /// mnemonic's first word (none for a family, whose `Head` field reads it), `build`
    /// reads its fields in order. `None` when the mnemonic names another instruction.
    pub(super) fn entry(
        &mut self,
        name: &[&str],
        build: impl FnOnce(&mut Self) -> Result<Op, Miss>,
    ) -> Option<PResult<Op>> {
        self.word = 0;
        if let Some(name) = name.first() {
            if self.words.first() != Some(name) {
                return None;
            }
            self.word = 1;
        }
        match build(self) {
            Ok(op) => Some(self.finish().map(|()| op)),
            Err(Miss::Bad(d)) => Some(Err(d)),
            Err(Miss::Other) => None,
        }
    }

    pub(super) fn unknown(&self) -> Diagnostic {
        err(
            format!("unknown instruction `{}`", self.mnemonic),
            self.line,
        )
    }

    /// After the last field: no word or operand is left over.
    fn finish(&self) -> PResult<()> {
        if self.word < self.words.len() {
            return Err(err(
                format!("unexpected suffix in `{}`", self.mnemonic),
                self.line,
            ));
        }
        match self.ops.get(self.pos) {
            Some((_, sp)) => Err(err(
                format!("too many operands for `{}`", self.mnemonic),
                *sp,
            )),
            None => Ok(()),
        }
    }

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
    fn int(&mut self) -> PResult<i64> {
        match self.next("an integer")? {
            (Opnd::Int(i), _) => Ok(i),
            (_, sp) => Err(err("expected an integer", sp)),
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
    fn keyed(&mut self, key: &str) -> PResult<(Opnd, Span)> {
        match self.next(&format!("`{key}=`"))? {
            (Opnd::Key(k, v), sp) if k == key => Ok((*v, sp)),
            (_, sp) => Err(err(format!("expected `{key}=...`"), sp)),
        }
    }
}

// ------------------------------------------------ the text forms of the description

/// How a field of an instruction is written (see `describe`): the form prints the
/// field and reads it back.
pub(super) trait Form<T> {
    fn print(&self, x: &T, p: &mut Printer<'_>);
    fn parse(&self, p: &mut Parser<'_>) -> Result<T, Miss>;
}

/// The mnemonic's first word: a family's op (`add`, `vexp`).
pub(super) struct Head;
/// A `.word` of the mnemonic after its first: a dtype, a comparison.
pub(super) struct Suffix;
/// A positional operand.
pub(super) struct Pos;
/// An operand `key=value`.
pub(super) struct Key(pub &'static str);
/// A word among the operands that is there when the field is set.
pub(super) struct Flag(pub &'static str);

impl<T: Word> Form<T> for Head {
    fn print(&self, x: &T, p: &mut Printer<'_>) {
        p.name(x.word());
    }
    fn parse(&self, p: &mut Parser<'_>) -> Result<T, Miss> {
        let w = p.words.get(p.word).and_then(|s| T::from_word(s));
        p.word += 1;
        w.ok_or(Miss::Other)
    }
}

impl<T: Word> Form<T> for Suffix {
    fn print(&self, x: &T, p: &mut Printer<'_>) {
        p.suffix(x.word());
    }
    fn parse(&self, p: &mut Parser<'_>) -> Result<T, Miss> {
        let found = p.words.get(p.word).copied();
        p.word += 1;
        let w = found.and_then(T::from_word);
        Ok(w.ok_or_else(|| err(T::bad_suffix(found), p.line))?)
    }
}

impl<T: OperandText> Form<T> for Pos {
    fn print(&self, x: &T, p: &mut Printer<'_>) {
        x.print(p);
    }
    fn parse(&self, p: &mut Parser<'_>) -> Result<T, Miss> {
        Ok(T::parse(p)?)
    }
}

impl<T: KeyValue> Form<T> for Key {
    fn print(&self, x: &T, p: &mut Printer<'_>) {
        let key = self.0;
        let _ = write!(p.operand(), "{key}={}", x.text());
    }
    fn parse(&self, p: &mut Parser<'_>) -> Result<T, Miss> {
        Ok(T::parse(p, self.0)?)
    }
}

impl Form<bool> for Flag {
    fn print(&self, x: &bool, p: &mut Printer<'_>) {
        if *x {
            p.operand().push_str(self.0);
        }
    }
    fn parse(&self, p: &mut Parser<'_>) -> Result<bool, Miss> {
        let set = matches!(p.ops.get(p.pos), Some((Opnd::Name(n), _)) if n == self.0);
        if set {
            p.pos += 1;
        }
        Ok(set)
    }
}

/// A positional operand's text: one operand, or one per element of a list.
pub(super) trait OperandText: Sized {
    fn print(&self, p: &mut Printer<'_>);
    fn parse(p: &mut Parser<'_>) -> PResult<Self>;
}

impl OperandText for Reg {
    fn print(&self, p: &mut Printer<'_>) {
        p.show(format_args!("r{}", self.0));
    }
    fn parse(p: &mut Parser<'_>) -> PResult<Reg> {
        match p.next("a register")? {
            (Opnd::Reg(r), _) => Ok(r),
            (_, sp) => Err(err("expected a register r0..r31", sp)),
        }
    }
}

impl OperandText for Val {
    fn print(&self, p: &mut Printer<'_>) {
        p.show(val(self));
    }
    fn parse(p: &mut Parser<'_>) -> PResult<Val> {
        match p.next("an integer or register")? {
            (Opnd::Reg(r), _) => Ok(Val::Reg(r)),
            (Opnd::Int(i), _) => Ok(Val::Imm(i)),
            (_, sp) => Err(err("expected an integer or a register", sp)),
        }
    }
}

/// A spill slot (validation rejects one out of range).
impl OperandText for u32 {
    fn print(&self, p: &mut Printer<'_>) {
        p.show(self);
    }
    fn parse(p: &mut Parser<'_>) -> PResult<u32> {
        Ok(u32::try_from(p.int()?).unwrap_or(u32::MAX))
    }
}

impl OperandText for Addr {
    fn print(&self, p: &mut Printer<'_>) {
        p.show(Show(p.program, self));
    }
    fn parse(p: &mut Parser<'_>) -> PResult<Addr> {
        match p.next("an address")? {
            (Opnd::Addr(a), _) => Ok(a),
            (_, sp) => Err(err("expected an address like `ub[r1 + 64]`", sp)),
        }
    }
}

impl OperandText for Tile {
    fn print(&self, p: &mut Printer<'_>) {
        p.show(Show(p.program, self));
    }
    fn parse(p: &mut Parser<'_>) -> PResult<Tile> {
        match p.next("a tile")? {
            (Opnd::Tile(t), _) => Ok(t),
            (_, sp) => Err(err("expected a tile like `ub[r1]{8, 64, 64}`", sp)),
        }
    }
}

impl OperandText for VSrc {
    fn print(&self, p: &mut Printer<'_>) {
        p.show(Show(p.program, self));
    }
    fn parse(p: &mut Parser<'_>) -> PResult<VSrc> {
        match p.next("a tile or scalar")? {
            (Opnd::Tile(t), _) => Ok(VSrc::Tile(t)),
            (Opnd::Reg(r), _) => Ok(VSrc::Reg(r)),
            (Opnd::Int(i), _) => Ok(VSrc::Int(i)),
            (Opnd::Float(x), _) => Ok(VSrc::Float(x)),
            (_, sp) => Err(err("expected a tile, a number or a register", sp)),
        }
    }
}

impl OperandText for Pipe {
    fn print(&self, p: &mut Printer<'_>) {
        p.show(self);
    }
    fn parse(p: &mut Parser<'_>) -> PResult<Pipe> {
        // Without `ALL` allowed, a pipe is always named.
        Ok(p.pipe(false)?.unwrap_or(Pipe::S))
    }
}

/// A pipe or `ALL` (`None`).
impl OperandText for Option<Pipe> {
    fn print(&self, p: &mut Printer<'_>) {
        p.show(self.map_or("ALL", |p| p.name()));
    }
    fn parse(p: &mut Parser<'_>) -> PResult<Option<Pipe>> {
        p.pipe(true)
    }
}

/// A DMA's dimensions, outermost first: every operand left.
impl OperandText for Vec<DmaDim> {
    fn print(&self, p: &mut Printer<'_>) {
        for d in self {
            p.show(format_args!(
                "[{}, {}, {}]",
                val(&d.extent),
                d.src_stride,
                d.dst_stride
            ));
        }
    }
    fn parse(p: &mut Parser<'_>) -> PResult<Vec<DmaDim>> {
        let mut dims = Vec::new();
        while p.pos < p.ops.len() {
            match p.next("a dimension")? {
                (Opnd::Dim(d), _) => dims.push(d),
                (_, sp) => {
                    return Err(err(
                        "expected a dimension `[extent, src_stride, dst_stride]`",
                        sp,
                    ))
                }
            }
        }
        Ok(dims)
    }
}

/// The value of a keyed operand.
pub(super) trait KeyValue: Sized {
    fn text(&self) -> String;
    fn parse(p: &mut Parser<'_>, key: &str) -> PResult<Self>;
}

impl KeyValue for Val {
    fn text(&self) -> String {
        val(self)
    }
    fn parse(p: &mut Parser<'_>, key: &str) -> PResult<Val> {
        p.keyed(key).and_then(|(o, sp)| match o {
            Opnd::Reg(r) => Ok(Val::Reg(r)),
            Opnd::Int(i) => Ok(Val::Imm(i)),
            _ => Err(err(format!("`{key}=` takes an integer or register"), sp)),
        })
    }
}

impl KeyValue for i64 {
    fn text(&self) -> String {
        self.to_string()
    }
    fn parse(p: &mut Parser<'_>, key: &str) -> PResult<i64> {
        p.keyed(key).and_then(|(o, sp)| match o {
            Opnd::Int(i) => Ok(i),
            _ => Err(err(format!("`{key}=` takes an integer"), sp)),
        })
    }
}

/// A fill value: an integer as written (exact for i32 lanes), any other number as the
/// f32 it is (the compiler rounds it to the tile's dtype first).
impl KeyValue for f64 {
    fn text(&self) -> String {
        if self.is_finite() && self.fract() == 0.0 && self.abs() < 1e15 {
            format!("{}", *self as i64)
        } else {
            format!("{:?}", *self as f32)
        }
    }
    fn parse(p: &mut Parser<'_>, key: &str) -> PResult<f64> {
        p.keyed(key).and_then(|(o, sp)| match o {
            Opnd::Int(i) => Ok(i as f64),
            Opnd::Float(x) => Ok(f64::from(x)),
            _ => Err(err(format!("`{key}=` takes a number"), sp)),
        })
    }
}

/// An axis (validation rejects one out of range).
impl KeyValue for u8 {
    fn text(&self) -> String {
        self.to_string()
    }
    fn parse(p: &mut Parser<'_>, key: &str) -> PResult<u8> {
        Ok(u8::try_from(i64::parse(p, key)?).unwrap_or(u8::MAX))
    }
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
            let mut parser = Parser {
                mnemonic,
                words: mnemonic.split('.').collect(),
                word: 0,
                ops,
                pos: 0,
                line: Span::new(start + lead, start + lead + mnemonic.len()),
            };
            let op = describe::parse(&mut parser)?;
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
