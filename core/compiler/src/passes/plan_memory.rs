//! plan-memory: gives every on-chip tile an address. Lifetimes come from the program
//! linearised in order (a tile read inside a loop it was not defined in lives to that
//! loop's end; loop-carried tiles live across their loops; multi-buffered tiles across
//! their rotating loop). Tiles are placed in slabs: a tile reuses the slab of tiles that
//! are all dead before it is defined (growing it when the tile is larger), so tiles
//! sharing addresses share one slab and the
//! per-pipe program (one buffer per slab) never has two buffers that alias; slabs are
//! shared only when the kernel does not fit without sharing. An N-slot
//! tile gets a slab of N slots. Fused ops get a scratch slab for their intermediates.

use super::{Context, Pass};
use crate::dense::DenseMap;
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::analysis::{align_up, fused_layout};
use crate::ir::liveness::Liveness;
use crate::ir::memory::{MemoryPlan, Slab};
use crate::ir::{Kernel, OpId, OpKind, ValueDef, ValueId, ValueMap};
use crate::machine::Machine;
use crate::types::MemSpace;

pub struct PlanMemory;

impl Pass for PlanMemory {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Planned;

    fn name(&self) -> &'static str {
        "plan-memory"
    }

    fn description(&self) -> &'static str {
        "address every on-chip tile, reusing the space of dead tiles, N addresses for N slots"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        let k = cx.ir_mut(self.name())?;
        let plan = plan(k, &machine).map_err(|d| vec![d])?;
        for (v, &s) in &plan.tile_slab {
            let slab = &plan.slabs[s];
            if let Some(val) = k.values.get_mut(v) {
                val.attrs.addresses = slab.addrs();
                // A tile in a slot of a `buffers` tile has its buffer's slots.
                if slab.slots > 1 && val.attrs.slots.is_none() {
                    val.attrs.slots = Some(slab.slots);
                }
            }
        }
        for (op, &s) in &plan.scratch_slab {
            let slab = &plan.slabs[s];
            k.annotations.scratch.insert(op, (slab.bytes, slab.addr));
        }
        k.memory = Some(plan);
        Ok(())
    }
}

struct UnionFind(Vec<usize>);

