//! The abstract run insert-sync reasons with: the program walked in S order, each loop
//! unrolled a few iterations (enough to see the hazards between iteration i and i + slots
//! and a steady state after them), with the same happens-before model as the simulator's
//! race detector: per-pipe vector clocks, a pipe's own instructions in order, a wait
//! inheriting the clock of the set it consumes, `pipe_barrier ALL` joining every clock.
//! Pipes are strictly in order in this machine (one instruction in flight per pipe), so
//! a pipe never needs a `pipe_barrier` against itself.
//!
//! The walk stops at the first unordered conflict (or unsafe flag reuse) and reports it;
//! the caller inserts sync for it and walks again, so every decision sees all the sync
//! inserted before it.

use super::internal;
use super::paths::{meet, Paths, TagClocks};
use super::tree::{Ids, Kind, NodeId, PairId, Rotation, Sync, Tree};
use super::AliasMode;
use crate::dense::DenseMap;
use crate::diag::Diagnostic;
use crate::isa::{Op, Val};
use crate::lowered::{Access, AxisSpan, Buffer, GmRegion, LoopId, Lowered, Slot, Target};
use crate::types::Pipe;
use std::rc::Rc;

pub type Clock = [u32; 7];

use crate::limits::SYNC_ANALYSIS_BUDGET;

/// One executed instance of a node.
#[derive(Clone, Debug)]
pub struct Inst {
    pub node: NodeId,
    pub pipe: Pipe,
    /// The pipe's instruction count at this instance (its clock component).
    pub count: u32,
    /// The enclosing loops with their iteration, outermost first.
    pub iters: Vec<(NodeId, u32)>,
    /// The pipe's clock just after this instance.
    pub snap: Clock,
    /// The innermost `if` instance it ran in (`paths`).
    pub tag: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Producer {
    pub inst: Rc<Inst>,
    /// The dependence on the latest conflicting access, and what it touches.
    pub hazard: (super::tree::HazardKind, Target),
    /// Every conflict with the consumer is between the same slot of buffers rotating
    /// with this loop: a pair with ids that follow the slot suffices.
    pub rotation: Option<Rotation>,
}

#[derive(Clone, Debug)]
pub enum Finding {
    /// `consumer` conflicts with the latest unordered access of each producer pipe.
    Hazard {
        consumer: Inst,
        producers: Vec<Producer>,
    },
    /// A set whose flag's previous wait is not ordered before it.
    FlagReuse { wait: Rc<Inst>, set: Inst },
    /// With hardware ids: a set of a flag that is still set in program order (two pairs
    /// share an id with overlapping lifetimes).
    FlagClash { set: Inst },
}

/// Which flags the walk models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flags {
    /// Each pair (and slot) its own flag: before event ids are allocated.
    Private,
    /// The allocated (src, dst, id) flags, as the hardware has them.
    Hardware,
}

/// Loops with a register count: walked with their unroll count plus `extra` (modulo
/// the loop's rotation period, so every slot can be the last one of a run), and again
/// with zero iterations (they may not run at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub zero_register_loops: bool,
    pub extra: u32,
}

