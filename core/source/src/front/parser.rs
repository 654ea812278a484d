//! Tokens -> syntax tree (`docs/language.md`), by recursive descent, with precedence
//! climbing over the binary operators. Errors are recorded and parsing resumes at the
//! next statement (`;`, `}`) or item (`const`, `kernel`), so one run reports several
//! errors.

use super::ast::*;
use super::lexer::{truncate, Tok, Token};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::limits::{MAX_DIAGNOSTICS, MAX_NESTING_DEPTH};
use crate::types::{CmpOp, DType};

/// A parse failure already recorded in `Parser::diags`; the caller recovers.
struct Failed;

type PResult<T> = Result<T, Failed>;

struct Parser<'s> {
    source: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
    diags: Diagnostics,
    /// Set once `MAX_DIAGNOSTICS` errors are recorded: parsing stops.
    gave_up: bool,
}

/// The binary operator `tok` stands for at precedence `level`, if any: loosest first,
/// the order Python and Rust share (`|`, `^`, `&`, shifts, `+ -`, `* / // %`), then `@`.
fn binary_op(level: u8, tok: Tok, matmul: bool) -> Option<BinaryOp> {
    Some(match (level, tok) {
        (0, Tok::Pipe) => BinaryOp::BitOr,
        (1, Tok::Caret) => BinaryOp::BitXor,
        (2, Tok::Amp) => BinaryOp::BitAnd,
        (3, Tok::Shl) => BinaryOp::Shl,
        (3, Tok::Shr) => BinaryOp::Shr,
        (4, Tok::Plus) => BinaryOp::Add,
        (4, Tok::Minus) => BinaryOp::Sub,
        (5, Tok::Star) => BinaryOp::Mul,
        (5, Tok::Slash) => BinaryOp::Div,
        (5, Tok::SlashSlash) => BinaryOp::FloorDiv,
        (5, Tok::Percent) => BinaryOp::Mod,
        (MATMUL_LEVEL, Tok::At) if matmul => BinaryOp::MatMul,
        _ => return None,
    })
}

/// The tightest binary level; below it come casts.
const MATMUL_LEVEL: u8 = 6;

pub fn parse_file(source: &str, tokens: Vec<Token>, diags: Diagnostics) -> (File, Diagnostics) {
    let mut p = Parser {
        source,
        tokens,
        pos: 0,
        depth: 0,
        diags,
        gave_up: false,
    };
    let file = p.file();
    (file, p.diags)
}

impl<'s> Parser<'s> {
    // ---- token access ----

