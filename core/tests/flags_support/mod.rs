//! An independent check of event ids on a simulated run: every `set_flag` of a flag
//! happens after the `wait_flag` that consumed the flag's previous set. Otherwise, with
//! other timings, the set could find the flag still set, or the earlier wait could
//! consume it. Happens-before is rebuilt from the run's trace and flag events alone
//! (each pipe's instructions in order, a set before the wait that consumed it,
//! `pipe_barrier ALL` between what was dispatched before and after it), trusting neither
//! insert-sync's reasoning nor the simulator's race detector. The simulator itself
//! reports a set on a set flag only when the run's timing makes it happen.
#![allow(dead_code)]

use std::collections::HashMap;
use tilescope::isa::{Op, Program};
use tilescope::sim::{FlagEvent, TraceEntry};
use tilescope::types::Pipe;

/// A flag's set: its event, its trace entry, and the entry of the wait that consumed it.
type Use<'a> = (&'a FlagEvent, usize, Option<usize>);

/// Every set of a flag not ordered after the wait of the flag's previous use, as text.
/// The trace must be whole (`trace_truncated` false) and `pipe_barrier ALL` must take
/// a cycle or more (every preset's `sync_cycles`).
pub fn unordered_flag_reuses(
    program: &Program,
    trace: &[TraceEntry],
    flags: &[FlagEvent],
) -> Vec<String> {
    let n = trace.len();
    let pipes = Pipe::ALL.len();
    // Each pipe's entries in execution order (S: only barriers matter).
    let mut on_pipe: Vec<Vec<usize>> = vec![Vec::new(); pipes];
    for (k, e) in trace.iter().enumerate() {
        on_pipe[e.pipe.index()].push(k);
    }
    for seq in &mut on_pipe {
        seq.sort_by_key(|&k| (trace[k].start, trace[k].end));
    }
    let mut seq_no = vec![0u32; n];
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for seq in on_pipe.iter().skip(1) {
        for (i, &k) in seq.iter().enumerate() {
            seq_no[k] = i as u32 + 1;
            if i > 0 {
                preds[k].push(seq[i - 1]);
            }
        }
    }
    // A set's entry by (pipe, instruction, end), a wait's by (pipe, instruction, start).
    let mut by_end = HashMap::new();
    let mut by_start = HashMap::new();
    for (k, e) in trace.iter().enumerate() {
        by_end.insert((e.pipe, e.index, e.end), k);
        by_start.insert((e.pipe, e.index, e.start), k);
    }
    let mut uses: Vec<Use> = Vec::new();
    for f in flags {
        let Some(&set) = by_end.get(&(f.src, f.set_instr, f.set_cycle)) else {
            return vec![format!("no trace entry for the set of {f:?}")];
        };
        let wait = match (f.wait_instr, f.wait_cycle) {
            (Some(i), Some(c)) => match by_start.get(&(f.dst, i, c)) {
                Some(&w) => Some(w),
                None => return vec![format!("no trace entry for the wait of {f:?}")],
            },
            _ => None,
        };
        if let Some(w) = wait {
            preds[w].push(set);
        }
        uses.push((f, set, wait));
    }
    // `pipe_barrier ALL`: after every entry dispatched before it, before every entry
    // dispatched after it.
    for (k, e) in trace.iter().enumerate() {
        let barrier = e.pipe == Pipe::S
            && matches!(
                program.instrs.get(e.index as usize).map(|i| &i.op),
                Some(Op::Barrier { pipe: None })
            );
        if !barrier {
            continue;
        }
        for seq in on_pipe.iter().skip(1) {
            if let Some(&before) = seq.iter().rev().find(|&&j| trace[j].dispatch < e.end) {
                preds[k].push(before);
            }
            if let Some(&after) = seq.iter().find(|&&j| trace[j].dispatch >= e.end) {
                preds[after].push(k);
            }
        }
    }
    // Vector clocks in topological order.
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut missing = vec![0usize; n];
    for (k, ps) in preds.iter().enumerate() {
        missing[k] = ps.len();
        for &p in ps {
            succs[p].push(k);
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&k| missing[k] == 0).collect();
    let mut clock = vec![[0u32; 7]; n];
    let mut done = 0;
    while let Some(k) = ready.pop() {
        done += 1;
        let mut c = [0u32; 7];
        for &p in &preds[k] {
            for (a, b) in c.iter_mut().zip(&clock[p]) {
                *a = (*a).max(*b);
            }
        }
        let own = trace[k].pipe.index();
        c[own] = c[own].max(seq_no[k]);
        clock[k] = c;
        for &s in &succs[k] {
            missing[s] -= 1;
            if missing[s] == 0 {
                ready.push(s);
            }
        }
    }
    if done != n {
        return vec!["the trace's order has a cycle".to_string()];
    }
    let mut out = Vec::new();
    let mut by_flag: HashMap<(Pipe, Pipe, u32), Vec<Use>> = HashMap::new();
    for u in uses {
        by_flag
            .entry((u.0.src, u.0.dst, u.0.id))
            .or_default()
            .push(u);
    }
    for ((src, dst, id), mut list) in by_flag {
        list.sort_by_key(|u| u.0.set_cycle);
        for w in list.windows(2) {
            let (prev, next) = (&w[0], &w[1]);
            let ordered = prev
                .2
                .is_some_and(|wait| clock[next.1][dst.index()] >= seq_no[wait]);
            if !ordered {
                out.push(format!(
                    "set_flag({src}, {dst}, {id}) #{} at cycle {} is not ordered after the wait of #{}'s set at cycle {}",
                    next.0.set_instr, next.0.set_cycle, prev.0.set_instr, prev.0.set_cycle
                ));
            }
        }
    }
    out.sort();
    out
}
