//! The tile-IR reader: the text [`print_located`](super::print_located) writes, parsed
//! back into a kernel, so passes run on IR text (`tilescope opt`, the filetests).
//!
//! The printed form carries what passes read: each value's type, memory space, slots
//! and addresses; the memory plan's slabs (`slab N: ...`, at the top of a planned
//! kernel); each op's source position (`!at LINE:COL`); and the annotations
//! passes leave for later ones (DMA descriptors, fused scratch, slot rotation,
//! transposed stores, subtile-matmul's splits and whole products, out-of-ssa's copy
//! notes). A printed name becomes a debug name again: `%acc.2` is a value of the
//! source variable `acc`, and the printer gives back the same suffixes because it
//! numbers them in print order, as the reader reads them.
//!
//! Two things are not in the text, and the reader says what stands in for them:
//! - A position is a line and column of the kernel source. With the source at hand it
//!   becomes that character; without it, a blank stand-in text holds every position, so
//!   the IR prints the same and a pass's diagnostic names the right line and column.
//! - The index of a load or store as written (`Annotations::source_index`), which
//!   relayout quotes in one error: an access read from text has none, as an access a
//!   pass made has none, and the error quotes the IR's index instead.
//!
//! Blank lines, `;` comments and `=== after PASS ===` headers around the kernel are
//! skipped. Whatever the text, the reader returns a diagnostic located in it (never a
//! panic), and hands over only a kernel the IR verifier accepts (naga's validator gate).

use super::memory::{MemoryPlan, Slab};
use super::{
    Block, BlockItem, CopyNote, ForOp, FusedExpr, Index, IndexExpr, Kernel, L0Split, LoopVar,
    LoopVarId, Op, OpId, OpKind, Param, ParamId, Step, StepKind, Transfer, TransferDim, Value,
    ValueAttrs, ValueDef, ValueId,
};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::front::hir::{BinaryOp, ReduceOp, UnaryOp, UpdateOp};
use crate::limits::MAX_NESTING_DEPTH;
use crate::types::{CmpOp, DType, MemSpace, TileType};
use std::collections::HashMap;

/// A kernel read from text, and the text its positions are in: the kernel source when
/// the caller had it, else the blank stand-in.
#[derive(Clone, Debug)]
pub struct ReadKernel {
    pub kernel: Kernel,
    pub source: String,
}

/// Reads the one kernel in `text`. `source` is the kernel source its `!at` positions
/// refer to, when known. Diagnostics are located in `text`.
pub fn read(text: &str, source: Option<&str>) -> Result<ReadKernel, Diagnostics> {
    let lines = significant_lines(text);
    let Positions { spans, source } = Positions::new(&lines, source).map_err(|d| vec![d])?;
    let mut r = Reader {
        text,
        lines,
        next: 0,
        k: Kernel::default(),
        values: HashMap::new(),
        vars: HashMap::new(),
        params: HashMap::new(),
        positions: spans,
        notes: Vec::new(),
        op_lines: HashMap::new(),
        var_loops: HashMap::new(),
    };
    r.kernel().map_err(|d| vec![d])?;
    let op_lines = r.op_lines;
    let k = r.k;
    if let Err(errors) = super::verify(&k) {
        // Each error at the line of its op, else at the kernel's first line.
        let first_line = Span::new(0, text.find('\n').unwrap_or(text.len()));
        let diagnostics = errors
            .into_iter()
            .map(|e| {
                let line = match e.location {
                    crate::diag::Location::Op(i) => op_lines.get(&i).copied(),
                    _ => None,
                };
                match line {
                    Some(span) => {
                        Diagnostic::error(format!("the IR does not verify: {}", e.message), span)
                    }
                    None => Diagnostic::error(format!("the IR does not verify: {e}"), first_line),
                }
            })
            .collect();
        return Err(diagnostics);
    }
    if let Some(Err(why)) = k.memory.as_ref().map(|plan| plan.agrees_with(&k)) {
        let first_line = Span::new(0, text.find('\n').unwrap_or(text.len()));
        return Err(vec![Diagnostic::error(
            format!("the memory plan disagrees with the IR: {why}"),
            first_line,
        )]);
    }
    Ok(ReadKernel { kernel: k, source })
}

/// The lines that hold IR: (byte offset in the text, line without its newline).
fn significant_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let t = body.trim();
        let skipped = t.is_empty() || t.starts_with(';') || is_section_header(t);
        if !skipped {
            out.push((offset, body));
        }
        offset += line.len();
    }
    out
}

/// `=== after NAME ===`, the header `--emit passes` prints above each pass's IR.
pub fn is_section_header(line: &str) -> bool {
    section_name(line).is_some()
}

/// The pass named by a section header `=== after NAME ===`.
pub fn section_name(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix("=== after ")?
        .strip_suffix(" ===")
        .map(str::trim)
}

/// A line without its trailing comment (`  // ...`, two spaces before the slashes, so
/// an index's ` // ` floor division is not one) and the comment's text.
fn split_comment(line: &str) -> (&str, Option<&str>) {
    match line.find("  // ") {
        Some(at) => (&line[..at], Some(&line[at + "  // ".len()..])),
        None => (line, None),
    }
}

/// Every `!at LINE:COL` of the text as a span of the kernel source (or the stand-in).
struct Positions {
    spans: HashMap<(usize, usize), Span>,
    source: String,
}

