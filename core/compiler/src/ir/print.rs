//! The textual form of the tile IR: one op per line, two spaces per nesting level, a type
//! on every value. The text is stable (a pure function of the IR) because the playground
//! diffs it between passes and tests snapshot it. It never panics, even on IR the
//! verifier would reject: bad handles print as `<bad ...>`.

use super::{
    Block, BlockItem, DenseSet, ForOp, FusedExpr, Index, IndexExpr, Kernel, OpId, OpKind, OpSet,
    Value, ValueId, ValueMap, VarMap,
};
use crate::diag::Span;
use crate::front::hir::{BinaryOp, Cond, Operand, UnaryOp, UpdateOp};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt::Write;

/// Printed text plus, for each line, the source span and the item it shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Printed {
    pub text: String,
    /// One entry per line of `text`; `None` for lines with no op (closing braces).
    pub spans: Vec<Option<Span>>,
    /// One entry per line of `text`: what the line prints, so the pass manager can
    /// follow it to the final program's instructions (`passes::IrLine::instrs`).
    pub items: Vec<Option<LineItem>>,
}

/// What one printed line shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LineItem {
    /// A tile-IR op, by index.
    Op(u32),
    /// The item (instruction or loop) of a lowered program at this index in print
    /// order; `end` marks a loop's closing `endloop`.
    Lowered { index: u32, end: bool },
    /// An instruction of the final program, by index.
    Instr(u32),
}

impl Printed {
    pub fn line(&mut self, depth: usize, text: &str, span: Option<Span>) {
        self.item_line(depth, text, span, None);
    }

    /// A line that prints `item`.
    pub fn item_line(
        &mut self,
        depth: usize,
        text: &str,
        span: Option<Span>,
        item: Option<LineItem>,
    ) {
        for _ in 0..depth {
            self.text.push_str("  ");
        }
        self.text.push_str(text);
        self.text.push('\n');
        self.spans.push(span);
        self.items.push(item);
    }
}

pub fn print(kernel: &Kernel) -> Printed {
    print_with(kernel, None)
}

/// The IR as the pass dumps show it: each op and loop with its source position in
/// `source` (`!at LINE:COL`, as the assembly writes it), before any comment.
pub fn print_located(kernel: &Kernel, source: &str) -> Printed {
    print_with(kernel, Some(source))
}

fn print_with(kernel: &Kernel, source: Option<&str>) -> Printed {
    let names = Names::assign(kernel);
    let mut p = Printer {
        k: kernel,
        names,
        out: Printed::default(),
        seen: DenseSet::new(),
        source,
    };
    p.kernel();
    p.out
}

/// The printed name of every named value (without the `%`), for messages and tables.
pub fn value_names(kernel: &Kernel) -> ValueMap<String> {
    Names::assign(kernel).values
}

/// The source name behind a printed value name: `acc` for `acc.2` (the suffix only
/// tells SSA values of one variable apart); a temporary's number stays as it is.
pub fn source_name(printed: &str) -> &str {
    match printed.rsplit_once('.') {
        Some((base, n)) if !base.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => base,
        _ => printed,
    }
}

/// Unique printed names. Source names are kept; a repeated name gets `.1`, `.2`, ...
/// (identifiers cannot contain `.`, so suffixed names never collide with source names);
/// unnamed values are numbered `%0`, `%1`, ... in print order.
#[derive(Default)]
struct Names {
    values: ValueMap<String>,
    vars: VarMap<String>,
    params: Vec<String>,
    taken: HashMap<String, u32>,
    temps: u32,
}

impl Names {
    fn unique(&mut self, base: Option<&str>) -> String {
        match base {
            Some(b) => {
                let count = self.taken.entry(b.to_string()).or_insert(0);
                let name = if *count == 0 {
                    b.to_string()
                } else {
                    format!("{b}.{count}")
                };
                *count += 1;
                name
            }
            None => {
                self.temps += 1;
                (self.temps - 1).to_string()
            }
        }
    }

