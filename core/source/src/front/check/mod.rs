//! Syntax tree -> checked kernel (`hir`): resolves names, folds constants, checks every
//! static rule of `docs/language.md` and types every tile expression. The checker keeps
//! going after an error (a failed expression yields `None` and its `let` binds a
//! poisoned name that stays silent) so one run reports as many independent errors as it
//! can.
//!
//! `consts` evaluates constant expressions, `index` checks tensor accesses, `expr`
//! types tile expressions, `shape` holds broadcasting and size rules, `show` prints
//! syntax for messages.

mod branches;
mod consts;
mod expr;
mod index;
mod loops;
mod shape;
mod show;
mod slots;

use super::ast;
use super::hir::{self, LocalId, LoopId, ParamId};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::limits::{MAX_DIAGNOSTICS, MAX_NESTING_DEPTH};
use crate::types::TileType;
use std::collections::{HashMap, HashSet};

pub fn check(file: &ast::File, kernel: Option<&str>) -> Result<hir::Kernel, Diagnostics> {
    let mut cx = Checker::new(file);
    cx.check_const_items();
    cx.check_duplicate_kernels();
    let selected = match kernel {
        None => file.kernels.first(),
        Some(name) => file.kernels.iter().find(|k| k.name.name == name),
    };
    let Some(k) = selected else {
        let message = match kernel {
            None => "the file has no kernel".to_string(),
            Some(name) => format!("no kernel named `{name}`"),
        };
        let names: Vec<&str> = file.kernels.iter().map(|k| k.name.name.as_str()).collect();
        let mut d = Diagnostic::global(message);
        if !names.is_empty() {
            d = d.with_note(format!("available kernels: {}", names.join(", ")));
        }
        cx.diags.push(d);
        return Err(cx.diags);
    };
    let out = cx.kernel(k);
    if cx.diags.is_empty() {
        Ok(out)
    } else {
        Err(cx.diags)
    }
}

/// What a name in a kernel body refers to.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Local(LocalId),
    Loop(LoopId),
    /// A `let` whose value had an error: uses stay silent instead of cascading.
    Poisoned,
}

#[derive(Default)]
struct Scope {
    names: HashMap<String, (Binding, Span)>,
    /// Names an `if` in this block defined on some paths only (`branches`).
    partial: HashMap<String, branches::Partial>,
}

struct Checker<'a> {
    file: &'a ast::File,
    diags: Diagnostics,
    /// Constants checked so far, by name; `None` when its value had an error.
    consts: HashMap<String, Option<consts::ConstValue>>,
    params: Vec<hir::Param>,
    param_ids: HashMap<String, ParamId>,
    locals: Vec<hir::Local>,
    loops: Vec<hir::Loop>,
    scopes: Vec<Scope>,
    /// Loops enclosing the statement being checked, outermost first.
    loop_stack: Vec<LoopId>,
    /// Sum over loops of the product of enclosing trip counts (`MAX_LOOP_ITERATIONS`).
    iterations: u64,
    iteration_limit_reported: bool,
    depth: usize,
    /// Per `buffers` tile: the slots statements so far may have written.
    written: Vec<(LocalId, slots::Written)>,
    /// Loops run as a counter `k = 0, 1, ...` (written `rev`, or with a start that
    /// depends on an outer loop): their variable is `base + scale * k`.
    counted: HashMap<LoopId, loops::Counted>,
    /// Loops whose last iteration (a `rev` loop's first) may be partial.
    tails: HashSet<LoopId>,
    /// The `if`s enclosing the statement being checked, outermost first.
    branches: Vec<Span>,
    /// Locals bound to one element of an `i32` input (`let on = load mask[i, j];`) and
    /// not updated since: a condition may compare them (`branches`).
    elements: HashMap<LocalId, (u32, Vec<hir::IndexExpr>)>,
    /// Locals bound to a load whose integer index dropped an axis (`let r = load x[i,
    /// :];`), for the note on an error about an axis the tile no longer has.
    dropped: HashSet<LocalId>,
}

/// A `for` loop's range as written.
pub(super) struct LoopRange<'e> {
    reverse: Option<Span>,
    start: &'e ast::Expr,
    end: &'e ast::Expr,
    step: Option<&'e ast::Expr>,
}