impl Positions {
    fn new(lines: &[(usize, &str)], source: Option<&str>) -> Result<Self, Diagnostic> {
        let mut wanted: Vec<((usize, usize), Span)> = Vec::new();
        for &(offset, line) in lines {
            let (code, _) = split_comment(line);
            if let Some(at) = code.rfind(" !at ") {
                let start = at + " !at ".len();
                let token = code[start..].split(' ').next().unwrap_or("");
                let here = Span::new(offset + start, offset + start + token.len());
                let parsed = token
                    .split_once(':')
                    .and_then(|(l, c)| Some((l.parse::<usize>().ok()?, c.parse::<usize>().ok()?)))
                    .filter(|&(l, c)| l > 0 && c > 0);
                match parsed {
                    Some(lc) => wanted.push((lc, here)),
                    None => return Err(Diagnostic::error("expected `!at LINE:COL`", here)),
                }
            }
        }
        match source {
            Some(source) => {
                let starts: Vec<usize> = std::iter::once(0)
                    .chain(source.match_indices('\n').map(|(i, _)| i + 1))
                    .collect();
                let mut spans = HashMap::new();
                for ((l, c), here) in wanted {
                    let line_start = starts.get(l - 1).copied();
                    let at = line_start.and_then(|s| {
                        let line = &source[s..];
                        let line = &line[..line.find('\n').unwrap_or(line.len())];
                        let mut chars = line.char_indices().map(|(i, ch)| (s + i, ch));
                        let (i, ch) = chars.nth(c - 1)?;
                        Some(Span::new(i, i + ch.len_utf8()))
                    });
                    match at {
                        Some(span) => {
                            spans.insert((l, c), span);
                        }
                        None => {
                            return Err(Diagnostic::error(
                                format!("position {l}:{c} is not in the kernel source"),
                                here,
                            ))
                        }
                    }
                }
                Ok(Positions {
                    spans,
                    source: source.to_string(),
                })
            }
            None => {
                // A blank text as wide as each line needs: the column's character is a
                // space, so every position prints back as written.
                let mut width: Vec<usize> = Vec::new();
                for &((l, c), _) in &wanted {
                    if width.len() < l {
                        width.resize(l, 0);
                    }
                    width[l - 1] = width[l - 1].max(c);
                }
                let total: usize = width.iter().map(|w| w + 1).sum();
                if total > crate::limits::MAX_SOURCE_BYTES {
                    return Err(Diagnostic::error(
                        "the positions reach past the largest kernel source",
                        Span::new(0, 0),
                    ));
                }
                let mut source = String::with_capacity(total);
                let mut starts = Vec::with_capacity(width.len());
                for w in &width {
                    starts.push(source.len());
                    source.extend(std::iter::repeat_n(' ', *w));
                    source.push('\n');
                }
                let spans = wanted
                    .into_iter()
                    .map(|((l, c), _)| {
                        let at = starts[l - 1] + c - 1;
                        ((l, c), Span::new(at, at + 1))
                    })
                    .collect();
                Ok(Positions { spans, source })
            }
        }
    }
}

type R<T> = Result<T, Diagnostic>;

/// A value's printed type: memory space, tile type, slots and addresses.
struct Typed {
    space: Option<MemSpace>,
    ty: TileType,
    attrs: ValueAttrs,
}