    fn name_value(&mut self, k: &Kernel, v: ValueId) {
        if !self.values.contains_key(&v) {
            let base = k.values.get(v).and_then(|val| val.name.clone());
            let name = self.unique(base.as_deref());
            self.values.insert(v, name);
        }
    }

    fn assign(k: &Kernel) -> Names {
        let mut n = Names::default();
        for p in &k.params {
            let name = n.unique(Some(&p.name));
            n.params.push(name);
        }
        // Loop results are named after the body, so a loop-carried `acc` reads
        // `%acc`, `%acc.1` (block argument), `%acc.2` (updated), `%acc.3` (result).
        let mut stack: Vec<(std::vec::IntoIter<OpId>, Option<OpId>)> =
            vec![(k.body.ops().collect::<Vec<_>>().into_iter(), None)];
        let mut seen = OpSet::new();
        while let Some((iter, owner)) = stack.last_mut() {
            let Some(id) = iter.next() else {
                let owner = *owner;
                stack.pop();
                if let Some(op) = owner.and_then(|o| k.ops.get(o)) {
                    for &r in &op.results {
                        n.name_value(k, r);
                    }
                }
                continue;
            };
            let Some(op) = k.ops.get(id) else { continue };
            if !seen.insert(id) {
                continue;
            }
            if let OpKind::For(l) = &op.kind {
                if let Some(var) = k.loop_vars.get(l.var) {
                    if !n.vars.contains_key(&l.var) {
                        let name = n.unique(Some(&var.name));
                        n.vars.insert(l.var, name);
                    }
                }
                for &a in &l.args {
                    n.name_value(k, a);
                }
                stack.push((l.body.ops().collect::<Vec<_>>().into_iter(), Some(id)));
            } else {
                for &r in &op.results {
                    n.name_value(k, r);
                }
            }
        }
        n
    }
}

struct Printer<'a> {
    k: &'a Kernel,
    names: Names,
    out: Printed,
    /// Ops already printed: a malformed IR that lists an op twice (or inside its own
    /// body) prints a marker instead of looping.
    seen: OpSet,
    /// The source text, when ops print their positions.
    source: Option<&'a str>,
}

