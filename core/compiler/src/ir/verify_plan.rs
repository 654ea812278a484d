//! The address-plan verifier. It checks the addresses plan-memory wrote on the tile IR
//! without trusting plan-memory's live ranges, its slabs or out-of-ssa's copies: it
//! recomputes liveness from the IR alone and reports
//!
//! - two on-chip values live at the same time that share a byte of one memory (slots
//!   and fused scratch included), unless one is written over the other in place by an
//!   op the lowering computes in place, at the exact same address;
//! - a loop whose init, block argument, yield and result (which the lowering keeps in
//!   one buffer, moving nothing at the back edge) do not share one address, and a
//!   matmul whose accumulator and result do not;
//! - a tile without an address, or with another number of addresses than slots;
//! - a memory plan (the slabs lower-to-pipes declares) that disagrees with the values'
//!   spaces and addresses or the fused ops' scratch;
//! - an address past the capacity of its memory or off its alignment.
//!
//! Each error names both values by their source names with their source positions.
//! The pass manager runs it after every pass from plan-memory on, in tests, debug builds
//! and under `--verify`.

use super::{Kernel, OpId, OpKind, ValueDef, ValueId};
use crate::diag::{Location, Span, VerifierError, VerifierErrors};
use crate::machine::Machine;
use crate::types::MemSpace;

/// Whether plan-memory has run.
pub fn is_planned(k: &Kernel) -> bool {
    k.memory.is_some()
}

