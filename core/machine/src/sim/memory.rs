//! Operand resolution (registers to byte addresses), bounds and alignment checks,
//! access footprints for race detection, and the byte-addressed memories.

use crate::isa::operands::{mem_operands, operands, Dim, Extent, MemAccess, MemOperand, Operand};
use crate::isa::{Addr, Op, Program, Region, VSrc, Val};
use crate::machine::{Machine, MAX_DMA_DIMS};
use crate::types::{DType, MemSpace};

/// Largest element count one instruction may touch: keeps every instruction's work
/// bounded even with zero strides.
pub const MAX_ELEMS: i64 = crate::limits::MAX_SIM_OPERAND_ELEMENTS;

/// An instruction's operands with every register read: the byte address of each memory
/// operand and the value of each scalar, at the positions `isa::operands` gives them (see
/// `resolve`). Fixed-size so queues hold it inline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Resolved {
    pub addr: [u64; 4],
    pub val: [i64; 8],
}

impl Resolved {
    /// The resolved value of a vector source that is a scalar (register or integer) at
    /// memory position `m` of its instruction (see `resolve`).
    pub fn vector_scalar(&self, m: usize) -> i64 {
        self.val.get(2 * m).copied().unwrap_or(0)
    }
}

/// Dense index of a region: on-chip spaces 0..5, then GM tensors.
pub fn region_index(r: Region) -> usize {
    match r {
        Region::Buf(s) => (s as usize).saturating_sub(1),
        Region::Tensor(t) => 5 + t as usize,
    }
}

pub const ONCHIP: [MemSpace; 5] = [
    MemSpace::UB,
    MemSpace::L1,
    MemSpace::L0A,
    MemSpace::L0B,
    MemSpace::L0C,
];

/// A byte footprint: `rows` runs of `row_bytes`, `stride` bytes apart, from `lo`;
/// everything lies in `[lo, hi)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    pub lo: u64,
    pub hi: u64,
    pub rows: u64,
    pub row_bytes: u64,
    pub stride: u64,
}

impl Footprint {
    pub fn contiguous(lo: u64, hi: u64) -> Footprint {
        Footprint {
            lo,
            hi,
            rows: 1,
            row_bytes: hi - lo,
            stride: hi - lo,
        }
    }

    pub fn empty(at: u64) -> Footprint {
        Footprint {
            lo: at,
            hi: at,
            rows: 0,
            row_bytes: 0,
            stride: 0,
        }
    }

    fn is_contiguous(&self) -> bool {
        self.rows <= 1 || self.row_bytes >= self.stride
    }

    /// Whether a row of `self` intersects `[a, b)`.
    fn hits_range(&self, a: u64, b: u64) -> bool {
        if self.is_contiguous() {
            return self.lo < b && a < self.hi;
        }
        // First row whose end passes `a`, then check it starts before `b`.
        let first = if a + 1 > self.lo + self.row_bytes {
            (a + 1 - self.lo - self.row_bytes).div_ceil(self.stride)
        } else {
            0
        };
        first < self.rows && self.lo + first * self.stride < b
    }

    /// Exact for contiguous or row-strided pairs up to 4096 rows; conservative beyond.
    pub fn overlaps(&self, o: &Footprint) -> bool {
        if self.lo >= o.hi || o.lo >= self.hi {
            return false;
        }
        if o.is_contiguous() {
            return self.hits_range(o.lo, o.hi);
        }
        if self.is_contiguous() {
            return o.hits_range(self.lo, self.hi);
        }
        let (few, many) = if self.rows <= o.rows {
            (self, o)
        } else {
            (o, self)
        };
        if few.rows > 4096 {
            return true;
        }
        (0..few.rows).any(|r| {
            let a = few.lo + r * few.stride;
            many.hits_range(a, a + few.row_bytes)
        })
    }
}

/// One memory access of an instruction.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub region: Region,
    pub fp: Footprint,
    pub write: bool,
}

