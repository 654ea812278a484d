//! Where each pipe's cycles go: busy, or idle and why.
//!
//! The engine (`timing.rs`) reports each pipe's gaps here as they close. A gap before an
//! instruction starts splits into the time before the S pipe handed it over (the S pipe
//! was held at a `pipe_barrier ALL`, blocked on some pipe's full queue, or busy with
//! other work) and the time it then waited for its flag. The S pipe's own blocked
//! stretches are kept as running totals per cause, so the part of any gap the S pipe
//! spent blocked is a difference of two totals, whatever else happened in between.
//! Each pipe's busy cycles and its idle causes add up to the run's cycles.

use crate::types::Pipe;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One pipe's cycles by what it did (`SimResult::stalls`):
/// `busy + shared_bandwidth + flag_wait + barrier + queue_full + not_issued` is the
/// run's cycles.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PipeStalls {
    pub pipe: Pipe,
    /// Executing instructions, at the rate each would run alone (DMA startup included).
    pub busy: u64,
    /// Executing, but longer because MTE2 and MTE3 shared GM bandwidth.
    pub shared_bandwidth: u64,
    /// Idle with a `wait_flag` at its queue's head whose flag was not yet set.
    pub flag_wait: u64,
    /// Idle while the S pipe was held at a `pipe_barrier ALL` (for the S pipe: held there).
    pub barrier: u64,
    /// Idle while the S pipe could not dispatch because a pipe's queue was full (for the
    /// S pipe: blocked so).
    pub queue_full: u64,
    /// Idle with nothing issued to it otherwise: the S pipe was busy with other work, or
    /// had nothing more for this pipe (for the S pipe: after its last instruction).
    pub not_issued: u64,
    /// The longest single idle stretch, where the timeline shows it best.
    pub longest_idle: Option<Stretch>,
    /// The flag waits, by `wait_flag` instruction, longest in total first.
    pub flags: Vec<FlagStall>,
}

/// Idle cycles `[from, from + cycles)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Stretch {
    pub from: u64,
    pub cycles: u64,
}

/// What one `wait_flag` instruction cost its pipe over the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FlagStall {
    /// The `wait_flag`'s static instruction index.
    pub wait_instr: u32,
    pub src: Pipe,
    pub dst: Pipe,
    pub id: u32,
    /// Cycles waited in all, over every time it ran.
    pub cycles: u64,
    /// How often it waited at all.
    pub times: u64,
    /// Its longest single wait.
    pub longest: Stretch,
}

impl PipeStalls {
    /// Every idle cycle, whatever its cause.
    pub fn idle(&self) -> u64 {
        self.flag_wait + self.barrier + self.queue_full + self.not_issued
    }

    /// Everything the pipe's cycles went to; equals the run's cycles.
    pub fn total(&self) -> u64 {
        self.busy + self.shared_bandwidth + self.idle()
    }
}

/// Why the S pipe could not step: the index into its running totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocked {
    Barrier = 0,
    QueueFull = 1,
}

/// The S pipe's blocked cycles so far, per [`Blocked`] cause.
pub type BlockedTotals = [u64; 2];

/// One pipe's idle causes as the run goes.
#[derive(Default)]
pub struct IdleLedger {
    pub flag_wait: u64,
    pub barrier: u64,
    pub queue_full: u64,
    pub not_issued: u64,
    longest: Option<Stretch>,
    /// The S pipe's blocked totals when this pipe last fell idle.
    idle_since: BlockedTotals,
    flags: BTreeMap<u32, FlagStall>,
}

impl IdleLedger {
    /// The pipe finished its instruction with the S pipe's totals at `totals`.
    pub fn fell_idle(&mut self, totals: BlockedTotals) {
        self.idle_since = totals;
    }

    /// Books the gap `[from, to)` before an instruction the pipe could start only once
    /// the S pipe had handed it over; `handed` is the S pipe's totals when it did (the
    /// totals at `from` were recorded by [`IdleLedger::fell_idle`]).
    pub fn not_handed(&mut self, from: u64, to: u64, handed: BlockedTotals) {
        let mut left = to.saturating_sub(from);
        if left == 0 {
            return;
        }
        self.stretch(from, left);
        let barrier = handed[Blocked::Barrier as usize]
            .saturating_sub(self.idle_since[Blocked::Barrier as usize])
            .min(left);
        left -= barrier;
        let queue = handed[Blocked::QueueFull as usize]
            .saturating_sub(self.idle_since[Blocked::QueueFull as usize])
            .min(left);
        left -= queue;
        self.barrier += barrier;
        self.queue_full += queue;
        self.not_issued += left;
    }

    /// Books `[from, to)` spent waiting at `wait_instr` for flag `(src, dst, id)`.
    pub fn flag(&mut self, wait_instr: u32, (src, dst, id): (Pipe, Pipe, u32), from: u64, to: u64) {
        let cycles = to.saturating_sub(from);
        if cycles == 0 {
            return;
        }
        self.stretch(from, cycles);
        self.flag_wait += cycles;
        let here = Stretch { from, cycles };
        let f = self.flags.entry(wait_instr).or_insert(FlagStall {
            wait_instr,
            src,
            dst,
            id,
            cycles: 0,
            times: 0,
            longest: here,
        });
        f.cycles += cycles;
        f.times += 1;
        if cycles > f.longest.cycles {
            f.longest = here;
        }
    }

    /// Books `[from, from + cycles)` the S pipe itself spent blocked.
    pub fn s_blocked(&mut self, cause: Blocked, from: u64, cycles: u64) {
        if cycles == 0 {
            return;
        }
        self.stretch(from, cycles);
        match cause {
            Blocked::Barrier => self.barrier += cycles,
            Blocked::QueueFull => self.queue_full += cycles,
        }
    }

    /// Books the S pipe's stretch `[from, to)` after its last instruction.
    pub fn s_done(&mut self, from: u64, to: u64) {
        let cycles = to.saturating_sub(from);
        if cycles > 0 {
            self.stretch(from, cycles);
            self.not_issued += cycles;
        }
    }

    fn stretch(&mut self, from: u64, cycles: u64) {
        if self.longest.is_none_or(|l| cycles > l.cycles) {
            self.longest = Some(Stretch { from, cycles });
        }
    }

    pub fn finish(self, pipe: Pipe, busy: u64, shared_bandwidth: u64) -> PipeStalls {
        let mut flags: Vec<FlagStall> = self.flags.into_values().collect();
        flags.sort_by_key(|f| (std::cmp::Reverse(f.cycles), f.wait_instr));
        PipeStalls {
            pipe,
            busy: busy - shared_bandwidth.min(busy),
            shared_bandwidth: shared_bandwidth.min(busy),
            flag_wait: self.flag_wait,
            barrier: self.barrier,
            queue_full: self.queue_full,
            not_issued: self.not_issued,
            longest_idle: self.longest,
            flags,
        }
    }
}
