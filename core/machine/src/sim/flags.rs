//! Binary event flags per (src pipe, dst pipe, id), with the vector clock of the setting
//! pipe so a wait can inherit its happens-before knowledge.

use super::race::Clock;
use crate::machine::MAX_EVENT_IDS;
use crate::types::Pipe;

#[derive(Clone, Copy, Debug)]
pub struct SetFlag {
    pub cycle: u64,
    pub instr: u32,
    /// Index of its `FlagEvent` in the result (if recorded).
    pub event: Option<usize>,
    pub clock: Clock,
}

pub struct FlagTable {
    slots: Vec<Option<SetFlag>>,
}

pub fn key(src: Pipe, dst: Pipe, id: u32) -> usize {
    (src.index() * Pipe::ALL.len() + dst.index()) * MAX_EVENT_IDS as usize + id as usize
}

impl Default for FlagTable {
    fn default() -> Self {
        FlagTable {
            slots: vec![None; Pipe::ALL.len() * Pipe::ALL.len() * MAX_EVENT_IDS as usize],
        }
    }
}

impl FlagTable {
    pub fn get(&self, key: usize) -> Option<&SetFlag> {
        self.slots.get(key).and_then(|s| s.as_ref())
    }

    /// Sets the flag; returns the earlier, unconsumed set if there was one (an error).
    pub fn set(&mut self, key: usize, f: SetFlag) -> Option<SetFlag> {
        self.slots.get_mut(key).and_then(|s| s.replace(f))
    }

    pub fn take(&mut self, key: usize) -> Option<SetFlag> {
        self.slots.get_mut(key).and_then(|s| s.take())
    }

    /// Flags still set, with their (src, dst, id).
    pub fn leftover(&self) -> impl Iterator<Item = ((Pipe, Pipe, u32), &SetFlag)> {
        let n = Pipe::ALL.len();
        let ids = MAX_EVENT_IDS as usize;
        self.slots.iter().enumerate().filter_map(move |(k, s)| {
            let f = s.as_ref()?;
            let (pair, id) = (k / ids, k % ids);
            Some((
                (
                    *Pipe::ALL.get(pair / n)?,
                    *Pipe::ALL.get(pair % n)?,
                    id as u32,
                ),
                f,
            ))
        })
    }
}
