//! The per-pipe program between `lower-to-pipes` and `emit`: instructions of the ISA
//! (`isa::Op`) in structured loops, each annotated with the on-chip buffers it reads and
//! writes. `insert-sync` reasons on these annotations (not on raw addresses) so that
//! distinct allocations never alias and distinct multi-buffer slots are disjoint;
//! `emit` allocates the scalar registers (virtual until then) and flattens the loops
//! into `loop`/`endloop`, producing the final `isa::Program`.

pub mod verify;

use crate::diag::{Diagnostic, Span};
use crate::isa::{Op, Provenance, Reg, TensorDecl, Val};
use crate::types::{MemSpace, Pipe};
use serde::{Deserialize, Serialize};

/// Index into `Lowered::buffers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BufferId(pub u32);

/// Index of a loop in program order (pre-order), for slot selection and back edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LoopId(pub u32);

impl crate::dense::DenseKey for LoopId {
    fn index(self) -> usize {
        self.0 as usize
    }
    fn from_index(index: usize) -> Self {
        LoopId(index as u32)
    }
}

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
    /// (`iteration % addrs.len()`). `None` for a `buffers` tile: each access names
    /// its slot (`Slot::Follows`, `Slot::Fixed`, or `Slot::All` for an index of
    /// another form).
    pub rotates_with: Option<LoopId>,
    /// Where the first tile it holds is defined: names a buffer of temporaries
    /// (`%0`) by its source.
    #[serde(default)]
    pub span: Option<crate::diag::Span>,
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
    /// Slot `iteration % slots` of the buffer's rotating loop (`@buffers`).
    Current,
    /// Slot `(counter of loop + offset) % slots` of a `buffers` tile, from an explicit
    /// slot index such as `b[(i + 1) % 2]` (the counter is the iteration number 0, 1, ...).
    Follows { loop_id: LoopId, offset: u32 },
    /// A constant slot of a `buffers` tile (`b[0]`).
    Fixed(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    pub target: Target,
    pub slot: Slot,
    /// Byte range within one slot of the buffer (within the tensor for GM);
    /// `None` means the whole slot/tensor (conservative).
    pub range: Option<(u64, u64)>,
    pub write: bool,
    /// For a GM access whose indices are affine in the loop counters: the box it touches
    /// (index into `Lowered::regions`). `None`: no better than `range`.
    #[serde(default)]
    pub region: Option<u32>,
}

impl Access {
    /// Whether this access and `other` may touch a common byte of their slot or tensor
    /// by `range` alone (a `None` range is the whole of it; an empty range touches
    /// nothing). Targets, slots and GM regions are the caller's to compare.
    pub fn bytes_may_overlap(&self, other: &Access) -> bool {
        match (self.range, other.range) {
            (Some((a0, a1)), Some((b0, b1))) => a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1,
            (Some((a0, a1)), None) | (None, Some((a0, a1))) => a0 < a1,
            (None, None) => true,
        }
    }
}

/// One axis of a [`GmRegion`]: the indices `start .. start + len`, where
/// `start = constant + sum(coefficient * counter)` over the counters (iteration numbers
/// 0, 1, ...) of the loops named. A tail iteration touches a prefix of `len`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AxisSpan {
    pub constant: i64,
    pub terms: Vec<(LoopId, i64)>,
    pub len: u64,
}

/// The box of tensor elements one GM access touches in one iteration, one span per
/// tensor axis: what `insert-sync` compares to omit syncs between disjoint regions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GmRegion {
    pub axes: Vec<AxisSpan>,
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
    /// The fewest iterations any run of the loop makes: a register count may be zero
    /// unless this says otherwise (insert-sync walks zero iterations only then).
    #[serde(default)]
    pub min_count: u64,
    /// The region of an `if`, with its condition in source terms: it runs once when
    /// its count is 1, not at all when 0. insert-sync walks it as either (and what it
    /// learns holds on both paths); the assembly notes the condition on its `loop`.
    #[serde(default)]
    pub branch: Option<String>,
    /// Multi-buffered loops: the slot count and the register holding
    /// `iteration % slots`, which also serves as the dynamic event id offset.
    pub slots: Option<(u32, Reg)>,
    pub body: Vec<Item>,
    pub span: Span,
}

// Instructions are nearly every item, and `vsel` (two tiles, two sources) sets their
// size: boxing them would add an allocation per instruction to save bytes on loops.
#[allow(clippy::large_enum_variant)]
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
    /// The GM regions accesses name (`Access::region`).
    #[serde(default)]
    pub regions: Vec<GmRegion>,
    /// Source names of registers that hold one (a loop variable, its iteration and
    /// slot), for the comments of emit's spill code.
    #[serde(default)]
    pub reg_names: Vec<(Reg, String)>,
}

