//! The discrete-event engine: per-pipe in-order timing, flags, caps and deadlock.
//!
//! Events are processed in global time order. At each step the engine picks the earliest
//! of: a pipe completing its in-flight instruction, a pipe starting its queue head, or the
//! S pipe walking its next instruction (ties in that order, then by pipe). There are only
//! seven pipes, so a linear scan beats a heap.
//!
//! Costs: S scalar ops and loop control `scalar_op_cycles`; dispatch `dispatch_cycles`
//! (the instruction is in its queue at the end of that cycle); sync ops `sync_cycles`;
//! DMA `startup + ceil(bytes / bandwidth)`; matmul (`mmad` by 16-row blocks, `mmv` at the
//! matrix-vector rate) and vector per the machine's `costs`.
//!
//! GM bandwidth sharing (MTE2 and MTE3 share it): while both move GM data, each
//! moves at half its own rate. When one transfer starts while the other pipe's is
//! moving, with `r` cycles of the running transfer's data and `w` of the new one's left
//! at full rate, both end `min(r, w)` cycles later than alone: the shorter finishes after
//! twice its time, the longer then continues alone. The pipes never move more than one
//! full-rate transfer's worth of data per cycle together, which makes the sum of their
//! full-rate transfer times a lower bound on any run (`SimResult::gm_transfer_cycles`).

use super::exec::{self, Scratch};
use super::flags::{self, FlagTable, SetFlag};
use super::memory::{self, Memory, Resolved};
use super::race::RaceDetector;
use super::stalls::{Blocked, BlockedTotals, IdleLedger};
use super::{
    BranchCount, BranchRun, FlagEvent, InstrRef, Output, PipeStats, SimError, SimErrorKind,
    SimResult, StallReason, TraceAccess, TraceEntry, TRACE_LIMIT,
};
use crate::isa::{AluOp, Op, Program, Region, Val, NUM_REGS, SPILL_SLOTS};
use crate::machine::Machine;
use crate::tensor::Tensor;
use crate::types::{DType, MemSpace, Pipe};
use std::collections::VecDeque;

/// The bytes one GM burst moves: a DMA whose innermost dimension skips GM elements
/// reads (or writes) up to a burst per element, as a DMA engine fetching 32-byte
/// blocks does (Ascend's DataCopy granularity).
const GM_BURST_BYTES: u64 = 32;

#[derive(Clone, Copy)]
struct Dyn {
    idx: u32,
    dispatch: u64,
    res: Resolved,
    queue_stall: u64,
    /// The S pipe's blocked totals when it dispatched this.
    handed: BlockedTotals,
}

#[derive(Clone, Copy)]
struct Inflight {
    d: Dyn,
    start: u64,
    end: u64,
    stall: Option<StallReason>,
    /// Cycles added by sharing GM bandwidth.
    shared: u64,
}

#[derive(Default)]
struct PipeState {
    queue: VecDeque<Dyn>,
    inflight: Option<Inflight>,
    free_at: u64,
    busy: u64,
    /// The part of `busy` added by sharing GM bandwidth.
    shared: u64,
    count: u64,
    /// When this pipe's current GM transfer (MTE2 / MTE3) starts and ends moving data,
    /// for bandwidth sharing.
    gm_from: u64,
    gm_until: u64,
    idle: IdleLedger,
}

struct Frame {
    body: usize,
    counter: usize,
    iter: i64,
    count: i64,
}

pub struct Cost {
    pub cycles: u64,
    /// Cycles spent moving bytes (after the startup latency), for bandwidth sharing.
    transfer: u64,
    startup: u64,
    gm_bytes: u64,
}

pub struct Engine<'a> {
    prog: &'a Program,
    machine: &'a Machine,
    mem: Memory,
    functional: bool,
    keep_trace: bool,
    scratch: Scratch,
    /// Reused by every `memory::accesses` call.
    acc: memory::Accesses,
    /// Each instruction's pipe (`Op::pipe` is a large match, asked several times per
    /// simulated instruction).
    instr_pipe: Vec<Pipe>,
    pipes: [PipeState; 7],
    pc: usize,
    stack: Vec<Frame>,
    regs: [i64; NUM_REGS as usize],
    spill: [i64; SPILL_SLOTS as usize],
    /// When the S pipe is next free.
    s_time: u64,
    /// The S pipe's blocked cycles so far, per cause (`stalls.rs`).
    s_blocked: BlockedTotals,
    s_done: bool,
    /// For each `loop` the index of its `endloop` (and back).
    matching: Vec<usize>,
    now: u64,
    flags: FlagTable,
    race: RaceDetector,
    out: SimResult,
    fatal: bool,
}

