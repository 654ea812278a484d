//! Every instruction's operands, in the manner of Cranelift's `get_operands`: which
//! scalar registers it reads and writes, which memory it reads and writes (space,
//! address, extent, strides, element size) and where each resolved value goes.
//! Validation, the simulator's register resolution and access footprints, register
//! allocation and the lowered-program verifier all read this instead of destructuring
//! `Op` themselves.
//!
//! The operands are given once, in each instruction's entry of the ISA's description
//! (`describe`, which also gives its text, pipe and rules), as a role per field: `def`,
//! `reg`, `scalar`, `mem`, `tile`, `vsrc`, `extents`, the methods of this module's two
//! sinks. The description is expanded over `&Op` for reading ([`operands`], whose sink
//! yields [`Operand`] values) and over `&mut Op` for rewriting registers
//! ([`registers_mut`], what the allocator needs). Match ergonomics bind the fields as
//! `&T` in one expansion and `&mut T` in the other; the two sinks have methods of the
//! same names.
//!
//! # Order
//! Operands come in assembly order (destination first), except that a register an
//! instruction writes comes after everything it reads: the sinks hold a `def` back until
//! the entry ends. The allocator numbers its spill scratch registers in this order, so it
//! is part of the emitted code.
//!
//! # Resolved positions
//! The simulator resolves registers once per dispatch into fixed arrays
//! (`sim::memory::Resolved`): memory operand `m` (numbered in order) gets its byte address
//! at `addr[m]`; every scalar operand names its `val` slot here. A [`Tile`] at memory
//! position `m` keeps its rows and cols at `val[2m]` and `val[2m + 1]`, and a vector
//! source that is a scalar takes a memory position too (its value at `val[2m]`), so the
//! positions of later operands do not depend on whether a source is a tile or a scalar.

use super::MAX_DMA_DIMS;
use super::{describe, Addr, DmaDim, Op, Reg, Tile, VSrc, Val};

/// How an instruction uses a scalar register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegRole {
    Use,
    Def,
}

/// What an instruction does to a memory operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemAccess {
    Read,
    /// Read to find the rows of another operand (the index tile of gather and scatter).
    Index,
    Write,
    /// Read and then written: the C of an `mmad` or `mmv` whose `acc` is not the
    /// immediate 0.
    ReadWrite,
}

impl MemAccess {
    pub fn reads(self) -> bool {
        !matches!(self, MemAccess::Write)
    }

    pub fn writes(self) -> bool {
        matches!(self, MemAccess::Write | MemAccess::ReadWrite)
    }
}

/// An element count or stride: an immediate, or the scalar operand resolved at
/// `val[slot]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    Imm(i64),
    Slot(u8),
}

/// The elements a memory operand covers, in elements of the operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// `rows x cols` elements, rows `stride` elements apart.
    Tile { rows: Dim, cols: Dim, stride: Dim },
    /// One side of a DMA: `dims` dimensions, outermost first; dimension `i` has the
    /// extent resolved at `val[i]` and the stride `strides[i]`.
    Strided {
        dims: u8,
        strides: [i64; MAX_DMA_DIMS as usize],
    },
    /// `rows` rows of `len` elements, `stride` elements apart, chosen at run time by an
    /// index tile (a gather's source, a scatter's destination): only the base address is
    /// known statically.
    Indexed { rows: Dim, len: Dim, stride: i64 },
}

impl Extent {
    /// One side of a DMA over `dims`, with `stride` picking that side's strides. Dims
    /// past the hardware's four are left out (validation rejects such a DMA).
    pub(super) fn strided(dims: &[DmaDim], stride: fn(&DmaDim) -> i64) -> Extent {
        let mut strides = [0; MAX_DMA_DIMS as usize];
        for (s, d) in strides.iter_mut().zip(dims) {
            *s = stride(d);
        }
        Extent::Strided {
            dims: dims.len().min(MAX_DMA_DIMS as usize) as u8,
            strides,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemOperand {
    pub addr: Addr,
    /// Its position among the instruction's memory operands (`Resolved::addr`).
    pub slot: u8,
    pub access: MemAccess,
    /// Bytes of one element as this operand holds it (L0C is f32 whatever the dtype).
    pub elem_bytes: u64,
    pub extent: Extent,
}

/// One operand of an instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    /// A scalar register the instruction writes.
    Def(Reg),
    /// A scalar the instruction reads (a count, an extent, an event id, a vector scalar,
    /// an ALU input), resolved at `val[slot]` when the simulator dispatches it.
    Scalar { val: Val, slot: u8 },
    /// Memory the instruction reads or writes; its address's base register is read.
    Mem(MemOperand),
}

impl Operand {
    /// The registers of this operand with how they are used.
    pub fn registers(&self, f: &mut impl FnMut(Reg, RegRole)) {
        match self {
            Operand::Def(r) => f(*r, RegRole::Def),
            Operand::Scalar {
                val: Val::Reg(r), ..
            } => f(*r, RegRole::Use),
            Operand::Scalar { .. } => {}
            Operand::Mem(m) => {
                if let Some(r) = m.addr.base {
                    f(r, RegRole::Use)
                }
            }
        }
    }
}

/// Narrows a slot number; a slot past `u8` only arises from an invalid DMA with more
/// dimensions than any array of resolved values holds, and then lands nowhere.
fn slot_at(i: usize) -> u8 {
    u8::try_from(i).unwrap_or(u8::MAX)
}

/// The reading expansion's sink: turns each operand into an [`Operand`].
pub(super) struct Reader<'f, F> {
    f: &'f mut F,
    next_mem: u8,
    /// The register the instruction writes, given after everything it reads.
    def: Option<Reg>,
}

impl<F: FnMut(Operand)> Reader<'_, F> {
    pub(super) fn def(&mut self, r: &Reg) {
        self.def = Some(*r);
    }