struct Reader<'t> {
    text: &'t str,
    lines: Vec<(usize, &'t str)>,
    next: usize,
    k: Kernel,
    values: HashMap<String, ValueId>,
    vars: HashMap<String, LoopVarId>,
    params: HashMap<String, ParamId>,
    positions: HashMap<(usize, usize), Span>,
    /// Copy notes name values that may be defined further down: resolved at the end.
    notes: Vec<(OpId, Cursor<'t>)>,
    /// Each op's line in the text, for the verifier's errors.
    op_lines: HashMap<u32, Span>,
    /// The loop of each loop variable.
    var_loops: HashMap<LoopVarId, OpId>,
}

impl<'t> Reader<'t> {
    fn end_span(&self) -> Span {
        Span::new(self.text.len(), self.text.len())
    }

    /// The next line as a cursor over its code, and its comment.
    fn line(&mut self, what: &str) -> R<(Cursor<'t>, Option<Cursor<'t>>)> {
        let Some(&(offset, line)) = self.lines.get(self.next) else {
            return Err(Diagnostic::error(
                format!("the text ends where {what} should be"),
                self.end_span(),
            ));
        };
        self.next += 1;
        let (code, comment) = split_comment(line);
        let indent = code.len() - code.trim_start().len();
        let code_cursor = Cursor {
            s: code.trim_end(),
            i: indent,
            base: offset,
        };
        let comment = comment.map(|c| Cursor {
            s: c,
            i: 0,
            base: offset + (c.as_ptr() as usize - line.as_ptr() as usize),
        });
        Ok((code_cursor, comment))
    }

    fn span_at(&self, c: &mut Cursor<'_>) -> R<Span> {
        if !c.tok("!at") {
            return Ok(Span::DUMMY);
        }
        c.ws();
        let l = c.uint()? as usize;
        c.expect(":")?;
        let col = c.uint()? as usize;
        self.positions
            .get(&(l, col))
            .copied()
            .ok_or_else(|| c.err("a position the reader did not collect"))
    }

    fn kernel(&mut self) -> R<()> {
        let (mut c, _) = self.line("`kernel NAME(...) {`")?;
        c.keyword("kernel")?;
        c.ws();
        self.k.name = c
            .word()
            .ok_or_else(|| c.err("expected the kernel's name"))?
            .to_string();
        c.expect("(")?;
        let mut first = true;
        while !c.tok(")") {
            if !first {
                c.expect(",")?;
            }
            first = false;
            c.ws();
            let name = c.name()?;
            c.expect(":")?;
            c.ws();
            // A scratch tensor (relayout's) is written and read back by the kernel.
            let (scratch, is_out) = if c.tok("scratch ") {
                (true, true)
            } else if c.tok("out ") {
                (false, true)
            } else {
                (false, false)
            };
            c.ws();
            let ty = tile_type(&mut c)?;
            if self
                .params
                .insert(name.clone(), self.k.params.len())
                .is_some()
            {
                return Err(c.err(format!("parameter `%{name}` is declared twice")));
            }
            self.k.params.push(Param {
                name: super::print::source_name(&name).to_string(),
                ty,
                is_out,
                scratch,
                span: Span::DUMMY,
            });
        }
        self.k.span = self.span_at(&mut c)?;
        for p in &mut self.k.params {
            p.span = self.k.span;
        }
        c.expect("{")?;
        c.end()?;
        let slabs = self.slab_lines()?;
        let (body, yields) = self.block(0)?;
        if let Some((_, c)) = yields {
            return Err(c.err("`yield` outside a loop"));
        }
        self.k.body = body;
        if let Some(lines) = slabs {
            let mut slabs = Vec::new();
            for (i, mut c) in lines.into_iter().enumerate() {
                slabs.push(self.slab(&mut c, i)?);
            }
            self.k.memory = Some(MemoryPlan::new(slabs));
        }
        if let Some(&(offset, line)) = self.lines.get(self.next) {
            return Err(Diagnostic::error(
                "text after the kernel's closing `}`",
                Span::new(offset, offset + line.len()),
            ));
        }
        for (op, mut c) in std::mem::take(&mut self.notes) {
            let note = self.copy_note(&mut c)?;
            self.k.annotations.copy_note.insert(op, note);
        }
        Ok(())
    }

    /// The memory plan's lines at the top of the kernel, when it has one (read once
    /// the values they name are defined).
    fn slab_lines(&mut self) -> R<Option<Vec<Cursor<'t>>>> {
        let mut lines = None;
        loop {
            let Some(&(_, line)) = self.lines.get(self.next) else {
                return Ok(lines);
            };
            let code = line.trim();
            if code == "no slabs" {
                self.next += 1;
                return Ok(Some(Vec::new()));
            }
            if !code.starts_with("slab ") {
                return Ok(lines);
            }
            let (mut c, _) = self.line("a slab")?;
            c.ws();
            lines.get_or_insert_with(Vec::new).push(c);
        }
    }

    /// `slab N: SPACE BYTES bytes at [ADDR, ...][ rotates with %VAR] holds %TILE, ...`,
    /// `scratch` standing for the fused op whose scratch is at that address.
    fn slab(&self, c: &mut Cursor<'_>, index: usize) -> R<Slab> {
        c.keyword("slab")?;
        c.ws();
        let at = c.clone();
        if c.uint()? != index as u64 {
            return Err(at.err(format!(
                "expected slab {index}: slabs are numbered from 0, in order"
            )));
        }
        c.expect(":")?;
        c.ws();
        let at = c.clone();
        let word = c.word().unwrap_or("");
        let space =
            MemSpace::from_name(word).ok_or_else(|| at.err(format!("`{word}` is not a memory")))?;
        c.ws();
        let bytes = c.uint()?;
        c.ws();
        c.keyword("bytes")?;
        c.ws();
        c.keyword("at")?;
        let at = c.clone();
        c.expect("[")?;
        let addrs = comma_list(c, "]", Cursor::uint)?;
        let addr = *addrs
            .first()
            .ok_or_else(|| at.err("a slab without an address"))?;
        let slots = u32::try_from(addrs.len()).map_err(|_| at.err("too many slots"))?;
        let contiguous = addrs.iter().enumerate().all(|(i, &a)| {
            Some(a)
                == bytes
                    .checked_mul(i as u64)
                    .and_then(|o| o.checked_add(addr))
        });
        if !contiguous {
            return Err(at.err(format!(
                "a slab's slots follow each other, {bytes} bytes apart"
            )));
        }
        let mut rotates_with = None;
        if c.tok("rotates") {
            c.ws();
            c.keyword("with")?;
            c.ws();
            let at = c.clone();
            let name = c.name()?;
            let var = self.vars.get(&name);
            let l = var.and_then(|v| self.var_loops.get(v));
            rotates_with =
                Some(*l.ok_or_else(|| at.err(format!("`%{name}` is not a loop variable")))?);
        }
        c.ws();
        c.keyword("holds")?;
        let mut tiles = Vec::new();
        let mut scratch_of = None;
        loop {
            c.ws();
            if c.keyword_here("scratch") {
                let op = self
                    .k
                    .annotations
                    .scratch
                    .iter()
                    .find(|(_, &s)| s == (bytes, addr))
                    .map(|(op, _)| op);
                let op = op.ok_or_else(|| c.err("no op has its scratch in this slab"))?;
                scratch_of = Some(op);
            } else {
                tiles.push(self.value(c)?);
            }
            if !c.tok(",") {
                break;
            }
        }
        c.end()?;
        Ok(Slab {
            space,
            bytes,
            slots,
            addr,
            rotates_with,
            tiles,
            scratch_of,
        })
    }

    /// Items up to the closing `}`, and the `yield` before it when there is one.
    #[allow(clippy::type_complexity)]
    fn block(&mut self, depth: usize) -> R<(Block, Option<(Vec<ValueId>, Cursor<'t>)>)> {
        let mut block = Block::default();
        let mut yields = None;
        loop {
            let (mut c, comment) = self.line("`}`")?;
            c.ws();
            if c.tok("}") {
                c.end()?;
                return Ok((block, yields));
            }
            if yields.is_some() {
                return Err(c.err("expected `}` after the loop's `yield`"));
            }
            if c.keyword_here("yield") {
                let at = c.clone();
                let mut vs = Vec::new();
                loop {
                    c.ws();
                    vs.push(self.value(&mut c)?);
                    if !c.tok(",") {
                        break;
                    }
                }
                c.end()?;
                yields = Some((vs, at));
                continue;
            }
            if depth >= MAX_NESTING_DEPTH {
                return Err(c.err(format!(
                    "blocks nest deeper than {MAX_NESTING_DEPTH} (MAX_NESTING_DEPTH)"
                )));
            }
            if c.keyword_here("step") {
                block.items.push(BlockItem::Step(self.step(c, depth)?));
            } else {
                block.items.push(BlockItem::Op(self.op(c, comment, depth)?));
            }
        }
    }

    fn step(&mut self, mut c: Cursor<'t>, depth: usize) -> R<Step> {
        c.ws();
        let id = u32::try_from(c.uint()?).map_err(|_| c.err("a step number too large"))?;
        c.expect("(")?;
        let mut kind = StepKind::default();
        let mut first = true;
        while !c.tok(")") {
            if !first {
                c.expect(",")?;
            }
            first = false;
            c.ws();
            match c.word() {
                Some("load") => kind.load = true,
                Some("compute") => kind.compute = true,
                Some("store") => kind.store = true,
                _ => return Err(c.err("expected `load`, `compute` or `store`")),
            }
        }
        let span = self.span_at(&mut c)?;
        c.expect("{")?;
        c.end()?;
        let (block, yields) = self.block(depth + 1)?;
        if let Some((_, c)) = yields {
            return Err(c.err("`yield` inside a step"));
        }
        let mut ops = Vec::new();
        for item in block.items {
            match item {
                BlockItem::Op(op) => ops.push(op),
                BlockItem::Step(s) => {
                    return Err(Diagnostic::error(
                        format!("step {} inside step {id}", s.id),
                        Span::new(c.base, c.base + c.s.len()),
                    ))
                }
            }
        }
        Ok(Step {
            ops,
            span,
            id,
            kind,
        })
    }

    fn value(&self, c: &mut Cursor<'_>) -> R<ValueId> {
        let at = c.clone();
        let name = c.name()?;
        self.values
            .get(&name)
            .copied()
            .ok_or_else(|| at.err(format!("`%{name}` is not defined before this use")))
    }

    fn param(&self, c: &mut Cursor<'_>) -> R<ParamId> {
        let at = c.clone();
        let name = c.name()?;
        self.params
            .get(&name)
            .copied()
            .ok_or_else(|| at.err(format!("`%{name}` is not a parameter of the kernel")))
    }

    /// Defines `name` as a new value.
    fn define(&mut self, c: &Cursor<'_>, name: &str, typed: &Typed, def: ValueDef) -> R<ValueId> {
        if self.values.contains_key(name) || self.params.contains_key(name) {
            return Err(c.err(format!("`%{name}` is defined twice")));
        }
        let base = super::print::source_name(name);
        let debug = (!base.bytes().all(|b| b.is_ascii_digit())).then(|| base.to_string());
        let v = self.k.values.push(Value {
            ty: typed.ty.clone(),
            name: debug,
            space: typed.space,
            attrs: typed.attrs.clone(),
            def,
        });
        self.values.insert(name.to_string(), v);
        Ok(v)
    }

    fn op(&mut self, mut c: Cursor<'t>, comment: Option<Cursor<'t>>, depth: usize) -> R<OpId> {
        let start = c.clone();
        let mut results = Vec::new();
        if c.peek("%") {
            loop {
                c.ws();
                results.push(c.name()?);
                if !c.tok(",") {
                    break;
                }
            }
            c.expect("=")?;
        }
        c.ws();
        if c.keyword_here("for") {
            return self.for_op(c, comment, results, depth);
        }
        let op = self.k.ops.push(Op {
            kind: OpKind::Buffers,
            span: Span::DUMMY,
            results: Vec::new(),
        });
        self.op_lines.insert(op.index() as u32, start.line_span());
        let kind = self.op_kind(&mut c, op)?;
        if results.len() > 1 {
            return Err(start.err("only a `for` defines more than one value"));
        }
        if kind_has_result(&kind) == results.is_empty() {
            return Err(start.err(if results.is_empty() {
                "this op defines a value: write `%name = ...`"
            } else {
                "this op defines no value"
            }));
        }
        if let Some(name) = results.first() {
            c.expect(":")?;
            c.ws();
            let typed = typed(&mut c)?;
            let v = self.define(&start, name, &typed, ValueDef::Result { op, index: 0 })?;
            self.k.ops[op].results.push(v);
        }
        self.attrs(&mut c, op)?;
        let span = self.span_at(&mut c)?;
        c.end()?;
        self.k.ops[op].kind = kind;
        self.k.ops[op].span = span;
        if let Some(mut note) = comment {
            if note.tok("subtile-matmul left it whole: ") {
                let why = note.rest().to_string();
                self.k.annotations.l0_whole.insert(op, why);
            } else if note.tok("copy: ") || note.tok("re-materialised: ") {
                self.notes.push((op, note));
            } else {
                return Err(note.err("expected a `copy:` note"));
            }
        }
        Ok(op)
    }

    fn op_kind(&mut self, c: &mut Cursor<'t>, op: OpId) -> R<OpKind> {
        let at = c.clone();
        let word = c.word().ok_or_else(|| c.err("expected an operation"))?;
        Ok(match word {
            "load" => {
                c.ws();
                let param = self.param(c)?;
                let index = self.index_list(c)?;
                OpKind::Load { param, index }
            }
            "store" => {
                c.ws();
                let param = self.param(c)?;
                let index = self.index_list(c)?;
                c.expect(",")?;
                c.ws();
                let value = self.value(c)?;
                if c.tok("transposed") {
                    self.k.annotations.transposed.insert(op);
                }
                // ` via fix.DTYPE` follows from the value's memory space.
                if c.tok("via") {
                    c.ws();
                    c.keyword("fix")?;
                    c.expect(".")?;
                    c.word();
                }
                OpKind::Store {
                    param,
                    index,
                    value,
                }
            }
            "cmp" => {
                c.expect(".")?;
                let name = c.word().unwrap_or("");
                let op = CmpOp::ALL
                    .into_iter()
                    .find(|o| o.name() == name)
                    .ok_or_else(|| at.err(format!("`{name}` is not a comparison")))?;
                let (lhs, rhs) = self.two(c)?;
                OpKind::Compare { op, lhs, rhs }
            }
            "select" => {
                c.ws();
                let mask = self.value(c)?;
                let (on_true, on_false) = self.more_two(c)?;
                OpKind::Select {
                    mask,
                    on_true,
                    on_false,
                }
            }
            "iota" => OpKind::Iota {
                axis: axis(c, false)?,
            },
            "matmul" => {
                let (lhs, rhs) = self.two(c)?;
                let mut acc = None;
                let mut acc_block = Vec::new();
                if c.tok(",") {
                    c.ws();
                    c.keyword("acc")?;
                    c.expect("=")?;
                    acc = Some(self.value(c)?);
                    if c.peek("[") {
                        acc_block = self.index_list(c)?;
                    }
                }
                OpKind::MatMul {
                    lhs,
                    rhs,
                    acc,
                    acc_block,
                }
            }
            "transpose" => OpKind::Transpose { arg: self.one(c)? },
            "slice" => {
                let arg = self.one(c)?;
                let index = self.index_list(c)?;
                let transpose = c.tok("transposed");
                OpKind::Slice {
                    arg,
                    index,
                    transpose,
                }
            }
            "cast" => OpKind::Cast { arg: self.one(c)? },
            "copy" => OpKind::Copy { arg: self.one(c)? },
            "const" | "full" => {
                c.ws();
                let at = c.clone();
                let lit = c.until(' ');
                let value = lit
                    .parse::<f64>()
                    .map_err(|_| at.err(format!("`{lit}` is not a number")))?;
                OpKind::Full { value }
            }
            "index" => {
                c.ws();
                OpKind::IndexValue {
                    expr: self.iexpr(c, 0)?,
                }
            }
            "update" => {
                c.ws();
                let op = match c.word() {
                    Some("set") => UpdateOp::Set,
                    Some("add") => UpdateOp::Add,
                    Some("sub") => UpdateOp::Sub,
                    Some("mul") => UpdateOp::Mul,
                    _ => return Err(c.err("expected `set`, `add`, `sub` or `mul`")),
                };
                let (old, value) = self.two(c)?;
                OpKind::Update { op, old, value }
            }
            "fused" => {
                c.expect("(")?;
                let args = comma_list(c, ")", |c| self.value(c))?;
                c.expect("{")?;
                c.ws();
                let expr = fexpr(c, 0)?;
                c.expect("}")?;
                if expr.node_count() > crate::limits::MAX_FUSED_NODES {
                    return Err(at.err(format!(
                        "a fused expression of more than {} nodes (MAX_FUSED_NODES)",
                        crate::limits::MAX_FUSED_NODES
                    )));
                }
                OpKind::Fused { args, expr }
            }
            "buffers" => OpKind::Buffers,
            "write" => {
                let buf = self.one(c)?;
                c.ws();
                c.keyword("slot")?;
                c.ws();
                let slot = self.iexpr(c, 0)?;
                c.expect(",")?;
                c.ws();
                let value = self.value(c)?;
                OpKind::SlotWrite { buf, slot, value }
            }
            "read" => {
                let buf = self.one(c)?;
                c.ws();
                c.keyword("slot")?;
                c.ws();
                OpKind::SlotRead {
                    buf,
                    slot: self.iexpr(c, 0)?,
                }
            }
            w => {
                if let Some(op) = UnaryOp::from_name(w) {
                    OpKind::Unary {
                        op,
                        arg: self.one(c)?,
                    }
                } else if let Some(op) = binary_op(w) {
                    let (lhs, rhs) = self.two(c)?;
                    OpKind::Binary { op, lhs, rhs }
                } else if let Some(op) = ReduceOp::from_name(w) {
                    let arg = self.one(c)?;
                    OpKind::Reduce {
                        op,
                        arg,
                        axis: axis(c, true)?,
                    }
                } else {
                    return Err(at.err(format!("`{w}` is not an operation of the tile IR")));
                }
            }
        })
    }

    fn one(&self, c: &mut Cursor<'_>) -> R<ValueId> {
        c.ws();
        self.value(c)
    }

    fn two(&self, c: &mut Cursor<'_>) -> R<(ValueId, ValueId)> {
        let a = self.one(c)?;
        c.expect(",")?;
        Ok((a, self.one(c)?))
    }

    fn more_two(&self, c: &mut Cursor<'_>) -> R<(ValueId, ValueId)> {
        c.expect(",")?;
        self.two(c)
    }

    /// `[AXIS, AXIS, ...]`.
    fn index_list(&self, c: &mut Cursor<'_>) -> R<Vec<Index>> {
        c.expect("[")?;
        comma_list(c, "]", |c| self.index(c))
    }

    fn index(&self, c: &mut Cursor<'_>) -> R<Index> {
        if c.tok(":") {
            return Ok(Index::Full);
        }
        if c.keyword_here("indirect") {
            c.ws();
            return Ok(Index::Indirect(self.value(c)?));
        }
        let at = c.clone();
        let start = self.iexpr(c, 0)?;
        if !c.tok("..") {
            return Ok(Index::Single(start));
        }
        c.ws();
        let end = self.iexpr(c, 0)?;
        // The printer writes the end as `start + len` (folded when `start` is a constant).
        let len = match (&start, &end) {
            (IndexExpr::Const(s), IndexExpr::Const(e)) => e.checked_sub(*s),
            (_, IndexExpr::Add(base, len)) if **base == start => match **len {
                IndexExpr::Const(l) => Some(l),
                _ => None,
            },
            _ => None,
        };
        let len = len
            .and_then(|l| u64::try_from(l).ok())
            .ok_or_else(|| at.err("a range's end must be its start plus a constant length"))?;
        let clamped = c.tok("clamped");
        Ok(Index::Range {
            start,
            len,
            clamped,
        })
    }

    /// An index expression.
    fn iexpr(&self, c: &mut Cursor<'_>, depth: usize) -> R<IndexExpr> {
        if depth > MAX_NESTING_DEPTH {
            return Err(c.err("an index expression nested too deep"));
        }
        self.iinfix(c, depth, true)
    }

    /// Left-associative infix operators of one binding strength, as the printer writes
    /// them: `+ -` (`additive`) over `* // mod`.
    fn iinfix(&self, c: &mut Cursor<'_>, depth: usize, additive: bool) -> R<IndexExpr> {
        let operand = |c: &mut Cursor<'_>| {
            if additive {
                self.iinfix(c, depth, false)
            } else {
                self.iatom(c, depth)
            }
        };
        let symbols: &[&str] = if additive {
            &["+ ", "- "]
        } else {
            &["* ", "// ", "mod "]
        };
        let mut lhs = operand(c)?;
        loop {
            let save = c.clone();
            c.ws();
            let Some(&sym) = symbols.iter().find(|s| c.eat(s)) else {
                *c = save;
                return Ok(lhs);
            };
            c.ws();
            let l = Box::new(lhs);
            lhs = match sym {
                "+ " => IndexExpr::Add(l, Box::new(operand(c)?)),
                "- " => IndexExpr::Sub(l, Box::new(operand(c)?)),
                "* " => IndexExpr::Mul(l, Box::new(operand(c)?)),
                "// " => IndexExpr::FloorDiv(l, c.int()?),
                _ => IndexExpr::Mod(l, c.int()?),
            };
        }
    }

    fn iatom(&self, c: &mut Cursor<'_>, depth: usize) -> R<IndexExpr> {
        if c.eat("(") {
            let e = self.iexpr(c, depth + 1)?;
            c.expect(")")?;
            return Ok(e);
        }
        if c.peek("%") {
            let at = c.clone();
            let name = c.name()?;
            return self
                .vars
                .get(&name)
                .map(|&v| IndexExpr::Var(v))
                .ok_or_else(|| at.err(format!("`%{name}` is not a loop variable here")));
        }
        Ok(IndexExpr::Const(c.int()?))
    }

    /// The annotations after an op's type: DMA descriptors and fused scratch.
    fn attrs(&mut self, c: &mut Cursor<'_>, op: OpId) -> R<()> {
        loop {
            let save = c.clone();
            c.ws();
            if c.eat("loop[") {
                c.i -= 1;
                let mut dims = Vec::new();
                while c.peek("[") {
                    dims.push(transfer_dim(c)?);
                }
                let peel = dims.len();
                c.ws();
                if !(c.eat("dma") || c.eat("gm")) {
                    return Err(c.err("expected the descriptor after the peeled loops"));
                }
                while c.peek("[") {
                    dims.push(transfer_dim(c)?);
                }
                self.transfer(c, op, dims, peel, None)?;
            } else if c.eat("dma(") {
                c.keyword("rows")?;
                c.expect("=")?;
                let rows = c.uint()?;
                c.expect(",")?;
                c.ws();
                c.keyword("len")?;
                c.expect("=")?;
                let len = c.uint()?;
                c.expect(")")?;
                self.transfer(c, op, Vec::new(), 0, Some((rows, len)))?;
            } else if c.eat("dma[") || c.eat("gm[") {
                c.i -= 1;
                let mut dims = Vec::new();
                while c.peek("[") {
                    dims.push(transfer_dim(c)?);
                }
                self.transfer(c, op, dims, 0, None)?;
            } else if c.eat("scratch(") {
                let bytes = c.uint()?;
                c.ws();
                c.keyword("bytes")?;
                c.ws();
                c.keyword("at")?;
                c.ws();
                let addr = c.uint()?;
                c.expect(")")?;
                self.k.annotations.scratch.insert(op, (bytes, addr));
            } else {
                *c = save;
                return Ok(());
            }
        }
    }

    fn transfer(
        &mut self,
        c: &Cursor<'_>,
        op: OpId,
        dims: Vec<TransferDim>,
        peel: usize,
        rows: Option<(u64, u64)>,
    ) -> R<()> {
        let t = Transfer { dims, peel, rows };
        if self.k.annotations.transfer.insert(op, t).is_some() {
            return Err(c.err("an op with two transfers"));
        }
        Ok(())
    }

    fn for_op(
        &mut self,
        mut c: Cursor<'t>,
        comment: Option<Cursor<'t>>,
        results: Vec<String>,
        depth: usize,
    ) -> R<OpId> {
        let head = c.clone();
        let op = self.k.ops.push(Op {
            kind: OpKind::Buffers,
            span: Span::DUMMY,
            results: Vec::new(),
        });
        self.op_lines.insert(op.index() as u32, head.line_span());
        c.ws();
        let var_at = c.clone();
        let var_name = c.name()?;
        c.ws();
        c.keyword("in")?;
        c.ws();
        let start = c.int()?;
        c.expect("..")?;
        let end = c.int()?;
        c.ws();
        c.keyword("step")?;
        c.ws();
        let step = c.int()?;
        let buffers = if c.tok("buffers(") {
            let n = c.uint()?;
            c.expect(")")?;
            Some(u32::try_from(n).map_err(|_| c.err("too many buffers"))?)
        } else {
            None
        };
        if c.tok("slot") {
            c.expect("=")?;
            c.ws();
            c.keyword("iteration")?;
            c.expect("%")?;
            c.ws();
            let n = u32::try_from(c.uint()?).map_err(|_| c.err("too many slots"))?;
            self.k.annotations.rotation.insert(op, n);
        }
        let mut inits = Vec::new();
        let mut args = Vec::new();
        let mut arg_types = Vec::new();
        if c.tok("iter(") {
            while !c.tok(")") {
                if !args.is_empty() {
                    c.expect(",")?;
                }
                c.ws();
                let at = c.clone();
                let name = c.name()?;
                c.expect(":")?;
                c.ws();
                let typed = typed(&mut c)?;
                c.expect("=")?;
                c.ws();
                inits.push(self.value(&mut c)?);
                let index = args.len() as u32;
                args.push(self.define(&at, &name, &typed, ValueDef::LoopArg { op, index })?);
                arg_types.push(typed);
            }
        }
        let span = self.span_at(&mut c)?;
        c.expect("{")?;
        c.end()?;
        if let Some(mut note) = comment {
            if !note.tok("subtile-matmul: ") {
                return Err(note.err("expected a `subtile-matmul:` note"));
            }
            let split = l0_split(&mut note)?;
            self.k.annotations.l0_split.insert(op, split);
        }
        if self.vars.contains_key(&var_name) {
            return Err(var_at.err(format!("loop variable `%{var_name}` is defined twice")));
        }
        let var = self.k.loop_vars.push(LoopVar {
            name: super::print::source_name(&var_name).to_string(),
            span,
        });
        self.vars.insert(var_name.clone(), var);
        self.var_loops.insert(var, op);
        let (body, yields) = self.block(depth + 1)?;
        // The variable is not visible after its loop (the printer reuses no names).
        let yields = yields.map(|(vs, _)| vs).unwrap_or_default();
        if results.len() != args.len() {
            return Err(head.err(format!(
                "the loop carries {} values but defines {} results",
                args.len(),
                results.len()
            )));
        }
        let mut out = Vec::new();
        for (index, (name, typed)) in results.iter().zip(&arg_types).enumerate() {
            let def = ValueDef::Result {
                op,
                index: index as u32,
            };
            out.push(self.define(&head, name, typed, def)?);
        }
        self.k.ops[op] = Op {
            kind: OpKind::For(ForOp {
                var,
                start,
                end,
                step,
                buffers,
                inits,
                args,
                body,
                yields,
            }),
            span,
            results: out,
        };
        Ok(op)
    }

    /// The text after `copy: ` or `re-materialised: `, as the printer writes it.
    fn copy_note(&self, c: &mut Cursor<'_>) -> R<CopyNote> {
        if c.tok("temporary breaking a cycle of the back edge's copies") {
            c.end()?;
            return Ok(CopyNote::Cycle);
        }
        let a = self.value(c)?;
        c.ws();
        let note = if c.tok("is read after") {
            c.ws();
            let defined = self.value(c)?;
            c.ws();
            c.keyword("is")?;
            c.ws();
            c.keyword("defined")?;
            CopyNote::ReadAfterDef { read: a, defined }
        } else if c.tok("cannot be computed in place over") {
            c.ws();
            CopyNote::NotInPlace {
                read: self.value(c)?,
                defined: a,
            }
        } else if c.tok("and") {
            c.ws();
            let b = self.value(c)?;
            c.ws();
            if !c.tok("are live at the same time") {
                return Err(c.err("expected `are live at the same time`"));
            }
            CopyNote::BothLive { a, b }
        } else if c.tok("cannot share the loop's buffer (memory space, type or slots differ)") {
            CopyNote::Placement { value: a }
        } else {
            return Err(c.err("not a note out-of-ssa writes"));
        };
        c.end()?;
        Ok(note)
    }
}

