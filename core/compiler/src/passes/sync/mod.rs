//! `insert-sync`: orders every cross-pipe hazard of the lowered
//! program with set/wait pairs (`auto`), with `pipe_barrier ALL` (`barrier`) or not at
//! all (`none`).
//!
//! `auto` works on an abstract run of the program ([`walk`]): it walks until the first
//! conflict that no earlier sync orders, places a pair for it ([`place`]: set right
//! after the producer, wait right before the consumer, hoisted out of loops only one of
//! them is in, primed before and drained after a loop when the dependence crosses its
//! back edge, with slot-following dynamic ids for multi-buffered slots), and walks
//! again. Per consumer it keeps only the latest producer of each pipe and drops
//! producers another one already orders (transitive pruning). A final sweep removes
//! any pair whose absence the walk does not notice, so every pair left is needed (a
//! pair no chain of other pairs leads from its source pipe to its destination pipe
//! is kept without a walk: nothing else could order what it orders).
//! Event ids are then allocated per pipe pair ([`ids`]; straight-line pairs recycle
//! the ids of pairs proved finished, [`recycle`]), checked by a walk with the ids as the
//! hardware has them, and the tree is written back.
//!
//! Nest-wide rotation: a pair carried by the inner loop of a perfect nest is primed
//! before the outermost loop of the nest and drained after it ([`place`]), so a
//! multi-buffered loop that axis-split made into a nest keeps its slots rotating across
//! outer iterations (the report shows `loop_carried` at the nest's top and
//! `rotates_with` at the inner loop). That needs each dynamic pair's ids to follow its
//! slots exactly: when ids run short the pass starts again with per-run rotation.
//!
//! Register-counted loops (whose trip count the walk cannot know) are walked once per
//! rotation phase a run can end on and, when one may run zero times (its `min_count`
//! is 0: a loop whose end depends on an outer loop can), once with no iterations; a
//! long constant run is cut to a walked length that ends on the same slot, so the
//! hazards between the last iterations of one run and the first of the next are the
//! real ones.

pub mod ids;
mod paths;
pub mod place;
pub mod recycle;
mod sink;
pub mod tree;
pub mod walk;

use super::{Context, Pass};
use crate::dense::DenseMap;
use crate::diag::{Diagnostic, Diagnostics};
use crate::isa::{AluOp, Op, Provenance, Reg, Val};
use crate::lowered::{self, Item, LoopId, Lowered};
use crate::machine::Machine;
use crate::types::{MemSpace, Pipe};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tree::{Ids, Kind, NodeId, PairId, Sync, Tree};
use walk::{Finding, Flags, Scenario, Walker};

/// How `insert-sync` (pass 10) orders cross-pipe hazards.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum SyncStrategy {
    /// A set_flag / wait_flag pair for each hand-off between pipes
    #[default]
    Auto,
    /// A barrier of every pipe at each step boundary: always correct, usually slower
    Barrier,
    /// No synchronisation: the simulator shows the races
    None,
}

impl SyncStrategy {
    pub const ALL: [SyncStrategy; 3] = [
        SyncStrategy::Auto,
        SyncStrategy::Barrier,
        SyncStrategy::None,
    ];

    /// The name the CLI, JSON and share links use.
    pub fn name(self) -> &'static str {
        match self {
            SyncStrategy::Auto => "auto",
            SyncStrategy::Barrier => "barrier",
            SyncStrategy::None => "none",
        }
    }

    pub fn from_name(name: &str) -> Option<SyncStrategy> {
        SyncStrategy::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// What `insert-sync` knows about which accesses can touch the same bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum AliasMode {
    /// Distinct buffers and slots are disjoint, and GM accesses touch the box their
    /// indices select in each iteration (affine in the loop counters; the whole tensor
    /// when an index is indirect or not affine).
    #[default]
    Precise,
    /// The ablation: every buffer of one memory space is one region (slots included),
    /// and every GM access touches every tensor, as for a compiler without alias
    /// information.
    Coarse,
}

impl AliasMode {
    pub const ALL: [AliasMode; 2] = [AliasMode::Precise, AliasMode::Coarse];

    pub fn name(self) -> &'static str {
        match self {
            AliasMode::Precise => "precise",
            AliasMode::Coarse => "coarse",
        }
    }
}

pub use tree::{HazardKind, Reason};

/// Rounds of walk-and-insert before giving up (each round orders at least one more
/// hazard; real kernels need a few dozen).
const MAX_ROUNDS: usize = 4096;