fn div_ceil_f(bytes: u64, bw: f64) -> u64 {
    // Bandwidths are validated positive; the result is bounded by bytes * 1000.
    (bytes as f64 / bw).ceil() as u64
}

fn pipe_of(i: usize) -> Pipe {
    Pipe::ALL.get(i).copied().unwrap_or(Pipe::S)
}

impl<'a> Engine<'a> {
    pub fn new(
        prog: &'a Program,
        machine: &'a Machine,
        mem: Memory,
        mode: super::SimMode,
    ) -> Engine<'a> {
        let mut matching = vec![0; prog.instrs.len()];
        let mut open = Vec::new();
        for (i, ins) in prog.instrs.iter().enumerate() {
            match ins.op {
                Op::Loop { .. } => open.push(i),
                Op::EndLoop => {
                    // Balanced loops were validated before the engine is built.
                    if let Some(l) = open.pop() {
                        matching[l] = i;
                        matching[i] = l;
                    }
                }
                _ => {}
            }
        }
        Engine {
            prog,
            machine,
            mem,
            functional: mode.functional,
            keep_trace: mode.trace,
            scratch: Scratch::default(),
            acc: memory::Accesses::default(),
            instr_pipe: prog.instrs.iter().map(|i| i.op.pipe()).collect(),
            pipes: Default::default(),
            pc: 0,
            stack: Vec::new(),
            regs: [0; NUM_REGS as usize],
            spill: [0; SPILL_SLOTS as usize],
            s_time: 0,
            s_blocked: [0; 2],
            s_done: prog.instrs.is_empty(),
            matching,
            now: 0,
            flags: FlagTable::default(),
            race: RaceDetector::new(prog),
            out: SimResult {
                branches: prog
                    .branches
                    .iter()
                    .map(|b| BranchCount {
                        instr: b.instr,
                        runs: 0,
                        taken: 0,
                    })
                    .collect(),
                ..SimResult::default()
            },
            fatal: false,
        }
    }

    fn op(&self, idx: u32) -> &'a Op {
        let prog: &'a Program = self.prog;
        match prog.instrs.get(idx as usize) {
            Some(i) => &i.op,
            None => &Op::EndLoop,
        }
    }

    fn error(
        &mut self,
        kind: SimErrorKind,
        message: String,
        instr: Option<u32>,
        related: &[u32],
        fatal: bool,
    ) {
        let prog = self.prog;
        self.out.errors.push(SimError {
            kind,
            message,
            instr: instr.map(|i| InstrRef::new(prog, i)),
            related: related.iter().map(|&i| InstrRef::new(prog, i)).collect(),
            cycle: self.now,
        });
        self.fatal |= fatal;
    }

    fn trace(&mut self, e: TraceEntry) {
        if !self.keep_trace {
            return;
        }
        if self.out.trace.len() < TRACE_LIMIT {
            self.out.trace.push(e);
        } else {
            self.out.trace_truncated = true;
        }
    }

    /// Counts the decision of an `if` region's `loop` (nothing for other loops).
    fn count_branch(&mut self, idx: u32, cycle: u64, taken: bool) {
        let Ok(at) = self.out.branches.binary_search_by_key(&idx, |b| b.instr) else {
            return;
        };
        if let Some(b) = self.out.branches.get_mut(at) {
            b.runs += 1;
            b.taken += u64::from(taken);
        }
        if self.keep_trace && self.out.branch_runs.len() < TRACE_LIMIT {
            self.out.branch_runs.push(BranchRun {
                instr: idx,
                cycle,
                taken,
            });
        }
    }

    /// Keeps the on-chip part of `self.acc` for the trace entry about to be pushed.
    fn record_accesses(&mut self) {
        if !self.keep_trace || self.out.trace.len() >= TRACE_LIMIT {
            return;
        }
        // TRACE_LIMIT fits in u32.
        let entry = self.out.trace.len() as u32;
        for a in self.acc.iter() {
            if let Region::Buf(space) = a.region {
                self.out.accesses.push(TraceAccess {
                    entry,
                    space,
                    lo: a.fp.lo,
                    hi: a.fp.hi,
                    write: a.write,
                });
            }
        }
    }

    fn flag_key(&self, d: &Dyn) -> usize {
        match self.op(d.idx) {
            Op::SetFlag { src, dst, .. } | Op::WaitFlag { src, dst, .. } => {
                flags::key(*src, *dst, d.res.val[0] as u32)
            }
            _ => 0,
        }
    }

    /// When pipe `p` next acts: (time, 0) to complete, (time, 1) to start its queue head;
    /// `None` if idle or blocked on a flag.
    fn candidate(&self, p: usize) -> Option<(u64, u8)> {
        let ps = self.pipes.get(p)?;
        if let Some(f) = &ps.inflight {
            return Some((f.end, 0));
        }
        let h = ps.queue.front()?;
        let mut t = ps.free_at.max(h.dispatch);
        if matches!(self.op(h.idx), Op::WaitFlag { .. }) {
            t = t.max(self.flags.get(self.flag_key(h))?.cycle);
        }
        Some((t, 1))
    }

    pub fn run(mut self) -> SimResult {
        let max_cycles = self.machine.limits.max_cycles;
        // Cached per-pipe candidates, refreshed only for the pipes an action touches.
        let mut cand: [Option<(u64, u8)>; 7] = [None; 7];
        while !self.fatal {
            // (time, priority, pipe): completions, then starts, then the S pipe.
            let mut best: Option<(u64, u8, usize)> = None;
            for (p, c) in cand.iter().enumerate().skip(1) {
                if let Some((t, pr)) = *c {
                    if best.is_none_or(|b| (t, pr, p) < b) {
                        best = Some((t, pr, p));
                    }
                }
            }
            if let Some(t) = self.s_ready() {
                if best.is_none_or(|b| (t, 2, 0) < b) {
                    best = Some((t, 2, 0));
                }
            }
            let Some((t, prio, p)) = best else { break };
            if t > max_cycles {
                self.error(
                    SimErrorKind::CycleLimit,
                    format!("the run passed the cycle limit of {max_cycles} (limits.max_cycles)"),
                    None,
                    &[],
                    true,
                );
                break;
            }
            self.now = t;
            let touched = match prio {
                0 => self.complete(p),
                1 => self.start(p),
                _ => self.s_step(t),
            };
            if prio < 2 {
                cand[p] = self.candidate(p);
            }
            if let Some(q) = touched {
                if let Some(c) = cand.get_mut(q) {
                    *c = self.candidate(q);
                }
            }
        }
        self.finish()
    }

    /// When the S pipe can take its next step, or `None` if it is done or blocked.
    fn s_ready(&mut self) -> Option<u64> {
        if self.s_done {
            return None;
        }
        let Some(ins) = self.prog.instrs.get(self.pc) else {
            self.s_done = true;
            return None;
        };
        let t = self.s_time.max(self.now);
        match &ins.op {
            Op::Barrier { pipe: None } => {
                let drained = self
                    .pipes
                    .iter()
                    .all(|p| p.queue.is_empty() && p.inflight.is_none());
                drained.then(|| self.pipes.iter().map(|p| p.free_at).fold(t, u64::max))
            }
            _ => {
                let pipe = self.instr_pipe.get(self.pc).copied().unwrap_or(Pipe::S);
                if pipe != Pipe::S
                    && self.pipes[pipe.index()].queue.len()
                        >= self.machine.queue_depth.get(pipe) as usize
                {
                    None
                } else {
                    Some(t)
                }
            }
        }
    }

    fn reg(&self, v: Val) -> i64 {
        match v {
            Val::Imm(i) => i,
            Val::Reg(r) => self.regs.get(r.0 as usize).copied().unwrap_or(0),
        }
    }

    fn set_reg(&mut self, r: crate::isa::Reg, v: i64) {
        if let Some(x) = self.regs.get_mut(r.0 as usize) {
            *x = v;
        }
    }

    /// Why the S pipe cannot take the instruction at `pc` now, if it is blocked: only a
    /// barrier waiting for the pipes to drain, or a full queue, holds it.
    fn s_cause(&self) -> Blocked {
        match self.prog.instrs.get(self.pc).map(|i| &i.op) {
            Some(Op::Barrier { pipe: None }) => Blocked::Barrier,
            _ => Blocked::QueueFull,
        }
    }

    /// The S pipe's blocked totals at `now`, the stretch it is blocked in included.
    /// Events run in time order, so an S pipe free before `now` that has not stepped
    /// is blocked.
    fn blocked_now(&self) -> BlockedTotals {
        let mut totals = self.s_blocked;
        if !self.s_done && self.s_time < self.now {
            totals[self.s_cause() as usize] += self.now - self.s_time;
        }
        totals
    }

    /// Walks one instruction; returns the pipe it dispatched to.
    fn s_step(&mut self, t: u64) -> Option<usize> {
        let idx = self.pc as u32;
        if t > self.s_time {
            let cause = self.s_cause();
            self.s_blocked[cause as usize] += t - self.s_time;
            self.pipes[0]
                .idle
                .s_blocked(cause, self.s_time, t - self.s_time);
        }
        self.out.instructions += 1;
        if self.out.instructions > self.machine.limits.max_instructions {
            let lim = self.machine.limits.max_instructions;
            self.error(
                SimErrorKind::InstructionLimit,
                format!("the run passed the limit of {lim} simulated instructions (limits.max_instructions)"),
                Some(idx),
                &[],
                true,
            );
            return None;
        }
        let prog: &'a Program = self.prog;
        let ins = prog.instrs.get(self.pc)?;
        let costs = &self.machine.costs;
        let scalar = costs.scalar_op_cycles;
        let mut next = self.pc + 1;
        let mut stall = None;
        let mut cost = scalar;
        match &ins.op {
            Op::Mov { dst, src } => {
                let v = self.reg(*src);
                self.set_reg(*dst, v);
            }
            Op::Alu { op, dst, a, b } => {
                let (x, y) = (self.reg(Val::Reg(*a)), self.reg(*b));
                let v = op.apply(x, y);
                match v {
                    Some(v) => self.set_reg(*dst, v),
                    None => {
                        let what = if y == 0 && matches!(op, AluOp::Div | AluOp::Rem) {
                            "division by zero"
                        } else {
                            "overflow"
                        };
                        self.error(
                            SimErrorKind::Scalar,
                            format!("scalar {what} ({x} and {y})"),
                            Some(idx),
                            &[],
                            true,
                        );
                        return None;
                    }
                }
            }
            Op::Sld { dst, slot } => {
                let v = self.spill.get(*slot as usize).copied().unwrap_or(0);
                self.set_reg(*dst, v);
            }
            Op::Sst { src, slot } => {
                let v = self.reg(Val::Reg(*src));
                if let Some(s) = self.spill.get_mut(*slot as usize) {
                    *s = v;
                }
            }
            // A GM read on the scalar pipe, which waits for the value (one GM access,
            // `dma_startup_gm`). Without memories (timing only) it reads 0.
            Op::Sldg { dst, src, .. } => {
                let res = memory::resolve(&ins.op, &self.regs).and_then(|res| {
                    memory::accesses(self.prog, self.machine, &ins.op, &res, &mut self.acc)?;
                    Ok(res)
                });
                let res = match res {
                    Ok(res) => res,
                    Err(e) => {
                        self.error(SimErrorKind::Memory, e, Some(idx), &[], true);
                        return None;
                    }
                };
                self.race.tick(Pipe::S);
                for a in self.acc.iter() {
                    self.race.access(self.prog, Pipe::S, idx, a);
                }
                self.record_accesses();
                let at = res.addr[0] as usize;
                let v = self
                    .mem
                    .regions
                    .get(memory::region_index(src.region))
                    .and_then(|bytes| bytes.get(at..at.checked_add(4)?))
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, |b: [u8; 4]| i64::from(i32::from_le_bytes(b)));
                self.set_reg(*dst, v);
                cost = costs.dma_startup_gm;
            }
            Op::Loop { counter, count } => {
                let n = self.reg(*count);
                self.count_branch(idx, t, n > 0);
                let end = self.matching.get(self.pc).copied().unwrap_or(self.pc);
                if n <= 0 {
                    next = end + 1;
                } else {
                    self.stack.push(Frame {
                        body: self.pc + 1,
                        counter: counter.0 as usize,
                        iter: 0,
                        count: n,
                    });
                    self.set_reg(*counter, 0);
                }
            }
            Op::EndLoop => {
                if let Some(f) = self.stack.last_mut() {
                    f.iter += 1;
                    if f.iter < f.count {
                        next = f.body;
                        if let Some(r) = self.regs.get_mut(f.counter) {
                            *r = f.iter;
                        }
                    } else {
                        self.stack.pop();
                    }
                }
            }
            Op::Barrier { pipe: None } => {
                self.race.barrier_all();
                cost = costs.sync_cycles;
                if t > self.s_time {
                    stall = Some(StallReason::Barrier {
                        cycles: t - self.s_time,
                    });
                }
            }
            op => {
                return self.dispatch(idx, op, t);
            }
        }
        self.trace(TraceEntry {
            index: idx,
            pipe: Pipe::S,
            dispatch: t,
            start: t,
            end: t + cost,
            stall,
            prov: ins.prov,
        });
        let s = &mut self.pipes[0];
        s.busy += cost;
        s.count += 1;
        s.free_at = t + cost;
        self.s_time = t + cost;
        self.pc = next;
        None
    }

    fn dispatch(&mut self, idx: u32, op: &'a Op, t: u64) -> Option<usize> {
        let res = match memory::resolve(op, &self.regs) {
            Ok(r) => r,
            Err(e) => {
                self.error(SimErrorKind::Memory, e, Some(idx), &[], true);
                return None;
            }
        };
        if let Err(e) = memory::accesses(self.prog, self.machine, op, &res, &mut self.acc) {
            self.error(SimErrorKind::Memory, e, Some(idx), &[], true);
            return None;
        }
        if matches!(op, Op::SetFlag { .. } | Op::WaitFlag { .. }) {
            let ids = self.machine.event_ids_per_pair as i64;
            if !(0..ids).contains(&res.val[0]) {
                self.error(
                    SimErrorKind::EventIdRange,
                    format!("event id {} is out of range 0..{ids}", res.val[0]),
                    Some(idx),
                    &[],
                    true,
                );
                return None;
            }
        }
        let dc = self.machine.costs.dispatch_cycles;
        let d = Dyn {
            idx,
            dispatch: t + dc,
            res,
            queue_stall: t - self.s_time.min(t),
            handed: self.s_blocked,
        };
        let q = self.instr_pipe.get(idx as usize).map_or(0, |p| p.index());
        self.pipes[q].queue.push_back(d);
        self.pipes[0].busy += dc;
        self.s_time = t + dc;
        self.pc += 1;
        Some(q)
    }

    /// Starts pipe `p`'s queue head; returns the other GM pipe when sharing bandwidth
    /// re-timed its running transfer.
    fn start(&mut self, p: usize) -> Option<usize> {
        let h = self.pipes[p].queue.pop_front()?;
        let mut retimed = None;
        let pipe = pipe_of(p);
        let free = self.pipes[p].free_at;
        let base = free.max(h.dispatch);
        self.pipes[p].idle.not_handed(free, base, h.handed);
        let mut t = base;
        let mut stall = None;
        let op = self.op(h.idx);
        if let Op::WaitFlag { src, dst, .. } = op {
            let key = self.flag_key(&h);
            if let Some(f) = self.flags.take(key) {
                t = t.max(f.cycle);
                let flag = (*src, *dst, h.res.val[0] as u32);
                self.pipes[p].idle.flag(h.idx, flag, base, t);
                self.race.join(pipe, &f.clock);
                self.out.syncs += 1;
                if let Some(ev) = f.event.and_then(|e| self.out.flags.get_mut(e)) {
                    ev.wait_cycle = Some(t);
                    ev.wait_instr = Some(h.idx);
                }
                if t > base {
                    stall = Some(StallReason::WaitFlag {
                        src: *src,
                        dst: *dst,
                        id: h.res.val[0] as u32,
                        cycles: t - base,
                    });
                }
            }
        }
        let mut cost = cost(self.machine, op, &h.res);
        let mut shared = 0;
        if cost.gm_bytes > 0 && matches!(pipe, Pipe::MTE2 | Pipe::MTE3) {
            let other = if pipe == Pipe::MTE2 {
                Pipe::MTE3
            } else {
                Pipe::MTE2
            };
            let moving = t + cost.startup;
            let o = other.index();
            // Sharing starts once both move data; until then each runs at full rate.
            let shared_from = moving.max(self.pipes[o].gm_from);
            let running_left = self.pipes[o].gm_until.saturating_sub(shared_from);
            let own_left = cost.transfer.saturating_sub(shared_from - moving);
            let extra = running_left.min(own_left);
            if extra > 0 {
                cost.cycles += extra;
                shared = extra;
                stall = stall.or(Some(StallReason::Bandwidth { cycles: extra }));
                self.pipes[o].gm_until += extra;
                retimed = Some(o);
                if let Some(f) = self.pipes[o].inflight.as_mut() {
                    f.end += extra;
                    f.shared += extra;
                    f.stall = match f.stall {
                        None => Some(StallReason::Bandwidth { cycles: extra }),
                        Some(StallReason::Bandwidth { cycles }) => Some(StallReason::Bandwidth {
                            cycles: cycles + extra,
                        }),
                        other => other,
                    };
                }
            }
            self.pipes[p].gm_from = moving;
            self.pipes[p].gm_until = t + cost.cycles;
            self.out.gm_transfer_cycles += cost.transfer;
        }
        self.out.gm_bytes += cost.gm_bytes;
        if h.queue_stall > 0 {
            stall = stall.or(Some(StallReason::QueueFull {
                cycles: h.queue_stall,
            }));
        }
        self.pipes[p].inflight = Some(Inflight {
            d: h,
            start: t,
            end: t + cost.cycles,
            stall,
            shared,
        });
        retimed
    }

    /// Completes pipe `p`'s instruction; returns the pipe a `set_flag` may have woken.
    fn complete(&mut self, p: usize) -> Option<usize> {
        let f = self.pipes[p].inflight.take()?;
        let mut woke = None;
        let pipe = pipe_of(p);
        let idx = f.d.idx;
        let op = self.op(idx);
        self.race.tick(pipe);
        match op {
            Op::SetFlag { src, dst, .. } => {
                woke = Some(dst.index());
                let key = self.flag_key(&f.d);
                let id = f.d.res.val[0] as u32;
                let event = if self.out.flags.len() < TRACE_LIMIT {
                    self.out.flags.push(FlagEvent {
                        src: *src,
                        dst: *dst,
                        id,
                        set_cycle: f.end,
                        wait_cycle: None,
                        set_instr: idx,
                        wait_instr: None,
                    });
                    Some(self.out.flags.len() - 1)
                } else {
                    self.out.trace_truncated = true;
                    None
                };
                let clock = self.race.clocks[p];
                if let Some(prev) = self.flags.set(
                    key,
                    SetFlag {
                        cycle: f.end,
                        instr: idx,
                        event,
                        clock,
                    },
                ) {
                    self.error(
                        SimErrorKind::FlagAlreadySet,
                        format!(
                            "set_flag({src}, {dst}, {id}) at #{idx} sets a flag that #{} set at cycle {} and no wait_flag has consumed",
                            prev.instr, prev.cycle
                        ),
                        Some(idx),
                        &[prev.instr],
                        false,
                    );
                }
            }
            Op::WaitFlag { .. } | Op::Barrier { .. } => {}
            _ => {
                if memory::accesses(self.prog, self.machine, op, &f.d.res, &mut self.acc).is_ok() {
                    for a in self.acc.iter() {
                        self.race.access(self.prog, pipe, idx, a);
                    }
                    self.record_accesses();
                }
                if self.functional {
                    if let Err(e) =
                        exec::execute(self.prog, &mut self.mem, &mut self.scratch, op, &f.d.res)
                    {
                        let kind = if matches!(op, Op::Gather { .. } | Op::Scatter { .. })
                            && e.contains("index")
                        {
                            SimErrorKind::Index
                        } else {
                            SimErrorKind::Memory
                        };
                        self.now = f.end;
                        self.error(kind, e, Some(idx), &[], true);
                    }
                }
            }
        }
        let prov = self
            .prog
            .instrs
            .get(idx as usize)
            .map(|i| i.prov)
            .unwrap_or_default();
        self.trace(TraceEntry {
            index: idx,
            pipe,
            dispatch: f.d.dispatch,
            start: f.start,
            end: f.end,
            stall: f.stall,
            prov,
        });
        let blocked = self.blocked_now();
        let ps = &mut self.pipes[p];
        ps.free_at = f.end;
        ps.busy += f.end - f.start;
        ps.shared += f.shared;
        ps.count += 1;
        ps.idle.fell_idle(blocked);
        woke
    }

    fn deadlock(&mut self) {
        let mut blocked = Vec::new();
        let mut parts = Vec::new();
        for p in 1..7 {
            if let Some(h) = self.pipes[p].queue.front() {
                if let Op::WaitFlag { src, dst, .. } = self.op(h.idx) {
                    parts.push(format!(
                        "{} waits at #{} for flag ({src}, {dst}, {}) that no set_flag will set",
                        pipe_of(p),
                        h.idx,
                        h.res.val[0]
                    ));
                    blocked.push(h.idx);
                }
            }
        }
        if let Some(ins) = self.prog.instrs.get(self.pc).filter(|_| !self.s_done) {
            let why = match ins.op.pipe() {
                Pipe::S => "pipe_barrier ALL waits for pipes that never drain".to_string(),
                q => format!(
                    "S cannot dispatch #{} because the {q} queue is full",
                    self.pc
                ),
            };
            parts.push(why);
            blocked.push(self.pc as u32);
        }
        let first = blocked.first().copied();
        let rest: Vec<u32> = blocked.iter().skip(1).copied().collect();
        self.error(
            SimErrorKind::Deadlock,
            format!("deadlock at cycle {}: {}", self.now, parts.join("; ")),
            first,
            &rest,
            true,
        );
    }

    fn finish(mut self) -> SimResult {
        let pending = !self.s_done
            || self
                .pipes
                .iter()
                .any(|p| !p.queue.is_empty() || p.inflight.is_some());
        if pending && !self.fatal {
            self.deadlock();
        }
        let leftover: Vec<_> = self
            .flags
            .leftover()
            .map(|(k, f)| (k, f.instr, f.cycle))
            .collect();
        for ((src, dst, id), instr, cycle) in leftover {
            self.error(
                SimErrorKind::FlagLeftSet,
                format!("flag ({src}, {dst}, {id}) set by #{instr} at cycle {cycle} is still set at the end: no wait_flag consumed it"),
                Some(instr),
                &[],
                false,
            );
        }
        let mut out = std::mem::take(&mut self.out);
        out.cycles = self
            .pipes
            .iter()
            .map(|p| p.free_at)
            .fold(self.s_time.max(self.now), u64::max);
        let cycles = out.cycles;
        self.now = cycles;
        let blocked = self.blocked_now();
        let s_time = self.s_time;
        for (i, p) in self.pipes.iter_mut().enumerate() {
            let mut idle = std::mem::take(&mut p.idle);
            if i == 0 {
                idle.s_done(s_time, cycles);
            } else {
                idle.not_handed(p.free_at, cycles, blocked);
            }
            out.stalls.push(idle.finish(pipe_of(i), p.busy, p.shared));
        }
        out.pipes = self
            .pipes
            .iter()
            .enumerate()
            .map(|(i, p)| PipeStats {
                pipe: pipe_of(i),
                busy: p.busy,
                instructions: p.count,
                shared_bandwidth: p.shared,
            })
            .collect();
        out.races = std::mem::take(&mut self.race.races);
        if self.functional {
            let regions = std::mem::take(&mut self.mem.regions);
            for (t, (decl, data)) in self
                .prog
                .tensors
                .iter()
                .zip(regions.into_iter().skip(5))
                .enumerate()
            {
                let _ = Region::Tensor(t as u32);
                out.outputs.push(Output {
                    name: decl.name.clone(),
                    tensor: Tensor {
                        dtype: decl.dtype,
                        shape: decl.shape.clone(),
                        data,
                    },
                });
            }
        }
        out
    }
}

