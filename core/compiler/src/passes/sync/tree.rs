//! The working form of insert-sync: the lowered body as an arena of nodes with parent
//! links. The walk names instructions by node id, so a set or wait can be inserted next
//! to any of them without invalidating the positions of the others.

use crate::diag::{Diagnostic, Span};
use crate::isa::{Provenance, Reg, Val};
use crate::lowered::{self, Item, LoopId};
use crate::types::Pipe;

pub type NodeId = usize;
pub type PairId = usize;

/// Loops deeper than this are rejected; it bounds every recursion over the tree.
pub const MAX_DEPTH: usize = crate::limits::MAX_LOWERED_LOOP_DEPTH;

#[derive(Clone, Debug)]
pub struct LoopHead {
    pub id: LoopId,
    pub counter: Reg,
    pub count: Val,
    pub min_count: u64,
    /// An `if` region's condition (`lowered::Loop::branch`).
    pub branch: Option<String>,
    pub slots: Option<(u32, Reg)>,
    pub span: Span,
}

/// A synchronisation instruction, by the pair it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    Set(PairId),
    Wait(PairId),
    /// Before a loop: the set that the first iteration's wait consumes (one per slot id).
    Prime(PairId, u32),
    /// After a loop: the wait that consumes the last iteration's set (one per slot id).
    Drain(PairId, u32),
    /// `pipe_barrier ALL`.
    Barrier,
}

// As `lowered::Item`: instructions are nearly every node.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Kind {
    Instr(lowered::Instr),
    Loop(LoopHead, Vec<NodeId>),
    Sync(Sync),
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: Kind,
    pub parent: Option<NodeId>,
}

/// How a pair names its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ids {
    /// One id for every instance.
    Static,
    /// `count` ids chosen by `iteration % count` of the loop node `rotation`, so the
    /// instances of consecutive iterations use different flags. On explicit slots
    /// (`buffers`, `offsets` set) the ids follow the slot of the buffer the hazard is
    /// on: the set's id is `(iteration + offsets.0) % count`, the wait's `(iteration +
    /// offsets.1) % count`, from the producer's and the consumer's slot index.
    Dynamic {
        rotation: NodeId,
        count: u32,
        offsets: Option<(u32, u32)>,
    },
}

/// A conflict on one slot of buffers whose slot follows the counter of loop `node`:
/// `iteration % count` (`@buffers`), or on explicit slots `(iteration + offset) %
/// count` with the producer's offset, then the consumer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rotation {
    pub node: NodeId,
    pub count: u32,
    pub offsets: Option<(u32, u32)>,
}

impl Ids {
    pub fn count(self) -> u32 {
        match self {
            Ids::Static => 1,
            Ids::Dynamic { count, .. } => count,
        }
    }
}

/// Why a pair exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Orders a RAW, WAR or WAW hazard on memory.
    Hazard,
    /// Orders a wait before the next set of the same flag, so a pipe running ahead
    /// cannot set a flag that is still set.
    FlagReuse,
}

/// The dependence a hazard pair orders: the producer's access, then the consumer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum HazardKind {
    /// Read after write: the consumer reads what the producer wrote.
    #[serde(rename = "RAW")]
    Raw,
    /// Write after read: the consumer overwrites what the producer still reads.
    #[serde(rename = "WAR")]
    War,
    /// Write after write: the consumer's write must land after the producer's.
    #[serde(rename = "WAW")]
    Waw,
}