/// One set/wait pair that `auto` inserted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairInfo {
    pub src: Pipe,
    pub dst: Pipe,
    /// The event ids it uses (one, or one per slot for a dynamic pair).
    pub ids: Vec<u32>,
    /// The id follows the slot register (`iteration % ids.len()` + first id).
    pub dynamic: bool,
    /// Primed before and drained after this loop (a loop-carried dependence).
    pub loop_carried: Option<LoopId>,
    /// The loop whose counter picks a dynamic pair's id. When it differs from
    /// `loop_carried` the rotation runs across the perfect nest `loop_carried` heads.
    pub rotates_with: Option<LoopId>,
    /// A dynamic pair on the slots of a `buffers` tile: the set's id is the first id
    /// plus `(counter + slot_offsets[0]) % ids`, the wait's with `slot_offsets[1]`,
    /// from the producer's and the consumer's slot index on that buffer.
    // Always written (as `null` when absent): the playground's worker codec, postcard,
    // cannot read a field a serialiser may leave out.
    #[serde(default)]
    pub slot_offsets: Option<[u32; 2]>,
    pub reason: Reason,
    /// For a hazard pair: read after write, write after read or write after write.
    pub hazard: Option<HazardKind>,
    /// The buffer (by the source name of its tile) or tensor the hazard is on.
    pub buffer: Option<String>,
    /// Where the buffer's first tile is defined, to name a temporary by its source.
    #[serde(default)]
    pub buffer_span: Option<crate::diag::Span>,
    /// Where that buffer lives on chip (none for a tensor).
    #[serde(default)]
    pub region: Option<Region>,
    /// Where the producer (after which the set runs) and the consumer (before which
    /// the wait runs) come from.
    pub producer: crate::isa::Provenance,
    pub consumer: crate::isa::Provenance,
    /// Item paths (indices into `Lowered::body`, then into loop bodies) of every
    /// instruction of the pair: set, wait, primes and drains.
    pub paths: Vec<Vec<usize>>,
}

/// A pair the minimality sweep found redundant: the program stays ordered without it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RemovedPair {
    pub src: Pipe,
    pub dst: Pipe,
    pub hazard: Option<HazardKind>,
    pub buffer: Option<String>,
    /// Where the buffer's first tile is defined (`PairInfo::buffer_span`).
    #[serde(default)]
    pub buffer_span: Option<crate::diag::Span>,
    pub producer: crate::isa::Provenance,
    pub consumer: crate::isa::Provenance,
    /// Indices into `SyncReport::pairs` of a chain of placed pairs from `src` to `dst`
    /// (by pipe), which orders what this pair would have.
    pub covered_by: Vec<usize>,
}

/// The live pairs (tree indices) of a shortest chain of pipes from `src` to `dst`.
fn covering_chain(pairs: &[tree::Pair], src: Pipe, dst: Pipe) -> Vec<usize> {
    // Breadth-first over pipes; `via[pipe]` is the pair that first reached it.
    let mut via: [Option<usize>; 7] = [None; 7];
    let mut queue = std::collections::VecDeque::from([src]);
    let mut seen = [false; 7];
    if let Some(s) = seen.get_mut(src.index()) {
        *s = true;
    }
    while let Some(pipe) = queue.pop_front() {
        for (i, q) in pairs.iter().enumerate() {
            if !q.live() || q.src != pipe {
                continue;
            }
            if let Some(s) = seen.get_mut(q.dst.index()) {
                if !*s {
                    *s = true;
                    if let Some(v) = via.get_mut(q.dst.index()) {
                        *v = Some(i);
                    }
                    queue.push_back(q.dst);
                }
            }
        }
    }
    let mut chain = Vec::new();
    let mut at = dst;
    while at != src {
        let Some(i) = via.get(at.index()).copied().flatten() else {
            return Vec::new();
        };
        chain.push(i);
        let Some(p) = pairs.get(i) else {
            return Vec::new();
        };
        at = p.src;
        if chain.len() > 7 {
            return Vec::new();
        }
    }
    chain.reverse();
    chain
}

/// The source name of what `target` is: a tensor's name, or a buffer's first tile
/// without the suffix that tells SSA values apart (`acc` for `acc.2|acc.3`).
/// Where a buffer's first tile is defined (none for a tensor).
fn target_span(lowered: &Lowered, target: lowered::Target) -> Option<crate::diag::Span> {
    match target {
        lowered::Target::Tensor(_) => None,
        lowered::Target::Buffer(b) => lowered.buffers.get(b.0 as usize)?.span,
    }
}

fn target_name(lowered: &Lowered, target: lowered::Target) -> Option<String> {
    match target {
        lowered::Target::Tensor(t) => lowered.tensors.get(t as usize).map(|t| t.name.clone()),
        lowered::Target::Buffer(b) => {
            let name = lowered.buffers.get(b.0 as usize)?.name.as_str();
            let first = name.split('|').next().unwrap_or(name);
            let base = crate::ir::print::source_name(first);
            // An unnamed temporary keeps its IR number (`%0`).
            if base.bytes().all(|c| c.is_ascii_digit()) {
                Some(format!("%{base}"))
            } else {
                Some(base.to_string())
            }
        }
    }
}