/// What `op` costs its pipe with operands `r`: the simulator's price of one dispatch.
/// Public so that a pass can estimate a schedule with the simulator's own prices.
pub fn cost(machine: &Machine, op: &Op, r: &Resolved) -> Cost {
    let c = &machine.costs;
    let u = |v: i64| v.max(0) as u64;
    let dma = |src: MemSpace, dst: MemSpace, bytes: u64| {
        let gm = src == MemSpace::GM || dst == MemSpace::GM;
        let startup = if gm {
            c.dma_startup_gm
        } else {
            c.dma_startup_onchip
        };
        let bw = c.bandwidth.path(src, dst).unwrap_or(1.0);
        let transfer = div_ceil_f(bytes, bw);
        Cost {
            cycles: startup + transfer,
            transfer,
            startup,
            gm_bytes: if gm { bytes } else { 0 },
        }
    };
    // `base + (f32 ? f32_factor : 1) * row_blocks * ceil(k / K block) * ceil(n / block_n)`.
    let product = |dt: DType, row_blocks: u64, k: u64, n: u64, block_n: u64| {
        let mm = &c.matmul;
        let kb = (mm.k_block_bytes / dt.bytes()).max(1);
        let f = if dt == DType::F32 { mm.f32_factor } else { 1 };
        let blocks = row_blocks * k.div_ceil(kb) * n.div_ceil(block_n);
        Cost {
            cycles: mm.base + f * blocks,
            transfer: 0,
            startup: 0,
            gm_bytes: 0,
        }
    };
    let vector = |dt: DType, elems: u64, extra: u64| {
        let slope = if dt.bytes() == 2 {
            c.vector_slope_f16
        } else {
            c.vector_slope_f32
        };
        let factor = if op.is_transcendental() {
            c.transcendental_factor
        } else {
            1.0
        };
        let cycles = (slope * factor * elems as f64).ceil() as u64 + c.vector_bias + extra;
        Cost {
            cycles,
            transfer: 0,
            startup: 0,
            gm_bytes: 0,
        }
    };
    let tile_elems = |i: usize| u(r.val[2 * i]) * u(r.val[2 * i + 1]);
    match op {
        Op::Dma {
            dtype,
            dst,
            src,
            dims,
        } => {
            let elems: u64 = dims.iter().zip(r.val).map(|(_, e)| u(e)).product();
            // GM moves in bursts: when the innermost dimension steps over GM
            // elements (a strided range), each element costs the bytes up to the
            // next one, at most a burst.
            let eb = dtype.bytes();
            let gm_stride = match (src.region.space(), dims.last()) {
                (MemSpace::GM, Some(d)) => d.src_stride,
                (_, Some(d)) if dst.region.space() == MemSpace::GM => d.dst_stride,
                _ => 1,
            };
            let per_elem = if gm_stride > 1 {
                (gm_stride as u64 * eb).min(GM_BURST_BYTES).max(eb)
            } else {
                eb
            };
            dma(src.region.space(), dst.region.space(), elems * per_elem)
        }
        Op::Gather { dtype, .. } => dma(
            MemSpace::GM,
            MemSpace::UB,
            u(r.val[0]) * u(r.val[1]) * dtype.bytes(),
        ),
        // The engine writes every lane of the box, fill included.
        Op::DmaPad { dtype, width, .. } => dma(
            MemSpace::GM,
            MemSpace::UB,
            u(r.val[0]) * (*width).max(0) as u64 * dtype.bytes(),
        ),
        Op::Scatter { dtype, .. } => dma(
            MemSpace::UB,
            MemSpace::GM,
            u(r.val[0]) * u(r.val[1]) * dtype.bytes(),
        ),
        Op::Mov2d { dtype, dst, .. } => dma(
            MemSpace::L1,
            dst.addr.region.space(),
            tile_elems(1) * dtype.bytes(),
        ),
        Op::Fix { dtype, dst, .. } => dma(
            MemSpace::L0C,
            dst.addr.region.space(),
            tile_elems(0) * dtype.bytes(),
        ),
        Op::Mmad { dtype, .. } => {
            let row_blocks = u(r.val[0]).div_ceil(c.matmul.block_m);
            product(
                *dtype,
                row_blocks,
                u(r.val[1]),
                u(r.val[2]),
                c.matmul.block_n,
            )
        }
        // One row, at the matrix-vector rate: `matvec_block_n` columns per K block.
        Op::Mmv { dtype, .. } => {
            product(*dtype, 1, u(r.val[0]), u(r.val[1]), c.matmul.matvec_block_n)
        }
        Op::VUnary { dtype, .. }
        | Op::VBinary { dtype, .. }
        | Op::VDup { dtype, .. }
        | Op::VCopy { dtype, .. }
        | Op::VCmp { dtype, .. }
        | Op::VSel { dtype, .. }
        | Op::VIota { dtype, .. } => vector(*dtype, tile_elems(0), 0),
        Op::VCast { to, from, .. } => vector(
            if to.bytes().max(from.bytes()) == 2 {
                DType::F16
            } else {
                DType::F32
            },
            tile_elems(0),
            0,
        ),
        Op::VReduce { dtype, .. } | Op::VArgReduce { dtype, .. } => vector(
            *dtype,
            tile_elems(1),
            u(r.val[2]) * c.reduction_cycles_per_row,
        ),
        Op::SetFlag { .. } | Op::WaitFlag { .. } | Op::Barrier { .. } => Cost {
            cycles: c.sync_cycles,
            transfer: 0,
            startup: 0,
            gm_bytes: 0,
        },
        // Never dispatched: the S pipe runs them itself (`s_step`), at this price.
        Op::Mov { .. }
        | Op::Alu { .. }
        | Op::Sld { .. }
        | Op::Sst { .. }
        | Op::Loop { .. }
        | Op::EndLoop => Cost {
            cycles: c.scalar_op_cycles,
            transfer: 0,
            startup: 0,
            gm_bytes: 0,
        },
        Op::Sldg { .. } => Cost {
            cycles: c.dma_startup_gm,
            transfer: 0,
            startup: 0,
            gm_bytes: 0,
        },
    }
}
