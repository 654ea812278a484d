//! The memory plan plan-memory leaves on the kernel: slabs of on-chip memory, each one
//! or more tiles whose lives do not overlap (or a fused op's scratch), `slots` copies
//! side by side. It is printed at the top of the kernel (`slab N: ...` lines) and read
//! back with it, and lower-to-pipes declares one buffer per slab, in this order, from
//! the plan as printed rather than planning again.

use super::{Kernel, OpId, OpMap, ValueId, ValueMap};
use crate::types::MemSpace;

/// A contiguous allocation: one or more tiles with disjoint lifetimes, `slots` copies.
#[derive(Clone, Debug, PartialEq)]
pub struct Slab {
    pub space: MemSpace,
    /// Bytes of one slot (aligned).
    pub bytes: u64,
    pub slots: u32,
    pub addr: u64,
    /// The loop whose iteration picks the slot, for multi-slot slabs.
    pub rotates_with: Option<OpId>,
    /// The tiles it holds, in program order.
    pub tiles: Vec<ValueId>,
    /// A fused op's scratch.
    pub scratch_of: Option<OpId>,
}

impl Slab {
    /// The byte address of each slot.
    pub fn addrs(&self) -> Vec<u64> {
        (0..self.slots as u64)
            .map(|i| self.addr + i * self.bytes)
            .collect()
    }
}

/// Every slab, and which slab holds each tile and each fused op's scratch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryPlan {
    pub slabs: Vec<Slab>,
    pub tile_slab: ValueMap<usize>,
    pub scratch_slab: OpMap<usize>,
}

impl MemoryPlan {
    /// The plan of `slabs`, indexed by tile and by scratch op.
    pub fn new(slabs: Vec<Slab>) -> MemoryPlan {
        let mut plan = MemoryPlan {
            slabs,
            ..MemoryPlan::default()
        };
        for (i, slab) in plan.slabs.iter().enumerate() {
            for &v in &slab.tiles {
                plan.tile_slab.insert(v, i);
            }
            if let Some(op) = slab.scratch_of {
                plan.scratch_slab.insert(op, i);
            }
        }
        plan
    }

    /// Checks that the plan agrees with what the ops and values say of their memory
    /// (each tile's space and addresses, each fused op's scratch): lower-to-pipes reads
    /// the plan, the address-plan verifier the values. `Err` names the first mismatch.
    pub fn agrees_with(&self, k: &Kernel) -> Result<(), String> {
        for (i, slab) in self.slabs.iter().enumerate() {
            for &v in &slab.tiles {
                let Some(val) = k.values.get(v) else {
                    return Err(format!("slab {i} holds a value that does not exist"));
                };
                let addrs = slab.addrs();
                if val.space != Some(slab.space) || val.attrs.addresses != addrs {
                    return Err(format!(
                        "slab {i} ({} at {addrs:#x?}) holds a tile whose memory is {:?} at {:#x?}",
                        slab.space, val.space, val.attrs.addresses
                    ));
                }
                if val.ty.bytes() > slab.bytes {
                    return Err(format!(
                        "slab {i} has {} bytes a slot, but holds a tile of {} bytes",
                        slab.bytes,
                        val.ty.bytes()
                    ));
                }
            }
            if let Some(op) = slab.scratch_of {
                if k.annotations.scratch.get(&op) != Some(&(slab.bytes, slab.addr)) {
                    return Err(format!(
                        "slab {i} is the scratch of an op whose scratch is elsewhere"
                    ));
                }
            }
        }
        for (v, val) in k.values.iter() {
            if !val.attrs.addresses.is_empty() && !self.tile_slab.contains_key(&v) {
                return Err("a tile has addresses but no slab of the plan holds it".into());
            }
        }
        for (op, _) in k.annotations.scratch.iter() {
            if !self.scratch_slab.contains_key(&op) {
                return Err("an op has scratch but no slab of the plan holds it".into());
            }
        }
        Ok(())
    }
}