/// The bytes a hazard's buffer occupies: `[start, end)` of each slot in its space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SyncRegion"))]
pub struct Region {
    pub space: MemSpace,
    pub slots: Vec<(u64, u64)>,
}

impl Region {
    /// `UB bytes 0..8192` or, for several slots, `UB bytes 0..8192 | 8192..16384`.
    pub fn text(&self) -> String {
        let ranges: Vec<String> = self
            .slots
            .iter()
            .map(|(a, b)| format!("{a}..{b}"))
            .collect();
        format!("{} bytes {}", self.space.name(), ranges.join(" | "))
    }
}

fn target_region(lowered: &Lowered, target: lowered::Target) -> Option<Region> {
    let lowered::Target::Buffer(b) = target else {
        return None;
    };
    let buffer = lowered.buffers.get(b.0 as usize)?;
    Some(Region {
        space: buffer.space,
        slots: buffer
            .addrs
            .iter()
            .map(|a| (*a, a + buffer.bytes))
            .collect(),
    })
}

/// A dynamic pair given fewer ids than its loop has slots because ids ran out: the
/// loop keeps its buffers but at most `ids` iterations are in flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotReduction {
    pub loop_id: LoopId,
    pub src: Pipe,
    pub dst: Pipe,
    pub slots: u32,
    pub ids: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncReport {
    pub strategy: SyncStrategy,
    /// The alias analysis the pairs were placed with.
    #[serde(default)]
    pub alias: AliasMode,
    pub pairs: Vec<PairInfo>,
    /// `pipe_barrier ALL` instructions inserted.
    pub barriers: usize,
    pub slot_reductions: Vec<SlotReduction>,
    /// Fallbacks taken (ids exhausted, analysis too large).
    pub notes: Vec<String>,
    /// Pairs found redundant, each with a chain of placed pairs that covers it.
    #[serde(default)]
    pub removed: Vec<RemovedPair>,
}

impl SyncReport {
    /// Set/wait pairs inserted (each counted once, however many slots it has).
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }
}

pub struct InsertSync;

impl Pass for InsertSync {
    type In = crate::passes::stage::Lowered;
    type Out = crate::passes::stage::Lowered;

    fn name(&self) -> &'static str {
        "insert-sync"
    }

    fn description(&self) -> &'static str {
        "order cross-pipe hazards with set_flag/wait_flag pairs (or barriers) and allocate event ids"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        let (strategy, alias) = (cx.sync, cx.alias);
        let lowered = cx.lowered_mut(self.name())?;
        cx.sync_report = Some(insert_sync_with(lowered, strategy, alias, &machine)?);
        Ok(())
    }
}

/// Inserts the sync of `strategy` into `lowered` in place, with precise aliasing.
pub fn insert_sync(
    lowered: &mut Lowered,
    strategy: SyncStrategy,
    machine: &Machine,
) -> Result<SyncReport, Diagnostics> {
    insert_sync_with(lowered, strategy, AliasMode::Precise, machine)
}

/// Inserts the sync of `strategy` into `lowered` in place, with `alias`'s view of
/// which accesses may overlap.
pub fn insert_sync_with(
    lowered: &mut Lowered,
    strategy: SyncStrategy,
    alias: AliasMode,
    machine: &Machine,
) -> Result<SyncReport, Diagnostics> {
    let mut report = SyncReport {
        strategy,
        alias,
        ..SyncReport::default()
    };
    if strategy == SyncStrategy::None {
        return Ok(report);
    }
    let original = lowered.body.clone();
    let result = match strategy {
        SyncStrategy::Auto => match auto(lowered, alias, machine, &mut report, true) {
            // Nest-wide rotation needs each dynamic pair's ids to follow its slots: when
            // ids ran short, rotate per run of the inner loop instead.
            Ok(AutoOutcome::NestNeedsFullIds) => {
                lowered.body = original.clone();
                report = SyncReport {
                    strategy,
                    alias,
                    ..SyncReport::default()
                };
                auto(lowered, alias, machine, &mut report, false).map(|_| ())
            }
            r => r.map(|_| ()),
        },
        _ => barrier(lowered, alias, &mut report),
    };
    match result {
        Ok(()) => Ok(report),
        // The exact analysis gave up (too large): the conservative strategy is always
        // correct and needs no event ids.
        Err(e) if strategy == SyncStrategy::Auto && !e.message.starts_with("internal") => {
            lowered.body = original;
            let mut report = SyncReport {
                strategy,
                alias,
                notes: vec![format!("{}; used barriers instead", e.message)],
                ..SyncReport::default()
            };
            barrier(lowered, alias, &mut report).map_err(|e| vec![e])?;
            Ok(report)
        }
        Err(e) => {
            lowered.body = original;
            Err(vec![e])
        }
    }
}