    fn peek(&self) -> Token {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> Token {
        // The token list always ends with `Eof`, which is never consumed.
        let eof = Token {
            tok: Tok::Eof,
            span: Span::new(self.source.len(), self.source.len()),
        };
        self.tokens.get(self.pos + ahead).copied().unwrap_or(eof)
    }

    fn at(&self, tok: Tok) -> bool {
        self.peek().tok == tok
    }

    fn bump(&mut self) -> Token {
        let t = self.peek();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, tok: Tok) -> Option<Token> {
        if self.at(tok) {
            Some(self.bump())
        } else {
            None
        }
    }

    fn text(&self, span: Span) -> &'s str {
        self.source
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    fn prev_end(&self) -> Span {
        let end = match self.pos.checked_sub(1).and_then(|i| self.tokens.get(i)) {
            Some(t) => t.span.end as usize,
            None => 0,
        };
        Span::new(end, end)
    }

    fn error(&mut self, message: impl Into<String>, span: Span) -> Failed {
        self.report(Diagnostic::error(message, span))
    }

    fn report(&mut self, diagnostic: Diagnostic) -> Failed {
        if self.diags.len() < MAX_DIAGNOSTICS {
            self.diags.push(diagnostic);
        } else {
            self.gave_up = true;
        }
        Failed
    }

    fn found(&self) -> String {
        let t = self.peek();
        match t.tok {
            Tok::Ident => format!("`{}`", truncate(self.text(t.span))),
            Tok::Int(_) | Tok::Float(_) => format!("`{}`", truncate(self.text(t.span))),
            other => other.describe().to_string(),
        }
    }

    fn expected(&mut self, what: &str) -> Failed {
        let message = format!("expected {what}, found {}", self.found());
        self.error(message, self.peek().span)
    }

    fn expect(&mut self, tok: Tok) -> PResult<Token> {
        match self.eat(tok) {
            Some(t) => Ok(t),
            None => Err(self.expected(tok.describe())),
        }
    }

    /// The `;` that ends a statement. One missing where a line or a block ends is
    /// reported right after the statement, not at the next line's first token, and
    /// taken as written, so the next statement still parses.
    fn expect_semi(&mut self) -> PResult<Token> {
        if let Some(t) = self.eat(Tok::Semi) {
            return Ok(t);
        }
        let at = self.prev_end();
        let next = self.peek().span;
        let between = self
            .source
            .get(at.end as usize..next.start as usize)
            .unwrap_or("");
        if between.contains('\n') || self.at(Tok::RBrace) || self.at(Tok::Eof) {
            self.error(
                format!("expected `;` after this statement, found {}", self.found()),
                at,
            );
            return Ok(Token {
                tok: Tok::Semi,
                span: at,
            });
        }
        Err(self.expected(Tok::Semi.describe()))
    }

    fn ident(&mut self, what: &str) -> PResult<Ident> {
        if self.at(Tok::Ident) {
            let t = self.bump();
            Ok(Ident {
                name: self.text(t.span).to_string(),
                span: t.span,
            })
        } else {
            Err(self.expected(what))
        }
    }

    /// Guards one level of recursion over user input.
    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_NESTING_DEPTH {
            let span = self.peek().span;
            return Err(self.error(
                format!("nested too deeply (the limit is {MAX_NESTING_DEPTH} levels)"),
                span,
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.enter()?;
        let r = f(self);
        self.leave();
        r
    }

    // ---- recovery ----

    fn at_item_start(&self) -> bool {
        matches!(self.peek().tok, Tok::Const | Tok::Kernel | Tok::Eof)
    }

    /// Skips to the next item keyword.
    fn sync_item(&mut self) {
        while !self.at_item_start() {
            self.bump();
        }
    }

    /// Skips past the next `;`, or to a `}` or item keyword (left for the caller).
    fn sync_stmt(&mut self) {
        loop {
            match self.peek().tok {
                Tok::Semi => {
                    self.bump();
                    return;
                }
                Tok::RBrace | Tok::Const | Tok::Kernel | Tok::Eof => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    // ---- items ----

    fn file(&mut self) -> File {
        let mut file = File::default();
        while !self.at(Tok::Eof) && !self.gave_up {
            let result = match self.peek().tok {
                Tok::Const => self.const_item().map(|c| file.consts.push(c)),
                Tok::Kernel => self.kernel().map(|k| file.kernels.push(k)),
                _ => {
                    let e = self.expected("`const` or `kernel`");
                    self.bump();
                    Err(e)
                }
            };
            if result.is_err() {
                self.sync_item();
            }
        }
        file
    }

    fn const_item(&mut self) -> PResult<ConstItem> {
        let start = self.expect(Tok::Const)?.span;
        let name = self.ident("a constant name")?;
        self.expect(Tok::Eq)?;
        let value = self.expr()?;
        let end = self.expect_semi()?.span;
        Ok(ConstItem {
            name,
            value,
            span: start.to(end),
        })
    }

    fn kernel(&mut self) -> PResult<Kernel> {
        let start = self.expect(Tok::Kernel)?.span;
        let name = self.ident("a kernel name")?;
        let (params, _) = self.delimited(Tok::LParen, Tok::RParen, 0, Self::param)?;
        let body = self.block()?;
        Ok(Kernel {
            span: start.to(body.span),
            name,
            params,
            body,
        })
    }

    fn param(&mut self) -> PResult<Param> {
        let name = self.ident("a parameter name")?;
        self.expect(Tok::Colon)?;
        // `out` marks an output only before the type: elsewhere it is a name, and a
        // parameter may be called `out`, as PyTorch and AscendC sources call theirs.
        let is_out = self.at(Tok::Ident)
            && self.text(self.peek().span) == "out"
            && self.peek_at(1).tok == Tok::Ident;
        if is_out {
            self.bump();
        }
        let ty = self.type_expr()?;
        Ok(Param {
            span: name.span.to(ty.span),
            name,
            is_out,
            ty,
        })
    }

    fn dtype(&mut self) -> PResult<(DType, Span)> {
        let t = self.peek();
        match DType::from_name(self.text(t.span)).filter(|_| t.tok == Tok::Ident) {
            Some(d) => {
                self.bump();
                Ok((d, t.span))
            }
            None => {
                Err(self.expected("an element type (`f32`, `f16`, `bf16`, `i32`, `i8` or `u8`)"))
            }
        }
    }

    /// `f32[64, R]`
    fn type_expr(&mut self) -> PResult<TypeExpr> {
        let (dtype, dtype_span) = self.dtype()?;
        let (shape, end) = self.delimited(Tok::LBracket, Tok::RBracket, 1, Self::expr)?;
        Ok(TypeExpr {
            dtype,
            dtype_span,
            shape,
            span: dtype_span.to(end),
        })
    }

    // ---- statements ----

    fn block(&mut self) -> PResult<Block> {
        self.nested(|p| {
            let start = p.expect(Tok::LBrace)?.span;
            let mut stmts = Vec::new();
            loop {
                match p.peek().tok {
                    Tok::RBrace => break,
                    Tok::Eof | Tok::Const | Tok::Kernel => {
                        return Err(p.error("unclosed block: expected `}`", start));
                    }
                    _ if p.gave_up => return Err(Failed),
                    _ => match p.stmt() {
                        Ok(s) => stmts.push(s),
                        Err(Failed) => p.sync_stmt(),
                    },
                }
            }
            let end = p.bump().span;
            Ok(Block {
                stmts,
                span: start.to(end),
            })
        })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.peek().span;
        let kind = match self.peek().tok {
            Tok::Let => {
                self.bump();
                let name = self.ident("a name after `let`")?;
                self.expect(Tok::Eq)?;
                let value = self.expr()?;
                StmtKind::Let { name, value }
            }
            Tok::Store => {
                self.bump();
                let tensor = self.ident("a tensor name after `store`")?;
                let indices = self.indices()?;
                let accumulate = self.eat(Tok::PlusEq).is_some();
                if !accumulate {
                    self.expect(Tok::Eq)?;
                }
                let value = self.expr()?;
                StmtKind::Store {
                    tensor,
                    indices,
                    value,
                    accumulate,
                }
            }
            Tok::For => return self.for_stmt(),
            Tok::If => return self.if_stmt(),
            Tok::At => return self.attrs_before_for(),
            Tok::Ident if self.peek_at(1).tok == Tok::LBracket => {
                let name = self.ident("a name")?;
                let slot = self.slot_index()?;
                if !self.at(Tok::Eq) {
                    return Err(self.expected("`=` (a slot is written whole)"));
                }
                self.bump();
                let value = self.expr()?;
                StmtKind::SlotWrite { name, slot, value }
            }
            Tok::Ident => {
                let name = self.ident("a name")?;
                let op = match self.peek().tok {
                    Tok::Eq => AssignOp::Set,
                    Tok::PlusEq => AssignOp::Add,
                    Tok::MinusEq => AssignOp::Sub,
                    Tok::StarEq => AssignOp::Mul,
                    _ => return Err(self.expected("`=`, `+=`, `-=` or `*=`")),
                };
                self.bump();
                let value = self.expr()?;
                StmtKind::Assign { name, op, value }
            }
            _ => {
                return Err(self.expected("a statement (`let`, `store`, `for`, `if` or an update)"))
            }
        };
        let end = self.expect_semi()?.span;
        Ok(Stmt {
            kind,
            span: start.to(end),
        })
    }

    fn for_stmt(&mut self) -> PResult<Stmt> {
        let start = self.expect(Tok::For)?.span;
        let var = self.ident("a loop variable")?;
        self.expect(Tok::In)?;
        // `rev` is a word only here, before the range's start (a constant named `rev`
        // still starts a range: `rev .. N`).
        let reverse = (self.at(Tok::Ident)
            && self.text(self.peek().span) == "rev"
            && self.peek_at(1).tok != Tok::DotDot)
            .then(|| self.bump().span);
        let lo = self.const_operand()?;
        self.expect(Tok::DotDot)?;
        let hi = self.const_operand()?;
        let step = match self.eat(Tok::Step) {
            Some(_) => Some(self.const_operand()?),
            None => None,
        };
        let attrs = self.attrs()?;
        let body = self.block()?;
        let span = start.to(body.span);
        Ok(Stmt {
            kind: StmtKind::For {
                var,
                reverse,
                start: lo,
                end: hi,
                step,
                attrs,
                body,
            },
            span,
        })
    }

    /// `if cond { .. }`, then any number of `else if cond { .. }` and an optional
    /// `else { .. }`. Each `else if` nests one level deeper (an `else` block holding
    /// the inner `if`), which `nested` counts.
    fn if_stmt(&mut self) -> PResult<Stmt> {
        let start = self.expect(Tok::If)?.span;
        let cond = self.cond()?;
        let then = self.block()?;
        let els = match self.eat(Tok::Else) {
            None => None,
            Some(_) if self.at(Tok::If) => {
                let inner = self.nested(Self::if_stmt)?;
                let span = inner.span;
                Some(Block {
                    stmts: vec![inner],
                    span,
                })
            }
            Some(_) => Some(self.block()?),
        };
        let end = els.as_ref().map_or(then.span, |b| b.span);
        Ok(Stmt {
            kind: StmtKind::If { cond, then, els },
            span: start.to(end),
        })
    }

    /// A condition: comparisons joined by `||` (loosest), `&&` and `!`, as in Rust.
    fn cond(&mut self) -> PResult<Cond> {
        self.nested(Self::cond_or)
    }

    fn cond_or(&mut self) -> PResult<Cond> {
        self.cond_chain(Tok::OrOr, Self::cond_and, CondKind::Or)
    }

    fn cond_and(&mut self) -> PResult<Cond> {
        self.cond_chain(Tok::AndAnd, Self::cond_not, CondKind::And)
    }

    /// `next (op next)*`, folded to the left with `join`: `&&` binds tighter than `||`
    /// because `cond_or` chains `cond_and`s.
    fn cond_chain(
        &mut self,
        op: Tok,
        next: fn(&mut Self) -> PResult<Cond>,
        join: fn(Box<Cond>, Box<Cond>) -> CondKind,
    ) -> PResult<Cond> {
        self.chain(|p| {
            let mut lhs = next(p)?;
            while p.eat(op).is_some() {
                p.enter()?;
                let rhs = next(p)?;
                let span = lhs.span.to(rhs.span);
                lhs = Cond {
                    kind: join(Box::new(lhs), Box::new(rhs)),
                    span,
                };
            }
            Ok(lhs)
        })
    }

    fn cond_not(&mut self) -> PResult<Cond> {
        if let Some(bang) = self.eat(Tok::Bang) {
            let arg = self.nested(Self::cond_not)?;
            let span = bang.span.to(arg.span);
            return Ok(Cond {
                kind: CondKind::Not(Box::new(arg)),
                span,
            });
        }
        if self.at(Tok::LParen) && self.parenthesised_logic() {
            let open = self.bump().span;
            let inner = self.nested(Self::cond_or)?;
            let close = self.expect(Tok::RParen)?.span;
            return Ok(Cond {
                kind: inner.kind,
                span: open.to(close),
            });
        }
        let test = self.expr()?;
        let span = test.span;
        Ok(Cond {
            kind: CondKind::Test(test),
            span,
        })
    }

    /// Whether the parenthesis at the cursor holds `&&`, `||` or `!`, which no
    /// expression has: then it groups conditions (`!((a < b) || c < d)`), else it
    /// starts an expression (`(i + 1) * 2 < n`).
    fn parenthesised_logic(&self) -> bool {
        let mut depth = 0usize;
        for ahead in 0.. {
            match self.peek_at(ahead).tok {
                Tok::LParen | Tok::LBracket => depth += 1,
                Tok::RParen | Tok::RBracket => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return false;
                    }
                }
                Tok::AndAnd | Tok::OrOr | Tok::Bang => return true,
                Tok::LBrace | Tok::RBrace | Tok::Semi | Tok::Eof => return false,
                _ => {}
            }
        }
        false
    }

    /// `@name` or `@name(args)`, any number of them.
    fn attrs(&mut self) -> PResult<Vec<Attr>> {
        let mut attrs = Vec::new();
        while let Some(at) = self.eat(Tok::At) {
            let name = self.ident("an attribute name after `@`")?;
            let (args, end) = if self.at(Tok::LParen) {
                self.delimited(Tok::LParen, Tok::RParen, 0, Self::expr)?
            } else {
                (Vec::new(), name.span)
            };
            attrs.push(Attr {
                name,
                args,
                span: at.span.to(end),
            });
        }
        Ok(attrs)
    }

    /// An attribute written before its loop, as a Python decorator is
    /// (`@buffers(2)` on the line above `for`): one error that shows where it goes,
    /// then the loop parsed with it, so nothing in the loop cascades into more errors.
    fn attrs_before_for(&mut self) -> PResult<Stmt> {
        let attrs = self.attrs()?;
        if !self.at(Tok::For) {
            return Err(self.expected("`for` after a loop attribute"));
        }
        if let (Some(first), Some(last)) = (attrs.first(), attrs.last()) {
            let span = first.span.to(last.span);
            let text = self.text(span).to_string();
            let note = format!("write it before the body: `for i in 0..N step S {text} {{`");
            let message = format!("`{text}` goes after the loop's range");
            self.report(Diagnostic::error(message, span).with_note(note));
        }
        let mut stmt = self.for_stmt()?;
        if let StmtKind::For { attrs: after, .. } = &mut stmt.kind {
            let mut all = attrs;
            all.append(after);
            *after = all;
        }
        Ok(stmt)
    }

    /// `[slot]` after a `buffers(...)` tile's name.
    fn slot_index(&mut self) -> PResult<Expr> {
        self.expect(Tok::LBracket)?;
        let slot = self.expr()?;
        self.expect(Tok::RBracket)?;
        Ok(slot)
    }

    fn indices(&mut self) -> PResult<Vec<Index>> {
        Ok(self
            .delimited(Tok::LBracket, Tok::RBracket, 1, Self::index)?
            .0)
    }

    /// `open item, item, ... close` with an optional trailing comma and at least `min`
    /// items; returns the items and the closing token's span.
    fn delimited<T>(
        &mut self,
        open: Tok,
        close: Tok,
        min: usize,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<(Vec<T>, Span)> {
        self.expect(open)?;
        let mut items = Vec::new();
        while items.len() < min || !self.at(close) {
            items.push(item(self)?);
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        let end = self.expect(close)?.span;
        Ok((items, end))
    }

    fn index(&mut self) -> PResult<Index> {
        if let Some(colon) = self.eat(Tok::Colon) {
            return Ok(Index {
                kind: IndexKind::Full,
                span: colon.span,
            });
        }
        let lo = self.expr()?;
        // numpy's `x[a:b]`: said in the language's words, and read as the range it
        // means so the rest of the kernel still checks.
        if let Some(colon) = self.eat(Tok::Colon) {
            if self.at(Tok::Comma) || self.at(Tok::RBracket) {
                let text = self.text(lo.span).to_string();
                return Err(self.error(
                    format!(
                        "ranges are written `lo .. hi`, not numpy's `{text}:`: give the end, \
                         as in `{text} .. {text} + 8`"
                    ),
                    lo.span.to(colon.span),
                ));
            }
            let hi = self.expr()?;
            let (lo_text, hi_text) = (
                self.text(lo.span).to_string(),
                self.text(hi.span).to_string(),
            );
            let span = lo.span.to(hi.span);
            self.error(
                format!(
                    "ranges are written with `..`, not numpy's `:`: write `{} .. {}`",
                    lo_text.trim(),
                    hi_text.trim()
                ),
                span,
            );
            return Ok(Index {
                kind: IndexKind::Range(lo, hi),
                span,
            });
        }
        if self.eat(Tok::DotDot).is_some() {
            let hi = self.expr()?;
            if self.eat(Tok::Step).is_some() {
                let step = self.expr()?;
                let span = lo.span.to(step.span);
                return Ok(Index {
                    kind: IndexKind::Strided(lo, hi, step),
                    span,
                });
            }
            let span = lo.span.to(hi.span);
            Ok(Index {
                kind: IndexKind::Range(lo, hi),
                span,
            })
        } else {
            let span = lo.span;
            Ok(Index {
                kind: IndexKind::Point(lo),
                span,
            })
        }
    }

    // ---- expressions, loosest first ----

    fn expr(&mut self) -> PResult<Expr> {
        self.nested(Self::comparison)
    }

    /// `a < b`, the loosest level. Non-associative: `a < b < c` means `a < b and b < c`
    /// in Python but `(a < b) < c` in C and numpy, so it is an error rather than a guess.
    /// Not chaining, a comparison adds at most one level to the tree per `expr`, which
    /// `nested` already counts.
    fn comparison(&mut self) -> PResult<Expr> {
        let lhs = self.binary_level(0, true)?;
        match self.peek().tok {
            Tok::Cmp(op) => self.comparison_rhs(lhs, op),
            _ => Ok(lhs),
        }
    }

    /// The rest of `lhs op rhs`; out of line, to keep the frame `expr` recurses through
    /// small (a deep expression must fit the nesting limit in a small stack).
    #[inline(never)]
    fn comparison_rhs(&mut self, lhs: Expr, op: CmpOp) -> PResult<Expr> {
        self.bump();
        let rhs = self.binary_level(0, true)?;
        let next = self.peek();
        if let Tok::Cmp(second) = next.tok {
            return Err(self.error(
                format!(
                    "comparisons do not chain: `{}` follows `{}`; compare two values at a time",
                    second.symbol(),
                    op.symbol()
                ),
                next.span,
            ));
        }
        Ok(Self::binary(lhs, BinaryOp::Cmp(op), rhs))
    }

    /// A loop bound or step: an expression without `@`, so that `step R @buffers(2)`
    /// reads the `@` as the start of an attribute.
    fn const_operand(&mut self) -> PResult<Expr> {
        self.nested(|p| p.binary_level(0, false))
    }

    fn binary(lhs: Expr, op: BinaryOp, rhs: Expr) -> Expr {
        let span = lhs.span.to(rhs.span);
        Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            span,
        }
    }

    /// The binary operators of level `min` and tighter (see `binary_op`), all
    /// left-associative, by precedence climbing: an operand, then each operator at or
    /// above `min` takes as its right side what binds tighter than itself. One frame per
    /// pending operator rather than one per level keeps a parenthesised expression's
    /// recursion short (the nesting limit must fit a 1 MiB stack).
    fn binary_level(&mut self, min: u8, matmul: bool) -> PResult<Expr> {
        self.chain(|p| {
            let mut lhs = p.cast()?;
            loop {
                let tok = p.peek().tok;
                let Some((level, op)) =
                    (min..=MATMUL_LEVEL).find_map(|l| Some((l, binary_op(l, tok, matmul)?)))
                else {
                    return Ok(lhs);
                };
                p.bump();
                p.enter()?;
                let rhs = p.binary_level(level + 1, matmul)?;
                lhs = Self::binary(lhs, op, rhs);
            }
        })
    }

    /// Parses a left-deep chain (`a + b + c`, `t.T.T`, `x as f16 as f32`) in which `f`
    /// calls `enter` once per node it wraps around the chain so far. Such a chain
    /// recurses little while parsing but builds a tree as deep as it is long, which the
    /// checker, the lowering and even `Drop` walk recursively: each of its nodes counts
    /// against the nesting limit like a parenthesis. The depth is restored afterwards.
    fn chain<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        let depth = self.depth;
        let r = f(self);
        self.depth = depth;
        r
    }

    fn cast(&mut self) -> PResult<Expr> {
        self.chain(Self::cast_chain)
    }

    fn cast_chain(&mut self) -> PResult<Expr> {
        let mut value = self.unary()?;
        while self.eat(Tok::As).is_some() {
            self.enter()?;
            let (dtype, dtype_span) = self.dtype()?;
            let span = value.span.to(dtype_span);
            value = Expr {
                kind: ExprKind::Cast {
                    value: Box::new(value),
                    dtype,
                    dtype_span,
                },
                span,
            };
        }
        Ok(value)
    }

    fn unary(&mut self) -> PResult<Expr> {
        if let Some(minus) = self.eat(Tok::Minus) {
            let arg = self.nested(|p| p.unary())?;
            let span = minus.span.to(arg.span);
            return Ok(Expr {
                kind: ExprKind::Neg(Box::new(arg)),
                span,
            });
        }
        if let Some(tilde) = self.eat(Tok::Tilde) {
            let arg = self.nested(|p| p.unary())?;
            let span = tilde.span.to(arg.span);
            return Ok(Expr {
                kind: ExprKind::Not(Box::new(arg)),
                span,
            });
        }
        self.power()
    }

    /// `base ** exponent`, as in Python: tighter than a unary minus on its left
    /// (`-t ** 2` is `-(t ** 2)`), right-associative, and its exponent may be negated
    /// (`t ** -1`).
    fn power(&mut self) -> PResult<Expr> {
        let base = self.postfix()?;
        if self.eat(Tok::StarStar).is_none() {
            return Ok(base);
        }
        let exponent = self.nested(|p| p.unary())?;
        Ok(Self::binary(base, BinaryOp::Pow, exponent))
    }

    fn postfix(&mut self) -> PResult<Expr> {
        self.chain(Self::postfix_chain)
    }

    fn postfix_chain(&mut self) -> PResult<Expr> {
        let mut value = self.primary()?;
        while self.at(Tok::Dot) || self.at(Tok::LBracket) {
            if self.at(Tok::LBracket) {
                self.enter()?;
                value = self.slice(value)?;
                continue;
            }
            self.bump();
            self.enter()?;
            let field = self.ident("`T` after `.`")?;
            if field.name != "T" {
                return Err(self.error(
                    format!(
                        "unknown suffix `.{}`: only `.T` (transpose) exists",
                        truncate(&field.name)
                    ),
                    field.span,
                ));
            }
            let span = value.span.to(field.span);
            value = Expr {
                kind: ExprKind::Transpose(Box::new(value)),
                span,
            };
        }
        Ok(value)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let t = self.peek();
        match t.tok {
            Tok::Int(v) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Int(v),
                    span: t.span,
                })
            }
            Tok::Float(v) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Float(v),
                    span: t.span,
                })
            }
            Tok::LParen => {
                self.bump();
                let mut inner = self.expr()?;
                let end = self.expect(Tok::RParen)?.span;
                // The parentheses belong to the expression's extent in messages.
                inner.span = t.span.to(end);
                Ok(inner)
            }
            Tok::Load => self.load(),
            Tok::Ident => {
                let name = self.ident("a name")?;
                if self.at(Tok::LParen) {
                    self.call(name)
                } else if self.at(Tok::LBracket) {
                    self.slot_read(name)
                } else {
                    Ok(Expr {
                        kind: ExprKind::Name(name.name),
                        span: name.span,
                    })
                }
            }
            _ => Err(self.expected("an expression")),
        }
    }

    // `load` and slot reads are out of line: `primary` is on the path of every nested
    // expression, and in a debug build each arm's temporaries widen its stack frame
    // (64 levels of `exp(` must fit the 1 MiB stack `tests/adversarial.rs` gives them).
    #[inline(never)]
    fn load(&mut self) -> PResult<Expr> {
        let start = self.bump().span;
        let tensor = self.ident("a tensor name after `load`")?;
        let indices = self.indices()?;
        // `pad` is a word only here: `pad` stays a usable name elsewhere.
        let pad = if self.at(Tok::Ident) && self.text(self.peek().span) == "pad" {
            self.bump();
            Some(Box::new(self.nested(|p| p.unary())?))
        } else {
            None
        };
        let span = start.to(self.prev_end());
        Ok(Expr {
            kind: ExprKind::Load {
                tensor,
                indices,
                pad,
            },
            span,
        })
    }

    /// `name[...]`: a slot read when the brackets hold one plain index (`t[s]`), else a
    /// slice of the named tile (`t[:, 0 .. 32]`).
    #[inline(never)]
    fn slot_read(&mut self, name: Ident) -> PResult<Expr> {
        let indices = self.indices()?;
        let span = name.span.to(self.prev_end());
        if let [Index {
            kind: IndexKind::Point(slot),
            ..
        }] = indices.as_slice()
        {
            return Ok(Expr {
                kind: ExprKind::SlotRead {
                    name,
                    slot: Box::new(slot.clone()),
                },
                span,
            });
        }
        let arg = Expr {
            kind: ExprKind::Name(name.name),
            span: name.span,
        };
        Ok(Expr {
            kind: ExprKind::Slice {
                arg: Box::new(arg),
                indices,
            },
            span,
        })
    }

    /// `value[...]` after any other primary: a slice (`(a + b)[:, 0 .. 8]`, `t[s][0 .. 4, :]`).
    #[inline(never)]
    fn slice(&mut self, value: Expr) -> PResult<Expr> {
        let indices = self.indices()?;
        let span = value.span.to(self.prev_end());
        Ok(Expr {
            kind: ExprKind::Slice {
                arg: Box::new(value),
                indices,
            },
            span,
        })
    }

    /// `axis=K` in a call (`given`: an earlier `axis=` was seen). Out of `call`, which is
    /// on the path of every nested call, to keep its frame small.
    fn axis_argument(&mut self, given: bool) -> PResult<Box<Expr>> {
        let key = self.ident("a name")?;
        if key.name != "axis" {
            return Err(self.error(
                format!(
                    "unknown keyword argument `{}`: only `axis=` exists",
                    truncate(&key.name)
                ),
                key.span,
            ));
        }
        if given {
            return Err(self.error("`axis=` is given twice", key.span));
        }
        self.bump();
        Ok(Box::new(self.expr()?))
    }

    /// `f(args)`, `sum(t, axis=1)`, `zeros(f32[8, 8])`, `full(f32[8, 1], -inf)`.
    fn call(&mut self, func: Ident) -> PResult<Expr> {
        self.expect(Tok::LParen)?;
        let mut ty = None;
        let mut args = Vec::new();
        let mut axis = None;
        let first = self.peek();
        let starts_type = first.tok == Tok::Ident
            && DType::from_name(self.text(first.span)).is_some()
            && self.peek_at(1).tok == Tok::LBracket;
        let mut more = true;
        if starts_type {
            ty = Some(self.type_expr()?);
            // Without a comma the type is the only argument.
            more = self.eat(Tok::Comma).is_some();
        }
        while more && !self.at(Tok::RParen) {
            let keyword = self.at(Tok::Ident) && self.peek_at(1).tok == Tok::Eq;
            if keyword {
                axis = Some(self.axis_argument(axis.is_some())?);
            } else if axis.is_some() {
                return Err(self.expected("`)` after `axis=`"));
            } else if self.at(Tok::LBracket) {
                // `reshape(t, [A, B])`: a shape, as numpy's tuple.
                let start = self.peek().span;
                let (items, end) = self.delimited(Tok::LBracket, Tok::RBracket, 1, Self::expr)?;
                args.push(Expr {
                    kind: ExprKind::List(items),
                    span: start.to(end),
                });
            } else {
                args.push(self.expr()?);
            }
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        let end = self.expect(Tok::RParen)?.span;
        Ok(Expr {
            kind: ExprKind::Call {
                func: func.clone(),
                ty,
                args,
                axis,
            },
            span: func.span.to(end),
        })
    }
}
