//! Reading one op's text: its operation, operands and index, and the annotations
//! after its type.

use super::text::{comma_list, fexpr, Cursor};
use super::{Reader, R};
use crate::front::hir::{BinaryOp, ReduceOp, UnaryOp, UpdateOp};
use crate::ir::{Index, IndexExpr, OpId, OpKind, Transfer, TransferDim, ValueId};
use crate::limits::MAX_NESTING_DEPTH;
use crate::types::CmpOp;

impl<'t> Reader<'t> {
    pub(super) fn op_kind(&mut self, c: &mut Cursor<'t>, op: OpId) -> R<OpKind> {
        let at = c.clone();
        let word = c.word().ok_or_else(|| c.err("expected an operation"))?;
        Ok(match word {
            "load" => {
                c.ws();
                let param = self.param(c)?;
                let index = self.index_list(c)?;
                let pad = if c.tok("pad ") {
                    c.ws();
                    let at = c.clone();
                    let lit = c.until(' ');
                    Some(
                        lit.parse::<f64>()
                            .map_err(|_| at.err(format!("`{lit}` is not a number")))?,
                    )
                } else {
                    None
                };
                OpKind::Load { param, index, pad }
            }
            "store" => {
                c.ws();
                let param = self.param(c)?;
                let index = self.index_list(c)?;
                c.expect(",")?;
                c.ws();
                let value = self.value(c)?;
                let accumulate = c.tok("add");
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
                    accumulate,
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
            "reshape" => OpKind::Reshape { arg: self.one(c)? },
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
                } else if let Some(op) = BinaryOp::from_name(w) {
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

    pub(super) fn one(&self, c: &mut Cursor<'_>) -> R<ValueId> {
        c.ws();
        self.value(c)
    }

    pub(super) fn two(&self, c: &mut Cursor<'_>) -> R<(ValueId, ValueId)> {
        let a = self.one(c)?;
        c.expect(",")?;
        Ok((a, self.one(c)?))
    }

    pub(super) fn more_two(&self, c: &mut Cursor<'_>) -> R<(ValueId, ValueId)> {
        c.expect(",")?;
        self.two(c)
    }

    /// `[AXIS, AXIS, ...]`.
    pub(super) fn index_list(&self, c: &mut Cursor<'_>) -> R<Vec<Index>> {
        c.expect("[")?;
        comma_list(c, "]", |c| self.index(c))
    }

    pub(super) fn index(&self, c: &mut Cursor<'_>) -> R<Index> {
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
        if c.tok("step") {
            c.ws();
            let step = c.uint()?;
            if step < 2 || len == 0 {
                return Err(at.err("a strided range has a step of 2 or more and positions"));
            }
            return Ok(Index::Strided {
                start,
                len: len.div_ceil(step),
                step,
            });
        }
        let clamped = c.tok("clamped");
        Ok(Index::Range {
            start,
            len,
            clamped,
        })
    }

    /// An index expression.
    pub(super) fn iexpr(&self, c: &mut Cursor<'_>, depth: usize) -> R<IndexExpr> {
        if depth > MAX_NESTING_DEPTH {
            return Err(c.err("an index expression nested too deep"));
        }
        self.iinfix(c, depth, true)
    }

    /// Left-associative infix operators of one binding strength, as the printer writes
    /// them: `+ -` (`additive`) over `* // mod`.
    pub(super) fn iinfix(&self, c: &mut Cursor<'_>, depth: usize, additive: bool) -> R<IndexExpr> {
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

    pub(super) fn iatom(&self, c: &mut Cursor<'_>, depth: usize) -> R<IndexExpr> {
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
    pub(super) fn attrs(&mut self, c: &mut Cursor<'_>, op: OpId) -> R<()> {
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

    pub(super) fn transfer(
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
}

pub(super) fn kind_has_result(kind: &OpKind) -> bool {
    !matches!(kind, OpKind::Store { .. } | OpKind::SlotWrite { .. })
}

/// `, axis=N` after a reduction's operand (`comma`), or ` axis=N` after `iota`.
pub(super) fn axis(c: &mut Cursor<'_>, comma: bool) -> R<usize> {
    if comma {
        c.expect(",")?;
    }
    c.ws();
    c.keyword("axis")?;
    c.expect("=")?;
    usize::try_from(c.uint()?).map_err(|_| c.err("an axis too large"))
}

/// `[EXTENT[ clamp@AXIS], GM_STRIDE, TILE_STRIDE]`.
pub(super) fn transfer_dim(c: &mut Cursor<'_>) -> R<TransferDim> {
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