/// The runs to walk: register-counted loops (whose trip count the walk cannot know)
/// once per rotation phase their run may end on, and once not running at all (when one
/// may run zero times).
fn scenarios(tree: &Tree, lowered: &Lowered) -> Vec<Scenario> {
    let (_, period) = walk::unroll_and_period(tree, &lowered.buffers);
    let phases = tree
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| matches!(&n.kind, Kind::Loop(h, _) if matches!(h.count, Val::Reg(_))))
        .map(|(id, _)| period.get(&id).copied().unwrap_or(1))
        .max();
    let may_skip = tree.nodes.iter().any(|n| {
        matches!(&n.kind, Kind::Loop(h, _) if matches!(h.count, Val::Reg(_)) && h.min_count == 0)
    });
    let mut out = vec![Scenario {
        zero_register_loops: false,
        extra: 0,
    }];
    if let Some(phases) = phases {
        out.extend((1..phases).map(|extra| Scenario {
            zero_register_loops: false,
            extra,
        }));
        if may_skip {
            out.push(Scenario {
                zero_register_loops: true,
                extra: 0,
            });
        }
    }
    out
}

/// The first finding over every scenario. `spent` is the pass's running work count
/// (bounded by `limits::SYNC_ANALYSIS_BUDGET`).
fn check(
    tree: &Tree,
    lowered: &Lowered,
    flags: Flags,
    spent: &mut u64,
) -> Result<Option<Finding>, Diagnostic> {
    for s in scenarios(tree, lowered) {
        if let Some(f) = Walker::new(tree, lowered, flags, s).run(spent)? {
            return Ok(Some(f));
        }
    }
    Ok(None)
}

/// A compiler bug found by insert-sync: a diagnostic that says so, never a silent
/// default (a missing pair or id register would become a missing sync, a race).
pub(super) fn internal(msg: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::global(format!("internal error: insert-sync: {msg}"))
}

/// Whether a finding may be placed inside a branch: yes the first time; the second
/// time only if its first pair was inside one, which is then taken out; `None` when it
/// was already placed around every branch (it stayed unordered: a bug).
fn retry<K: std::hash::Hash + Eq>(
    tree: &mut Tree,
    seen: &mut HashMap<K, Option<PairId>>,
    key: &K,
) -> Option<bool> {
    match seen.get(key) {
        None => Some(true),
        Some(None) => None,
        Some(Some(pair)) => {
            if let Some(p) = tree.pairs.get_mut(*pair) {
                p.removed = true;
            }
            Some(false)
        }
    }
}

/// Walks and inserts until nothing is unordered; `on_hazard` decides what to insert.
fn fixpoint(
    tree: &mut Tree,
    lowered: &Lowered,
    spent: &mut u64,
    on_finding: &mut dyn FnMut(&mut Tree, Finding) -> Result<(), Diagnostic>,
) -> Result<(), Diagnostic> {
    for _ in 0..MAX_ROUNDS {
        match check(tree, lowered, Flags::Private, spent)? {
            None => return Ok(()),
            Some(f) => on_finding(tree, f)?,
        }
    }
    Err(internal("sync insertion did not converge"))
}

enum AutoOutcome {
    Done,
    /// A nest-wide pair lost ids to exhaustion; `lowered.body` is left empty for the
    /// caller to restore.
    NestNeedsFullIds,
}