impl Printer<'_> {
    /// ` !at LINE:COL` of `span`, when printing positions.
    fn at(&self, span: Option<Span>) -> String {
        match (self.source, span) {
            (Some(source), Some(span)) => format!(" !at {}", span.line_col(source)),
            _ => String::new(),
        }
    }

    fn kernel(&mut self) {
        let mut head = format!("kernel {}(", self.k.name);
        for (i, p) in self.k.params.iter().enumerate() {
            if i > 0 {
                head.push_str(", ");
            }
            let out = match (p.scratch, p.is_out) {
                (true, _) => "scratch ",
                (false, true) => "out ",
                (false, false) => "",
            };
            let _ = write!(head, "%{}: {out}{}", self.param(i), p.ty);
        }
        head.push(')');
        head.push_str(&self.at(Some(self.k.span)));
        head.push_str(" {");
        self.out.line(0, &head, Some(self.k.span));
        if let Some(plan) = &self.k.memory {
            self.memory(plan);
        }
        self.block(&self.k.body, 1);
        self.out.line(0, "}", None);
    }

    /// The memory plan, one slab a line: `slab 2: l1 8192 bytes at [0x0, 0x2000]
    /// rotates with %j holds %kt, %vt` (or `holds scratch`, a fused op's).
    fn memory(&mut self, plan: &super::memory::MemoryPlan) {
        if plan.slabs.is_empty() {
            self.out.line(1, "no slabs", None);
        }
        for (i, slab) in plan.slabs.iter().enumerate() {
            let addrs: Vec<String> = slab.addrs().iter().map(|a| format!("{a:#x}")).collect();
            let mut line = format!(
                "slab {i}: {} {} bytes at [{}]",
                slab.space,
                slab.bytes,
                addrs.join(", ")
            );
            if let Some(l) = slab.rotates_with {
                let var = match self.k.ops.get(l) {
                    Some(super::Op {
                        kind: OpKind::For(f),
                        ..
                    }) => self.names.vars.get(&f.var).map(|n| format!("%{n}")),
                    _ => None,
                };
                let var = var.unwrap_or_else(|| format!("<bad loop {}>", l.index()));
                let _ = write!(line, " rotates with {var}");
            }
            let tiles: Vec<String> = slab.tiles.iter().map(|&v| self.v(v)).collect();
            let mut held = tiles;
            if slab.scratch_of.is_some() {
                held.push("scratch".into());
            }
            let _ = write!(line, " holds {}", held.join(", "));
            self.out.line(1, &line, None);
        }
    }

    fn block(&mut self, block: &Block, depth: usize) {
        for item in &block.items {
            match item {
                BlockItem::Op(op) => self.op(*op, depth),
                BlockItem::Step(step) => {
                    let at = self.at(Some(step.span));
                    let head = format!("step {} ({}){at} {{", step.id, step.kind.name());
                    self.out.line(depth, &head, Some(step.span));
                    for &op in &step.ops {
                        self.op(op, depth + 1);
                    }
                    self.out.line(depth, "}", None);
                }
            }
        }
    }

    fn param(&self, i: usize) -> String {
        self.names
            .params
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("<bad param {i}>"))
    }

    fn v(&self, v: ValueId) -> String {
        match self.names.values.get(&v) {
            Some(n) => format!("%{n}"),
            None => format!("<bad value {}>", v.index()),
        }
    }

    /// `ub f32[8, 512] slots(2) at [0x0, 0x4000]`: space, type and set attributes.
    fn ty(&self, v: ValueId) -> String {
        let Some(val) = self.k.values.get(v) else {
            return "<bad type>".into();
        };
        value_type(val)
    }

    /// Whether `op` is a store from L0C: one FIX instruction into GM (fix-to-gm).
    fn stores_from_l0c(&self, op: &super::Op) -> bool {
        matches!(&op.kind, OpKind::Store { value, .. }
            if self.k.values.get(*value).and_then(|x| x.space) == Some(crate::types::MemSpace::L0C))
    }

    fn op(&mut self, id: OpId, depth: usize) {
        let Some(op) = self.k.ops.get(id) else {
            self.out
                .line(depth, &format!("<bad op {}>", id.index()), None);
            return;
        };
        if !self.seen.insert(id) {
            self.out.line(
                depth,
                &format!("<op {} printed twice>", id.index()),
                Some(op.span),
            );
            return;
        }
        let span = Some(op.span);
        let results: Vec<String> = op.results.iter().map(|&r| self.v(r)).collect();
        let first = op.results.first().copied();
        let typed = |p: &Self, text: String| match first {
            Some(r) => format!("{} = {text} : {}", results.join(", "), p.ty(r)),
            None => text,
        };
        let line = match &op.kind {
            OpKind::Load { param, index, pad } => {
                let pad = match pad {
                    Some(v) => {
                        let dtype = self.k.params.get(*param).map(|p| p.ty.dtype);
                        format!(" pad {}", literal(*v, dtype))
                    }
                    None => String::new(),
                };
                typed(
                    self,
                    format!("load %{}[{}]{pad}", self.param(*param), self.index(index)),
                )
            }
            OpKind::Store {
                param,
                index,
                value,
                accumulate,
            } => {
                // A store from L0C is one FIX instruction, casting to the tensor's dtype.
                let via = match self.k.params.get(*param) {
                    Some(p) if self.stores_from_l0c(op) => format!(" via fix.{}", p.ty.dtype),
                    _ => String::new(),
                };
                // The DMA writes the transpose of the value (decompose-transfer).
                let transposed = if self.k.annotations.transposed.contains(&id) {
                    " transposed"
                } else {
                    ""
                };
                let add = if *accumulate { " add" } else { "" };
                format!(
                    "store %{}[{}], {}{add}{transposed}{via}",
                    self.param(*param),
                    self.index(index),
                    self.v(*value)
                )
            }
            OpKind::Unary { op, arg } => typed(self, format!("{} {}", op.name(), self.v(*arg))),
            OpKind::Binary { op, lhs, rhs } => typed(
                self,
                format!("{} {}, {}", op.name(), self.v(*lhs), self.v(*rhs)),
            ),
            OpKind::Compare { op, lhs, rhs } => typed(
                self,
                format!("cmp.{} {}, {}", op.name(), self.v(*lhs), self.v(*rhs)),
            ),
            OpKind::Select {
                mask,
                on_true,
                on_false,
            } => typed(
                self,
                format!(
                    "select {}, {}, {}",
                    self.v(*mask),
                    self.v(*on_true),
                    self.v(*on_false)
                ),
            ),
            OpKind::Iota { axis } => typed(self, format!("iota axis={axis}")),
            OpKind::Reduce { op, arg, axis } => {
                typed(self, format!("{} {}, axis={axis}", op.name(), self.v(*arg)))
            }
            OpKind::MatMul {
                lhs,
                rhs,
                acc,
                acc_block,
            } => {
                let block = if acc_block.is_empty() {
                    String::new()
                } else {
                    format!("[{}]", self.index(acc_block))
                };
                let acc = acc
                    .map(|a| format!(", acc={}{block}", self.v(a)))
                    .unwrap_or_default();
                typed(
                    self,
                    format!("matmul {}, {}{acc}", self.v(*lhs), self.v(*rhs)),
                )
            }
            OpKind::Transpose { arg } => typed(self, format!("transpose {}", self.v(*arg))),
            OpKind::Reshape { arg } => typed(self, format!("reshape {}", self.v(*arg))),
            OpKind::Slice {
                arg,
                index,
                transpose,
            } => {
                let t = if *transpose { " transposed" } else { "" };
                typed(
                    self,
                    format!("slice {}[{}]{t}", self.v(*arg), self.index(index)),
                )
            }
            OpKind::Cast { arg } => typed(self, format!("cast {}", self.v(*arg))),
            OpKind::Copy { arg } => typed(self, format!("copy {}", self.v(*arg))),
            OpKind::Full { value } => {
                let scalar = first
                    .and_then(|r| self.k.values.get(r))
                    .is_some_and(|v| v.ty.rank() == 0);
                let dtype = first.and_then(|r| self.k.values.get(r)).map(|v| v.ty.dtype);
                let lit = literal(*value, dtype);
                typed(
                    self,
                    if scalar {
                        format!("const {lit}")
                    } else {
                        format!("full {lit}")
                    },
                )
            }
            OpKind::IndexValue { expr } => typed(self, format!("index {}", self.iexpr(expr, 0))),
            OpKind::Update { op, old, value } => {
                let name = match op {
                    UpdateOp::Set => "set",
                    UpdateOp::Add => "add",
                    UpdateOp::Sub => "sub",
                    UpdateOp::Mul => "mul",
                };
                typed(
                    self,
                    format!("update {name} {}, {}", self.v(*old), self.v(*value)),
                )
            }
            OpKind::Fused { args, expr } => {
                let args: Vec<String> = args.iter().map(|&a| self.v(a)).collect();
                typed(
                    self,
                    format!("fused({}) {{ {} }}", args.join(", "), fused_text(expr, 0)),
                )
            }
            OpKind::Buffers => typed(self, "buffers".into()),
            OpKind::SlotWrite { buf, slot, value } => format!(
                "write {} slot {}, {}",
                self.v(*buf),
                self.iexpr(slot, 0),
                self.v(*value)
            ),
            OpKind::SlotRead { buf, slot } => typed(
                self,
                format!("read {} slot {}", self.v(*buf), self.iexpr(slot, 0)),
            ),
            OpKind::For(l) => return self.for_op(id, l, &results, depth, span),
        };
        let note = match (
            self.k.annotations.copy_note.get(&id),
            self.k.annotations.l0_whole.get(&id),
        ) {
            (Some(&n), _) => Some(self.copy_note(op, n)),
            (None, Some(why)) => Some(format!("  // subtile-matmul left it whole: {why}")),
            (None, None) => None,
        };
        let attrs = attrs_text(&self.k.annotations, id, self.stores_from_l0c(op));
        let at = self.at(span);
        let line = format!("{line}{attrs}{at}{}", note.unwrap_or_default());
        let item = Some(LineItem::Op(id.index() as u32));
        self.out.item_line(depth, &line, span, item);
    }

    /// `  // copy: why`, naming the values as printed.
    fn copy_note(&self, op: &super::Op, note: super::CopyNote) -> String {
        use super::CopyNote;
        let what = match op.kind {
            OpKind::Full { .. } => "re-materialised",
            _ => "copy",
        };
        let why = match note {
            CopyNote::ReadAfterDef { read, defined } => {
                format!(
                    "{} is read after {} is defined",
                    self.v(read),
                    self.v(defined)
                )
            }
            CopyNote::NotInPlace { read, defined } => format!(
                "{} cannot be computed in place over {}",
                self.v(defined),
                self.v(read)
            ),
            CopyNote::BothLive { a, b } => {
                format!("{} and {} are live at the same time", self.v(a), self.v(b))
            }
            CopyNote::Placement { value } => format!(
                "{} cannot share the loop's buffer (memory space, type or slots differ)",
                self.v(value)
            ),
            CopyNote::Cycle => "temporary breaking a cycle of the back edge's copies".into(),
        };
        format!("  // {what}: {why}")
    }

    fn for_op(
        &mut self,
        id: OpId,
        l: &ForOp,
        results: &[String],
        depth: usize,
        span: Option<Span>,
    ) {
        let var = self
            .names
            .vars
            .get(&l.var)
            .cloned()
            .unwrap_or_else(|| "<bad var>".into());
        let mut head = String::new();
        if !results.is_empty() {
            let _ = write!(head, "{} = ", results.join(", "));
        }
        match &l.end {
            super::LoopEnd::Const(c) => {
                let _ = write!(head, "for %{var} in {}..{c} step {}", l.start, l.step);
            }
            super::LoopEnd::Affine { expr, .. } => {
                let end = self.iexpr(expr, 3);
                let _ = write!(head, "for %{var} in {}..{end} step {}", l.start, l.step);
            }
            // A branch runs once or not at all: its variable is never read, and the
            // verifier holds its header to `0..1 step 1`.
            super::LoopEnd::Guard(cond) => {
                let _ = write!(head, "if {}", self.cond(cond));
            }
        }
        if let Some(n) = l.buffers {
            let _ = write!(head, " buffers({n})");
        }
        if let Some(n) = self.k.annotations.rotation.get(&id).copied() {
            let _ = write!(head, " slot = iteration % {n}");
        }
        if !l.args.is_empty() || !l.inits.is_empty() {
            let pairs: Vec<String> = (0..l.args.len().max(l.inits.len()))
                .map(|i| {
                    let arg = l
                        .args
                        .get(i)
                        .map(|&a| format!("{}: {}", self.v(a), self.ty(a)));
                    let init = l.inits.get(i).map(|&v| self.v(v));
                    format!(
                        "{} = {}",
                        arg.unwrap_or_else(|| "<missing arg>".into()),
                        init.unwrap_or_else(|| "<missing init>".into())
                    )
                })
                .collect();
            let _ = write!(head, " iter({})", pairs.join(", "));
        }
        head.push_str(&self.at(span));
        head.push_str(" {");
        // The condition as the kernel wrote it: what the views call this branch.
        let written = matches!(l.end, super::LoopEnd::Guard(_))
            .then(|| {
                self.k
                    .loop_vars
                    .get(l.var)
                    .and_then(|v| v.written.as_deref())
            })
            .flatten();
        if let Some(w) = written {
            let _ = write!(head, "  // as written: {w}");
        }
        if let Some(n) = self.k.annotations.l0_split.get(&id).copied() {
            let _ = write!(
                head,
                "  // subtile-matmul: {}, {} capacity required it \
                 (the whole {} needs {} bytes, {} has {})",
                if n.blocks != [1, 1] {
                    format!(
                        "M x N in {} x {} blocks moved from L1",
                        n.blocks[0], n.blocks[1]
                    )
                } else if n.from_l1 {
                    format!("K in {} pieces moved from L1", n.chunks)
                } else {
                    format!("K split into {} sub-tiles", n.chunks)
                },
                n.space.name().to_ascii_uppercase(),
                if n.space == crate::types::MemSpace::L0C {
                    "product tile"
                } else {
                    "operand tile"
                },
                n.bytes,
                n.space.name().to_ascii_uppercase(),
                n.capacity
            );
        }
        let item = Some(LineItem::Op(id.index() as u32));
        self.out.item_line(depth, &head, span, item);
        self.block(&l.body, depth + 1);
        if !l.yields.is_empty() {
            let ys: Vec<String> = l.yields.iter().map(|&y| self.v(y)).collect();
            self.out
                .line(depth + 1, &format!("yield {}", ys.join(", ")), span);
        }
        self.out.line(depth, "}", None);
    }

    fn index(&self, index: &[Index]) -> String {
        let parts: Vec<String> = index
            .iter()
            .map(|ix| match ix {
                Index::Full => ":".to_string(),
                Index::Range {
                    start,
                    len,
                    clamped,
                } => {
                    let end = IndexExpr::Add(
                        Box::new(start.clone()),
                        Box::new(IndexExpr::Const(*len as i64)),
                    );
                    let end = match start {
                        IndexExpr::Const(s) => self.iexpr(&IndexExpr::Const(s + *len as i64), 0),
                        _ => self.iexpr(&end, 0),
                    };
                    let clamp = if *clamped { " clamped" } else { "" };
                    format!("{} .. {end}{clamp}", self.iexpr(start, 0))
                }
                Index::Strided { start, len, step } => {
                    // As the source writes it: the end is one past the last position.
                    let hull = (len.saturating_sub(1))
                        .saturating_mul(*step)
                        .saturating_add(1);
                    let end = match start {
                        IndexExpr::Const(s) => IndexExpr::Const(s + hull as i64),
                        _ => IndexExpr::Add(
                            Box::new(start.clone()),
                            Box::new(IndexExpr::Const(hull as i64)),
                        ),
                    };
                    format!(
                        "{} .. {} step {step}",
                        self.iexpr(start, 0),
                        self.iexpr(&end, 0)
                    )
                }
                Index::Single(e) => self.iexpr(e, 0),
                Index::Indirect(v) => format!("indirect {}", self.v(*v)),
            })
            .collect();
        parts.join(", ")
    }

    /// A branch's condition (`Cond::text`, with the IR's index expressions).
    fn cond(&self, c: &Cond<IndexExpr>) -> String {
        c.text(&mut |operand| match operand {
            Operand::Index(e) => self.iexpr(e, 0),
            Operand::Element { param, index } => {
                let index: Vec<String> = index.iter().map(|e| self.iexpr(e, 0)).collect();
                format!(
                    "load %{}[{}]",
                    self.param(*param as usize),
                    index.join(", ")
                )
            }
        })
    }

    /// Index expression text; `prec` is the binding strength the context needs
    /// (0 none, 1 additive, 2 multiplicative).
    fn iexpr(&self, e: &IndexExpr, prec: u8) -> String {
        let (text, own) = match e {
            IndexExpr::Const(c) => (c.to_string(), 3),
            IndexExpr::Var(v) => (
                format!(
                    "%{}",
                    self.names
                        .vars
                        .get(v)
                        .cloned()
                        .unwrap_or_else(|| "<bad var>".into())
                ),
                3,
            ),
            IndexExpr::Add(a, b) => (format!("{} + {}", self.iexpr(a, 1), self.iexpr(b, 2)), 1),
            IndexExpr::Sub(a, b) => (format!("{} - {}", self.iexpr(a, 1), self.iexpr(b, 2)), 1),
            IndexExpr::Mul(a, b) => (format!("{} * {}", self.iexpr(a, 2), self.iexpr(b, 3)), 2),
            IndexExpr::FloorDiv(a, d) => (format!("{} // {d}", self.iexpr(a, 2)), 2),
            IndexExpr::Mod(a, d) => (format!("{} mod {d}", self.iexpr(a, 2)), 2),
        };
        if own < prec {
            format!("({text})")
        } else {
            text
        }
    }
}