impl UnionFind {
    fn find(&mut self, mut x: usize) -> usize {
        while let Some(&p) = self.0.get(x) {
            if p == x {
                break;
            }
            x = p;
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if let Some(slot) = self.0.get_mut(ra.max(rb)) {
            *slot = ra.min(rb);
        }
    }
}

struct Item {
    members: Vec<ValueId>,
    scratch_of: Option<OpId>,
    space: MemSpace,
    bytes: u64,
    slots: u32,
    rotates_with: Option<OpId>,
    start: u64,
    end: u64,
    /// Where its first tile is defined in program order: ties of `start` and `end` go
    /// by it, so the plan follows the printed IR, not the order values were created in.
    def: u64,
    span: crate::diag::Span,
}

/// A compiler bug found while planning: a diagnostic that says so, never a silent default.
fn internal(what: &str, span: crate::diag::Span) -> Diagnostic {
    Diagnostic::error(format!("internal error in plan-memory: {what}"), span)
}

/// Plans memory for `k` on `machine`: the slabs and which tile lives in which.
/// Plans with every tile in a slab of its own when that fits, so no tile waits for an
/// unrelated dead tile's last reader before it is written (a false write-after-read
/// dependence the sync pass would order); otherwise tiles reuse dead tiles' slabs.
pub fn plan(k: &Kernel, machine: &Machine) -> Result<MemoryPlan, Diagnostic> {
    plan_with(k, machine, false).or_else(|_| plan_with(k, machine, true))
}

fn plan_with(k: &Kernel, machine: &Machine, reuse: bool) -> Result<MemoryPlan, Diagnostic> {
    let live = Liveness::new(k)?;
    let lin = &live.lin;
    let names = crate::ir::print::value_names(k);
    // A loop's init, block argument, yield and result share one slab: the lowering
    // updates carried state in place. out-of-ssa made every such group safe to share
    // (copies where they interfere); the plan verifier checks it did.
    let mut uf = UnionFind((0..k.values.len()).collect());
    let mut fused = Vec::new();
    k.walk_ops(|id, op| {
        for group in op.carried_groups() {
            for w in group.windows(2) {
                uf.union(w[0].index(), w[1].index());
            }
        }
        if let OpKind::Fused { .. } = op.kind {
            fused.push(id);
        }
    });
    // A `buffers` tile's slots hold its members (`ir::slots`): one slab of its slots.
    for (member, buf) in crate::ir::slots::members(k, &live).iter() {
        uf.union(member.index(), buf.index());
    }
    let interval = |v: ValueId| live.interval(v);
    // Items: one per loop-carried group or tile, one per fused scratch.
    let mut groups: DenseMap<usize, Item> = DenseMap::new();
    let mut order: Vec<usize> = Vec::new();
    for (v, val) in k.values.iter() {
        let Some(space) = val.space else { continue };
        if val.ty.rank() == 0 || space == MemSpace::GM {
            continue;
        }
        let Some((mut s, mut e)) = interval(v) else {
            continue;
        };
        let def = s;
        let Some((dloops, span)) = live.def_site(v) else {
            continue;
        };
        let slots = val.attrs.slots.unwrap_or(1).max(1);
        // Explicit slots are picked by their index expressions, not by a loop.
        // The innermost loop around the definition that rotates slots: a tile defined
        // in an `if` region (or a one-iteration loop) of a multi-buffered loop takes
        // that loop's slot.
        let rotates_with = if slots > 1 && !crate::ir::slots::is_buffers(k, v) {
            dloops
                .iter()
                .rev()
                .find(|l| k.annotations.rotation.contains_key(l))
                .or(dloops.last())
                .copied()
        } else {
            None
        };
        if let Some(l) = rotates_with {
            if let Some(&(ls, le)) = lin.range.get(&l) {
                s = s.min(ls);
                e = e.max(le);
            }
        }
        let root = uf.find(v.index());
        let bytes = val.ty.bytes();
        match groups.get_mut(&root) {
            Some(item) => {
                item.members.push(v);
                item.start = item.start.min(s);
                item.end = item.end.max(e);
                item.bytes = item.bytes.max(bytes);
                item.slots = item.slots.max(slots);
                item.def = item.def.min(def);
            }
            None => {
                order.push(root);
                groups.insert(
                    root,
                    Item {
                        members: vec![v],
                        scratch_of: None,
                        space,
                        bytes,
                        slots,
                        rotates_with,
                        start: s,
                        end: e,
                        def,
                        span,
                    },
                );
            }
        }
    }
    let mut items: Vec<Item> = order
        .into_iter()
        .filter_map(|r| groups.remove(&r))
        .collect();
    // Members in program order (a loop's block argument before its result), so the
    // lowered program lists a buffer's tiles as the IR prints them.
    for item in &mut items {
        item.members.sort_by_key(|&v| {
            let result = matches!(
                k.values.get(v).map(|x| x.def),
                Some(ValueDef::Result { .. })
            );
            (interval(v).map(|i| i.0), result)
        });
    }
    // A loop-carried group lives across every loop it is carried through.
    for item in &mut items {
        if item.members.len() > 1 {
            for (_, range) in lin.range.iter() {
                if item.start <= range.1 && range.0 <= item.end && item.start > range.0 {
                    item.start = range.0;
                }
            }
        }
    }
    let ub_align = machine.memories.get(MemSpace::UB).alignment;
    for id in fused {
        let Some(op) = k.ops.get(id) else { continue };
        let OpKind::Fused { args, expr } = &op.kind else {
            continue;
        };
        let shapes: Option<Vec<Vec<u64>>> = args
            .iter()
            .map(|a| k.values.get(*a).map(|x| x.ty.shape.clone()))
            .collect();
        let result = op.results.first().and_then(|r| k.values.get(*r));
        let (Some(shapes), Some(result)) = (shapes, result) else {
            return Err(internal(
                "a fused op with a missing operand or result",
                op.span,
            ));
        };
        let elem = result.ty.dtype.bytes();
        let layout = fused_layout(expr, &shapes, elem, ub_align);
        if layout.scratch_bytes == 0 {
            continue;
        }
        let Some(&p) = lin.pos.get(&id) else {
            return Err(internal("a fused op without a position", op.span));
        };
        items.push(Item {
            members: Vec::new(),
            scratch_of: Some(id),
            space: MemSpace::UB,
            bytes: layout.scratch_bytes,
            slots: 1,
            rotates_with: None,
            start: p,
            end: p,
            def: p,
            span: op.span,
        });
    }
    items.sort_by_key(|i| (i.start, i.end, i.def));
    // Greedy best-fit into slabs of dead tiles.
    let mut plan = MemoryPlan::default();
    let mut free_after: Vec<u64> = Vec::new();
    let mut first_span: Vec<crate::diag::Span> = Vec::new();
    for item in &items {
        let align = machine.memories.get(item.space).alignment;
        let need = align_up(item.bytes.max(1), align);
        let reusable = reuse && item.slots == 1 && item.scratch_of.is_none();
        let free: Vec<(usize, u64)> = if reusable {
            plan.slabs
                .iter()
                .enumerate()
                .filter(|(i, s)| {
                    s.space == item.space
                        && s.slots == 1
                        && s.scratch_of.is_none()
                        && free_after.get(*i).is_some_and(|&f| f < item.start)
                })
                .map(|(i, s)| (i, s.bytes))
                .collect()
        } else {
            Vec::new()
        };
        // The smallest free slab that holds the tile; else the largest free one, grown
        // to hold it (addresses are given after every tile has its slab): a tile larger
        // than those dead before it still takes their space.
        let found = free
            .iter()
            .filter(|(_, b)| *b >= need)
            .min_by_key(|(_, b)| *b)
            .or_else(|| free.iter().max_by_key(|(_, b)| *b))
            .map(|&(i, _)| i);
        if let Some(slab) = found.and_then(|i| plan.slabs.get_mut(i)) {
            slab.bytes = slab.bytes.max(need);
        }
        let idx = match found {
            Some(i) => i,
            None => {
                plan.slabs.push(Slab {
                    space: item.space,
                    bytes: need,
                    slots: item.slots,
                    addr: 0,
                    rotates_with: item.rotates_with,
                    tiles: Vec::new(),
                    scratch_of: item.scratch_of,
                });
                free_after.push(0);
                first_span.push(item.span);
                plan.slabs.len() - 1
            }
        };
        if let Some(f) = free_after.get_mut(idx) {
            *f = item.end;
        }
        if let Some(slab) = plan.slabs.get_mut(idx) {
            slab.tiles.extend(item.members.iter().copied());
        }
        for &m in &item.members {
            plan.tile_slab.insert(m, idx);
        }
        if let Some(op) = item.scratch_of {
            plan.scratch_slab.insert(op, idx);
        }
    }
    // Addresses, space by space, and the capacity check.
    for space in MemSpace::ALL {
        let mem = machine.memories.get(space);
        let mut at = 0u64;
        let mut overflow: Option<usize> = None;
        for (i, slab) in plan.slabs.iter_mut().enumerate() {
            if slab.space != space {
                continue;
            }
            at = align_up(at, mem.alignment);
            slab.addr = at;
            at = at.saturating_add(slab.bytes.saturating_mul(slab.slots as u64));
            if mem.size.is_some_and(|cap| at > cap) && overflow.is_none() {
                overflow = Some(i);
            }
        }
        if let (Some(i), Some(cap)) = (overflow, mem.size) {
            let span = first_span.get(i).copied().unwrap_or_default();
            let space_name = space.name().to_ascii_uppercase();
            let (peak_bytes, peak) = peak_tiles(&items, space, &names);
            let buffers = buffer_list(&plan.slabs, space, &names);
            let mut error = Diagnostic::error(
                format!(
                    "{space_name} overflows: the plan needs {at} bytes but {} has {cap} bytes",
                    machine.name
                ),
                span,
            )
            .with_note(match buffers.as_slice() {
                [one] => format!("{space_name} holds 1 buffer: {one} bytes"),
                _ => format!(
                    "{space_name} holds {} buffers, one after another: {} = {at} bytes",
                    buffers.len(),
                    buffers.join(" + ")
                ),
            })
            .with_note(format!(
                "at the busiest point {peak_bytes} bytes of them are live: {}",
                peak.join(", ")
            ));
            if at > peak_bytes {
                error = error.with_note(format!(
                    "the other {} bytes are not in use at that point: buffers idle there or \
                     larger than the tile they hold there (each buffer keeps one address and \
                     size for the whole kernel), and padding to the {}-byte alignment",
                    at - peak_bytes,
                    mem.alignment
                ));
            }
            error = error
                .with_note("use smaller tiles, fewer buffer slots, or a machine with more memory");
            // The products subtile-matmul could not split, and why.
            if matches!(space, MemSpace::L0A | MemSpace::L0B | MemSpace::L0C) {
                k.walk_ops(|id, op| {
                    if let Some(why) = k.annotations.l0_whole.get(&id) {
                        error.labels.push(crate::diag::Label {
                            span: op.span,
                            message: format!("this product stays whole: {why}"),
                        });
                    }
                });
            }
            return Err(error);
        }
    }
    Ok(plan)
}

/// The bytes live where the most bytes of `space` are live, and those tiles (with
/// sizes, slots counted).
fn peak_tiles(items: &[Item], space: MemSpace, names: &ValueMap<String>) -> (u64, Vec<String>) {
    let mut best = (0u64, u64::MAX);
    for it in items.iter().filter(|i| i.space == space) {
        let p = it.start;
        let live: u64 = items
            .iter()
            .filter(|j| j.space == space && j.start <= p && p <= j.end)
            .map(|j| j.bytes * j.slots as u64)
            .sum();
        if live > best.0 {
            best = (live, p);
        }
    }
    let tiles = items
        .iter()
        .filter(|j| j.space == space && j.start <= best.1 && best.1 <= j.end)
        .map(|j| {
            let name = match (j.members.first(), j.scratch_of) {
                (Some(v), _) => value_name(names, *v),
                (None, Some(_)) => "fused scratch".to_string(),
                _ => "?".to_string(),
            };
            format!("{name} ({})", slot_bytes(j.bytes, j.slots))
        })
        .collect();
    (best.0, tiles)
}

/// Every buffer of `space` in address order, with its size and the tiles placed in it:
/// the terms of the plan's total.
fn buffer_list(slabs: &[Slab], space: MemSpace, names: &ValueMap<String>) -> Vec<String> {
    slabs
        .iter()
        .filter(|s| s.space == space)
        .map(|s| {
            let mut tiles: Vec<String> = Vec::new();
            for &v in &s.tiles {
                let name = value_name(names, v);
                if !tiles.contains(&name) {
                    tiles.push(name);
                }
            }
            if s.scratch_of.is_some() {
                tiles.push("fused scratch".into());
            }
            format!("{} [{}]", slot_bytes(s.bytes, s.slots), tiles.join(", "))
        })
        .collect()
}

fn value_name(names: &ValueMap<String>, v: ValueId) -> String {
    format!("%{}", names.get(&v).map_or("?", String::as_str))
}

fn slot_bytes(bytes: u64, slots: u32) -> String {
    if slots > 1 {
        format!("{slots} slots x {bytes}")
    } else {
        bytes.to_string()
    }
}