fn kind_has_result(kind: &OpKind) -> bool {
    !matches!(kind, OpKind::Store { .. } | OpKind::SlotWrite { .. })
}

fn binary_op(name: &str) -> Option<BinaryOp> {
    [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
    ]
    .into_iter()
    .find(|op| op.name() == name)
}

/// `, axis=N` after a reduction's operand (`comma`), or ` axis=N` after `iota`.
fn axis(c: &mut Cursor<'_>, comma: bool) -> R<usize> {
    if comma {
        c.expect(",")?;
    }
    c.ws();
    c.keyword("axis")?;
    c.expect("=")?;
    usize::try_from(c.uint()?).map_err(|_| c.err("an axis too large"))
}

/// `[EXTENT[ clamp@AXIS], GM_STRIDE, TILE_STRIDE]`.
fn transfer_dim(c: &mut Cursor<'_>) -> R<TransferDim> {
    c.expect("[")?;
    let extent = c.uint()?;
    let clamp_axis = if c.tok("clamp@") {
        Some(usize::try_from(c.uint()?).map_err(|_| c.err("an axis too large"))?)
    } else {
        None
    };
    c.expect(",")?;
    c.ws();
    let gm_stride = c.int()?;
    c.expect(",")?;
    c.ws();
    let tile_stride = c.int()?;
    c.expect("]")?;
    Ok(TransferDim {
        extent,
        clamp_axis,
        gm_stride,
        tile_stride,
    })
}