/// Rotation periods above this are walked as if they were this long (no real kernel
/// has more than a few slots).
const MAX_PERIOD: u32 = 12;

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Per loop node: the iterations to walk (the largest slot or id count plus two) and
/// the rotation period (the least common multiple of those counts): the slots and ids
/// a run ends on repeat with that period, so a walked run is cut to the real run's
/// length modulo it, not just to the unroll count.
pub fn unroll_and_period(
    tree: &Tree,
    buffers: &[Buffer],
) -> (DenseMap<NodeId, u32>, DenseMap<NodeId, u32>) {
    let mut rotating = DenseMap::new();
    let mut counts: DenseMap<NodeId, Vec<u32>> = DenseMap::new();
    for (id, n) in tree.nodes.iter().enumerate() {
        if let Kind::Loop(h, _) = &n.kind {
            rotating.insert(h.id, id);
            counts
                .entry(id)
                .or_default()
                .push(h.slots.map_or(1, |(s, _)| s.max(1)));
        }
    }
    for b in buffers {
        if let Some(l) = b.rotates_with.and_then(|l| rotating.get(&l)) {
            counts.entry(*l).or_default().push(slot_count(b));
        }
    }
    // Explicit slots that follow a loop's counter repeat with their slot count; they
    // are walked exactly only where the period stays a multiple of it (`slot`).
    let mut explicit: DenseMap<NodeId, Vec<u32>> = DenseMap::new();
    for n in &tree.nodes {
        let Kind::Instr(i) = &n.kind else { continue };
        for a in &i.accesses {
            if let (Slot::Follows { loop_id, .. }, Target::Buffer(b)) = (a.slot, a.target) {
                if let (Some(&l), Some(buf)) = (rotating.get(&loop_id), buffers.get(b.0 as usize)) {
                    explicit.entry(l).or_default().push(slot_count(buf));
                }
            }
        }
    }
    for p in &tree.pairs {
        match p.ids {
            Ids::Dynamic {
                rotation,
                count,
                offsets: None,
            } => counts.entry(rotation).or_default().push(count.max(1)),
            Ids::Dynamic {
                rotation, count, ..
            } => explicit.entry(rotation).or_default().push(count.max(1)),
            Ids::Static => {}
        }
    }
    let mut unroll = DenseMap::new();
    let mut period = DenseMap::new();
    for (id, cs) in counts {
        let most = cs.iter().copied().max().unwrap_or(1);
        // Distance `slots` hazards need `slots + 1` iterations; one more shows the
        // steady state after the primed first ones.
        unroll.insert(id, most.saturating_add(2));
        let mut lcm = cs.iter().fold(1u32, |acc, &c| {
            (acc / gcd(acc, c)).saturating_mul(c).min(MAX_PERIOD)
        });
        for &n in explicit.get(&id).map_or(&[][..], |e| e.as_slice()) {
            let with = (lcm / gcd(lcm, n)).saturating_mul(n);
            if with <= MAX_PERIOD {
                lcm = with;
                unroll.insert(id, most.max(n).saturating_add(2));
            }
        }
        period.insert(id, lcm.max(1));
    }
    (unroll, period)
}

/// How the loop counters of two instances relate (see `Walker::disjoint`).
struct Relation<'r> {
    ai: &'r [(NodeId, u32)],
    bi: &'r [(NodeId, u32)],
    same: &'r [NodeId],
    differ: Option<NodeId>,
}

/// The loop an access's slot follows, the slot count and the access's offset (explicit
/// slots only).
type SlotLoop = (NodeId, u32, Option<u32>);

#[derive(Clone)]
struct Entry {
    inst: Rc<Inst>,
    access: usize,
    acc: Access,
    slot: Option<u32>,
    rotation: Option<SlotLoop>,
}

/// What a walk saw of one top-level set or wait (outside every loop, so it runs once
/// per walk): its pipe, that pipe's instruction count at it, and its clock just after.
/// `a` happens before `b` when `b.snap[a.pipe] >= a.count`.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    pub pipe: Pipe,
    pub count: u32,
    pub snap: Clock,
}

impl Seen {
    pub fn before(&self, later: &Seen) -> bool {
        later.snap[self.pipe.index()] >= self.count
    }
}

#[derive(Clone, Default)]
struct FlagState {
    set: Option<Clock>,
    /// What the set knew on the paths where an `if` instance ran (`paths`).
    carried: TagClocks,
    last_wait: Option<Rc<Inst>>,
}

pub struct Walker<'a> {
    tree: &'a Tree,
    buffers: &'a [Buffer],
    regions: &'a [GmRegion],
    rotating: DenseMap<LoopId, NodeId>,
    unroll: DenseMap<NodeId, u32>,
    period: DenseMap<NodeId, u32>,
    flags_mode: Flags,
    scenario: Scenario,
    clocks: [Clock; 7],
    active: [bool; 7],
    /// Accesses not yet ordered before every pipe, per target (`target_key`).
    logs: DenseMap<usize, Vec<Entry>>,
    /// Flag state by `flag_key`: per pair (private flags) or per pipe pair (hardware
    /// flags), then by slot or event id.
    flags: DenseMap<usize, DenseMap<u32, FlagState>>,
    stack: Vec<(NodeId, u32)>,
    /// What holds where an `if` instance ran its body.
    paths: Paths,
    spent: u64,
    /// The top-level sets and waits, by node, when the caller asked for them (`observe`).
    seen: Option<DenseMap<NodeId, Seen>>,
}

/// Buffers and GM tensors interleaved in one dense index.
fn target_key(t: Target) -> usize {
    match t {
        Target::Buffer(b) => 2 * b.0 as usize,
        Target::Tensor(t) => 2 * t as usize + 1,
    }
}

/// A (source, destination) pipe pair as one dense index.
fn pipe_pair(src: Pipe, dst: Pipe) -> usize {
    src.index() * Pipe::ALL.len() + dst.index()
}