fn auto(
    lowered: &mut Lowered,
    alias: AliasMode,
    machine: &Machine,
    report: &mut SyncReport,
    nest: bool,
) -> Result<AutoOutcome, Diagnostic> {
    let mut tree = Tree::build(std::mem::take(&mut lowered.body), alias)?;
    // Each finding placed so far, with the pair placed inside a branch for it. The
    // walk's merge after an `if` keeps, per pipe, only what both paths know: a pair
    // inside the branch can leave its hazard unordered in the walk's eyes (the skipped
    // path's older set forgets work the taken path ordered). Such a pair is taken out
    // and placed around the branch instead; a finding seen a third time is a bug.
    let mut seen: HashMap<_, Option<PairId>> = HashMap::new();
    let mut spent = 0;
    fixpoint(&mut tree, lowered, &mut spent, &mut |tree, f| {
        match f {
            Finding::Hazard {
                consumer,
                producers,
            } => {
                // A producer already ordered by another one's set needs no pair.
                let keep: Vec<_> = producers
                    .iter()
                    .filter(|p| {
                        !producers.iter().any(|r| {
                            r.inst.pipe != p.inst.pipe
                                && r.inst.snap[p.inst.pipe.index()] >= p.inst.count
                        })
                    })
                    .collect();
                for p in keep {
                    let key = (p.inst.node, consumer.node, p.inst.iters.clone());
                    let into_branches = retry(tree, &mut seen, &key)
                        .ok_or_else(|| internal("a hazard stayed unordered after its pair"))?;
                    let site =
                        place::site(tree, &p.inst, &consumer, (nest, into_branches), p.rotation)?;
                    let id = place::add_pair(
                        tree,
                        &site,
                        &p.inst,
                        &consumer,
                        p.rotation,
                        Reason::Hazard,
                        Some(p.hazard),
                    )?;
                    seen.insert(key, site.in_branch.then_some(id));
                }
            }
            Finding::FlagReuse { wait, set } => {
                let key = (wait.node, set.node, wait.iters.clone());
                let into_branches = retry(tree, &mut seen, &key)
                    .ok_or_else(|| internal("a flag reuse stayed unordered after its pair"))?;
                let site = place::site(tree, &wait, &set, (nest, into_branches), None)?;
                let serves = match tree.node(set.node).map(|n| &n.kind) {
                    Some(Kind::Sync(Sync::Set(p) | Sync::Prime(p, _))) => Some(*p),
                    _ => None,
                };
                let id = place::add_pair(tree, &site, &wait, &set, None, Reason::FlagReuse, None)?;
                if let Some(pair) = tree.pairs.get_mut(id) {
                    pair.serves = serves;
                }
                seen.insert(key, site.in_branch.then_some(id));
            }
            Finding::FlagClash { .. } => return Err(internal("private flags clashed")),
        }
        Ok(())
    })?;
    sweep(&mut tree, lowered, Flags::Private, &mut spent)?;
    let wanted: Vec<u32> = tree.pairs.iter().map(|p| p.ids.count()).collect();
    let reductions = ids::allocate(&mut tree, lowered, machine, report, &mut spent)?;
    if tree.pairs.iter().any(|p| p.orders_ids && p.live()) {
        // The pairs that order id reuses can make a hazard pair redundant, and a chain
        // of other pairs can make one of them redundant: sweep again with the ids the
        // hardware has.
        sweep(&mut tree, lowered, Flags::Hardware, &mut spent)?;
        reuse_notes(&tree, machine, report);
    }
    let ran_out = !reductions.is_empty() || tree.pairs.iter().any(|p| p.barrier);
    let nest_reduced = tree
        .pairs
        .iter()
        .zip(&wanted)
        .any(|(p, &w)| p.nest_wide && !p.removed && (p.barrier || p.ids.count() < w));
    if nest_reduced {
        return Ok(AutoOutcome::NestNeedsFullIds);
    }
    for r in reductions {
        let Some(loop_id) = tree.loop_head(r.0).map(|h| h.id) else {
            return Err(internal(
                "an event-id reduction for a node that is not a loop",
            ));
        };
        report.slot_reductions.push(SlotReduction {
            loop_id,
            src: r.1,
            dst: r.2,
            slots: r.3,
            ids: r.4,
        });
    }
    if !ran_out {
        sink::sink_drains(&mut tree, lowered, &mut spent)?;
    }
    if let Some(f) = check(&tree, lowered, Flags::Hardware, &mut spent)? {
        // Fewer ids than the private flags had can leave a set before the wait of its
        // flag's previous use: the caller falls back to barriers, which are always right.
        if ran_out {
            return Err(Diagnostic::global(format!(
                "insert-sync: event ids ran out ({} per pipe pair) and the ids left do not order the program",
                machine.event_ids_per_pair
            )));
        }
        return Err(internal(format!(
            "allocated event ids do not order the program: {f:?}"
        )));
    }
    write_back(lowered, tree, report)?;
    Ok(AutoOutcome::Done)
}

