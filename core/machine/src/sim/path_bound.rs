//! The path bound: a lower bound on the cycles of a program's run that, beside each
//! pipe's own work, counts the work that must come before the pipe can start it and
//! after it ends. The busiest-pipe bound (`run::RunResult::bound`) lets a pipe be busy
//! from cycle 0 to the end; no real kernel is, since its first product waits for loads
//! and its last store waits for the product. The path bound says how much of the gap
//! between the cycles and the busiest-pipe bound is that fill and drain, which no order
//! of these instructions removes, and how much is the schedule's.
//!
//! The dependences are the run's own: two trace entries touching a common on-chip byte,
//! one of them writing, in program order, and kept only where the run itself ran the
//! later one after the earlier one ended (an overlap in the run means the two were not
//! ordered, so the edge is not one every run must respect). Every instruction takes
//! its duration in the run without the stretch of shared GM bandwidth. GM dependences
//! are left out, which only lowers the bound. With these relaxations the run itself is
//! one of the schedules the bound ranges over, so it never exceeds the run's cycles.
//!
//! For one pipe: its instructions run one at a time; those that cannot start before
//! cycle `r` (their longest dependence path in) still take their whole duration after
//! `r`, and the last of them leaves at least the shortest path out among them. The
//! bound is the largest such figure over every `r`, every pipe and, symmetrically, every
//! length of path out.

use super::{SimResult, StallReason, TraceAccess};
use crate::types::MemSpace;
use std::collections::BTreeMap;

/// Dependences looked at before the bound gives up: a trace of `TRACE_LIMIT` entries
/// that read one tile over many segments between writes would otherwise be quadratic.
const MAX_EDGES: usize = 1 << 24;

/// The path bound of `run`, or `None` when the trace is incomplete (truncated at
/// `TRACE_LIMIT`, or not kept) or the dependences are too many to follow.
pub fn path_bound(run: &SimResult) -> Option<u64> {
    bound_with(run, true)
}

/// The path bound along the data flow alone: only a read of what an earlier entry
/// wrote orders two entries, not the reuse of storage (a write after a read or a
/// write). What more buffers or slots could reach at best, with these instructions.
pub fn dataflow_bound(run: &SimResult) -> Option<u64> {
    bound_with(run, false)
}

fn bound_with(run: &SimResult, storage: bool) -> Option<u64> {
    if run.trace_truncated || (run.trace.is_empty() && run.cycles > 0) {
        return None;
    }
    let n = run.trace.len();
    // Program order: the S pipe dispatches one instruction at a time, in order, each at
    // a later cycle than the last (dispatch and scalar work take at least a cycle).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (run.trace[i].dispatch, i));
    let duration: Vec<u64> = run
        .trace
        .iter()
        .map(|e| {
            let stretch = match e.stall {
                Some(StallReason::Bandwidth { cycles }) => cycles,
                _ => 0,
            };
            e.end.saturating_sub(e.start).saturating_sub(stretch)
        })
        .collect();
    let accesses = accesses_by_entry(&run.accesses, n);
    // Predecessors of each entry, kept only where the run ordered the pair.
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut maps: BTreeMap<MemSpace, SegmentMap> = BTreeMap::new();
    let mut looked = 0usize;
    for &i in &order {
        let mut kept = Vec::new();
        for a in accesses.get(i).map_or(&[][..], Vec::as_slice) {
            let map = maps.entry(a.space).or_default();
            map.access(a.lo, a.hi, i as u32, a.write, storage, &mut |p| {
                looked += 1;
                let p = p as usize;
                if p != i && run.trace[i].start >= run.trace[p].end {
                    kept.push(p as u32);
                }
            });
        }
        if looked > MAX_EDGES {
            return None;
        }
        kept.sort_unstable();
        kept.dedup();
        preds[i] = kept;
    }
    // Longest path into each entry (its earliest start) and out of it (after its end).
    let mut head = vec![0u64; n];
    for &i in &order {
        head[i] = preds[i]
            .iter()
            .map(|&p| head[p as usize].saturating_add(duration[p as usize]))
            .max()
            .unwrap_or(0);
    }
    let mut tail = vec![0u64; n];
    for &i in order.iter().rev() {
        let out = tail[i].saturating_add(duration[i]);
        for &p in &preds[i] {
            let p = p as usize;
            tail[p] = tail[p].max(out);
        }
    }
    let mut best = (0..n)
        .map(|i| head[i].saturating_add(duration[i]).saturating_add(tail[i]))
        .max()
        .unwrap_or(0);
    let mut by_pipe: BTreeMap<crate::types::Pipe, Vec<usize>> = BTreeMap::new();
    for (i, e) in run.trace.iter().enumerate() {
        by_pipe.entry(e.pipe).or_default().push(i);
    }
    for entries in by_pipe.values() {
        let jobs: Vec<(u64, u64, u64)> = entries
            .iter()
            .map(|&i| (head[i], duration[i], tail[i]))
            .collect();
        best = best.max(one_machine(&jobs));
        let mirrored: Vec<(u64, u64, u64)> = jobs.iter().map(|&(h, d, t)| (t, d, h)).collect();
        best = best.max(one_machine(&mirrored));
    }
    Some(best)
}