/// The note subtile-matmul leaves on a loop it made, as the printer words it.
fn l0_split(c: &mut Cursor<'_>) -> R<L0Split> {
    let mut split = L0Split {
        space: MemSpace::L0A,
        bytes: 0,
        capacity: 0,
        chunks: 1,
        from_l1: false,
        blocks: [1, 1],
    };
    if c.tok("M x N in") {
        c.ws();
        split.blocks[0] = c.uint()?;
        c.ws();
        c.keyword("x")?;
        c.ws();
        split.blocks[1] = c.uint()?;
        c.ws();
        expect_words(c, "blocks moved from L1")?;
        split.from_l1 = true;
    } else if c.tok("K in") {
        c.ws();
        split.chunks = c.uint()?;
        c.ws();
        expect_words(c, "pieces moved from L1")?;
        split.from_l1 = true;
    } else if c.tok("K split into") {
        c.ws();
        split.chunks = c.uint()?;
        c.ws();
        expect_words(c, "sub-tiles")?;
    } else {
        return Err(c.err("not a note subtile-matmul writes"));
    }
    c.expect(",")?;
    c.ws();
    split.space = space_upper(c)?;
    c.ws();
    expect_words(c, "capacity required it (the whole")?;
    c.ws();
    if !(c.tok("product tile") || c.tok("operand tile")) {
        return Err(c.err("expected `product tile` or `operand tile`"));
    }
    c.ws();
    c.keyword("needs")?;
    c.ws();
    split.bytes = c.uint()?;
    c.ws();
    expect_words(c, "bytes,")?;
    c.ws();
    let again = space_upper(c)?;
    if again != split.space {
        return Err(c.err("the note names two memories"));
    }
    c.ws();
    c.keyword("has")?;
    c.ws();
    split.capacity = c.uint()?;
    c.expect(")")?;
    c.end()?;
    Ok(split)
}

