//! When each on-chip buffer slot holds a live value, as the worker sends it
//! (`worker::liveness` builds it) and the page reads it at the timeline cursor
//! (`page::components::buffers`).

use serde::{Deserialize, Serialize};
use tilescope::types::{MemSpace, Pipe};

/// One slot of an on-chip buffer and the values it held.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferSlot {
    /// The tile's name, with `[slot]` when multi-buffered.
    pub name: String,
    pub space: MemSpace,
    /// Byte range `[lo, hi)` in `space`.
    pub lo: u64,
    pub hi: u64,
    /// Sorted by `from`.
    pub values: Vec<SlotValue>,
}

/// One value a slot held: live over cycles `[from, to)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlotValue {
    /// When its (first) write ended.
    pub from: u64,
    /// When its last read started; `from` when never read.
    pub to: u64,
    /// The pipe that last wrote it.
    pub writer: Pipe,
    /// Static instructions (indices into the program) that wrote it and read it.
    pub producers: Vec<u32>,
    pub consumers: Vec<u32>,
}

/// A slot's state at a cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlotAt<'a> {
    /// The value live at the cycle, if any.
    pub live: Option<&'a SlotValue>,
    /// The newest value written by the cycle (live or not).
    pub last: Option<&'a SlotValue>,
}

impl BufferSlot {
    pub fn at(&self, cycle: u64) -> SlotAt<'_> {
        let born = self.values.partition_point(|v| v.from <= cycle);
        let last = born.checked_sub(1).and_then(|i| self.values.get(i));
        SlotAt {
            live: last.filter(|v| cycle < v.to),
            last,
        }
    }
}