/// Checks the address plan of `k` for `machine`; `source` names positions in errors.
pub fn verify_plan(k: &Kernel, machine: &Machine, source: &str) -> Result<(), VerifierErrors> {
    let live = Live::new(k);
    let names = super::print::value_names(k);
    let printed = |v: ValueId| {
        names
            .get(&v)
            .map_or_else(|| format!("value {}", v.index()), |n| format!("%{n}"))
    };
    let value = |v: ValueId| Location::Value(printed(v));
    let owner = |o: Owner| match o {
        Owner::Value(v) => value(v),
        Owner::Scratch(op) => Location::Op(op.index() as u32),
    };
    let name = |v: ValueId| {
        let n = printed(v);
        match k.def_span(v) {
            Some(span) => format!("{n} (line {})", span.line_col(source)),
            None => n,
        }
    };
    let mut errors = VerifierErrors::new();
    // Lower-to-pipes declares its buffers from the plan's slabs, and this verifier reads
    // the values' addresses: the two must say the same.
    if let Some(Err(why)) = k.memory.as_ref().map(|plan| plan.agrees_with(k)) {
        errors.push(VerifierError::new(
            Location::Program,
            None,
            format!("the memory plan disagrees with the IR: {why}"),
        ));
    }
    let mut entries: Vec<Entry> = Vec::new();
    // A tile that lives in a slot of a `buffers` tile shares its bytes by design: it
    // must sit exactly at the buffer's slots, and counts as the buffer.
    let members = super::slots::members(k, &live);
    for (v, val) in k.values.iter() {
        let Some(space) = val.space else { continue };
        if val.ty.rank() == 0 || space == MemSpace::GM {
            continue;
        }
        let Some((start, end)) = live.range(v) else {
            continue; // not reachable: nothing reads or writes it
        };
        let buffer = members.get(&v).and_then(|&b| Some((b, k.values.get(b)?)));
        let owner = buffer.map_or(v, |(b, _)| b);
        let slots = buffer.map_or(val.attrs.slots, |(_, b)| b.attrs.slots);
        let slots = slots.unwrap_or(1).max(1) as usize;
        let span = k.def_span(v).unwrap_or_default();
        if let Some((b, bv)) = buffer.filter(|(_, bv)| bv.attrs.addresses != val.attrs.addresses) {
            errors.push(VerifierError::new(
                value(v),
                Some(span),
                format!(
                    "plan-memory put {}, which lives in a slot of {}, at {:x?} instead of its slots {:x?}",
                    name(v),
                    name(b),
                    val.attrs.addresses,
                    bv.attrs.addresses
                ),
            ));
            continue;
        }
        if val.attrs.addresses.len() != slots {
            errors.push(VerifierError::new(
                value(v),
                Some(span),
                format!(
                    "plan-memory gave {} {} address(es) for {slots} slot(s)",
                    name(v),
                    val.attrs.addresses.len()
                ),
            ));
            continue;
        }
        // A multi-buffered tile rotates with the loop around its definition: each of its
        // slots is in use somewhere in every iteration of that loop.
        let (start, end) = match (slots > 1).then(|| live.rotating_range(v)).flatten() {
            Some((s, e)) => (start.min(s), end.max(e)),
            None => (start, end),
        };
        let bytes = val.ty.bytes();
        for &addr in &val.attrs.addresses {
            entries.push(Entry {
                owner: Owner::Value(owner),
                space,
                addr,
                bytes,
                start,
                end,
                span,
            });
        }
    }
    for (op, &(bytes, addr)) in k.annotations.scratch.iter() {
        let Some(&Some(pos)) = live.pos.get(op.index()) else {
            continue;
        };
        let span = k.ops.get(op).map_or(Span::default(), |o| o.span);
        entries.push(Entry {
            owner: Owner::Scratch(op),
            space: MemSpace::UB,
            addr,
            bytes,
            start: pos,
            end: pos,
            span,
        });
    }
    let describe = |o: Owner| match o {
        Owner::Value(v) => name(v),
        Owner::Scratch(op) => {
            let span = k.ops.get(op).map_or(Span::default(), |x| x.span);
            format!(
                "the scratch of the fused op at line {}",
                span.line_col(source)
            )
        }
    };
    // Capacity and alignment.
    for e in &entries {
        let mem = machine.memories.get(e.space);
        let over = mem
            .size
            .is_some_and(|cap| e.addr.saturating_add(e.bytes) > cap);
        if over || (mem.alignment > 0 && e.addr % mem.alignment != 0) {
            errors.push(VerifierError::new(
                owner(e.owner),
                Some(e.span),
                format!(
                    "plan-memory put {} at {:#x} ({} bytes), outside {} of {} or off its {}-byte alignment",
                    describe(e.owner),
                    e.addr,
                    e.bytes,
                    e.space.name().to_ascii_uppercase(),
                    machine.name,
                    mem.alignment
                ),
            ));
        }
    }
    // Overlaps: entries sorted by the start of their live range, each compared with the
    // later ones that start before it ends.
    entries.sort_by_key(|e| (e.start, e.end, e.addr));
    for (i, p) in entries.iter().enumerate() {
        for q in entries.iter().skip(i + 1) {
            if q.start > p.end {
                break;
            }
            if p.space != q.space || p.addr >= q.addr + q.bytes || q.addr >= p.addr + p.bytes {
                continue;
            }
            if p.owner == q.owner || live.meets(k, p, q) || live.meets(k, q, p) {
                continue;
            }
            errors.push(VerifierError::new(
                owner(q.owner),
                Some(q.span),
                format!(
                    "plan-memory gave {} and {} overlapping bytes of {} ({:#x}..{:#x} and {:#x}..{:#x}) while both are live",
                    describe(p.owner),
                    describe(q.owner),
                    p.space.name().to_ascii_uppercase(),
                    p.addr,
                    p.addr + p.bytes,
                    q.addr,
                    q.addr + q.bytes
                ),
            ));
            if errors.len() >= crate::limits::MAX_DIAGNOSTICS {
                return Err(errors);
            }
        }
    }
    // What the lowering keeps in one buffer must have one address.
    let addrs = |v: ValueId| k.values.get(v).map(|x| x.attrs.addresses.clone());
    let tile = |v: ValueId| {
        k.values
            .get(v)
            .is_some_and(|x| x.ty.rank() > 0 && x.space.is_some_and(|s| s != MemSpace::GM))
    };
    k.walk_ops(|id, op| {
        let groups: Vec<Vec<ValueId>> = match &op.kind {
            OpKind::For(_) => op.carried_groups(),
            OpKind::MatMul { acc: Some(a), .. } => vec![[*a]
                .into_iter()
                .chain(op.results.first().copied())
                .collect()],
            _ => Vec::new(),
        };
        for g in groups {
            let Some(&first) = g.first() else { continue };
            if !tile(first) {
                continue;
            }
            if let Some(&other) = g.iter().find(|&&v| addrs(v) != addrs(first)) {
                errors.push(VerifierError::new(
                    Location::Op(id.index() as u32),
                    k.ops.get(id).map(|o| o.span),
                    format!(
                        "the lowering keeps {} and {} in one buffer, but plan-memory gave them different addresses",
                        name(first),
                        name(other)
                    ),
                ));
            }
        }
    });
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Value(ValueId),
    Scratch(OpId),
}

/// Bytes `addr .. addr + bytes` of `space`, in use from position `start` to `end`.
struct Entry {
    owner: Owner,
    space: MemSpace,
    addr: u64,
    bytes: u64,
    start: u64,
    end: u64,
    span: Span,
}

/// Positions and live ranges, computed here from the IR alone (plan-memory has its own).
struct Live {
    /// Position of each op, by op index.
    pos: Vec<Option<u64>>,
    /// Start and end position of each loop, by op index.
    range: Vec<Option<(u64, u64)>>,
    /// Definition position and enclosing loops (innermost last) of each value.
    def: Vec<Option<(u64, Vec<OpId>)>>,
    /// Use positions and enclosing loops of each value.
    uses: Vec<Vec<(u64, Vec<OpId>)>>,
}

impl super::slots::Positions for Live {
    fn pos(&self, op: OpId) -> Option<u64> {
        self.pos.get(op.index()).copied().flatten()
    }

    fn interval(&self, v: ValueId) -> Option<(u64, u64)> {
        self.range(v)
    }
}