impl Lowered {
    /// Instructions once flattened (each loop adds its `loop` and `endloop`).
    pub fn instruction_count(&self) -> usize {
        fn count(items: &[Item]) -> usize {
            items
                .iter()
                .map(|i| match i {
                    Item::Instr(_) => 1,
                    // Loop nesting is bounded by the front end (MAX_LOOP_NESTING).
                    Item::Loop(l) => 2 + count(&l.body),
                })
                .sum()
        }
        count(&self.body)
    }

    /// An error naming `MAX_PROGRAM_INSTRUCTIONS` when the program is larger.
    pub fn check_size(&self, pass: &str) -> Result<(), Diagnostic> {
        check_program_size(self.instruction_count(), pass)
    }
    /// A fresh virtual register.
    pub fn new_reg(&mut self) -> Reg {
        // Virtual registers are numbered by u16; a kernel within the IR size limits needs
        // far fewer, and saturating keeps this total (emit reports the overflow).
        let r = Reg(self.next_reg.min(u16::MAX as u32) as u16);
        self.next_reg = self.next_reg.saturating_add(1);
        r
    }

    /// A program holding only the tensor declarations, for printing instruction text.
    fn names(&self) -> crate::isa::Program {
        crate::isa::Program {
            tensors: self.tensors.clone(),
            ..Default::default()
        }
    }
}

/// The printed form shown after lower-to-pipes and insert-sync: the buffer table, then
/// the instructions in their loops, each tagged with its pipe; registers are virtual.
pub fn print(lowered: &Lowered) -> crate::ir::Printed {
    let mut out = crate::ir::Printed::default();
    let names = lowered.names();
    for t in &lowered.tensors {
        let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
        out.line(
            0,
            &format!(".tensor {} {}[{}]", t.name, t.dtype, dims.join(", ")),
            None,
        );
    }
    for (i, b) in lowered.buffers.iter().enumerate() {
        let addrs: Vec<String> = b.addrs.iter().map(|a| format!("{a:#x}")).collect();
        let rotation = b
            .rotates_with
            .map_or(String::new(), |l| format!(" rotates with loop {}", l.0));
        out.line(
            0,
            &format!(
                ".buffer b{i} %{} {} {} bytes at [{}]{rotation}",
                b.name,
                b.space,
                b.bytes,
                addrs.join(", ")
            ),
            None,
        );
    }
    print_items(&mut out, &names, &lowered.body, 0, &mut 0);
    out
}

/// Loop nesting is bounded by the front end's limits; the depth cap here only keeps the
/// indentation sane.
/// `next` counts items in print order, the numbering of `LineItem::Lowered` (emit's
/// `flatten` numbers them the same way).
fn print_items(
    out: &mut crate::ir::Printed,
    names: &crate::isa::Program,
    items: &[Item],
    depth: usize,
    next: &mut u32,
) {
    for item in items {
        let index = *next;
        *next += 1;
        let line_item = |end| Some(crate::ir::LineItem::Lowered { index, end });
        match item {
            Item::Instr(ins) => {
                let mut text = format!(
                    "{:<5} {}",
                    ins.pipe().name(),
                    crate::isa::asm::op_text(names, &ins.op)
                );
                if let Some(step) = ins.prov.step {
                    text.push_str(&format!("  !step {step}"));
                }
                out.item_line(depth.min(32), &text, ins.prov.span, line_item(false));
            }
            Item::Loop(l) => {
                let count = match l.count {
                    Val::Imm(n) => n.to_string(),
                    Val::Reg(r) => format!("r{}", r.0),
                };
                let slots = l
                    .slots
                    .map_or(String::new(), |(n, r)| format!(" slots {n} in r{}", r.0));
                let what = match &l.branch {
                    Some(cond) => format!("if {cond}"),
                    None => format!("loop {}", l.id.0),
                };
                out.item_line(
                    depth.min(32),
                    &format!("S     loop r{}, {count}{slots}  ; {what}", l.counter.0),
                    Some(l.span),
                    line_item(false),
                );
                print_items(out, names, &l.body, depth + 1, next);
                out.item_line(depth.min(32), "S     endloop", None, line_item(true));
            }
        }
    }
}

/// An error when a program of `n` instructions exceeds `MAX_PROGRAM_INSTRUCTIONS`.
pub fn check_program_size(n: usize, stage: &str) -> Result<(), Diagnostic> {
    use crate::limits::MAX_PROGRAM_INSTRUCTIONS;
    if n > MAX_PROGRAM_INSTRUCTIONS {
        return Err(Diagnostic::global(format!(
            "{stage}: the program has {n} instructions; the limit is \
             {MAX_PROGRAM_INSTRUCTIONS} (MAX_PROGRAM_INSTRUCTIONS): split the kernel"
        )));
    }
    Ok(())
}