/// The suffix showing an op's pass annotations: DMA descriptors (for a store through
/// FIX, `gm`: the region it writes, as the FIX moves it in one piece) and fused scratch.
fn attrs_text(notes: &super::Annotations, id: OpId, fix: bool) -> String {
    let mover = if fix { "gm" } else { "dma" };
    let mut s = String::new();
    if let Some(t) = notes.transfer.get(&id) {
        let dim = |d: &super::TransferDim| {
            let clamp = d
                .clamp_axis
                .map_or(String::new(), |ax| format!(" clamp@{ax}"));
            format!("[{}{clamp}, {}, {}]", d.extent, d.gm_stride, d.tile_stride)
        };
        let peeled: Vec<String> = t.dims.iter().take(t.peel).map(dim).collect();
        let desc: Vec<String> = t.dims.iter().skip(t.peel).map(dim).collect();
        match t.rows {
            Some((rows, len)) => {
                let _ = write!(s, " dma(rows={rows}, len={len})");
            }
            None if peeled.is_empty() => {
                let _ = write!(s, " {mover}{}", desc.join(""));
            }
            None => {
                let _ = write!(s, " loop{} {mover}{}", peeled.join(""), desc.join(""));
            }
        }
    }
    if let Some((bytes, addr)) = notes.scratch.get(&id) {
        let _ = write!(s, " scratch({bytes} bytes at {addr:#x})");
    }
    s
}