    pub(super) fn end(&mut self) {
        if let Some(r) = self.def.take() {
            (self.f)(Operand::Def(r));
        }
    }

    pub(super) fn reg(&mut self, r: &Reg, slot: u8) {
        (self.f)(Operand::Scalar {
            val: Val::Reg(*r),
            slot,
        });
    }

    pub(super) fn scalar(&mut self, v: &Val, slot: u8) {
        (self.f)(Operand::Scalar { val: *v, slot });
    }

    fn take_mem_slot(&mut self) -> u8 {
        let m = self.next_mem;
        self.next_mem = self.next_mem.saturating_add(1);
        m
    }

    pub(super) fn mem(&mut self, addr: &Addr, access: MemAccess, elem_bytes: u64, extent: Extent) {
        let slot = self.take_mem_slot();
        (self.f)(Operand::Mem(MemOperand {
            addr: *addr,
            slot,
            access,
            elem_bytes,
            extent,
        }));
    }

    pub(super) fn tile(&mut self, t: &Tile, access: MemAccess, elem_bytes: u64) {
        let m = usize::from(self.next_mem);
        let (rows, cols) = (slot_at(2 * m), slot_at(2 * m + 1));
        let extent = Extent::Tile {
            rows: Dim::Slot(rows),
            cols: Dim::Slot(cols),
            stride: Dim::Imm(t.stride),
        };
        self.mem(&t.addr, access, elem_bytes, extent);
        self.scalar(&t.rows, rows);
        self.scalar(&t.cols, cols);
    }

    pub(super) fn vsrc(&mut self, s: &VSrc, elem_bytes: u64) {
        if let VSrc::Tile(t) = s {
            return self.tile(t, MemAccess::Read, elem_bytes);
        }
        let at = slot_at(2 * usize::from(self.take_mem_slot()));
        match s {
            VSrc::Reg(r) => self.reg(r, at),
            VSrc::Int(i) => self.scalar(&Val::Imm(*i), at),
            // A float immediate stays in the instruction: nothing to resolve.
            VSrc::Float(_) | VSrc::Tile(_) => {}
        }
    }

    pub(super) fn extents(&mut self, dims: &[DmaDim]) {
        for (i, d) in dims.iter().enumerate() {
            self.scalar(&d.extent, slot_at(i));
        }
    }
}

/// The rewriting expansion's sink: hands out each register mutably with its role.
pub(super) struct Renamer<'a, 'f, F> {
    f: &'f mut F,
    /// The register the instruction writes, handed out after everything it reads.
    def: Option<&'a mut Reg>,
}

impl<'a, F: FnMut(&mut Reg, RegRole)> Renamer<'a, '_, F> {
    pub(super) fn def(&mut self, r: &'a mut Reg) {
        self.def = Some(r);
    }

    pub(super) fn end(&mut self) {
        if let Some(r) = self.def.take() {
            (self.f)(r, RegRole::Def);
        }
    }

    pub(super) fn reg(&mut self, r: &mut Reg, _slot: u8) {
        (self.f)(r, RegRole::Use);
    }

    pub(super) fn scalar(&mut self, v: &mut Val, _slot: u8) {
        if let Val::Reg(r) = v {
            (self.f)(r, RegRole::Use);
        }
    }

    pub(super) fn mem(
        &mut self,
        addr: &mut Addr,
        _access: MemAccess,
        _elem_bytes: u64,
        _extent: Extent,
    ) {
        if let Some(r) = &mut addr.base {
            (self.f)(r, RegRole::Use);
        }
    }

    pub(super) fn tile(&mut self, t: &mut Tile, access: MemAccess, elem_bytes: u64) {
        // The extent is only read by the reading expansion.
        let extent = Extent::Tile {
            rows: Dim::Imm(0),
            cols: Dim::Imm(0),
            stride: Dim::Imm(t.stride),
        };
        self.mem(&mut t.addr, access, elem_bytes, extent);
        self.scalar(&mut t.rows, 0);
        self.scalar(&mut t.cols, 0);
    }

    pub(super) fn vsrc(&mut self, s: &mut VSrc, elem_bytes: u64) {
        match s {
            VSrc::Tile(t) => self.tile(t, MemAccess::Read, elem_bytes),
            VSrc::Reg(r) => self.reg(r, 0),
            VSrc::Int(_) | VSrc::Float(_) => {}
        }
    }

    pub(super) fn extents(&mut self, dims: &mut [DmaDim]) {
        for d in dims {
            self.scalar(&mut d.extent, 0);
        }
    }
}

/// Calls `f` on every operand of `op`, in order (see the module comment).
pub fn operands(op: &Op, f: &mut impl FnMut(Operand)) {
    let mut v = Reader {
        f,
        next_mem: 0,
        def: None,
    };
    describe::read(op, &mut v)
}

/// Calls `f` on every register operand of `op` with its role, in operand order (uses
/// of an instruction before its defs).
pub fn registers(op: &Op, f: &mut impl FnMut(Reg, RegRole)) {
    operands(op, &mut |o| o.registers(f));
}

/// [`registers`] with each register handed out mutably, to rename it.
pub fn registers_mut(op: &mut Op, f: &mut impl FnMut(&mut Reg, RegRole)) {
    let mut v = Renamer { f, def: None };
    describe::rename(op, &mut v)
}

/// Calls `f` on every memory operand of `op`, in order.
pub fn mem_operands(op: &Op, f: &mut impl FnMut(MemOperand)) {
    operands(op, &mut |o| {
        if let Operand::Mem(m) = o {
            f(m)
        }
    });
}