impl Live {
    fn new(k: &Kernel) -> Live {
        let mut live = Live {
            pos: vec![None; k.ops.len()],
            range: vec![None; k.ops.len()],
            def: vec![None; k.values.len()],
            uses: vec![Vec::new(); k.values.len()],
        };
        let mut at = 0u64;
        // Frames: the ops of a block, the next index, the loop owning the block.
        let mut stack: Vec<(Vec<OpId>, usize, Option<OpId>)> =
            vec![(k.body.ops().collect(), 0, None)];
        let mut loops: Vec<OpId> = Vec::new();
        while let Some((ops, i, owner)) = stack.last_mut() {
            let Some(&id) = ops.get(*i) else {
                let owner = *owner;
                stack.pop();
                if let Some(l) = owner {
                    at += 1;
                    loops.pop();
                    let start = live
                        .range
                        .get(l.index())
                        .copied()
                        .flatten()
                        .map_or(at, |r| r.0);
                    if let Some(r) = live.range.get_mut(l.index()) {
                        *r = Some((start, at));
                    }
                    if let Some(super::Op {
                        kind: OpKind::For(f),
                        results,
                        ..
                    }) = k.ops.get(l)
                    {
                        for &y in &f.yields {
                            live.use_at(y, at, &loops, Some(l));
                        }
                        for &r in results {
                            live.def_at(r, at, &loops);
                        }
                    }
                }
                continue;
            };
            *i += 1;
            at += 1;
            if let Some(p) = live.pos.get_mut(id.index()) {
                *p = Some(at);
            }
            let Some(op) = k.ops.get(id) else { continue };
            match &op.kind {
                OpKind::For(f) => {
                    for &v in &f.inits {
                        live.use_at(v, at, &loops, None);
                    }
                    if let Some(r) = live.range.get_mut(id.index()) {
                        *r = Some((at, at));
                    }
                    loops.push(id);
                    for &a in &f.args {
                        live.def_at(a, at, &loops);
                    }
                    stack.push((f.body.ops().collect(), 0, Some(id)));
                }
                kind => {
                    for v in kind.operands() {
                        live.use_at(v, at, &loops, None);
                    }
                    for &r in &op.results {
                        live.def_at(r, at, &loops);
                    }
                }
            }
        }
        live
    }

    fn def_at(&mut self, v: ValueId, at: u64, loops: &[OpId]) {
        if let Some(d) = self.def.get_mut(v.index()) {
            *d = Some((at, loops.to_vec()));
        }
    }

    /// A use at `at` inside `loops`, plus `extra` (a yield is read inside its loop).
    fn use_at(&mut self, v: ValueId, at: u64, loops: &[OpId], extra: Option<OpId>) {
        let mut ls = loops.to_vec();
        ls.extend(extra);
        if let Some(u) = self.uses.get_mut(v.index()) {
            u.push((at, ls));
        }
    }

    /// From the definition to the last use; a use inside a loop that does not enclose
    /// the definition keeps the value live to that loop's end.
    fn range(&self, v: ValueId) -> Option<(u64, u64)> {
        let (d, dloops) = self.def.get(v.index())?.as_ref()?;
        let mut end = *d;
        for (p, uloops) in self.uses.get(v.index())? {
            end = end.max(*p);
            for l in uloops.iter().filter(|l| !dloops.contains(l)) {
                if let Some(Some((_, e))) = self.range.get(l.index()) {
                    end = end.max(*e);
                }
            }
        }
        Some((*d, end))
    }

    /// The whole of the loop that encloses `v`'s definition, which its slots rotate with.
    fn rotating_range(&self, v: ValueId) -> Option<(u64, u64)> {
        let (_, dloops) = self.def.get(v.index())?.as_ref()?;
        let l = dloops.last()?;
        self.range.get(l.index()).copied().flatten()
    }

    /// Whether `q`, defined where `p` is last used, may take `p`'s bytes there: at the
    /// same address, as the init or yield of its own loop slot, or written in place by
    /// its op.
    fn meets(&self, k: &Kernel, p: &Entry, q: &Entry) -> bool {
        let (Owner::Value(pv), Owner::Value(qv)) = (p.owner, q.owner) else {
            return false;
        };
        if p.end != q.start || p.addr != q.addr || p.bytes != q.bytes {
            return false;
        }
        // The exact ranges (not widened by slots) must meet too.
        match (self.range(pv), self.range(qv)) {
            (Some((_, pe)), Some((qs, _))) if pe == qs => {}
            _ => return false,
        }
        let Some(val) = k.values.get(qv) else {
            return false;
        };
        match val.def {
            ValueDef::LoopArg { op, index } => match k.ops.get(op).map(|o| &o.kind) {
                Some(OpKind::For(f)) => f.inits.get(index as usize) == Some(&pv),
                _ => false,
            },
            ValueDef::Result { op, index } => match k.ops.get(op) {
                Some(o) => match &o.kind {
                    OpKind::For(f) => f.yields.get(index as usize) == Some(&pv),
                    _ => super::analysis::may_overwrite(k, o, pv),
                },
                None => false,
            },
        }
    }
}