/// At most four accesses, kept inline: this is filled for every dispatched instruction.
pub struct Accesses {
    items: [Access; 4],
    len: usize,
}

impl Default for Accesses {
    fn default() -> Accesses {
        let unused = Access {
            region: Region::Tensor(0),
            fp: Footprint::contiguous(0, 0),
            write: false,
        };
        Accesses {
            items: [unused; 4],
            len: 0,
        }
    }
}

impl Accesses {
    pub fn iter(&self) -> impl Iterator<Item = &Access> {
        self.items.iter().take(self.len)
    }

    fn push(&mut self, a: Access) {
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = a;
            self.len += 1;
        }
    }
}

fn reg_val(regs: &[i64; 32], v: Val) -> i64 {
    match v {
        Val::Imm(i) => i,
        Val::Reg(r) => regs.get(r.0 as usize).copied().unwrap_or(0),
    }
}

fn addr_val(regs: &[i64; 32], a: &Addr) -> Result<u64, String> {
    let base = a
        .base
        .map_or(0, |r| regs.get(r.0 as usize).copied().unwrap_or(0));
    let v = base
        .checked_add(a.offset)
        .ok_or("address arithmetic overflows")?;
    u64::try_from(v).map_err(|_| format!("negative address {v}"))
}

/// Reads every register operand of `op` into the positions `isa::operands` gives them:
/// memory operand `m`'s byte address at `addr[m]`, each scalar at its slot of `val` (so
/// DMA `addr=[dst, src]`, `val=extents`; gather/scatter `addr=[dst, src, index]`,
/// `val=[rows, len]`; mmad `addr=[c, a, b]`, `val=[m, k, n, acc]`; mmv the same without
/// `m`, `val=[k, n, acc]`; tile ops tile `m` at
/// `addr[m]` with rows and cols at `val[2m]`, `val[2m + 1]`, a scalar vector source at
/// `val[2m]`; flags `val[0]=id`).
pub fn resolve(op: &Op, regs: &[i64; 32]) -> Result<Resolved, String> {
    let mut r = Resolved::default();
    let mut failed = None;
    operands(op, &mut |o| match o {
        // The first bad address is the one reported.
        _ if failed.is_some() => {}
        Operand::Mem(m) => match addr_val(regs, &m.addr) {
            Ok(a) => {
                if let Some(slot) = r.addr.get_mut(usize::from(m.slot)) {
                    *slot = a;
                }
            }
            Err(e) => failed = Some(e),
        },
        Operand::Scalar { val, slot } => {
            if let Some(v) = r.val.get_mut(usize::from(slot)) {
                *v = reg_val(regs, val);
            }
        }
        Operand::Def(_) => {}
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(r),
    }
}

fn tile_fp(addr: u64, rows: i64, cols: i64, stride: i64, eb: u64) -> Result<Footprint, String> {
    if rows < 0 || cols < 0 || stride < 0 {
        return Err(format!(
            "negative tile extent or stride ({rows} x {cols}, stride {stride})"
        ));
    }
    if rows.saturating_mul(cols) > MAX_ELEMS {
        return Err(format!(
            "tile of {rows} x {cols} elements exceeds the {MAX_ELEMS}-element limit"
        ));
    }
    let (rows, cols, stride) = (rows as u64, cols as u64, stride as u64);
    if rows == 0 || cols == 0 {
        return Ok(Footprint::empty(addr));
    }
    let hi = addr
        .checked_add(((rows - 1).saturating_mul(stride).saturating_add(cols)).saturating_mul(eb))
        .ok_or("address overflows")?;
    Ok(Footprint {
        lo: addr,
        hi,
        rows,
        row_bytes: cols * eb,
        stride: stride * eb,
    })
}

fn strided_fp(addr: u64, dims: &[(i64, i64)], eb: u64) -> Result<Footprint, String> {
    let mut span: u64 = 0;
    let mut total: i64 = 1;
    for &(e, s) in dims {
        if e < 0 || s < 0 {
            return Err(format!("negative DMA extent or stride ({e}, {s})"));
        }
        total = total.saturating_mul(e);
        span = span.saturating_add((e.max(1) as u64 - 1).saturating_mul(s as u64));
    }
    if total > MAX_ELEMS {
        return Err(format!(
            "transfer of {total} elements exceeds the {MAX_ELEMS}-element limit"
        ));
    }
    if total == 0 {
        return Ok(Footprint::empty(addr));
    }
    let hi = addr
        .checked_add(span.saturating_add(1).saturating_mul(eb))
        .ok_or("address overflows")?;
    match dims {
        [(e, 1)] => Ok(Footprint::contiguous(addr, addr + *e as u64 * eb)),
        [(r, s), (c, 1)] => tile_fp(addr, *r, *c, *s, eb),
        _ => Ok(Footprint::contiguous(addr, hi)),
    }
}

fn elem_bytes(t: DType) -> u64 {
    t.bytes()
}

/// Every memory access of `op` with its footprint, checked against the region's size
/// and alignment. Gathers and scatters touch data-dependent rows: their GM footprint is
/// conservatively everything from the base to the end of the tensor.
///
/// The accesses come index tiles first, then reads, then writes, then the rows an index
/// picks (which depend on the index): the order the race log and the trace show them in.
///
/// Written into `acc` (cleared first) rather than returned: the simulator calls this
/// twice per dispatched instruction, and returning the 224-byte array by value cost a
/// copy each time.
pub fn accesses(
    prog: &Program,
    machine: &Machine,
    op: &Op,
    r: &Resolved,
    acc: &mut Accesses,
) -> Result<(), String> {
    acc.len = 0;
    // At most four memory operands (three in the instruction set), kept inline.
    let mut mems: [Option<MemOperand>; 4] = [None; 4];
    let mut count = 0;
    mem_operands(op, &mut |m| {
        if let Some(slot) = mems.get_mut(count) {
            *slot = Some(m);
            count += 1;
        }
    });
    let order = |m: &MemOperand| match (m.extent, m.access) {
        (Extent::Indexed { .. }, _) => 3,
        (_, MemAccess::Index) => 0,
        (_, MemAccess::Read) => 1,
        (_, MemAccess::Write | MemAccess::ReadWrite) => 2,
    };
    for phase in 0..4 {
        for m in mems.iter().flatten().filter(|m| order(m) == phase) {
            if let Some(fp) = footprint(prog, machine, m, r)? {
                acc.push(Access {
                    region: m.addr.region,
                    fp,
                    write: m.access.writes(),
                });
            }
        }
    }
    for a in acc.iter() {
        check_bounds(prog, machine, a, op_dtype_bytes(op, a))?;
    }
    Ok(())
}

/// The bytes memory operand `m` covers once resolved; `None` when it touches nothing
/// that can be known before it runs (an indexed operand with no rows).
fn footprint(
    prog: &Program,
    machine: &Machine,
    m: &MemOperand,
    r: &Resolved,
) -> Result<Option<Footprint>, String> {
    let dim = |d: Dim| match d {
        Dim::Imm(i) => i,
        Dim::Slot(s) => r.val.get(usize::from(s)).copied().unwrap_or(0),
    };
    let addr = r.addr.get(usize::from(m.slot)).copied().unwrap_or(0);
    let eb = m.elem_bytes;
    match m.extent {
        Extent::Tile { rows, cols, stride } => {
            tile_fp(addr, dim(rows), dim(cols), dim(stride), eb).map(Some)
        }
        Extent::Strided { dims, strides } => {
            // Fixed arrays: this runs for every dispatched DMA.
            let mut sides = [(0i64, 0i64); MAX_DMA_DIMS as usize];
            for ((side, extent), stride) in sides.iter_mut().zip(r.val).zip(strides) {
                *side = (extent, stride);
            }
            let n = usize::from(dims).min(sides.len());
            strided_fp(addr, &sides[..n], eb).map(Some)
        }
        Extent::Indexed { rows, len, stride } => {
            if stride < 0 {
                return Err("negative gather/scatter stride".into());
            }
            if dim(rows) <= 0 || dim(len) <= 0 {
                return Ok(None);
            }
            let end = region_size(prog, machine, m.addr.region).max(addr);
            Ok(Some(Footprint::contiguous(addr, end)))
        }
    }
}

fn op_dtype_bytes(op: &Op, a: &Access) -> u64 {
    match op {
        Op::Gather { .. } | Op::Scatter { .. } if a.fp.row_bytes == 4 && a.fp.rows == 1 => 4,
        // The positions written are i32.
        Op::VArgReduce { .. } if a.write => 4,
        Op::VArgReduce { dtype, .. } => dtype.bytes(),
        Op::Dma { dtype, .. }
        | Op::DmaPad { dtype, .. }
        | Op::Gather { dtype, .. }
        | Op::Scatter { dtype, .. }
        | Op::Mov2d { dtype, .. }
        | Op::VUnary { dtype, .. }
        | Op::VBinary { dtype, .. }
        | Op::VReduce { dtype, .. }
        | Op::VDup { dtype, .. }
        | Op::VCopy { dtype, .. } => dtype.bytes(),
        Op::Mmad { dtype, .. } | Op::Mmv { dtype, .. } if a.region.space() != MemSpace::L0C => {
            dtype.bytes()
        }
        _ => 1,
    }
}

pub fn region_size(prog: &Program, machine: &Machine, region: Region) -> u64 {
    match region {
        Region::Buf(s) => machine.memories.get(s).size.unwrap_or(0),
        Region::Tensor(t) => prog.tensors.get(t as usize).map_or(0, |d| d.bytes()),
    }
}

/// On-chip operands must sit at the space's alignment. In GM only element alignment is
/// required: the preset's GM alignment is a bandwidth figure, and rows of odd-sized
/// tensors start at any element.
fn check_bounds(prog: &Program, machine: &Machine, a: &Access, eb: u64) -> Result<(), String> {
    let size = region_size(prog, machine, a.region);
    // Names are built only for the error message: this runs for every dispatch.
    let name = || prog.region_name(a.region);
    // An access of no bytes touches nothing, wherever it points (the source of a
    // padded load's rows of fill only may lie past the tensor).
    if a.fp.hi <= a.fp.lo {
        return Ok(());
    }
    if a.fp.hi > size {
        let name = name();
        return Err(format!(
            "{name}[{:#x}..{:#x}) is out of bounds ({name} holds {size:#x} bytes)",
            a.fp.lo, a.fp.hi
        ));
    }
    let align = match a.region {
        Region::Buf(s) => machine.memories.get(s).alignment,
        Region::Tensor(_) => eb,
    };
    if align > 1 && !a.fp.lo.is_multiple_of(align) {
        return Err(format!(
            "{}[{:#x}] is not aligned to {align} bytes",
            name(),
            a.fp.lo
        ));
    }
    Ok(())
}

/// The simulated memories. In timing-only mode nothing is allocated.
pub struct Memory {
    pub regions: Vec<Vec<u8>>,
}

impl Memory {
    pub fn new(machine: &Machine, gm: Vec<Vec<u8>>) -> Memory {
        let mut regions: Vec<Vec<u8>> = ONCHIP
            .iter()
            .map(|s| vec![0u8; machine.memories.get(*s).size.unwrap_or(0) as usize])
            .collect();
        regions.extend(gm);
        Memory { regions }
    }

    pub fn empty() -> Memory {
        Memory {
            regions: Vec::new(),
        }
    }
}

/// Bytes of an element, for cost computation.
pub fn bytes_of(t: DType) -> u64 {
    elem_bytes(t)
}

/// Value of a register-or-immediate as resolved.
pub fn scalar_of(v: &VSrc, resolved: i64) -> f32 {
    match v {
        VSrc::Float(x) => *x,
        VSrc::Int(_) | VSrc::Reg(_) => resolved as f32,
        VSrc::Tile(_) => 0.0,
    }
}