fn expect_words(c: &mut Cursor<'_>, words: &str) -> R<()> {
    if c.eat(words) {
        Ok(())
    } else {
        Err(c.err(format!("expected `{words}`")))
    }
}

/// A memory's name in capitals (`L0A`), as notes write it.
fn space_upper(c: &mut Cursor<'_>) -> R<MemSpace> {
    let at = c.clone();
    let w = c.word().unwrap_or("");
    MemSpace::from_name(&w.to_ascii_lowercase())
        .ok_or_else(|| at.err(format!("`{w}` is not a memory")))
}

/// `[space ]dtype[shape][ slots(N)][ at [ADDR, ...]]`.
fn typed(c: &mut Cursor<'_>) -> R<Typed> {
    let save = c.clone();
    let first = c.word().unwrap_or("");
    let space = match MemSpace::from_name(first) {
        Some(space) if c.peek(" ") => {
            c.ws();
            Some(space)
        }
        _ => {
            *c = save;
            None
        }
    };
    let ty = tile_type(c)?;
    let mut attrs = ValueAttrs::default();
    if c.tok("slots(") {
        let n = u32::try_from(c.uint()?).map_err(|_| c.err("too many slots"))?;
        c.expect(")")?;
        attrs.slots = Some(n);
    }
    let save = c.clone();
    c.ws();
    if c.eat("at [") {
        attrs.addresses = comma_list(c, "]", Cursor::uint)?;
    } else {
        *c = save;
    }
    Ok(Typed { space, ty, attrs })
}

