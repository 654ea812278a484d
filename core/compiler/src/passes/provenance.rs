//! Which instructions of the final program each printed line became, so that no view
//! parses printed text. The pass manager keeps what each line of each dump prints
//! (`ir::LineItem`); this follows those items to the final program once emit has run.
//!
//! A line is followed only where the link is exact:
//! - a line of the final program is that instruction;
//! - a lowered line goes through emit's origin of each instruction (`emit::Flat`). A
//!   lowered program a later pass rewrote (insert-sync adds sync around the
//!   instructions, list-schedule interleaves the pipes) is followed through the
//!   renumbering of its items, which exists only when the rewrite kept every item, in
//!   order or in each pipe's order ([`renumbering`]);
//! - a tile-IR line goes through the op each instruction implements
//!   (`isa::Provenance::op`), in the IR lower-to-pipes read, and in every earlier dump
//!   printed identically to it (the same text prints the same ops, line by line).
//!
//! Any other line (a dump an op-changing pass left behind) gets no instructions.

use crate::ir::LineItem;
use crate::lowered::{Item, Lowered};
use serde::{Deserialize, Serialize};

/// One line of a pass's printed IR.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct IrLine {
    /// The source span of what the line prints.
    pub span: Option<crate::diag::Span>,
    /// The instructions of the final program (indices) the line became: empty when the
    /// compile stopped before emit, for lines that print no op, and for dumps whose ops
    /// a later pass changed.
    #[serde(default)]
    pub instrs: Vec<u32>,
}

/// For each item of `before` in print order, its index in `after`, when `after` holds
/// every item of `before`, unchanged, either in the same order (with others between)
/// or with each pipe's instructions in their order and loops found by id (list-schedule
/// interleaves the pipes differently).
pub fn renumbering(before: &Lowered, after: &Lowered) -> Option<Vec<u32>> {
    let (old, new) = (in_print_order(&before.body), in_print_order(&after.body));
    in_order(&old, &new).or_else(|| per_pipe(&old, &new))
}

fn in_order(old: &[&Item], new: &[&Item]) -> Option<Vec<u32>> {
    let mut at = 0;
    old.iter()
        .map(|item| {
            let found = new.get(at..)?.iter().position(|n| same(item, n))?;
            at += found + 1;
            Some((at - 1) as u32)
        })
        .collect()
}

/// Two items are the same when an instruction is equal in every field, or a loop has
/// the same id (its body is compared item by item).
fn same(a: &Item, b: &Item) -> bool {
    match (a, b) {
        (Item::Instr(a), Item::Instr(b)) => a == b,
        (Item::Loop(a), Item::Loop(b)) => a.id == b.id,
        _ => false,
    }
}

/// Each instruction of `old` is the next equal one on its pipe in `new`; each loop is
/// the loop of its id.
fn per_pipe(old: &[&Item], new: &[&Item]) -> Option<Vec<u32>> {
    let mut loops = std::collections::HashMap::new();
    let mut of_pipe: [Vec<usize>; 7] = Default::default();
    for (k, item) in new.iter().enumerate() {
        match item {
            Item::Loop(l) => {
                loops.insert(l.id, k as u32);
            }
            Item::Instr(i) => of_pipe.get_mut(i.pipe().index())?.push(k),
        }
    }
    let mut at = [0usize; 7];
    old.iter()
        .map(|item| match item {
            Item::Loop(l) => loops.get(&l.id).copied(),
            Item::Instr(i) => {
                let p = i.pipe().index();
                let list = of_pipe.get(p)?;
                let from = *at.get(p)?;
                let found = list
                    .get(from..)?
                    .iter()
                    .position(|&k| new.get(k).is_some_and(|n| same(item, n)))?;
                at[p] = from + found + 1;
                list.get(from + found).map(|&k| k as u32)
            }
        })
        .collect()
}

fn in_print_order(items: &[Item]) -> Vec<&Item> {
    fn walk<'a>(items: &'a [Item], out: &mut Vec<&'a Item>) {
        for item in items {
            out.push(item);
            if let Item::Loop(l) = item {
                walk(&l.body, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(items, &mut out);
    out
}

/// Moves every lowered item of `lines` through `map` (old index to new); an item with
/// no new index is dropped.
pub fn renumber(lines: &mut [Option<LineItem>], map: Option<&[u32]>) {
    for item in lines {
        if let Some(LineItem::Lowered { index, end }) = *item {
            *item = map
                .and_then(|m| m.get(index as usize))
                .map(|&index| LineItem::Lowered { index, end });
        }
    }
}

/// The instructions of `program` each line of each dump became. `items` are the dumps'
/// line items, lowered ones in the numbering of emit's input; `origin` is emit's item
/// for each instruction; `texts` the dumps' texts.
pub fn link(
    items: &[Vec<Option<LineItem>>],
    texts: &[&str],
    program: &crate::isa::Program,
    origin: &[LineItem],
) -> Vec<Vec<Vec<u32>>> {
    let mut of_op: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    let mut of_item: std::collections::HashMap<LineItem, Vec<u32>> = Default::default();
    for (i, ins) in program.instrs.iter().enumerate() {
        if let Some(op) = ins.prov.op {
            of_op.entry(op).or_default().push(i as u32);
        }
        if let Some(item) = origin.get(i) {
            of_item.entry(*item).or_default().push(i as u32);
        }
    }
    let is_tile_ir =
        |lines: &[Option<LineItem>]| lines.iter().flatten().any(|l| matches!(l, LineItem::Op(_)));
    // The IR lower-to-pipes read: the last dump of the tile IR.
    let read = items.iter().rposition(|lines| is_tile_ir(lines));
    let read_links: Vec<Vec<u32>> = read
        .and_then(|r| items.get(r))
        .map(|lines| {
            lines
                .iter()
                .map(|item| match item {
                    Some(LineItem::Op(op)) => of_op.get(op).cloned().unwrap_or_default(),
                    _ => Vec::new(),
                })
                .collect()
        })
        .unwrap_or_default();
    let read_text = read.and_then(|r| texts.get(r)).copied();
    items
        .iter()
        .zip(texts)
        .map(|(lines, text)| {
            if is_tile_ir(lines) {
                return if Some(*text) == read_text {
                    read_links.clone()
                } else {
                    vec![Vec::new(); lines.len()]
                };
            }
            lines
                .iter()
                .map(|item| match item {
                    Some(LineItem::Instr(i)) => vec![*i],
                    Some(item @ LineItem::Lowered { .. }) => {
                        of_item.get(item).cloned().unwrap_or_default()
                    }
                    _ => Vec::new(),
                })
                .collect()
        })
        .collect()
}
