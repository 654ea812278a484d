//! The per-pipe program between `lower-to-pipes` and `emit`: instructions of the ISA
//! (`isa::Op`) in structured loops, each annotated with the on-chip buffers it reads and
//! writes. `insert-sync` reasons on these annotations (not on raw addresses) so that
//! distinct allocations never alias and distinct multi-buffer slots are disjoint;
//! `emit` allocates the scalar registers (virtual until then) and flattens the loops
//! into `loop`/`endloop`, producing the final `isa::Program`.

use crate::diag::Span;
use crate::isa::{Op, Provenance, Reg, TensorDecl, Val};
use crate::types::{MemSpace, Pipe};
use serde::{Deserialize, Serialize};

/// Index into `Lowered::buffers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BufferId(pub u32);

/// Index of a loop in program order (pre-order), for slot selection and back edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LoopId(pub u32);

/// An on-chip allocation made by plan-memory: one tile, with `addrs.len()` slots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Buffer {
    /// The tile's printed IR name (`t`, `acc.2`, ...).
    pub name: String,
    pub space: MemSpace,
    /// Bytes of one slot.
    pub bytes: u64,
    /// Byte address of each slot in `space` (one entry when not multi-buffered).
    pub addrs: Vec<u64>,
    /// For a multi-buffered tile: the loop whose iteration picks the slot
    /// (`iteration % addrs.len()`).
    pub rotates_with: Option<LoopId>,
}

/// What an instruction touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    Buffer(BufferId),
    /// A GM tensor (index into `Lowered::tensors`).
    Tensor(u32),
}

/// Which slot of a buffer an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Slot {
    /// The buffer has one slot, or the access touches every slot.
    All,
    /// Slot `(iteration of the buffer's rotating loop + offset) % slots`; offset 0 is
    /// the current iteration's slot.
    Current,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    pub target: Target,
    pub slot: Slot,
    /// Byte range within one slot of the buffer (within the tensor for GM);
    /// `None` means the whole slot/tensor (conservative).
    pub range: Option<(u64, u64)>,
    pub write: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Instr {
    pub op: Op,
    pub prov: Provenance,
    pub accesses: Vec<Access>,
}

impl Instr {
    pub fn pipe(&self) -> Pipe {
        self.op.pipe()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Loop {
    pub id: LoopId,
    /// Holds the iteration number 0, 1, ... (virtual register until emit).
    pub counter: Reg,
    pub count: Val,
    /// Multi-buffered loops: the slot count and the register holding
    /// `iteration % slots`, which also serves as the dynamic event id offset.
    pub slots: Option<(u32, Reg)>,
    pub body: Vec<Item>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Item {
    Instr(Instr),
    Loop(Loop),
}

/// The lowered kernel.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Lowered {
    pub tensors: Vec<TensorDecl>,
    pub buffers: Vec<Buffer>,
    pub body: Vec<Item>,
    /// Next unused virtual register number (registers are virtual until emit).
    pub next_reg: u32,
}