/// For jobs `(release, duration, tail)` run one at a time: the largest, over every
/// release `r`, of `r` + the durations of the jobs released at `r` or later + the
/// shortest tail among them.
fn one_machine(jobs: &[(u64, u64, u64)]) -> u64 {
    let mut sorted = jobs.to_vec();
    sorted.sort_unstable_by_key(|j| std::cmp::Reverse(j.0));
    let (mut sum, mut min_tail, mut best) = (0u64, u64::MAX, 0u64);
    for &(r, d, t) in &sorted {
        sum = sum.saturating_add(d);
        min_tail = min_tail.min(t);
        best = best.max(r.saturating_add(sum).saturating_add(min_tail));
    }
    best
}

fn accesses_by_entry(accesses: &[TraceAccess], n: usize) -> Vec<Vec<TraceAccess>> {
    let mut out = vec![Vec::new(); n];
    for a in accesses {
        if let Some(v) = out.get_mut(a.entry as usize) {
            v.push(*a);
        }
    }
    out
}

/// For one memory space: the last writer of each byte range and the readers since.
/// A `BTreeMap` from each segment's first byte to its state; a segment runs to the next
/// key. No interval-map crate keeps per-segment lists that split on partial overlap
/// the way a write needs, so this is written here.
#[derive(Default)]
struct SegmentMap {
    segments: BTreeMap<u64, Segment>,
}

#[derive(Clone, Default)]
struct Segment {
    writer: Option<u32>,
    readers: Vec<u32>,
}

impl SegmentMap {
    /// Splits the segment holding `at` so that a segment starts there.
    fn split(&mut self, at: u64) {
        if self.segments.contains_key(&at) {
            return;
        }
        let inherited = self
            .segments
            .range(..at)
            .next_back()
            .map(|(_, s)| s.clone())
            .unwrap_or_default();
        self.segments.insert(at, inherited);
    }

    /// Records entry `i`'s access of `[lo, hi)`, calling `pred` with each entry it
    /// depends on: for a read the last writer; for a write, with `storage`, the last
    /// writer and the readers since.
    fn access(
        &mut self,
        lo: u64,
        hi: u64,
        i: u32,
        write: bool,
        storage: bool,
        pred: &mut impl FnMut(u32),
    ) {
        if lo >= hi {
            return;
        }
        self.split(lo);
        self.split(hi);
        for (_, s) in self.segments.range_mut(lo..hi) {
            if let Some(w) = s.writer.filter(|_| storage || !write) {
                pred(w);
            }
            if write {
                for &r in s.readers.iter().filter(|_| storage) {
                    pred(r);
                }
                s.writer = Some(i);
                s.readers.clear();
            } else if s.readers.last() != Some(&i) {
                s.readers.push(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_machine_counts_release_work_and_tail() {
        // Two jobs released at 10 and 0, each 5 long, tails 3 and 100: the late one
        // ends no earlier than 10 + 5 + 3, both together no earlier than 0 + 10 + 3.
        assert_eq!(one_machine(&[(10, 5, 3), (0, 5, 100)]), 18);
        assert_eq!(one_machine(&[]), 0);
    }

    #[test]
    fn a_write_depends_on_the_readers_since_the_last_write() {
        let mut m = SegmentMap::default();
        let mut seen = Vec::new();
        m.access(0, 64, 0, true, true, &mut |p| seen.push(p));
        m.access(16, 32, 1, false, true, &mut |p| seen.push(p));
        m.access(48, 80, 2, false, true, &mut |p| seen.push(p));
        assert_eq!(seen, [0, 0]);
        seen.clear();
        m.access(0, 40, 3, true, true, &mut |p| seen.push(p));
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, [0, 1]);
        seen.clear();
        m.access(60, 70, 4, false, true, &mut |p| seen.push(p));
        assert_eq!(seen, [0]);
    }
}