/// Minimality: a pair whose removal leaves everything ordered is dropped, as the walk
/// with `flags` sees it. Later pairs go first: they were added with the earlier ones in
/// place. A pair no chain of the other pairs can stand in for is kept without walking.
fn sweep(
    tree: &mut Tree,
    lowered: &Lowered,
    flags: Flags,
    spent: &mut u64,
) -> Result<(), Diagnostic> {
    let has_barriers = tree.pairs.iter().any(|p| p.barrier && !p.removed)
        || tree.nodes.iter().any(|n| match &n.kind {
            Kind::Instr(i) => matches!(i.op, Op::Barrier { pipe: None }),
            Kind::Sync(s) => *s == Sync::Barrier,
            Kind::Loop(..) => false,
        });
    for p in (0..tree.pairs.len()).rev() {
        if !tree.pairs.get(p).is_some_and(|q| q.live())
            || (!has_barriers && needed_by_pipe_graph(tree, p))
        {
            continue;
        }
        // With the pair go the flag-reuse pairs that serve it: they order nothing else,
        // and a walk that kept them could not see the pair go.
        let group: Vec<usize> = std::iter::once(p)
            .chain(
                tree.pairs
                    .iter()
                    .enumerate()
                    .filter(|(_, q)| q.serves == Some(p) && q.live())
                    .map(|(q, _)| q),
            )
            .collect();
        for &q in &group {
            if let Some(pair) = tree.pairs.get_mut(q) {
                pair.removed = true;
            }
        }
        if check(tree, lowered, flags, spent)?.is_some() {
            for &q in &group {
                if let Some(pair) = tree.pairs.get_mut(q) {
                    pair.removed = false;
                }
            }
        }
    }
    Ok(())
}

/// A note per pipe pair whose straight-line pairs reuse ids behind `FlagReuse` pairs.
fn reuse_notes(tree: &Tree, machine: &Machine, report: &mut SyncReport) {
    for src in Pipe::ALL {
        for dst in Pipe::ALL {
            let n = tree
                .pairs
                .iter()
                .filter(|p| p.orders_ids && p.live() && (p.dst, p.src) == (src, dst))
                .count();
            if n > 0 {
                report.notes.push(format!(
                    "event ids for {src} -> {dst} are reused: {n} flag-reuse pairs ({dst} -> {src}) order the wait of an id's previous pair before its next set ({} ids per pipe pair)",
                    machine.event_ids_per_pair
                ));
            }
        }
    }
}

/// Whether pair `p` is needed because no other live pair chain leads from its source
/// pipe to its destination pipe. Without barriers the walk's happens-before only
/// crosses pipes through a set/wait pair, so with no such chain the
/// destination can never learn of the source's instructions without `p` and the
/// conflict `p` was placed for would be unordered again: the walk would keep `p` too.
/// A chain existing proves nothing (its pairs may order other instances), so the
/// caller then walks.
fn needed_by_pipe_graph(tree: &Tree, p: usize) -> bool {
    let Some(me) = tree.pairs.get(p) else {
        return false;
    };
    let mut reached = [false; 7];
    if let Some(r) = reached.get_mut(me.src.index()) {
        *r = true;
    }
    let mut queue = vec![me.src];
    while let Some(pipe) = queue.pop() {
        let next = tree
            .pairs
            .iter()
            .enumerate()
            .filter(|&(i, q)| i != p && !q.removed && q.src == pipe)
            .map(|(_, q)| q.dst);
        for dst in next {
            if let Some(r) = reached.get_mut(dst.index()) {
                if !*r {
                    *r = true;
                    queue.push(dst);
                }
            }
        }
    }
    !reached.get(me.dst.index()).copied().unwrap_or(true)
}

fn barrier(
    lowered: &mut Lowered,
    alias: AliasMode,
    report: &mut SyncReport,
) -> Result<(), Diagnostic> {
    let mut tree = Tree::build(std::mem::take(&mut lowered.body), alias)?;
    // The conservative baseline: a GM access touches its whole tensor.
    tree.gm_regions = false;
    let mut count = 0;
    fixpoint(&mut tree, lowered, &mut 0, &mut |tree, f| {
        let Finding::Hazard { consumer, .. } = f else {
            return Err(internal("a barrier-only program reused a flag"));
        };
        // Right before the consumer: everything dispatched earlier has drained.
        tree.insert(consumer.node, Sync::Barrier, false)
            .ok_or_else(|| internal("consumer vanished"))?;
        count += 1;
        Ok(())
    })?;
    report.barriers += count;
    write_back(lowered, tree, report)
}