/// `f32[8, 512]`, or `f32` for a scalar.
fn tile_type(c: &mut Cursor<'_>) -> R<TileType> {
    let at = c.clone();
    let name = c.word().unwrap_or("");
    let dtype = match name {
        "mask" => DType::Mask,
        _ => DType::from_name(name).ok_or_else(|| at.err(format!("`{name}` is not a type")))?,
    };
    let shape = if c.eat("[") {
        comma_list(c, "]", Cursor::uint)?
    } else {
        Vec::new()
    };
    Ok(TileType { dtype, shape })
}

/// A fused expression.
fn fexpr(c: &mut Cursor<'_>, depth: usize) -> R<FusedExpr> {
    if depth > crate::limits::MAX_FUSED_NODES {
        return Err(c.err("a fused expression nested too deep"));
    }
    finfix(c, depth, true)
}

/// Left-associative infix operators of one binding strength, as the printer writes
/// them: `+ -` (`additive`) over `* /` over negation.
fn finfix(c: &mut Cursor<'_>, depth: usize, additive: bool) -> R<FusedExpr> {
    let ops: [(&str, BinaryOp); 2] = if additive {
        [("+ ", BinaryOp::Add), ("- ", BinaryOp::Sub)]
    } else {
        [("* ", BinaryOp::Mul), ("/ ", BinaryOp::Div)]
    };
    let operand = |c: &mut Cursor<'_>| {
        if additive {
            finfix(c, depth, false)
        } else {
            funary(c, depth)
        }
    };
    let mut lhs = operand(c)?;
    loop {
        let save = c.clone();
        c.ws();
        let Some(op) = ops.iter().find(|(sym, _)| c.eat(sym)).map(|(_, op)| *op) else {
            *c = save;
            return Ok(lhs);
        };
        c.ws();
        let rhs = operand(c)?;
        lhs = FusedExpr::Binary(op, Box::new(lhs), Box::new(rhs));
    }
}

fn funary(c: &mut Cursor<'_>, depth: usize) -> R<FusedExpr> {
    if depth > crate::limits::MAX_FUSED_NODES {
        return Err(c.err("a fused expression nested too deep"));
    }
    if c.peek("-") && !c.peek_number_after_minus() {
        c.i += 1;
        return Ok(FusedExpr::Unary(
            UnaryOp::Neg,
            Box::new(funary(c, depth + 1)?),
        ));
    }
    fatom(c, depth)
}

fn fatom(c: &mut Cursor<'_>, depth: usize) -> R<FusedExpr> {
    if c.eat("(") {
        let e = fexpr(c, depth + 1)?;
        c.expect(")")?;
        return Ok(e);
    }
    if c.eat("$") {
        let i = u32::try_from(c.uint()?).map_err(|_| c.err("an operand number too large"))?;
        return Ok(FusedExpr::Arg(i));
    }
    let at = c.clone();
    if c.peek_number() {
        let lit = c.number();
        return lit
            .parse::<f64>()
            .map(FusedExpr::Const)
            .map_err(|_| at.err(format!("`{lit}` is not a number")));
    }
    let name = c
        .word()
        .ok_or_else(|| c.err("expected an operand, a number or a call"))?;
    c.expect("(")?;
    let a = fexpr(c, depth + 1)?;
    if let Some(op) = UnaryOp::from_name(name) {
        c.expect(")")?;
        return Ok(FusedExpr::Unary(op, Box::new(a)));
    }
    let op = binary_op(name).ok_or_else(|| at.err(format!("`{name}` is not a function")))?;
    c.expect(",")?;
    c.ws();
    let b = fexpr(c, depth + 1)?;
    c.expect(")")?;
    Ok(FusedExpr::Binary(op, Box::new(a), Box::new(b)))
}

