//! `if` / `else if` / `else`: the condition, the branches' scopes, and the names every
//! path defines.
//!
//! A condition compares integer expressions of loop variables and constants (the
//! expressions of an index) and elements of `i32` input tensors, joined with `&&`, `||`
//! and `!`. Each branch is a block: a
//! `let` in it is local to it. Python's rule decides what is visible after the `if`: a
//! name that every branch defines (so there is an `else`) and that was not visible
//! before is a new local after it (`hir::Join`); a name only some paths define stays
//! unknown after it, and using it is an error that names the path that does not.

use super::{ast, hir, show, Binding, Checker, Scope};
use crate::diag::{Diagnostic, Span};
use crate::front::hir::{Cond, LocalId, Operand};
use crate::types::DType;
use std::collections::HashMap;

/// A name that some paths through an `if` define and others do not.
#[derive(Clone, Debug)]
pub(super) struct Partial {
    /// Where the branch that defines it defines it.
    defined: Span,
    /// The `if`.
    at: Span,
    /// The path that does not define it, in words.
    missing: &'static str,
}

impl Checker<'_> {
    pub(super) fn if_stmt(
        &mut self,
        cond: &ast::Cond,
        then: &ast::Block,
        els: Option<&ast::Block>,
        span: Span,
    ) -> Option<hir::StmtKind> {
        let text = show::cond(cond);
        let cond = self.cond(cond);
        self.branches.push(span);
        let (then, then_names) = self.branch(then);
        let (els_stmts, els_names) = match els {
            Some(b) => self.branch(b),
            None => (Vec::new(), HashMap::new()),
        };
        self.branches.pop();
        let mut joins = Vec::new();
        let mut names: Vec<&String> = then_names.keys().chain(els_names.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            // A branch's `let` of a name visible before the `if` shadows it inside
            // the branch only.
            if self.lookup(name).is_some() {
                continue;
            }
            match (then_names.get(name), els_names.get(name)) {
                (Some(&(a, a_span)), Some(&(b, _))) => {
                    let binding = self.join(name, a, b, a_span, &mut joins);
                    let ident = ast::Ident {
                        name: name.clone(),
                        span: a_span,
                    };
                    self.bind(&ident, binding);
                }
                (Some(&(_, defined)), None) | (None, Some(&(_, defined))) => {
                    let missing = match (then_names.contains_key(name), els.is_some()) {
                        (true, true) => "the `else` branch",
                        (true, false) => "the path where the condition is false",
                        (false, _) => "the `if` branch",
                    };
                    if let Some(scope) = self.scopes.last_mut() {
                        let partial = Partial {
                            defined,
                            at: span,
                            missing,
                        };
                        scope.partial.insert(name.clone(), partial);
                    }
                }
                (None, None) => {}
            }
        }
        Some(hir::StmtKind::If {
            cond: cond?,
            text,
            then,
            els: els_stmts,
            joins,
        })
    }

    /// The local after the `if` for a name both branches define.
    fn join(
        &mut self,
        name: &str,
        a: Binding,
        b: Binding,
        span: Span,
        joins: &mut Vec<hir::Join>,
    ) -> Binding {
        let (Binding::Local(then), Binding::Local(els)) = (a, b) else {
            return Binding::Poisoned;
        };
        let local = |id: LocalId| self.locals.get(id.0 as usize);
        let (Some(t), Some(e)) = (local(then), local(els)) else {
            return Binding::Poisoned;
        };
        if t.slots.is_some() || e.slots.is_some() {
            let d = Diagnostic::error(
                format!("`{name}` is a `buffers` tile defined inside an `if`: declare it before the `if`"),
                span,
            );
            self.report(d);
            return Binding::Poisoned;
        }
        if t.ty != e.ty {
            let d = Diagnostic::error(
                format!(
                    "`{name}` is {} in the `if` branch but {} in the `else` branch: after the `if` it must have one type",
                    t.ty, e.ty
                ),
                span,
            )
            .with_label(e.span, format!("defined as {} here", e.ty));
            self.report(d);
            return Binding::Poisoned;
        }
        let id = LocalId(self.locals.len() as u32);
        let joined = hir::Local {
            name: name.to_string(),
            ty: t.ty.clone(),
            span,
            slots: None,
        };
        self.locals.push(joined);
        joins.push(hir::Join {
            local: id,
            then,
            els,
        });
        Binding::Local(id)
    }

    /// Checks a branch in a scope of its own; returns its statements and the names its
    /// `let`s bound.
    fn branch(&mut self, b: &ast::Block) -> (Vec<hir::Stmt>, HashMap<String, (Binding, Span)>) {
        self.scopes.push(Scope::default());
        let mut out = Vec::new();
        for s in &b.stmts {
            if let Some(s) = self.nested(s.span, |cx| cx.stmt(s)) {
                out.push(s);
            }
        }
        let scope = self.scopes.pop().unwrap_or_default();
        (out, scope.names)
    }

    /// The error for a use of a name that only some paths through an earlier `if`
    /// define, if it is one.
    pub(super) fn partial_name(&mut self, name: &str, span: Span) -> bool {
        let Some(p) = self
            .scopes
            .iter()
            .rev()
            .find_map(|s| s.partial.get(name))
            .cloned()
        else {
            return false;
        };
        let d = Diagnostic::error(
            format!("`{name}` is not defined on every path to here: {} does not define it", p.missing),
            span,
        )
        .with_label(p.defined, "defined only here")
        .with_label(p.at, "in this `if`")
        .with_note(format!(
            "define `{name}` in every branch (with an `else`), or before the `if` and update it in the branches (`{name} = ...`)"
        ));
        self.report(d);
        true
    }

    fn cond(&mut self, c: &ast::Cond) -> Option<Cond> {
        self.nested(c.span, |cx| cx.cond_inner(c))
    }

    fn cond_inner(&mut self, c: &ast::Cond) -> Option<Cond> {
        match &c.kind {
            ast::CondKind::And(a, b) => {
                let (a, b) = (self.cond(a), self.cond(b));
                Some(Cond::And(Box::new(a?), Box::new(b?)))
            }
            ast::CondKind::Or(a, b) => {
                let (a, b) = (self.cond(a), self.cond(b));
                Some(Cond::Or(Box::new(a?), Box::new(b?)))
            }
            ast::CondKind::Not(a) => Some(Cond::Not(Box::new(self.cond(a)?))),
            ast::CondKind::Test(e) => {
                let ast::ExprKind::Binary {
                    op: ast::BinaryOp::Cmp(op),
                    lhs,
                    rhs,
                } = &e.kind
                else {
                    let d = Diagnostic::error(
                        format!("the condition `{}` is not a comparison", show::expr(e)),
                        e.span,
                    )
                    .with_note("an `if` compares integers: `i % 2 == 0`, `j + BK > i`; combine comparisons with `&&`, `||` and `!`");
                    self.report(d);
                    return None;
                };
                let lhs = self.operand(lhs);
                let rhs = self.operand(rhs);
                Some(Cond::Cmp {
                    op: *op,
                    lhs: lhs?,
                    rhs: rhs?,
                })
            }
        }
    }

    /// One side of a comparison: an integer of loop variables and constants, or one
    /// element of an `i32` input tensor (`load mask[i, j]`, or a name `let` bound to
    /// such a load and never updated).
    fn operand(&mut self, side: &ast::Expr) -> Option<Operand> {
        match &side.kind {
            ast::ExprKind::Load {
                tensor,
                indices,
                pad: None,
            } => return self.element(tensor, indices),
            ast::ExprKind::Name(n) => {
                if let Some((Binding::Local(id), _)) = self.lookup(n) {
                    if let Some((param, index)) = self.elements.get(&id) {
                        let index = index.clone();
                        return Some(Operand::Element {
                            param: *param,
                            index,
                        });
                    }
                }
            }
            _ => {}
        }
        if self.is_index_expr(side) {
            return self.index_expr(side).map(Operand::Index);
        }
        let d = Diagnostic::error(
            format!(
                "a condition is a scalar, but `{}` is not an integer of loop variables and constants",
                show::expr(side)
            ),
            side.span,
        )
        .with_note("an `if` runs a branch or skips it as a whole; to choose per lane of a tile, use `where(mask, a, b)`; to branch on data, compare one element of an i32 input: `load mask[i, j] != 0`");
        self.report(d);
        None
    }

    /// `load t[a, b]` in a condition: one element of an `i32` input tensor.
    fn element(&mut self, tensor: &ast::Ident, indices: &[ast::Index]) -> Option<Operand> {
        let param = self.tensor(tensor)?;
        let (index, _) = self.access(param, tensor, indices)?;
        let p = self.params.get(param.0 as usize)?;
        let why = if p.is_out {
            Some(format!(
                "a condition reads `{}`, which the kernel stores: conditions read input tensors only",
                p.name
            ))
        } else if p.ty.dtype != DType::I32 {
            Some(format!(
                "a condition compares integers, but `{}` is {}: conditions read i32 tensors",
                p.name, p.ty.dtype
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return self.error(why, tensor.span);
        }
        let mut out = Vec::new();
        for (ix, ast_ix) in index.into_iter().zip(indices) {
            match ix {
                hir::Index::Single(e) => out.push(e),
                _ => {
                    return self.error(
                        "a condition reads one element: give every axis one position (`load mask[i // B, j // B]`)",
                        ast_ix.span,
                    )
                }
            }
        }
        Some(Operand::Element {
            param: param.0,
            index: out,
        })
    }

    /// Records `let name = load t[a, b]` of one element of an `i32` input, which a
    /// condition may compare.
    pub(super) fn note_element(&mut self, local: LocalId, value: &hir::Expr) {
        let hir::ExprKind::Load {
            param,
            index,
            pad: None,
        } = &value.kind
        else {
            return;
        };
        let Some(p) = self.params.get(param.0 as usize) else {
            return;
        };
        if p.is_out || p.ty.dtype != DType::I32 {
            return;
        }
        let singles: Option<Vec<_>> = index
            .iter()
            .map(|ix| match ix {
                hir::Index::Single(e) => Some(e.clone()),
                _ => None,
            })
            .collect();
        if let Some(singles) = singles {
            self.elements.insert(local, (param.0, singles));
        }
    }
}