/// Writes the tree back as items: pairs become instructions with their ids, dynamic ids
/// get their register computed at the top of the rotating loop's body.
fn write_back(
    lowered: &mut Lowered,
    tree: Tree,
    report: &mut SyncReport,
) -> Result<(), Diagnostic> {
    // One id register per (loop, id count, first id, slot offset).
    let mut regs: HashMap<(NodeId, u32, u32, u32), Reg> = HashMap::new();
    for p in tree.pairs.iter().filter(|p| p.live()) {
        if let Ids::Dynamic {
            rotation,
            count,
            offsets,
        } = p.ids
        {
            let (kp, kc) = offsets.unwrap_or((0, 0));
            for offset in [kp, kc] {
                let key = (rotation, count, p.base, offset);
                regs.entry(key).or_insert_with(|| lowered.new_reg());
            }
        }
    }
    let mut paths: DenseMap<usize, Vec<Vec<usize>>> = DenseMap::new();
    let mut barriers_from_pairs = 0;
    // Sync and slot code implements no tile-IR op, even where it borrows the span of
    // the instruction it guards.
    let instr = |op: Op, prov: Provenance| lowered::Instr {
        op,
        prov: Provenance { op: None, ..prov },
        accesses: Vec::new(),
    };
    let loop_prov = |tree: &Tree, l: Option<NodeId>| Provenance {
        span: l.and_then(|l| tree.loop_head(l)).map(|h| h.span),
        step: None,
        op: None,
    };
    // What the closures below could not find: reported as an internal error after.
    let mut lost: Option<String> = None;
    let mut sync = |tree: &Tree, s: Sync| -> Vec<lowered::Instr> {
        let pid = match s {
            Sync::Barrier => return vec![instr(Op::Barrier { pipe: None }, Provenance::default())],
            Sync::Set(p) | Sync::Wait(p) | Sync::Prime(p, _) | Sync::Drain(p, _) => p,
        };
        let Some(p) = tree.pairs.get(pid) else {
            lost.get_or_insert_with(|| format!("a sync node of pair {pid}, which does not exist"));
            return Vec::new();
        };
        let beyond = matches!(s, Sync::Prime(_, k) | Sync::Drain(_, k) if k >= p.ids.count());
        if p.removed || beyond {
            return Vec::new();
        }
        if p.barrier {
            if tree.barrier_at(pid, s) {
                barriers_from_pairs += 1;
                return vec![instr(Op::Barrier { pipe: None }, p.wait_prov)];
            }
            return Vec::new();
        }
        let id = match p.ids {
            Ids::Static => Val::Imm(p.base as i64),
            Ids::Dynamic {
                rotation,
                count,
                offsets,
            } => match regs.get(&(
                rotation,
                count,
                p.base,
                match (s, offsets.unwrap_or((0, 0))) {
                    (Sync::Set(_), (kp, _)) => kp,
                    (_, (_, kc)) => kc,
                },
            )) {
                Some(r) => Val::Reg(*r),
                None => {
                    lost.get_or_insert_with(|| {
                        format!("no id register for the dynamic ids of pair {pid}")
                    });
                    Val::Imm(p.base as i64)
                }
            },
        };
        let (src, dst) = (p.src, p.dst);
        let op = match s {
            Sync::Set(_) => (Op::SetFlag { src, dst, id }, p.set_prov),
            Sync::Wait(_) => (Op::WaitFlag { src, dst, id }, p.wait_prov),
            Sync::Prime(_, k) => (
                Op::SetFlag {
                    src,
                    dst,
                    id: Val::Imm((p.base + k) as i64),
                },
                loop_prov(tree, p.carried),
            ),
            Sync::Drain(_, k) => (
                Op::WaitFlag {
                    src,
                    dst,
                    id: Val::Imm((p.base + k) as i64),
                },
                loop_prov(tree, p.carried),
            ),
            Sync::Barrier => (Op::Barrier { pipe: None }, Provenance::default()),
        };
        vec![instr(op.0, op.1)]
    };
    let mut top = |tree: &Tree, l: NodeId| -> Vec<lowered::Instr> {
        let Some(h) = tree.loop_head(l) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut mine: Vec<_> = regs.iter().filter(|((n, ..), _)| *n == l).collect();
        mine.sort_by_key(|(key, _)| **key);
        for ((_, count, base, offset), r) in mine {
            let prov = Provenance {
                span: Some(h.span),
                step: None,
                op: None,
            };
            // `(counter + offset) % count`: the slot of an explicit slot index.
            let counter = if *offset > 0 {
                out.push(instr(
                    Op::Alu {
                        op: AluOp::Add,
                        dst: *r,
                        a: h.counter,
                        b: Val::Imm(*offset as i64),
                    },
                    prov,
                ));
                *r
            } else {
                h.counter
            };
            out.push(instr(
                Op::Alu {
                    op: AluOp::Rem,
                    dst: *r,
                    a: counter,
                    b: Val::Imm(*count as i64),
                },
                prov,
            ));
            if *base > 0 {
                out.push(instr(
                    Op::Alu {
                        op: AluOp::Add,
                        dst: *r,
                        a: *r,
                        b: Val::Imm(*base as i64),
                    },
                    prov,
                ));
            }
        }
        out
    };
    let mut record = |s: Sync, path: Vec<usize>| {
        if let Sync::Set(p) | Sync::Wait(p) | Sync::Prime(p, _) | Sync::Drain(p, _) = s {
            paths.entry(p).or_default().push(path);
        }
    };
    let pairs = tree.pairs.clone();
    let loop_ids: DenseMap<NodeId, LoopId> = tree
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| match &n.kind {
            Kind::Loop(h, _) => Some((i, h.id)),
            _ => None,
        })
        .collect();
    lowered.body = tree.into_items(&mut sync, &mut top, &mut record)?;
    if let Some(what) = lost {
        return Err(internal(what));
    }
    report.barriers += barriers_from_pairs;
    // Index in `report.pairs` of each live pair, for the chains of the removed ones.
    let mut live_index = vec![None; pairs.len()];
    for (n, i) in (0..pairs.len()).filter(|&i| pairs[i].live()).enumerate() {
        live_index[i] = Some(n);
    }
    // Pairs that ordered an id reuse and turned out redundant were never a hazard's.
    for p in pairs
        .iter()
        .filter(|p| p.removed && !p.barrier && !p.orders_ids)
    {
        report.removed.push(RemovedPair {
            src: p.src,
            dst: p.dst,
            hazard: p.hazard.map(|(k, _)| k),
            buffer: p.hazard.and_then(|(_, t)| target_name(lowered, t)),
            buffer_span: p.hazard.and_then(|(_, t)| target_span(lowered, t)),
            producer: p.set_prov,
            consumer: p.wait_prov,
            covered_by: covering_chain(&pairs, p.src, p.dst)
                .into_iter()
                .filter_map(|i| live_index.get(i).copied().flatten())
                .collect(),
        });
    }
    for (i, p) in pairs.iter().enumerate() {
        if !p.live() {
            continue;
        }
        let Some(mut ps) = paths.remove(&i) else {
            return Err(internal(format!(
                "pair {i} has no set or wait in the program"
            )));
        };
        ps.sort();
        report.pairs.push(PairInfo {
            src: p.src,
            dst: p.dst,
            ids: (p.base..p.base + p.ids.count()).collect(),
            dynamic: matches!(p.ids, Ids::Dynamic { .. }),
            loop_carried: p.carried.and_then(|l| loop_ids.get(&l).copied()),
            rotates_with: match p.ids {
                Ids::Dynamic { rotation, .. } => loop_ids.get(&rotation).copied(),
                Ids::Static => None,
            },
            slot_offsets: match p.ids {
                Ids::Dynamic {
                    offsets: Some((kp, kc)),
                    ..
                } => Some([kp, kc]),
                _ => None,
            },
            reason: p.reason,
            hazard: p.hazard.map(|(k, _)| k),
            buffer: p.hazard.and_then(|(_, t)| target_name(lowered, t)),
            buffer_span: p.hazard.and_then(|(_, t)| target_span(lowered, t)),
            region: p.hazard.and_then(|(_, t)| target_region(lowered, t)),
            producer: p.set_prov,
            consumer: p.wait_prov,
            paths: ps,
        });
    }
    Ok(())
}