/// Slots of a buffer (at least 1).
fn slot_count(b: &Buffer) -> u32 {
    (b.addrs.len() as u32).max(1)
}

impl<'a> Walker<'a> {
    pub fn new(tree: &'a Tree, lowered: &'a Lowered, flags: Flags, scenario: Scenario) -> Self {
        let buffers = &lowered.buffers;
        let mut rotating = DenseMap::new();
        let mut active = [false; 7];
        for (id, n) in tree.nodes.iter().enumerate() {
            match &n.kind {
                Kind::Loop(h, _) => {
                    rotating.insert(h.id, id);
                }
                Kind::Instr(i) if i.pipe() != Pipe::S => active[i.pipe().index()] = true,
                _ => {}
            }
        }
        let (unroll, period) = unroll_and_period(tree, buffers);
        Walker {
            tree,
            buffers,
            regions: &lowered.regions,
            rotating,
            unroll,
            period,
            flags_mode: flags,
            scenario,
            clocks: [[0; 7]; 7],
            active,
            logs: DenseMap::new(),
            flags: DenseMap::new(),
            stack: Vec::new(),
            paths: Paths::default(),
            spent: 0,
            seen: None,
        }
    }

    /// Walks the whole program for its clocks and returns what every top-level set and
    /// wait saw. For a program the walk has already found ordered: it checks flags but
    /// not accesses, since no access conflict could stop it and the clocks are those of
    /// a whole walk.
    pub fn observe(
        mut self,
        spent: &mut u64,
    ) -> Result<(Option<Finding>, DenseMap<NodeId, Seen>), Diagnostic> {
        self.seen = Some(DenseMap::new());
        let found = self.walk(spent)?;
        let seen = self
            .seen
            .take()
            .ok_or_else(|| internal("a walk lost what it observed"))?;
        Ok((found, seen))
    }

    /// Walks the whole program; the first finding, or `None` when everything is ordered.
    /// `spent` carries the work units of the pass's earlier walks: the pass walks once
    /// per pair it inserts or tries to remove, so a per-walk bound alone would still let
    /// a large program take time cubic in its size.
    pub fn run(mut self, spent: &mut u64) -> Result<Option<Finding>, Diagnostic> {
        self.walk(spent)
    }

    fn walk(&mut self, spent: &mut u64) -> Result<Option<Finding>, Diagnostic> {
        self.spent = *spent;
        let root = self.tree.root.clone();
        let found = self.block(&root);
        *spent = self.spent;
        let found = found?;
        if found.is_none() && self.flags_mode == Flags::Hardware {
            let left_set = self.flags.iter().find_map(|(pipes, ids)| {
                let (id, _) = ids.iter().find(|(_, f)| f.set.is_some())?;
                let pipe = |i: usize| Pipe::ALL.get(i).copied();
                Some((
                    pipe(pipes / Pipe::ALL.len())?,
                    pipe(pipes % Pipe::ALL.len())?,
                    id,
                ))
            });
            if let Some((src, dst, id)) = left_set {
                return Err(internal(format!(
                    "flag {src} -> {dst} id {id} is left set at the end"
                )));
            }
        }
        Ok(found)
    }

    fn spend(&mut self, n: u64) -> Result<(), Diagnostic> {
        self.spent = self.spent.saturating_add(n);
        if self.spent > SYNC_ANALYSIS_BUDGET {
            return Err(Diagnostic::global(format!(
                "insert-sync: the program is too large to analyse: it needs more than \
                 {SYNC_ANALYSIS_BUDGET} work units (the limit SYNC_ANALYSIS_BUDGET); \
                 split the kernel or compile with `--sync none`"
            )));
        }
        Ok(())
    }

