//! Happens-before race detection with vector clocks, independent of timing: program
//! order within a pipe, `set_flag` -> `wait_flag` pairs and `pipe_barrier ALL` order
//! accesses; any two overlapping accesses from different pipes, one a write, that are not
//! ordered are a race.
//!
//! Each region keeps a log of recent accesses. An access replaces an older one of the same
//! static instruction and footprint (a later instance orders everything the earlier did),
//! and entries already ordered before every active pipe are dropped, so a synchronised
//! loop keeps the log short. As a last resort the log keeps the newest `LOG_CAP` entries,
//! which could miss a race between accesses that far apart.

use super::memory::{region_index, Access, Footprint};
use super::{AccessKind, InstrRef, Race, RaceAccess};
use crate::isa::{Program, Region};
use crate::types::Pipe;
use std::collections::HashMap;

pub type Clock = [u32; 7];

const LOG_CAP: usize = 1024;

#[derive(Clone, Copy)]
struct Entry {
    pipe: u8,
    clock: u32,
    instr: u32,
    write: bool,
    fp: Footprint,
}

pub struct RaceDetector {
    /// Per pipe: its vector clock.
    pub clocks: [Clock; 7],
    logs: Vec<Vec<Entry>>,
    seen: HashMap<(u32, u32), usize>,
    pub races: Vec<Race>,
    /// Pipes the program uses (other than S, which touches no memory): an entry ordered
    /// before all of them can never race again.
    active: [bool; 7],
}

impl RaceDetector {
    pub fn new(prog: &Program) -> RaceDetector {
        let mut active = [false; 7];
        for i in &prog.instrs {
            let p = i.op.pipe();
            if p != Pipe::S {
                active[p.index()] = true;
            }
        }
        RaceDetector {
            clocks: [[0; 7]; 7],
            logs: Vec::new(),
            seen: HashMap::new(),
            races: Vec::new(),
            active,
        }
    }

    /// Starts instruction `instr` on `pipe`: advances its own clock component.
    pub fn tick(&mut self, pipe: Pipe) -> u32 {
        let p = pipe.index();
        let c = &mut self.clocks[p][p];
        *c = c.saturating_add(1);
        *c
    }

    pub fn join(&mut self, pipe: Pipe, other: &Clock) {
        let mine = &mut self.clocks[pipe.index()];
        for (a, b) in mine.iter_mut().zip(other) {
            *a = (*a).max(*b);
        }
    }

    /// Everything before the barrier is ordered before everything after it.
    pub fn barrier_all(&mut self) {
        let mut all = [0u32; 7];
        for c in &self.clocks {
            for (a, b) in all.iter_mut().zip(c) {
                *a = (*a).max(*b);
            }
        }
        self.clocks = [all; 7];
    }

    /// Records `acc` by `instr` on `pipe` (whose clock was just ticked) and reports races
    /// against the log.
    pub fn access(&mut self, prog: &Program, pipe: Pipe, instr: u32, acc: &Access) {
        if acc.fp.lo >= acc.fp.hi {
            return;
        }
        let r = region_index(acc.region);
        if self.logs.len() <= r {
            self.logs.resize_with(r + 1, Vec::new);
        }
        let p = pipe.index();
        let me = self.clocks[p];
        let new = Entry {
            pipe: p as u8,
            clock: me[p],
            instr,
            write: acc.write,
            fp: acc.fp,
        };
        let Some(log) = self.logs.get_mut(r) else {
            return;
        };
        let mut found = Vec::new();
        let mut replaced = false;
        for e in log.iter_mut() {
            if e.pipe as usize == p {
                if e.instr == instr && e.write == acc.write && e.fp == acc.fp {
                    e.clock = new.clock;
                    replaced = true;
                }
                continue;
            }
            if (e.write || acc.write) && me[e.pipe as usize] < e.clock && e.fp.overlaps(&acc.fp) {
                found.push(*e);
            }
        }
        if !replaced {
            log.push(new);
        }
        if log.len() > 64 {
            self.prune(r);
        }
        for e in found {
            self.report(prog, acc.region, e, new);
        }
    }

    fn prune(&mut self, r: usize) {
        let mut floor = [u32::MAX; 7];
        for (q, c) in self.clocks.iter().enumerate() {
            if self.active[q] {
                for (f, v) in floor.iter_mut().zip(c) {
                    *f = (*f).min(*v);
                }
            }
        }
        if let Some(log) = self.logs.get_mut(r) {
            log.retain(|e| e.clock > floor[e.pipe as usize]);
            if log.len() > LOG_CAP {
                let extra = log.len() - LOG_CAP;
                log.drain(..extra);
            }
        }
    }

    fn report(&mut self, prog: &Program, region: Region, a: Entry, b: Entry) {
        // Unordered accesses have no "first"; program order reads best.
        let (first, second) = if a.instr <= b.instr { (a, b) } else { (b, a) };
        if let Some(&i) = self.seen.get(&(first.instr, second.instr)) {
            if let Some(r) = self.races.get_mut(i) {
                r.count += 1;
            }
            return;
        }
        let lo = first.fp.lo.max(second.fp.lo);
        let hi = first.fp.hi.min(second.fp.hi);
        let space = region.space();
        let name = prog.region_name(region);
        let kind = |w: bool| {
            if w {
                AccessKind::Write
            } else {
                AccessKind::Read
            }
        };
        self.seen
            .insert((first.instr, second.instr), self.races.len());
        let mut race = Race {
            first: RaceAccess {
                instr: InstrRef::new(prog, first.instr),
                kind: kind(first.write),
            },
            second: RaceAccess {
                instr: InstrRef::new(prog, second.instr),
                kind: kind(second.write),
            },
            space,
            overlap: (lo, hi),
            buffer: None,
            message: String::new(),
            count: 1,
        };
        race.message = race.describe(&format!("{name}[{lo:#x}..{hi:#x})"));
        race.buffer = matches!(region, Region::Tensor(_)).then_some(name);
        self.races.push(race);
    }
}