/// `lowered` without the instructions of one inserted pair (for showing that each pair
/// is needed: the simulator must then report a race or a flag error).
pub fn without_pair(lowered: &Lowered, pair: &PairInfo) -> Lowered {
    let mut out = lowered.clone();
    let mut paths = pair.paths.clone();
    // Later paths first, so removing one leaves the others valid.
    paths.sort();
    for p in paths.iter().rev() {
        remove_at(&mut out.body, p);
    }
    out
}

fn remove_at(items: &mut Vec<Item>, path: &[usize]) {
    match path {
        [] => {}
        [i] => {
            if *i < items.len() {
                items.remove(*i);
            }
        }
        [i, rest @ ..] => {
            if let Some(Item::Loop(l)) = items.get_mut(*i) {
                remove_at(&mut l.body, rest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(src: Pipe, dst: Pipe, removed: bool) -> tree::Pair {
        tree::Pair {
            src,
            dst,
            ids: Ids::Static,
            carried: None,
            nest_wide: false,
            reason: Reason::Hazard,
            hazard: None,
            nodes: Vec::new(),
            removed,
            barrier: false,
            base: 0,
            set_prov: Default::default(),
            wait_prov: Default::default(),
            orders_ids: false,
            serves: None,
        }
    }

    #[test]
    fn a_removed_pair_is_covered_by_the_shortest_chain_of_placed_pairs() {
        let pairs = [
            pair(Pipe::MTE2, Pipe::V, false),
            pair(Pipe::V, Pipe::MTE3, false),
            pair(Pipe::MTE2, Pipe::MTE3, true),
            pair(Pipe::MTE1, Pipe::M, false),
        ];
        assert_eq!(covering_chain(&pairs, Pipe::MTE2, Pipe::MTE3), vec![0, 1]);
        // The removed pair itself is no part of a chain.
        assert_eq!(covering_chain(&pairs, Pipe::MTE2, Pipe::V), vec![0]);
        assert!(covering_chain(&pairs, Pipe::V, Pipe::MTE2).is_empty());
    }
}