impl HazardKind {
    /// From whether the producer's and the consumer's accesses write.
    pub fn of(producer_writes: bool, consumer_writes: bool) -> HazardKind {
        match (producer_writes, consumer_writes) {
            (true, false) => HazardKind::Raw,
            (false, _) => HazardKind::War,
            (true, true) => HazardKind::Waw,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HazardKind::Raw => "RAW",
            HazardKind::War => "WAR",
            HazardKind::Waw => "WAW",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Pair {
    pub src: Pipe,
    pub dst: Pipe,
    pub ids: Ids,
    /// The loop around which the pair is primed and drained (a back-edge pair).
    pub carried: Option<NodeId>,
    /// Primed around the top of a perfect nest rather than the loop whose back edge it
    /// orders (see `place`).
    pub nest_wide: bool,
    pub reason: Reason,
    /// For a hazard pair: the dependence and the buffer or tensor it is on.
    pub hazard: Option<(HazardKind, crate::lowered::Target)>,
    /// Every node of the pair: set, wait, primes, drains.
    pub nodes: Vec<NodeId>,
    /// Dropped as redundant by the minimality sweep.
    pub removed: bool,
    /// Out of event ids: its wait became a `pipe_barrier ALL` and the rest is gone.
    pub barrier: bool,
    /// First event id (after allocation).
    pub base: u32,
    pub set_prov: Provenance,
    pub wait_prov: Provenance,
    /// Added by id allocation to order the wait of an id's holder before the set of the
    /// next pair to take the id (`recycle`); not a hazard the walk found.
    pub orders_ids: bool,
    /// A flag-reuse pair: the pair whose flag it keeps from being set again before its
    /// previous wait (the minimality sweep removes it along with that pair).
    pub serves: Option<PairId>,
}

impl Pair {
    pub fn live(&self) -> bool {
        !self.removed && !self.barrier
    }
}

#[derive(Clone, Debug, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub root: Vec<NodeId>,
    pub pairs: Vec<Pair>,
    /// What the walk assumes about aliasing (set by the pass, read by every walk).
    pub alias: crate::passes::sync::AliasMode,
    /// Compare the GM regions accesses record (`auto` with precise aliasing); otherwise
    /// every GM access touches its whole tensor (`barrier`, the conservative baseline,
    /// and `coarse`).
    pub gm_regions: bool,
}

fn too_deep() -> Diagnostic {
    Diagnostic::global(format!(
        "internal error: insert-sync: loops nest deeper than {MAX_DEPTH}"
    ))
}

impl Tree {
    pub fn build(
        body: Vec<Item>,
        alias: crate::passes::sync::AliasMode,
    ) -> Result<Tree, Diagnostic> {
        let mut t = Tree {
            alias,
            gm_regions: alias == crate::passes::sync::AliasMode::Precise,
            ..Tree::default()
        };
        t.root = t.add_items(body, None, 0)?;
        Ok(t)
    }

    fn add_items(
        &mut self,
        items: Vec<Item>,
        parent: Option<NodeId>,
        depth: usize,
    ) -> Result<Vec<NodeId>, Diagnostic> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let mut ids = Vec::with_capacity(items.len());
        for item in items {
            let id = self.nodes.len();
            match item {
                Item::Instr(i) => self.nodes.push(Node {
                    kind: Kind::Instr(i),
                    parent,
                }),
                Item::Loop(l) => {
                    let head = LoopHead {
                        id: l.id,
                        counter: l.counter,
                        count: l.count,
                        min_count: l.min_count,
                        branch: l.branch.clone(),
                        slots: l.slots,
                        span: l.span,
                    };
                    self.nodes.push(Node {
                        kind: Kind::Loop(head, Vec::new()),
                        parent,
                    });
                    let body = self.add_items(l.body, Some(id), depth + 1)?;
                    if let Some(Node {
                        kind: Kind::Loop(_, b),
                        ..
                    }) = self.nodes.get_mut(id)
                    {
                        *b = body;
                    }
                }
            }
            ids.push(id);
        }
        Ok(ids)
    }

    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id)
    }

    pub fn parent(&self, id: NodeId) -> Option<NodeId> {
        self.nodes.get(id).and_then(|n| n.parent)
    }

    pub fn block(&self, owner: Option<NodeId>) -> &[NodeId] {
        match owner {
            None => &self.root,
            Some(o) => match self.nodes.get(o) {
                Some(Node {
                    kind: Kind::Loop(_, body),
                    ..
                }) => body,
                _ => &[],
            },
        }
    }

    /// Replaces the order of the block `owner` holds (the same nodes, moved).
    pub fn reorder(&mut self, owner: Option<NodeId>, order: Vec<NodeId>) -> Option<()> {
        let block = self.block_mut(owner)?;
        let mut old = block.clone();
        let mut new = order.clone();
        old.sort_unstable();
        new.sort_unstable();
        (old == new).then(|| *block = order)
    }

    fn block_mut(&mut self, owner: Option<NodeId>) -> Option<&mut Vec<NodeId>> {
        match owner {
            None => Some(&mut self.root),
            Some(o) => match self.nodes.get_mut(o) {
                Some(Node {
                    kind: Kind::Loop(_, body),
                    ..
                }) => Some(body),
                _ => None,
            },
        }
    }

    /// The loops strictly containing `id`, outermost first.
    pub fn loops_of(&self, id: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut cur = self.parent(id);
        while let Some(p) = cur {
            if out.len() > MAX_DEPTH {
                break;
            }
            out.push(p);
            cur = self.parent(p);
        }
        out.reverse();
        out
    }

    /// The ancestor-or-self of `id` that sits directly in `owner`'s block.
    pub fn child_in(&self, id: NodeId, owner: Option<NodeId>) -> Option<NodeId> {
        let mut cur = id;
        for _ in 0..=MAX_DEPTH + 1 {
            let p = self.parent(cur);
            if p == owner {
                return Some(cur);
            }
            cur = p?;
        }
        None
    }

    pub fn position(&self, id: NodeId) -> Option<usize> {
        let owner = self.parent(id);
        self.block(owner).iter().position(|&n| n == id)
    }

    /// Inserts a sync node next to `anchor` (after it when `after`).
    pub fn insert(&mut self, anchor: NodeId, s: Sync, after: bool) -> Option<NodeId> {
        let owner = self.parent(anchor);
        let pos = self.position(anchor)? + usize::from(after);
        let id = self.nodes.len();
        self.nodes.push(Node {
            kind: Kind::Sync(s),
            parent: owner,
        });
        self.block_mut(owner)?.insert(pos, id);
        Some(id)
    }

    /// Whether `s` of pair `pair`, which became `pipe_barrier ALL`, is one: its wait,
    /// and for a back-edge pair its first drain, after the loop, which ordered the last
    /// iterations before what follows as the drains did.
    pub fn barrier_at(&self, pair: PairId, s: Sync) -> bool {
        match s {
            Sync::Wait(p) => p == pair,
            Sync::Drain(p, k) if p == pair => self.pairs.get(pair).is_some_and(|q| {
                q.nodes.iter().all(|&n| {
                    !matches!(self.node(n).map(|x| &x.kind),
                        Some(Kind::Sync(Sync::Drain(_, j))) if *j < k)
                })
            }),
            _ => false,
        }
    }

    pub fn loop_head(&self, id: NodeId) -> Option<&LoopHead> {
        match self.nodes.get(id) {
            Some(Node {
                kind: Kind::Loop(h, _),
                ..
            }) => Some(h),
            _ => None,
        }
    }

    /// The pipe a node executes on (S for loops).
    pub fn pipe(&self, id: NodeId) -> Pipe {
        match self.nodes.get(id).map(|n| &n.kind) {
            Some(Kind::Instr(i)) => i.pipe(),
            Some(Kind::Sync(s)) => match s {
                Sync::Set(p) | Sync::Prime(p, _) => self.pairs.get(*p).map_or(Pipe::S, |p| p.src),
                Sync::Wait(p) | Sync::Drain(p, _) => self.pairs.get(*p).map_or(Pipe::S, |p| p.dst),
                Sync::Barrier => Pipe::S,
            },
            _ => Pipe::S,
        }
    }

    pub fn prov(&self, id: NodeId) -> Provenance {
        match self.nodes.get(id).map(|n| &n.kind) {
            Some(Kind::Instr(i)) => Some(i.prov),
            Some(Kind::Sync(Sync::Set(p))) => self.pairs.get(*p).map(|p| p.set_prov),
            Some(Kind::Sync(Sync::Wait(p))) => self.pairs.get(*p).map(|p| p.wait_prov),
            _ => None,
        }
        .unwrap_or_default()
    }

    /// Takes the tree apart into items, calling `sync` for each sync node to get its
    /// instructions (none when it was dropped) and `top` for the instructions to put at
    /// the top of each loop body. `path` receives the item path of every sync item.
    pub fn into_items(
        mut self,
        sync: &mut dyn FnMut(&Tree, Sync) -> Vec<lowered::Instr>,
        top: &mut dyn FnMut(&Tree, NodeId) -> Vec<lowered::Instr>,
        path: &mut dyn FnMut(Sync, Vec<usize>),
    ) -> Result<Vec<Item>, Diagnostic> {
        let root = std::mem::take(&mut self.root);
        let mut prefix = Vec::new();
        self.items_of(&root, sync, top, path, &mut prefix)
    }

    fn items_of(
        &mut self,
        ids: &[NodeId],
        sync: &mut dyn FnMut(&Tree, Sync) -> Vec<lowered::Instr>,
        top: &mut dyn FnMut(&Tree, NodeId) -> Vec<lowered::Instr>,
        path: &mut dyn FnMut(Sync, Vec<usize>),
        prefix: &mut Vec<usize>,
    ) -> Result<Vec<Item>, Diagnostic> {
        if prefix.len() > MAX_DEPTH {
            return Err(too_deep());
        }
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let tops = match self.nodes.get(id) {
                Some(Node {
                    kind: Kind::Loop(..),
                    ..
                }) => top(self, id),
                _ => Vec::new(),
            };
            let kind = match self.nodes.get_mut(id) {
                Some(n) => std::mem::replace(&mut n.kind, Kind::Sync(Sync::Barrier)),
                None => continue,
            };
            match kind {
                Kind::Instr(i) => out.push(Item::Instr(i)),
                Kind::Sync(s) => {
                    for ins in sync(self, s) {
                        let mut p = prefix.clone();
                        p.push(out.len());
                        path(s, p);
                        out.push(Item::Instr(ins));
                    }
                }
                Kind::Loop(h, body) => {
                    let mut items: Vec<Item> = tops.into_iter().map(Item::Instr).collect();
                    prefix.push(out.len());
                    // Items put at the top shift the body's paths.
                    let shift = items.len();
                    let depth = prefix.len();
                    let mut sub = Vec::new();
                    let mut inner = |s: Sync, mut p: Vec<usize>| {
                        if let Some(x) = p.get_mut(depth) {
                            *x += shift;
                        }
                        sub.push((s, p));
                    };
                    let mut pre = prefix.clone();
                    items.extend(self.items_of(&body, sync, top, &mut inner, &mut pre)?);
                    prefix.pop();
                    for (s, p) in sub {
                        path(s, p);
                    }
                    out.push(Item::Loop(lowered::Loop {
                        id: h.id,
                        counter: h.counter,
                        count: h.count,
                        min_count: h.min_count,
                        branch: h.branch.clone(),
                        slots: h.slots,
                        body: items,
                        span: h.span,
                    }));
                }
            }
        }
        Ok(out)
    }
}