impl<'a> Checker<'a> {
    fn new(file: &'a ast::File) -> Checker<'a> {
        Checker {
            file,
            diags: Vec::new(),
            consts: HashMap::new(),
            params: Vec::new(),
            param_ids: HashMap::new(),
            locals: Vec::new(),
            loops: Vec::new(),
            scopes: Vec::new(),
            loop_stack: Vec::new(),
            iterations: 0,
            iteration_limit_reported: false,
            depth: 0,
            written: Vec::new(),
            counted: HashMap::new(),
            tails: HashSet::new(),
            branches: Vec::new(),
            elements: HashMap::new(),
            dropped: HashSet::new(),
        }
    }

    fn report(&mut self, d: Diagnostic) {
        if self.diags.len() < MAX_DIAGNOSTICS {
            self.diags.push(d);
        }
    }

    fn error<T>(&mut self, message: impl Into<String>, span: Span) -> Option<T> {
        self.report(Diagnostic::error(message, span));
        None
    }

    /// Runs `f` one recursion level deeper; past the limit reports once and fails. The
    /// parser already bounds its trees, but `check` accepts any `ast::File`.
    fn nested<T>(&mut self, span: Span, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        if self.depth >= MAX_NESTING_DEPTH {
            return self.error(
                format!("nested too deeply (the limit is {MAX_NESTING_DEPTH} levels)"),
                span,
            );
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn check_duplicate_kernels(&mut self) {
        let mut seen = HashMap::new();
        for k in &self.file.kernels {
            self.first_definition(&mut seen, "kernel", &k.name);
        }
    }

    /// Records `name` in `seen`; a second definition is an error pointing at the first.
    /// True when `name` is new.
    fn first_definition(
        &mut self,
        seen: &mut HashMap<&'a str, Span>,
        what: &str,
        name: &'a ast::Ident,
    ) -> bool {
        if let Some(&first) = seen.get(name.name.as_str()) {
            let d = Diagnostic::error(
                format!("{what} `{}` is defined twice", name.name),
                name.span,
            )
            .with_label(first, "first defined here");
            self.report(d);
            return false;
        }
        seen.insert(&name.name, name.span);
        true
    }

    // ---- names ----

    fn lookup(&self, name: &str) -> Option<(Binding, Span)> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.names.get(name).copied())
    }

    /// Binds `name` in the innermost block; a second binding in the same block, or a
    /// name that is already a parameter or constant, is an error.
    fn bind(&mut self, name: &ast::Ident, binding: Binding) {
        let clash =
            if let Some(&(_, first)) = self.scopes.last().and_then(|s| s.names.get(&name.name)) {
                Some((
                    format!("`{}` is already defined in this block", name.name),
                    first,
                    "first defined here",
                ))
            } else if let Some(id) = self.param_ids.get(&name.name) {
                let span = self
                    .params
                    .get(id.0 as usize)
                    .map_or(Span::DUMMY, |p| p.span);
                Some((
                    format!("`{}` is already a kernel parameter", name.name),
                    span,
                    "parameter declared here",
                ))
            } else {
                self.const_item(&name.name).map(|c| {
                    (
                        format!("`{}` is already a constant", name.name),
                        c.name.span,
                        "constant defined here",
                    )
                })
            };
        if let Some((message, first, label)) = clash {
            let d = Diagnostic::error(message, name.span)
                .with_label(first, label)
                .with_note("shadowing is allowed only in a nested block; choose another name");
            self.report(d);
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope
                .names
                .entry(name.name.clone())
                .or_insert((binding, name.span));
        }
    }

    fn const_item(&self, name: &str) -> Option<&'a ast::ConstItem> {
        self.file.consts.iter().find(|c| c.name.name == name)
    }

    // ---- kernel ----

    fn kernel(&mut self, k: &ast::Kernel) -> hir::Kernel {
        for p in &k.params {
            self.param(p);
        }
        let body = self.block(&k.body, None);
        hir::Kernel {
            name: k.name.name.clone(),
            span: k.name.span,
            params: std::mem::take(&mut self.params),
            locals: std::mem::take(&mut self.locals),
            loops: std::mem::take(&mut self.loops),
            body,
        }
    }

    fn param(&mut self, p: &ast::Param) {
        if let Some(first) = self
            .param_ids
            .get(&p.name.name)
            .and_then(|id| self.params.get(id.0 as usize))
        {
            let d = Diagnostic::error(
                format!("parameter `{}` is declared twice", p.name.name),
                p.name.span,
            )
            .with_label(first.span, "first declared here");
            self.report(d);
            return;
        }
        let Some(ty) = self.type_expr(&p.ty, shape::Limit::Tensor) else {
            return;
        };
        let id = ParamId(self.params.len() as u32);
        self.param_ids.insert(p.name.name.clone(), id);
        self.params.push(hir::Param {
            name: p.name.name.clone(),
            ty,
            is_out: p.is_out,
            span: p.name.span,
        });
    }