/// The type annotation of a value: memory space once known, type, then set attributes.
pub fn value_type(val: &Value) -> String {
    let mut s = String::new();
    if let Some(space) = val.space {
        let _ = write!(s, "{space} ");
    }
    let _ = write!(s, "{}", val.ty);
    if let Some(n) = val.attrs.slots {
        let _ = write!(s, " slots({n})");
    }
    if !val.attrs.addresses.is_empty() {
        let addrs: Vec<String> = val
            .attrs
            .addresses
            .iter()
            .map(|a| format!("{a:#x}"))
            .collect();
        let _ = write!(s, " at [{}]", addrs.join(", "));
    }
    s
}

/// A literal as source would write it: integers for `i32`, floats with a point otherwise.
fn literal(value: f64, dtype: Option<crate::types::DType>) -> String {
    match dtype {
        Some(crate::types::DType::I32) => format!("{}", value as i64),
        _ => format!("{value:?}"),
    }
}

/// `exp($0 - $1)`: infix arithmetic with minimal parentheses, calls for the rest.
pub fn fused_text(e: &FusedExpr, prec: u8) -> String {
    let (text, own) = match e {
        FusedExpr::Arg(i) => (format!("${i}"), 4),
        FusedExpr::Const(c) => (format!("{c:?}"), if *c < 0.0 { 3 } else { 4 }),
        FusedExpr::Unary(UnaryOp::Neg, a) => (format!("-{}", fused_text(a, 4)), 3),
        FusedExpr::Unary(op, a) => (format!("{}({})", op.name(), fused_text(a, 0)), 4),
        FusedExpr::Binary(op, a, b) => {
            let infix = match op {
                BinaryOp::Add => Some(("+", 1)),
                BinaryOp::Sub => Some(("-", 1)),
                BinaryOp::Mul => Some(("*", 2)),
                BinaryOp::Div => Some(("/", 2)),
                _ => None,
            };
            match infix {
                Some((sym, p)) => (
                    format!("{} {sym} {}", fused_text(a, p), fused_text(b, p + 1)),
                    p,
                ),
                None => (
                    format!("{}({}, {})", op.name(), fused_text(a, 0), fused_text(b, 0)),
                    4,
                ),
            }
        }
    };
    if own < prec {
        format!("({text})")
    } else {
        text
    }
}