    fn block(&mut self, ids: &[NodeId]) -> Result<Option<Finding>, Diagnostic> {
        for &id in ids {
            let Some(node) = self.tree.node(id) else {
                continue;
            };
            let found = match &node.kind {
                Kind::Instr(i) => match &i.op {
                    Op::Barrier { pipe: None } => {
                        self.barrier();
                        None
                    }
                    _ if i.pipe() == Pipe::S => None,
                    _ => self.instr(id, i.pipe(), &i.accesses)?,
                },
                Kind::Loop(h, body) if h.branch.is_some() => self.branch(id, body)?,
                Kind::Loop(h, body) => {
                    let n = self.iterations(id, h.count, h.min_count);
                    let mut found = None;
                    for it in 0..n {
                        self.stack.push((id, it));
                        found = self.block(body)?;
                        self.stack.pop();
                        if found.is_some() {
                            break;
                        }
                    }
                    found
                }
                Kind::Sync(s) => self.sync(id, *s)?,
            };
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// The region of an `if`, which runs once or not at all: walked once, after which
    /// the walk keeps only what holds on both paths. A pipe's own instruction count is
    /// the larger (the branch's instances keep their numbers, and do not exist on the
    /// path that skipped it); what it knows of another pipe is what it learned in the
    /// branch when it already knew, before, every instance of that pipe a later check
    /// can ask about, and otherwise what it knew on both paths (a chain of syncs
    /// inside the branch orders nothing when the branch is skipped). An access either
    /// path leaves unordered stays logged. The flags agree on both paths, since a pair
    /// with one end inside the branch and one outside is placed outside it (`place`).
    /// What holds where this run of the body happened is kept for checks of the
    /// instances inside it (`paths`).
    fn branch(&mut self, id: NodeId, body: &[NodeId]) -> Result<Option<Finding>, Diagnostic> {
        let (clocks, logs, flags) = (self.clocks, self.logs.clone(), self.flags.clone());
        let known = self.paths.known();
        let tag = self.paths.open();
        self.stack.push((id, 0));
        let found = self.block(body)?;
        self.stack.pop();
        if found.is_some() {
            return Ok(found);
        }
        let taken = self.clocks;
        // Per pipe, the latest of its instances before the branch that a later check
        // can ask about: a logged access, a flag's last wait, a top-level sync.
        let mut asked = [0u32; 7];
        let mut ask = |pipe: Pipe, count: u32| {
            let a = &mut asked[pipe.index()];
            *a = (*a).max(count);
        };
        for (_, entries) in logs.iter() {
            for e in entries {
                ask(e.inst.pipe, e.inst.count);
            }
        }
        for (_, ids) in flags.iter() {
            for (_, f) in ids.iter() {
                if let Some(w) = &f.last_wait {
                    ask(w.pipe, w.count);
                }
            }
        }
        if let Some(seen) = &self.seen {
            for (_, s) in seen.iter() {
                ask(s.pipe, s.count);
            }
        }
        for (q, (now, before)) in self.clocks.iter_mut().zip(&clocks).enumerate() {
            // What q knows of p after the branch ran holds on the path that skipped it
            // too when, before the branch, q knew every instance of p a check can still
            // ask about: p's instances inside the branch do not exist on that path.
            // Otherwise q knows what it knew on both.
            meet(now, before, &asked, Some(q));
        }
        self.paths.close(tag, &taken, &known, &clocks, &asked);
        let merged: usize = logs.iter().map(|(_, e)| e.len()).sum();
        self.spend(merged as u64)?;
        for (key, skipped) in logs.iter() {
            let log = self.logs.entry(key).or_default();
            // A set, not a scan per entry: a log holds every access since the last
            // order, and branches nest in loops that a sweep walks again per pair.
            let mut kept: foldhash::HashSet<(*const Inst, usize)> =
                foldhash::HashSet::with_capacity_and_hasher(
                    log.len() + skipped.len(),
                    Default::default(),
                );
            kept.extend(log.iter().map(|x| (Rc::as_ptr(&x.inst), x.access)));
            for e in skipped {
                if kept.insert((Rc::as_ptr(&e.inst), e.access)) {
                    log.push(e.clone());
                }
            }
        }
        // A flag set on both paths: a wait on it learns only what both sets knew (the
        // set before the branch, or the set inside it), and, where this instance ran,
        // what the set inside it knew.
        let before = |outer: usize, inner: u32| {
            flags
                .get(&outer)
                .and_then(|ids| ids.get(&inner))
                .and_then(|f| f.set.map(|s| (s, f.carried.clone())))
        };
        let mut differ = false;
        for (outer, ids) in self.flags.iter_mut() {
            for (inner, f) in ids.iter_mut() {
                match (f.set.as_mut(), before(outer, inner)) {
                    (Some(now), Some((set, carried))) => {
                        let taken = *now;
                        meet(now, &set, &asked, None);
                        self.paths.close_flag(
                            tag,
                            &mut f.carried,
                            &taken,
                            (&set, &carried),
                            &asked,
                        );
                    }
                    (None, None) => {}
                    _ => differ = true,
                }
            }
        }
        let vanished = flags.iter().any(|(outer, ids)| {
            ids.iter().any(|(inner, f)| {
                f.set.is_some() && self.flags.get(&outer).and_then(|x| x.get(&inner)).is_none()
            })
        });
        if differ || vanished {
            return Err(internal(
                "a flag is set on one path through a branch and not on the other",
            ));
        }
        Ok(None)
    }

    fn iterations(&self, id: NodeId, count: Val, min_count: u64) -> u32 {
        let k = self.unroll.get(&id).copied().unwrap_or(3);
        let p = self.period.get(&id).copied().unwrap_or(1).max(1);
        match count {
            Val::Imm(c) if c <= k as i64 => c.max(0) as u32,
            // A longer run is cut to a length that ends on the same slot and id.
            Val::Imm(c) => k + ((c - k as i64) % p as i64) as u32,
            Val::Reg(_) if self.scenario.zero_register_loops && min_count == 0 => 0,
            Val::Reg(_) => k + self.scenario.extra % p,
        }
    }

    fn iteration_of(&self, l: NodeId) -> Option<u32> {
        self.stack.iter().find(|(n, _)| *n == l).map(|(_, i)| *i)
    }

    fn tick(&mut self, pipe: Pipe, node: NodeId) -> Inst {
        let p = pipe.index();
        let c = &mut self.clocks[p][p];
        *c = c.saturating_add(1);
        Inst {
            node,
            pipe,
            count: *c,
            iters: self.stack.clone(),
            snap: self.clocks[p],
            tag: self.paths.current(),
        }
    }

    fn barrier(&mut self) {
        self.paths.barrier(&self.clocks);
        let mut all = [0u32; 7];
        for c in &self.clocks {
            for (a, b) in all.iter_mut().zip(c) {
                *a = (*a).max(*b);
            }
        }
        self.clocks = [all; 7];
    }

    /// The slot an access touches in this iteration (`None`: every slot), and the loop
    /// its slot follows, with the slot count and the access's offset.
    fn slot(&self, acc: &Access) -> (Option<u32>, Option<SlotLoop>) {
        // Without alias information a buffer's slots are one region.
        if self.tree.alias == AliasMode::Coarse {
            return (None, None);
        }
        let Target::Buffer(b) = acc.target else {
            return (None, None);
        };
        let Some(buf) = self.buffers.get(b.0 as usize) else {
            return (None, None);
        };
        let n = slot_count(buf);
        match (acc.slot, buf.rotates_with) {
            (Slot::Current, Some(l)) if n > 1 => {
                let Some(&node) = self.rotating.get(&l) else {
                    return (None, None);
                };
                match self.iteration_of(node) {
                    Some(it) => (Some(it % n), Some((node, n, None))),
                    None => (None, None),
                }
            }
            (Slot::Fixed(s), None) => (Some(s), None),
            // The walked iteration names the real one's slot only when the run is cut
            // to a multiple of the slot count (`unroll_and_period`).
            (Slot::Follows { loop_id, offset }, None) => {
                let Some(&node) = self.rotating.get(&loop_id) else {
                    return (None, None);
                };
                let whole = self.period.get(&node).is_some_and(|&p| p % n == 0);
                match self.iteration_of(node) {
                    Some(it) if whole && n > 1 => (
                        Some((it % n + offset % n) % n),
                        Some((node, n, Some(offset % n))),
                    ),
                    _ => (None, None),
                }
            }
            _ => (None, None),
        }
    }

    fn instr(
        &mut self,
        id: NodeId,
        pipe: Pipe,
        accesses: &[Access],
    ) -> Result<Option<Finding>, Diagnostic> {
        let me = Rc::new(self.tick(pipe, id));
        if self.seen.is_some() {
            // Observing an ordered program: only the clocks matter (`observe`).
            self.spend(1)?;
            return Ok(None);
        }
        let clock = self.clocks[pipe.index()];
        // Per producer pipe: the latest unordered conflicting instance, and whether every
        // conflict with it is on a rotating slot of one loop.
        let mut found: Vec<Producer> = Vec::new();
        let mut work = 0u64;
        for acc in accesses {
            let (slot, rot) = self.slot(acc);
            let Some(log) = self.logs.get(&self.key(acc.target)?) else {
                continue;
            };
            work += log.len() as u64;
            for e in log {
                if e.inst.pipe == pipe
                    || !(e.acc.write || acc.write)
                    || matches!((e.slot, slot), (Some(a), Some(b)) if a != b)
                    || self.paths.knows(pipe.index(), &clock, &e.inst)
                    || !self.may_overlap(e, acc)?
                {
                    continue;
                }
                let rotation = match (e.rotation, rot) {
                    (Some(a), Some(b)) if (a.0, a.1) == (b.0, b.1) && e.slot.is_some() => {
                        Some(Rotation {
                            node: a.0,
                            count: a.1,
                            offsets: a.2.zip(b.2),
                        })
                    }
                    _ => None,
                };
                let hazard = (
                    super::tree::HazardKind::of(e.acc.write, acc.write),
                    acc.target,
                );
                match found.iter_mut().find(|p| p.inst.pipe == e.inst.pipe) {
                    Some(p) if p.inst.count > e.inst.count => {}
                    Some(p) if p.inst.count == e.inst.count => {
                        if p.rotation != rotation {
                            p.rotation = None;
                        }
                    }
                    Some(p) => {
                        p.inst = e.inst.clone();
                        p.rotation = rotation;
                        p.hazard = hazard;
                    }
                    None => found.push(Producer {
                        inst: e.inst.clone(),
                        rotation,
                        hazard,
                    }),
                }
            }
        }
        self.spend(work + 1)?;
        if !found.is_empty() {
            let consumer = Inst::clone(&me);
            return Ok(Some(Finding::Hazard {
                consumer,
                producers: found,
            }));
        }
        for (k, acc) in accesses.iter().enumerate() {
            let (slot, rotation) = self.slot(acc);
            let varies = self.varies(acc);
            let key = self.key(acc.target)?;
            let log = self.logs.entry(key).or_default();
            // A later instance of the same access on the same (in-order) pipe orders
            // everything the earlier one did. Not when its region moves with the
            // iterations: the earlier one touched other elements, which a later access
            // may overlap while the later one does not.
            if let Some(e) = log
                .iter_mut()
                .find(|e| !varies && e.inst.node == id && e.access == k && e.slot == slot)
            {
                e.inst = me.clone();
                continue;
            }
            log.push(Entry {
                inst: me.clone(),
                access: k,
                acc: *acc,
                slot,
                rotation,
            });
            if log.len() > 64 {
                self.prune(key);
            }
        }
        Ok(None)
    }

    /// The log an access goes to: per buffer and per tensor, or (coarse) per memory
    /// space, every GM tensor in one.
    fn key(&self, t: Target) -> Result<usize, Diagnostic> {
        Ok(match (self.tree.alias, t) {
            (AliasMode::Precise, _) => target_key(t),
            (AliasMode::Coarse, Target::Tensor(_)) => 1,
            (AliasMode::Coarse, Target::Buffer(b)) => {
                let buffer = self.buffers.get(b.0 as usize).ok_or_else(|| {
                    internal(format!(
                        "an access names buffer {}, which does not exist",
                        b.0
                    ))
                })?;
                2 * buffer.space.index()
            }
        })
    }

    /// Whether an access's GM region depends on a loop counter.
    fn varies(&self, acc: &Access) -> bool {
        self.tree.gm_regions
            && acc
                .region
                .and_then(|r| self.regions.get(r as usize))
                .is_some_and(|g| g.axes.iter().any(|a| !a.terms.is_empty()))
    }

    /// Whether the logged access `e` and `acc` (by the instruction being walked, in the
    /// current iterations `self.stack`) may touch a common byte of one target.
    fn may_overlap(&self, e: &Entry, acc: &Access) -> Result<bool, Diagnostic> {
        if self.tree.alias == AliasMode::Coarse {
            return Ok(true);
        }
        if !e.acc.bytes_may_overlap(acc) {
            return Ok(false);
        }
        match (e.acc.region, acc.region) {
            (Some(a), Some(b)) if self.tree.gm_regions => {
                Ok(!self.disjoint(a, &e.inst.iters, b, &self.stack)?)
            }
            _ => Ok(true),
        }
    }

    /// Whether region `a` of an instance in iterations `ai` and region `b` of one in
    /// iterations `bi` are disjoint for every value the loop counters can take. Loops
    /// around both instances in the same iteration (and every outer one the same) give
    /// both one counter; at the first common loop whose iterations differ the counters
    /// differ by 1 ..= n - 1 either way; every other counter is anywhere in 0 ..= n - 1.
    /// That relation holds however many iterations the walk leaves out, so the answer
    /// is true of the real run. Two boxes are disjoint when one axis keeps them apart.
    fn disjoint(
        &self,
        a: u32,
        ai: &[(NodeId, u32)],
        b: u32,
        bi: &[(NodeId, u32)],
    ) -> Result<bool, Diagnostic> {
        let region = |r: u32| {
            self.regions.get(r as usize).ok_or_else(|| {
                internal(format!(
                    "an access names GM region {r}, which does not exist"
                ))
            })
        };
        let (ra, rb) = (region(a)?, region(b)?);
        if ra.axes.len() != rb.axes.len() {
            return Err(internal("two GM regions of one tensor differ in rank"));
        }
        let mut same = Vec::new();
        let mut differ = None;
        for (x, y) in ai.iter().zip(bi) {
            if x.0 != y.0 {
                break;
            }
            if x.1 != y.1 {
                differ = Some(x.0);
                break;
            }
            same.push(x.0);
        }
        let rel = Relation {
            ai,
            bi,
            same: &same,
            differ,
        };
        for (p, c) in ra.axes.iter().zip(&rb.axes) {
            if self.axis_apart(p, c, &rel)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `p` (the earlier access's span) and `c` never overlap on this axis.
    fn axis_apart(&self, p: &AxisSpan, c: &AxisSpan, rel: &Relation) -> Result<bool, Diagnostic> {
        // d = start(c) - start(p), as an interval [lo, hi], plus (at the differing
        // loop) k * delta with delta in +-(1 ..= top).
        let mut lo = i128::from(c.constant) - i128::from(p.constant);
        let mut hi = lo;
        let mut delta: Option<(i128, i128)> = None;
        let coefficient = |s: &AxisSpan, l: LoopId| -> i128 {
            s.terms
                .iter()
                .filter(|(x, _)| *x == l)
                .map(|&(_, k)| i128::from(k))
                .sum()
        };
        // Adds k * [0, top].
        let add = |k: i128, top: i128, lo: &mut i128, hi: &mut i128| {
            let (x, y) = (0, k * top);
            *lo += x.min(y);
            *hi += x.max(y);
        };
        let loops = p.terms.iter().chain(&c.terms).map(|&(l, _)| l);
        let mut done: Vec<LoopId> = Vec::new();
        for l in loops {
            if done.contains(&l) {
                continue;
            }
            done.push(l);
            let (kp, kc) = (coefficient(p, l), coefficient(c, l));
            let Some(&node) = self.rotating.get(&l) else {
                return Err(internal(format!(
                    "a GM region names loop {}, which does not exist",
                    l.0
                )));
            };
            // Lowering names only the loops around an access.
            let around = |iters: &[(NodeId, u32)]| iters.iter().any(|x| x.0 == node);
            if (kp != 0 && !around(rel.ai)) || (kc != 0 && !around(rel.bi)) {
                return Err(internal(format!(
                    "a GM region names loop {}, which is not around its access",
                    l.0
                )));
            }
            // A loop with a constant count runs at least once when an instance is inside
            // it. One whose count the scalar pipe computes (its end depends on an outer
            // loop) has a counter range unknown here: the boxes may overlap.
            let top = match self.tree.loop_head(node).map(|h| h.count) {
                Some(Val::Imm(n)) if n >= 1 => i128::from(n) - 1,
                Some(Val::Reg(_)) => return Ok(false),
                _ => {
                    return Err(internal(format!(
                        "a GM region names loop {}, whose trip count is not a positive constant",
                        l.0
                    )))
                }
            };
            if rel.same.contains(&node) {
                add(kc - kp, top, &mut lo, &mut hi);
            } else if rel.differ == Some(node) && kp == kc {
                delta = Some((kc, top));
            } else {
                add(kc, top, &mut lo, &mut hi);
                add(-kp, top, &mut lo, &mut hi);
            }
        }
        let (lp, lc) = (i128::from(p.len), i128::from(c.len));
        // [lo, hi] keeps c's span wholly before p's or wholly after it.
        let apart = |lo: i128, hi: i128| hi <= -lc || lo >= lp;
        Ok(match delta {
            None => apart(lo, hi),
            // Different iterations of a one-iteration loop cannot be: stay conservative.
            Some((_, top)) if top < 1 => false,
            Some((k, top)) => {
                let (x, y) = (k, k * top);
                let (down_lo, down_hi) = (lo - x.max(y), hi - x.min(y));
                apart(lo + x.min(y), hi + x.max(y)) && apart(down_lo, down_hi)
            }
        })
    }

    /// Drops entries every active pipe is already ordered after.
    fn prune(&mut self, key: usize) {
        let mut floor = [u32::MAX; 7];
        for (q, c) in self.clocks.iter().enumerate() {
            if self.active[q] {
                for (f, v) in floor.iter_mut().zip(c) {
                    *f = (*f).min(*v);
                }
            }
        }
        if let Some(log) = self.logs.get_mut(&key) {
            log.retain(|e| e.inst.count > floor[e.inst.pipe.index()]);
        }
    }

    fn flag_mut(&mut self, (outer, inner): (usize, u32)) -> Option<&mut FlagState> {
        self.flags.get_mut(&outer)?.get_mut(&inner)
    }

    fn flag_key(
        &self,
        pair: PairId,
        slot: Option<u32>,
        is_set: bool,
    ) -> Result<(usize, u32), Diagnostic> {
        let p = self
            .tree
            .pairs
            .get(pair)
            .ok_or_else(|| internal(format!("no pair {pair}")))?;
        let slot = match (slot, p.ids) {
            (Some(s), _) => s,
            (None, Ids::Static) => 0,
            (
                None,
                Ids::Dynamic {
                    rotation,
                    count,
                    offsets,
                },
            ) => {
                let it = self.iteration_of(rotation).ok_or_else(|| {
                    internal(format!("pair {pair} uses a slot id outside its loop"))
                })?;
                let (kp, kc) = offsets.unwrap_or((0, 0));
                let offset = if is_set { kp } else { kc };
                (it % count.max(1) + offset) % count.max(1)
            }
        };
        Ok(match self.flags_mode {
            Flags::Private => (pair, slot),
            Flags::Hardware => (pipe_pair(p.src, p.dst), p.base + slot),
        })
    }

    /// Records a top-level set or wait for [`Walker::observe`].
    fn saw(&mut self, me: &Inst) {
        if let (Some(seen), true) = (self.seen.as_mut(), me.iters.is_empty()) {
            seen.insert(
                me.node,
                Seen {
                    pipe: me.pipe,
                    count: me.count,
                    snap: me.snap,
                },
            );
        }
    }

    fn sync(&mut self, id: NodeId, s: Sync) -> Result<Option<Finding>, Diagnostic> {
        let pair_of = |p: PairId| self.tree.pairs.get(p);
        let (pair, slot, is_set) = match s {
            Sync::Barrier => {
                self.barrier();
                return Ok(None);
            }
            Sync::Set(p) => (p, None, true),
            Sync::Prime(p, k) => (p, Some(k), true),
            Sync::Wait(p) => (p, None, false),
            Sync::Drain(p, k) => (p, Some(k), false),
        };
        let Some(p) = pair_of(pair) else {
            return Err(internal(format!("no pair {pair}")));
        };
        // Primes and drains beyond the pair's ids were given up when ids ran out.
        if p.removed || slot.is_some_and(|k| k >= p.ids.count()) {
            return Ok(None);
        }
        if p.barrier {
            if self.tree.barrier_at(pair, s) {
                self.barrier();
            }
            return Ok(None);
        }
        let (src, dst) = (p.src, p.dst);
        let key = self.flag_key(pair, slot, is_set)?;
        self.spend(1 + self.paths.cost())?;
        if is_set {
            let me = self.tick(src, id);
            let clock = self.clocks[src.index()];
            let carried = self.paths.set(src.index(), &clock);
            let reused = self
                .flag_mut(key)
                .and_then(|f| f.last_wait.clone())
                .filter(|w| !self.paths.knows(src.index(), &clock, w));
            let state = self
                .flags
                .entry(key.0)
                .or_default()
                .entry(key.1)
                .or_default();
            if state.set.is_some() {
                return match self.flags_mode {
                    Flags::Hardware => Ok(Some(Finding::FlagClash { set: me })),
                    Flags::Private => Err(internal(format!(
                        "pair {pair} sets its flag twice without a wait"
                    ))),
                };
            }
            if let Some(wait) = reused {
                return Ok(Some(Finding::FlagReuse { wait, set: me }));
            }
            state.set = Some(clock);
            state.carried = carried;
            self.saw(&me);
        } else {
            let Some((set, carried)) = self
                .flag_mut(key)
                .and_then(|f| Some((f.set.take()?, std::mem::take(&mut f.carried))))
            else {
                return Err(internal(format!(
                    "pair {pair} waits ({src} -> {dst}) with no set before it"
                )));
            };
            let mine = &mut self.clocks[dst.index()];
            for (a, b) in mine.iter_mut().zip(&set) {
                *a = (*a).max(*b);
            }
            self.paths.wait(dst.index(), &set, &carried, &self.clocks);
            let me = Rc::new(self.tick(dst, id));
            self.saw(&me);
            if let Some(f) = self.flag_mut(key) {
                f.last_wait = Some(me);
            }
        }
        Ok(None)
    }
}