/// Items separated by `, ` up to `close` (the opening bracket already read).
fn comma_list<'t, T>(
    c: &mut Cursor<'t>,
    close: &str,
    mut item: impl FnMut(&mut Cursor<'t>) -> R<T>,
) -> R<Vec<T>> {
    let mut out = Vec::new();
    while !c.tok(close) {
        if !out.is_empty() {
            c.expect(",")?;
        }
        c.ws();
        out.push(item(c)?);
    }
    Ok(out)
}

/// A position in one line of the text.
#[derive(Clone)]
struct Cursor<'t> {
    s: &'t str,
    i: usize,
    /// The line's byte offset in the whole text, for diagnostics.
    base: usize,
}

impl<'t> Cursor<'t> {
    fn rest(&self) -> &'t str {
        self.s.get(self.i..).unwrap_or("")
    }

    /// The line's code from the cursor on.
    fn line_span(&self) -> Span {
        Span::new(self.base + self.i, self.base + self.s.len())
    }

    fn err(&self, message: impl Into<String>) -> Diagnostic {
        let at = self.base + self.i;
        let len = self.rest().chars().next().map_or(0, char::len_utf8);
        Diagnostic::error(message, Span::new(at, at + len))
    }

    fn ws(&mut self) {
        while self.rest().starts_with(' ') {
            self.i += 1;
        }
    }

    fn peek(&self, s: &str) -> bool {
        self.rest().starts_with(s)
    }

    fn eat(&mut self, s: &str) -> bool {
        let hit = self.peek(s);
        if hit {
            self.i += s.len();
        }
        hit
    }

    /// `s` after optional spaces; the cursor stays put when it is not there.
    fn tok(&mut self, s: &str) -> bool {
        let save = self.i;
        self.ws();
        if self.eat(s) {
            true
        } else {
            self.i = save;
            false
        }
    }

    fn expect(&mut self, s: &str) -> R<()> {
        if self.tok(s) {
            Ok(())
        } else {
            let found = self.rest().split(' ').next().unwrap_or("");
            let mut c = self.clone();
            c.ws();
            Err(c.err(if found.is_empty() {
                format!("expected `{s}` before the end of the line")
            } else {
                format!("expected `{s}`")
            }))
        }
    }

    /// The word `w` here, followed by a space or the end.
    fn keyword_here(&mut self, w: &str) -> bool {
        let rest = self.rest();
        let hit = rest.starts_with(w)
            && !rest[w.len()..].starts_with(|ch: char| ch.is_ascii_alphanumeric() || ch == '_');
        if hit {
            self.i += w.len();
        }
        hit
    }

    fn keyword(&mut self, w: &str) -> R<()> {
        if self.keyword_here(w) {
            Ok(())
        } else {
            Err(self.err(format!("expected `{w}`")))
        }
    }

    fn end(&mut self) -> R<()> {
        self.ws();
        if self.rest().is_empty() {
            Ok(())
        } else {
            Err(self.err("unexpected text at the end of the line"))
        }
    }

    fn word(&mut self) -> Option<&'t str> {
        let rest = self.rest();
        let len = rest
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .unwrap_or(rest.len());
        let starts_alpha = rest.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_');
        if len == 0 || !starts_alpha {
            return None;
        }
        self.i += len;
        Some(&rest[..len])
    }

    /// `%name` (printed names: letters, digits, `_` and the suffix's `.`), without `%`.
    fn name(&mut self) -> R<String> {
        if !self.eat("%") {
            return Err(self.err("expected a `%name`"));
        }
        let rest = self.rest();
        let len = rest
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
            .unwrap_or(rest.len());
        // A `..` range after a name is not part of it.
        let len = rest[..len].find("..").unwrap_or(len);
        let len = rest[..len].trim_end_matches('.').len();
        if len == 0 {
            return Err(self.err("expected a name after `%`"));
        }
        self.i += len;
        Ok(rest[..len].to_string())
    }

    /// The text up to the next `stop` or the end.
    fn until(&mut self, stop: char) -> &'t str {
        let rest = self.rest();
        let len = rest.find(stop).unwrap_or(rest.len());
        self.i += len;
        &rest[..len]
    }

    fn uint(&mut self) -> R<u64> {
        let at = self.clone();
        let rest = self.rest();
        let (digits, radix, skip) = match rest.strip_prefix("0x") {
            Some(hex) => (hex, 16, 2),
            None => (rest, 10, 0),
        };
        let len = digits
            .find(|ch: char| !ch.is_digit(radix))
            .unwrap_or(digits.len());
        if len == 0 {
            return Err(at.err("expected a number"));
        }
        let n =
            u64::from_str_radix(&digits[..len], radix).map_err(|_| at.err("a number too large"))?;
        self.i += skip + len;
        Ok(n)
    }

    fn int(&mut self) -> R<i64> {
        let at = self.clone();
        let negative = self.eat("-");
        let n = self.uint()?;
        let n = i64::try_from(n).map_err(|_| at.err("a number too large"))?;
        Ok(if negative { -n } else { n })
    }

    fn peek_number(&self) -> bool {
        let r = self.rest();
        r.starts_with(|ch: char| ch.is_ascii_digit())
            || r.starts_with("inf")
            || r.starts_with("NaN")
            || (r.starts_with('-') && self.peek_number_after_minus())
    }

    fn peek_number_after_minus(&self) -> bool {
        let r = self.rest().strip_prefix('-').unwrap_or("");
        r.starts_with(|ch: char| ch.is_ascii_digit()) || r.starts_with("inf")
    }

    /// A float literal as Rust's `{:?}` writes it (`-1.5`, `1e-5`, `inf`, `NaN`).
    fn number(&mut self) -> &'t str {
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let mut len = 0;
        while let Some(&b) = bytes.get(len) {
            let exponent_sign = (b == b'-' || b == b'+')
                && len > 0
                && matches!(bytes.get(len - 1), Some(b'e' | b'E'));
            let ok =
                b.is_ascii_alphanumeric() || b == b'.' || exponent_sign || (b == b'-' && len == 0);
            if !ok {
                break;
            }
            len += 1;
        }
        self.i += len;
        &rest[..len]
    }
}