    /// A written type with constant extents, each positive, within the size `limit`.
    fn type_expr(&mut self, t: &ast::TypeExpr, limit: shape::Limit) -> Option<TileType> {
        let mut shape = Vec::new();
        let mut ok = true;
        for e in &t.shape {
            match self.const_expr(e) {
                Some(v) if v > 0 => shape.push(v as u64),
                Some(v) => {
                    self.error::<()>(
                        format!("an extent must be positive, but `{}` is {v}", show::expr(e)),
                        e.span,
                    );
                    ok = false;
                }
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        let ty = TileType::new(t.dtype, shape);
        self.check_size(&ty, limit, t.span)?;
        Some(ty)
    }

    /// Checks a block in a new scope; a loop's variable is bound in its body's scope, so
    /// the body cannot redefine it.
    fn block(&mut self, b: &ast::Block, loop_var: Option<(&ast::Ident, LoopId)>) -> Vec<hir::Stmt> {
        self.scopes.push(Scope::default());
        if let Some((var, id)) = loop_var {
            self.bind(var, Binding::Loop(id));
        }
        let mut out = Vec::new();
        for s in &b.stmts {
            if let Some(s) = self.nested(s.span, |cx| cx.stmt(s)) {
                out.push(s);
            }
        }
        self.scopes.pop();
        out
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Option<hir::Stmt> {
        let kind = match &s.kind {
            ast::StmtKind::Let { name, value: call } if is_buffers_call(call) => {
                self.buffers_decl(name, call)?
            }
            ast::StmtKind::Let { name, value } => {
                let value = match self.value(value) {
                    Some(expr::Val::Tile(t)) if t.ty.rank() > 0 => Some(t),
                    Some(_) => {
                        let d = Diagnostic::error(
                            format!("`{}` would be a number, but `let` names a tile", name.name),
                            value.span,
                        )
                        .with_note(
                            "name a number with a file-level `const` (`const EPS = 1e-5;`), write it where it is used, or make a tile with `full(f32[1, 1], ...)`",
                        );
                        self.report(d);
                        None
                    }
                    None => None,
                };
                let Some(value) = value else {
                    self.bind(name, Binding::Poisoned);
                    return None;
                };
                let local = LocalId(self.locals.len() as u32);
                self.locals.push(hir::Local {
                    name: name.name.clone(),
                    ty: value.ty.clone(),
                    span: name.span,
                    slots: None,
                });
                self.bind(name, Binding::Local(local));
                self.note_element(local, &value);
                if expr::drops_an_axis(&value) {
                    self.dropped.insert(local);
                }
                hir::StmtKind::Let { local, value }
            }
            ast::StmtKind::Assign { name, op, value } => self.update(name, *op, value)?,
            ast::StmtKind::SlotWrite { name, slot, value } => self.slot_write(name, slot, value)?,
            ast::StmtKind::Store {
                tensor,
                indices,
                value,
                accumulate,
            } => self.store(tensor, indices, value, *accumulate, s.span)?,
            ast::StmtKind::For {
                var,
                reverse,
                start,
                end,
                step,
                attrs,
                body,
            } => {
                let range = LoopRange {
                    reverse: *reverse,
                    start,
                    end,
                    step: step.as_ref(),
                };
                self.for_loop(s.span, var, range, attrs, body)?
            }
            ast::StmtKind::If { cond, then, els } => {
                self.if_stmt(cond, then, els.as_ref(), s.span)?
            }
        };
        Some(hir::Stmt { kind, span: s.span })
    }

    fn update(
        &mut self,
        name: &ast::Ident,
        op: ast::AssignOp,
        value: &ast::Expr,
    ) -> Option<hir::StmtKind> {
        let target = match self.lookup(&name.name) {
            Some((Binding::Local(id), _)) => Some(id),
            Some((Binding::Poisoned, _)) => None,
            Some((Binding::Loop(_), _)) => self.error(
                format!("`{}` is a loop variable and cannot be assigned", name.name),
                name.span,
            ),
            None if self.param_ids.contains_key(&name.name) => self.error(
                format!(
                    "`{}` is a tensor in global memory: write it with `store {}[...] = ...`",
                    name.name, name.name
                ),
                name.span,
            ),
            None => self.unknown_name(&name.name, name.span),
        };
        if self.whole_slot_tile(&name.name, name.span, true).is_some() {
            return None;
        }
        let value = self.value(value);
        let local = target?;
        self.elements.remove(&local);
        let ty = self.locals.get(local.0 as usize)?.ty.clone();
        let value = self.fit(value?, &ty, &format!("`{}`", name.name))?;
        if ty.dtype.is_byte_int() && op != ast::AssignOp::Set {
            return self.error(
                format!(
                    "`{}` is {}: 8-bit tiles are not updated arithmetically; convert first (`let w = {} as i32;`)",
                    name.name, ty, name.name
                ),
                name.span,
            );
        }
        if ty.dtype == crate::types::DType::Mask && op != ast::AssignOp::Set {
            return self.error(
                format!(
                    "`{}` is a mask: it can be replaced (`=`) but not updated arithmetically",
                    name.name
                ),
                name.span,
            );
        }
        let op = match op {
            ast::AssignOp::Set => hir::UpdateOp::Set,
            ast::AssignOp::Add => hir::UpdateOp::Add,
            ast::AssignOp::Sub => hir::UpdateOp::Sub,
            ast::AssignOp::Mul => hir::UpdateOp::Mul,
        };
        Some(hir::StmtKind::Update { local, op, value })
    }

    fn store(
        &mut self,
        tensor: &ast::Ident,
        indices: &[ast::Index],
        value: &ast::Expr,
        accumulate: bool,
        span: Span,
    ) -> Option<hir::StmtKind> {
        let param = self.tensor(tensor);
        if let Some(p) = param.and_then(|id| self.params.get(id.0 as usize)) {
            if !p.is_out {
                let d = Diagnostic::error(
                    format!("cannot store to `{}`: it is not an `out` parameter", p.name),
                    span,
                )
                .with_label(p.span, format!("declare it as `{}: out {}`", p.name, p.ty));
                self.report(d);
            }
        }
        let region = param.and_then(|id| self.access(id, tensor, indices));
        let value = self.value(value);
        let (param, (index, region_ty)) = (param?, region?);
        // numpy's assignment drops a value's extra leading axes of extent 1:
        // `c[n:n + 64] = acc.T` stores a [1, 64] tile into a [64] region.
        let value = match value {
            Some(crate::front::check::expr::Val::Tile(t))
                if t.ty.rank() > region_ty.rank()
                    && t.ty.shape[..t.ty.rank() - region_ty.rank()]
                        .iter()
                        .all(|&d| d == 1) =>
            {
                let extra = t.ty.rank() - region_ty.rank();
                let shape = t.ty.shape[extra..].to_vec();
                let (ty, span) = (crate::types::TileType::new(t.ty.dtype, shape), t.span);
                Some(crate::front::check::expr::Val::Tile(hir::Expr {
                    kind: hir::ExprKind::Reshape(Box::new(t)),
                    ty,
                    span,
                }))
            }
            other => other,
        };
        if accumulate && !index.iter().any(|ix| matches!(ix, hir::Index::Indirect(_))) {
            return self.error(
                format!(
                    "`+=` on a store adds into the rows an index tile picks (a scatter, `store {0}[idx, :] += t`), but `{0}` is indexed by position here: load, add and store instead",
                    tensor.name
                ),
                span,
            );
        }
        let value = self.fit(
            value?,
            &region_ty,
            &format!("the region of `{}`", tensor.name),
        )?;
        Some(hir::StmtKind::Store {
            param,
            index,
            value,
            accumulate,
        })
    }

    /// Resolves the tensor named by `load` or `store`.
    fn tensor(&mut self, name: &ast::Ident) -> Option<ParamId> {
        if let Some(&id) = self.param_ids.get(&name.name) {
            return Some(id);
        }
        match self.lookup(&name.name) {
            Some((Binding::Local(_), _)) => self.error(
                format!(
                    "`{}` is a tile, not a kernel parameter: only tensors are loaded and stored",
                    name.name
                ),
                name.span,
            ),
            Some((Binding::Loop(_), _)) => self.error(
                format!("`{}` is a loop variable, not a kernel parameter", name.name),
                name.span,
            ),
            Some((Binding::Poisoned, _)) => None,
            None => self.unknown_name(&name.name, name.span),
        }
    }

    fn unknown_name<T>(&mut self, name: &str, span: Span) -> Option<T> {
        if self.partial_name(name, span) {
            return None;
        }
        let mut candidates: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|s| s.names.keys().cloned())
            .collect();
        candidates.extend(self.param_ids.keys().cloned());
        candidates.extend(self.file.consts.iter().map(|c| c.name.name.clone()));
        let mut d = Diagnostic::error(
            format!("unknown name `{}`", crate::front::lexer::truncate(name)),
            span,
        );
        if let Some(close) = closest(name, candidates.iter().map(String::as_str)) {
            d = d.with_note(format!("did you mean `{close}`?"));
        }
        self.report(d);
        None
    }
}

/// The candidate closest to `name` by edit distance, if close enough to be a likely typo.
/// `buffers(...)` as a `let` value: a declaration, not an expression.
fn is_buffers_call(e: &ast::Expr) -> bool {
    matches!(&e.kind, ast::ExprKind::Call { func, .. } if func.name == "buffers")
}

fn closest<'c>(name: &str, candidates: impl Iterator<Item = &'c str>) -> Option<&'c str> {
    if name.len() > 64 {
        return None;
    }
    // One edit per three characters: `exq` -> `exp`, but `q` suggests nothing.
    let limit = name.chars().count() / 3;
    if limit == 0 {
        return None;
    }
    candidates
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|&(d, _)| d <= limit)
        .min()
        .map(|(_, c)| c)
}
