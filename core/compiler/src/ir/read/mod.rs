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

mod memory;
mod notes;
mod ops;
mod positions;
mod text;

use super::memory::MemoryPlan;
use super::{
    Block, BlockItem, ForOp, Kernel, LoopEnd, LoopVar, LoopVarId, Op, OpId, OpKind, Param, ParamId,
    Step, StepKind, Value, ValueAttrs, ValueDef, ValueId,
};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::front::hir::{Cond, Operand};
use crate::limits::MAX_NESTING_DEPTH;
use crate::types::{CmpOp, MemSpace, TileType};
use notes::l0_split;
use ops::kind_has_result;
use positions::Positions;
use std::collections::HashMap;
use text::{comma_list, tile_type, typed, Cursor};

/// A condition of the tile IR, as the reader builds it.
type IrCond = Cond<super::IndexExpr>;

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
        var_ranges: HashMap::new(),
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
    /// The first and largest value of each variable whose loop runs at least once.
    var_ranges: HashMap<LoopVarId, (i64, i64)>,
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
        comma_list(&mut c, ")", |c| {
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
            let ty = tile_type(c)?;
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
            Ok(())
        })?;
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
        comma_list(&mut c, ")", |c| {
            match c.word() {
                Some("load") => kind.load = true,
                Some("compute") => kind.compute = true,
                Some("store") => kind.store = true,
                _ => return Err(c.err("expected `load`, `compute` or `store`")),
            }
            Ok(())
        })?;
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
            return self.for_op(c, comment, results, depth, false);
        }
        if c.keyword_here("if") {
            return self.for_op(c, comment, results, depth, true);
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

    /// The smallest and largest value `e` takes over the variables' ranges.
    fn range_of(&self, e: &super::IndexExpr) -> Option<(i64, i64)> {
        super::affine::interval(e, &|v| self.var_ranges.get(&v).copied())
    }

    /// `%i in START..END step S [buffers(N)] [slot = iteration % N]` of a `for`.
    #[allow(clippy::type_complexity)]
    fn loop_header(
        &mut self,
        c: &mut Cursor<'t>,
        op: OpId,
        depth: usize,
    ) -> R<(Cursor<'t>, String, i64, LoopEnd, i64, Option<u32>)> {
        let var_at = c.clone();
        let var_name = c.name()?;
        c.ws();
        c.keyword("in")?;
        c.ws();
        let start = c.int()?;
        c.expect("..")?;
        let end = if c.peek("(") || c.peek("%") {
            let expr = self.iatom(c, depth)?;
            let (min, max) = self.range_of(&expr).ok_or_else(|| {
                c.err(
                    "the loop's end depends on a variable whose loop runs zero times, or overflows",
                )
            })?;
            LoopEnd::Affine { expr, min, max }
        } else {
            LoopEnd::Const(c.int()?)
        };
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
        Ok((var_at, var_name, start, end, step, buffers))
    }

    /// A branch's condition, as the printer writes it: `||` over `&&` over `!`, each
    /// comparison `EXPR OP EXPR`, parentheses around a looser operator.
    fn cond(&self, c: &mut Cursor<'t>, depth: usize) -> R<Cond<super::IndexExpr>> {
        if depth > MAX_NESTING_DEPTH {
            return Err(c.err("a condition nested too deep"));
        }
        self.cond_chain(c, depth, "||", Self::cond_and, Cond::Or)
    }

    fn cond_and(&self, c: &mut Cursor<'t>, depth: usize) -> R<Cond<super::IndexExpr>> {
        self.cond_chain(c, depth, "&&", Self::cond_not, Cond::And)
    }

    /// `next (op next)*`, folded to the left with `join`, as the kernel parser reads it.
    fn cond_chain(
        &self,
        c: &mut Cursor<'t>,
        depth: usize,
        op: &str,
        next: fn(&Self, &mut Cursor<'t>, usize) -> R<IrCond>,
        join: fn(Box<IrCond>, Box<IrCond>) -> IrCond,
    ) -> R<IrCond> {
        let mut lhs = next(self, c, depth)?;
        while c.tok(op) {
            c.ws();
            lhs = join(Box::new(lhs), Box::new(next(self, c, depth + 1)?));
        }
        Ok(lhs)
    }

    fn cond_not(&self, c: &mut Cursor<'t>, depth: usize) -> R<Cond<super::IndexExpr>> {
        c.ws();
        if c.eat("!") {
            return Ok(Cond::Not(Box::new(self.cond_not(c, depth + 1)?)));
        }
        if c.peek("(") {
            // A parenthesised condition, else an expression starting with one.
            let mut inner = c.clone();
            inner.expect("(")?;
            if let Ok(cond) = self.cond(&mut inner, depth + 1) {
                if inner.tok(")") {
                    *c = inner;
                    return Ok(cond);
                }
            }
        }
        let lhs = self.cond_operand(c, depth + 1)?;
        c.ws();
        let op = [
            ("<=", CmpOp::Le),
            (">=", CmpOp::Ge),
            ("==", CmpOp::Eq),
            ("!=", CmpOp::Ne),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
        ]
        .into_iter()
        .find_map(|(text, op)| c.eat(text).then_some(op))
        .ok_or_else(|| c.err("expected a comparison (`<`, `<=`, `>`, `>=`, `==` or `!=`)"))?;
        c.ws();
        let rhs = self.cond_operand(c, depth + 1)?;
        Ok(Cond::Cmp { op, lhs, rhs })
    }

    /// An index expression, or `load %t[e, ...]` (one element of a tensor).
    fn cond_operand(&self, c: &mut Cursor<'t>, depth: usize) -> R<Operand<super::IndexExpr>> {
        if !c.keyword_here("load") {
            return Ok(Operand::Index(self.iexpr(c, depth)?));
        }
        c.ws();
        let param = self.param(c)?;
        c.expect("[")?;
        let mut index = Vec::new();
        loop {
            c.ws();
            index.push(self.iexpr(c, depth)?);
            if !c.tok(",") {
                break;
            }
        }
        c.expect("]")?;
        let param = u32::try_from(param).map_err(|_| c.err("too many parameters"))?;
        Ok(Operand::Element { param, index })
    }

    fn for_op(
        &mut self,
        mut c: Cursor<'t>,
        comment: Option<Cursor<'t>>,
        results: Vec<String>,
        depth: usize,
        guard: bool,
    ) -> R<OpId> {
        let head = c.clone();
        let op = self.k.ops.push(Op {
            kind: OpKind::Buffers,
            span: Span::DUMMY,
            results: Vec::new(),
        });
        self.op_lines.insert(op.index() as u32, head.line_span());
        c.ws();
        let (var_at, var_name, start, end, step, buffers) = if guard {
            // A branch's variable is never printed: it gets a name no text can use.
            let cond = self.cond(&mut c, depth)?;
            (
                c.clone(),
                format!("if {}", op.index()),
                0,
                LoopEnd::Guard(cond),
                1,
                None,
            )
        } else {
            self.loop_header(&mut c, op, depth)?
        };
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
        let mut written = None;
        if let Some(mut note) = comment {
            if guard && note.tok("as written: ") {
                written = Some(note.rest().trim_end().to_string());
            } else if note.tok("subtile-matmul: ") {
                let split = l0_split(&mut note)?;
                self.k.annotations.l0_split.insert(op, split);
            } else {
                return Err(note.err(if guard {
                    "expected an `as written:` note"
                } else {
                    "expected a `subtile-matmul:` note"
                }));
            }
        }
        if self.vars.contains_key(&var_name) {
            return Err(var_at.err(format!("loop variable `%{var_name}` is defined twice")));
        }
        let var = self.k.loop_vars.push(LoopVar {
            name: if guard {
                "if".to_string()
            } else {
                super::print::source_name(&var_name).to_string()
            },
            span,
            written,
        });
        self.vars.insert(var_name.clone(), var);
        self.var_loops.insert(var, op);
        let header = ForOp {
            var,
            start,
            end: end.clone(),
            step,
            buffers,
            inits: Vec::new(),
            args: Vec::new(),
            body: Block::default(),
            yields: Vec::new(),
        };
        if let Some(range) = header.var_range() {
            self.var_ranges.insert(var, range);
        }
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
}
