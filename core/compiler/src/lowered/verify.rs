//! The verifier of the lowered program, run after lower-to-pipes and insert-sync (in
//! tests and debug builds, like the other verifiers). It checks what emit and the
//! simulator rely on but no longer see: the access annotations insert-sync reasons on,
//! the loop structure, virtual registers and the flag protocol.
//!
//! - Every instruction obeys its rules (`isa::validate_op_rules`; registers are still
//!   virtual, so not their numbering) and names only allocated registers.
//! - Loops are well nested: no `loop`/`endloop` instruction outside the loop items, each
//!   loop id once, no instruction in a body writes the counter of a loop around it, and a
//!   rotating buffer rotates with a loop that exists.
//! - Access annotations agree with the operands (`isa::operands`): each memory operand in
//!   an on-chip buffer or a GM tensor has an annotation on that buffer (the operand's
//!   address within the buffer's slots) or tensor that reads it if the operand is read
//!   and writes it if it is written, and each annotation belongs to some operand (a read
//!   annotation may also cover a written operand: an update in place keeps lanes).
//! - Every register is defined before it is used on every path. A loop body may run zero
//!   times, so what a body defines is not defined after the loop; the body starts with its
//!   counter defined, and its slot register when emit defines it (see `passes::emit`).
//! - Every `wait_flag` with an immediate id finds a `set_flag` of the same (src, dst, id)
//!   not yet consumed on every path, and no such flag is still set at the end. A flag set
//!   before a loop and waited in it (a prime), or set in it and waited after it (a drain),
//!   is followed through the loop's back edge. A `wait_flag` whose id is a register (the
//!   slot-following ids of a multi-buffered loop) needs a `set_flag` of the same pipe pair
//!   and id register somewhere; its flags are not counted, since each iteration sets and
//!   waits one of them and the primes and drains balance on their own. Explicit slots
//!   read and written at two phases (`b[(i + 1) % 2]`, `b[i % 2]`) give a pair whose set
//!   and wait compute their ids in two registers, and whose primes and drains name
//!   different ids (those the first waits and the last sets use): for a pipe pair with
//!   such a wait, a set of the pipe pair with any id register is enough, and its
//!   immediate ids are not counted either (the simulator checks every flag at run time).

use super::{Access, Item, Loop, Lowered, Target};
use crate::diag::{Location, Span, VerifierError, VerifierErrors};
use crate::isa::operands::{self, MemOperand, RegRole};
use crate::isa::{self, AluOp, Op, Reg, Region, Val};
use crate::limits::MAX_LOWERED_LOOP_DEPTH as MAX_DEPTH;
use crate::types::Pipe;

/// Checks `l`; every problem names the instruction (or loop) and its item path
/// (indices into `Lowered::body`, then into loop bodies), and its source span.
pub fn verify(l: &Lowered) -> Result<(), VerifierErrors> {
    let mut v = Verifier {
        l,
        names: l.names(),
        errors: Vec::new(),
        path: Vec::new(),
        nest_too_deep: false,
    };
    let mut loop_ids = Vec::new();
    let mut counters = Vec::new();
    v.structure(&l.body, &mut loop_ids, &mut counters);
    loop_ids.sort_unstable();
    for pair in loop_ids.windows(2) {
        if let [a, b] = pair {
            if a == b {
                v.errors.push(VerifierError::new(
                    Location::Program,
                    None,
                    format!("loop id {a} names more than one loop"),
                ));
            }
        }
    }
    for (i, b) in l.buffers.iter().enumerate() {
        if let Some(id) = b.rotates_with {
            if loop_ids.binary_search(&id.0).is_err() {
                v.errors.push(VerifierError::new(
                    Location::Program,
                    b.span,
                    format!(
                        "buffer b{i} %{} rotates with loop {}, which does not exist",
                        b.name, id.0
                    ),
                ));
            }
        }
    }
    // The walks below recurse into loop bodies; a nest too deep was reported above.
    if v.nest_too_deep {
        return Err(v.errors);
    }
    v.definitions(&l.body, &mut Defined::default());
    v.flags(l);
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

struct Verifier<'a> {
    l: &'a Lowered,
    /// The tensor declarations, for instruction text and validation.
    names: isa::Program,
    errors: VerifierErrors,
    /// The item path of the item being checked.
    path: Vec<usize>,
    nest_too_deep: bool,
}

impl Verifier<'_> {
    /// `problem`, prefixed with where it is.
    fn error_at(&mut self, op: &Op, problem: impl std::fmt::Display) {
        let text = isa::asm::op_text(&self.names, op);
        let location = Location::Lowered {
            text,
            path: self.path.clone(),
        };
        let span = self.span_at_path();
        self.errors
            .push(VerifierError::new(location, span, problem.to_string()));
    }

    /// An error about the loop `lp` at the current path.
    fn loop_error(&mut self, lp: &Loop, problem: impl std::fmt::Display) {
        let location = Location::Lowered {
            text: format!("loop {}", lp.id.0),
            path: self.path.clone(),
        };
        self.errors.push(VerifierError::new(
            location,
            Some(lp.span),
            problem.to_string(),
        ));
    }

    /// The source span of the item at the current path.
    fn span_at_path(&self) -> Option<Span> {
        let (&last, outer) = self.path.split_last()?;
        let mut items = &self.l.body;
        for &i in outer {
            match items.get(i)? {
                Item::Loop(lp) => items = &lp.body,
                Item::Instr(_) => return None,
            }
        }
        match items.get(last)? {
            Item::Instr(ins) => ins.prov.span,
            Item::Loop(lp) => Some(lp.span),
        }
    }

    fn too_deep(&mut self) -> bool {
        if self.path.len() <= MAX_DEPTH {
            return false;
        }
        self.errors.push(VerifierError::new(
            Location::Lowered {
                text: "a loop".into(),
                path: self.path.clone(),
            },
            self.span_at_path(),
            format!("loops nest deeper than {MAX_DEPTH}"),
        ));
        self.nest_too_deep = true;
        true
    }

    // ------------------------------------------------------------ structure

    /// Instruction rules, register numbering, loop nesting and access annotations.
    /// `loop_ids` collects every loop's id (checked for duplicates after); `counters`
    /// holds the counters of the loops around `items`.
    fn structure(&mut self, items: &[Item], loop_ids: &mut Vec<u32>, counters: &mut Vec<Reg>) {
        if self.too_deep() {
            return;
        }
        for (i, item) in items.iter().enumerate() {
            self.path.push(i);
            match item {
                Item::Instr(ins) => {
                    if let Err(e) = isa::validate_op_rules(&self.names, &ins.op) {
                        self.error_at(&ins.op, e);
                    }
                    if matches!(ins.op, Op::Loop { .. } | Op::EndLoop) {
                        self.error_at(
                            &ins.op,
                            "loops are items of the lowered program, not instructions",
                        );
                    }
                    let mut regs = Vec::new();
                    operands::registers(&ins.op, &mut |r, role| regs.push((r, role)));
                    for (r, role) in regs {
                        if u32::from(r.0) >= self.l.next_reg {
                            self.error_at(&ins.op, format!("r{} was never allocated", r.0));
                        }
                        if role == RegRole::Def && counters.contains(&r) {
                            self.error_at(
                                &ins.op,
                                format!("writes r{}, the counter of a loop around it", r.0),
                            );
                        }
                    }
                    self.annotations(&ins.op, &ins.accesses);
                }
                Item::Loop(lp) => {
                    self.loop_head(lp, loop_ids, counters);
                    counters.push(lp.counter);
                    self.structure(&lp.body, loop_ids, counters);
                    counters.pop();
                }
            }
            self.path.pop();
        }
    }

    fn loop_head(&mut self, lp: &Loop, loop_ids: &mut Vec<u32>, counters: &[Reg]) {
        let mut problems = Vec::new();
        loop_ids.push(lp.id.0);
        if counters.contains(&lp.counter) {
            problems.push(format!(
                "its counter r{} is the counter of a loop around it",
                lp.counter.0
            ));
        }
        let mut regs = vec![lp.counter];
        regs.extend(match lp.count {
            Val::Reg(r) => Some(r),
            Val::Imm(_) => None,
        });
        regs.extend(lp.slots.map(|(_, r)| r));
        for r in regs {
            if u32::from(r.0) >= self.l.next_reg {
                problems.push(format!("r{} was never allocated", r.0));
            }
        }
        if lp.slots.is_some_and(|(n, _)| n == 0) {
            problems.push("it rotates over zero slots".to_string());
        }
        for p in problems {
            self.loop_error(lp, p);
        }
    }

    /// Each memory operand covered by an annotation of its direction and target, and
    /// each annotation covering some operand.
    fn annotations(&mut self, op: &Op, accesses: &[Access]) {
        let mut mems = Vec::new();
        operands::mem_operands(op, &mut |m| mems.push(m));
        for m in &mems {
            for (needed, write) in [(m.access.reads(), false), (m.access.writes(), true)] {
                if needed && !accesses.iter().any(|a| self.covers(a, m, write)) {
                    let verb = if write { "writes" } else { "reads" };
                    let place = self.place(m);
                    self.error_at(op, format!("no access annotation {verb} {place}"));
                }
            }
        }
        for a in accesses {
            if let Some(problem) = self.annotation_problem(a) {
                self.error_at(op, problem);
                continue;
            }
            // A read of a written operand is allowed: lowering records one where an
            // update writes some lanes of a tile in place and keeps the others, so the
            // instruction orders after everything that wrote the lanes it keeps.
            let belongs = mems
                .iter()
                .any(|m| (!a.write || m.access.writes()) && self.covers(a, m, a.write));
            if !belongs {
                let target = self.target_name(a.target);
                let verb = if a.write { "writes" } else { "reads" };
                self.error_at(
                    op,
                    format!("the annotation that {verb} {target} belongs to no operand"),
                );
            }
        }
    }

    /// Whether annotation `a` is the access of `m` in direction `write`.
    fn covers(&self, a: &Access, m: &MemOperand, write: bool) -> bool {
        if a.write != write {
            return false;
        }
        match (a.target, m.addr.region) {
            (Target::Tensor(t), Region::Tensor(u)) => t == u,
            (Target::Buffer(b), Region::Buf(space)) => {
                self.l.buffers.get(b.0 as usize).is_some_and(|buf| {
                    // The static part of the address: the slot base (a register for a
                    // rotating buffer) and any in-tile offset are added to it.
                    let lo = buf.addrs.iter().min().copied().unwrap_or(0);
                    let hi = buf.addrs.iter().max().copied().unwrap_or(0);
                    let hi = hi.saturating_add(buf.bytes);
                    buf.space == space
                        && u64::try_from(m.addr.offset).is_ok_and(|o| lo <= o && o < hi)
                })
            }
            _ => false,
        }
    }

    /// What is wrong with an annotation on its own: an unknown target or a range outside it.
    fn annotation_problem(&self, a: &Access) -> Option<String> {
        let size = match a.target {
            Target::Buffer(b) => self.l.buffers.get(b.0 as usize).map(|buf| buf.bytes),
            Target::Tensor(t) => self.l.tensors.get(t as usize).map(|d| d.bytes()),
        };
        let target = self.target_name(a.target);
        let Some(size) = size else {
            return Some(format!(
                "an annotation names {target}, which does not exist"
            ));
        };
        match a.range {
            Some((lo, hi)) if lo > hi || hi > size => Some(format!(
                "an annotation covers bytes {lo}..{hi} of {target}, which holds {size}"
            )),
            _ => None,
        }
    }

    fn target_name(&self, t: Target) -> String {
        match t {
            Target::Buffer(b) => match self.l.buffers.get(b.0 as usize) {
                Some(buf) => format!("buffer b{} %{}", b.0, buf.name),
                None => format!("buffer b{}", b.0),
            },
            Target::Tensor(t) => format!("tensor {}", self.names.region_name(Region::Tensor(t))),
        }
    }

    fn place(&self, m: &MemOperand) -> String {
        match m.addr.region {
            Region::Buf(space) => format!("the {space} buffer at {:#x}", m.addr.offset),
            Region::Tensor(_) => format!("tensor {}", self.names.region_name(m.addr.region)),
        }
    }

    // ------------------------------------------------------------ definitions

    /// Reports each register read where some path reaches it without a definition.
    fn definitions(&mut self, items: &[Item], defined: &mut Defined) {
        if self.path.len() > MAX_DEPTH {
            return;
        }
        for (i, item) in items.iter().enumerate() {
            self.path.push(i);
            match item {
                Item::Instr(ins) => {
                    let mut undefined = Vec::new();
                    // Uses come before defs, so `add r1, r1, 1` reads the old r1.
                    operands::registers(&ins.op, &mut |r, role| match role {
                        RegRole::Use if !defined.has(r) && !undefined.contains(&r) => {
                            undefined.push(r)
                        }
                        RegRole::Use => {}
                        RegRole::Def => defined.add(r),
                    });
                    for r in undefined {
                        self.error_at(
                            &ins.op,
                            format!("r{} is used before it is defined on some path", r.0),
                        );
                    }
                }
                Item::Loop(lp) => {
                    if let Val::Reg(r) = lp.count {
                        if !defined.has(r) {
                            self.loop_error(
                                lp,
                                format!(
                                    "its count r{} is used before it is defined on some path",
                                    r.0
                                ),
                            );
                        }
                    }
                    // What the body defines stays inside: it may run zero times.
                    let mut inner = defined.clone();
                    inner.add(lp.counter);
                    if let Some((_, r)) = lp.slots {
                        if !writes(&lp.body, r, 0) {
                            inner.add(r);
                        }
                    }
                    self.definitions(&lp.body, &mut inner);
                }
            }
            self.path.pop();
        }
    }

    // ------------------------------------------------------------ flags

    fn flags(&mut self, l: &Lowered) {
        let mut keys = FlagKeys::default();
        keys.collect(&l.body, 0);
        let nodes = keys.nodes(&l.body);
        let mut pending = vec![0; keys.statics.len()];
        self.path.clear();
        self.flags_in(&l.body, &nodes, &keys, &mut pending);
        for (&(src, dst, id), &n) in keys.statics.iter().zip(&pending) {
            if n > 0 && !keys.phased(src, dst) {
                self.errors.push(VerifierError::new(
                    Location::Program,
                    None,
                    format!(
                        "set_flag {src}, {dst}, {id} is still set at the end of the program: \
                         no wait_flag consumes it"
                    ),
                ));
            }
        }
    }

    /// Walks `items` (with their `nodes`) from `pending`, reporting waits that find no set.
    fn flags_in(
        &mut self,
        items: &[Item],
        nodes: &[FlagNode],
        keys: &FlagKeys,
        pending: &mut Pending,
    ) {
        for (i, (item, node)) in items.iter().zip(nodes).enumerate() {
            self.path.push(i);
            match (item, node) {
                (Item::Loop(lp), FlagNode::Loop { after, body }) => {
                    // The state at the loop head, which is also the state after it.
                    *pending = through_loop(after, pending);
                    let mut inside = pending.clone();
                    self.flags_in(&lp.body, body, keys, &mut inside);
                }
                (Item::Instr(ins), node) => {
                    self.check_wait(&ins.op, node, keys, pending);
                    node.apply(pending);
                }
                // `nodes` mirrors `items`.
                (Item::Loop(_), _) => {}
            }
            self.path.pop();
        }
    }

    fn check_wait(&mut self, op: &Op, node: &FlagNode, keys: &FlagKeys, pending: &Pending) {
        if let FlagNode::Wait(k) = node {
            if pending.get(*k).is_none_or(|&n| n == 0) {
                self.error_at(op, "wait_flag without a matching set_flag on some path");
            }
        }
        if let Op::WaitFlag {
            src,
            dst,
            id: Val::Reg(r),
        } = *op
        {
            let same_pipes = keys
                .dynamic_sets
                .iter()
                .any(|&(s, d, _)| (s, d) == (src, dst));
            let matched =
                keys.dynamic_sets.contains(&(src, dst, r)) || (keys.phased(src, dst) && same_pipes);
            if !matched {
                self.error_at(
                    op,
                    "wait_flag without a set_flag of the same pipes and id register",
                );
            }
        }
    }
}

/// Whether an instruction of `items` (or a loop counter in them) writes `r`, as emit
/// asks before defining a loop's slot register.
fn writes(items: &[Item], r: Reg, depth: usize) -> bool {
    depth <= MAX_DEPTH
        && items.iter().any(|i| match i {
            Item::Instr(ins) => {
                let mut found = false;
                operands::registers(&ins.op, &mut |x, role| {
                    found |= x == r && role == RegRole::Def
                });
                found
            }
            Item::Loop(l) => l.counter == r || writes(&l.body, r, depth + 1),
        })
}

/// The registers defined on every path so far.
#[derive(Clone, Default)]
struct Defined(Vec<bool>);

impl Defined {
    fn has(&self, r: Reg) -> bool {
        self.0.get(usize::from(r.0)).copied().unwrap_or(false)
    }

    fn add(&mut self, r: Reg) {
        let i = usize::from(r.0);
        if self.0.len() <= i {
            self.0.resize(i + 1, false);
        }
        if let Some(d) = self.0.get_mut(i) {
            *d = true;
        }
    }
}

/// A lower bound, per static flag, of the sets no wait has consumed yet, on every path.
/// Hardware flags are binary, so counting to 2 (a flag set twice) is enough.
type Pending = Vec<u8>;
const PENDING_CAP: u8 = 2;

/// Per entry value of a flag (0 to `PENDING_CAP`), its value at a loop's head (and after
/// the loop), for each static flag: `[entry value][flag]`. The flags do not interact, so
/// a loop's effect on one flag depends only on that flag's value on entry.
type LoopEffect = [Pending; PENDING_CAP as usize + 1];

/// The flags a program uses: its static (src, dst, id) flags, numbered, and the pipes
/// and registers of its dynamic sets.
#[derive(Default)]
struct FlagKeys {
    statics: Vec<(Pipe, Pipe, i64)>,
    dynamic_sets: Vec<(Pipe, Pipe, Reg)>,
    dynamic_waits: Vec<(Pipe, Pipe, Reg)>,
    /// Id registers a loop computes as `(counter + offset) % count`: an explicit slot
    /// at a phase (`lowered::Slot::Follows`).
    phase_regs: Vec<Reg>,
}

/// What an item does to the static flags: the program's shape with each loop's effect
/// computed once, inner loops first.
enum FlagNode {
    Set(usize),
    Wait(usize),
    /// Touches no static flag.
    Other,
    Loop {
        after: LoopEffect,
        body: Vec<FlagNode>,
    },
}

impl FlagKeys {
    fn collect(&mut self, items: &[Item], depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for item in items {
            match item {
                Item::Instr(ins) => match ins.op {
                    Op::SetFlag { src, dst, id } | Op::WaitFlag { src, dst, id } => match id {
                        Val::Imm(i) => {
                            if !self.statics.contains(&(src, dst, i)) {
                                self.statics.push((src, dst, i));
                            }
                        }
                        Val::Reg(r) => {
                            if matches!(ins.op, Op::SetFlag { .. }) {
                                self.dynamic_sets.push((src, dst, r));
                            } else {
                                self.dynamic_waits.push((src, dst, r));
                            }
                        }
                    },
                    _ => {}
                },
                Item::Loop(l) => {
                    for w in l.body.windows(2) {
                        if let [Item::Instr(a), Item::Instr(b)] = w {
                            if let (
                                Op::Alu {
                                    op: AluOp::Add,
                                    dst,
                                    a: from,
                                    ..
                                },
                                Op::Alu {
                                    op: AluOp::Rem,
                                    dst: d2,
                                    a: a2,
                                    ..
                                },
                            ) = (&a.op, &b.op)
                            {
                                if *from == l.counter && dst == d2 && a2 == dst {
                                    self.phase_regs.push(*dst);
                                }
                            }
                        }
                    }
                    self.collect(&l.body, depth + 1)
                }
            }
        }
    }

    fn key(&self, src: Pipe, dst: Pipe, id: i64) -> Option<usize> {
        if self.phased(src, dst) {
            return None;
        }
        self.statics.iter().position(|&k| k == (src, dst, id))
    }

    /// Whether a dynamic flag of the pipe pair has its id at a slot phase: a pair on
    /// explicit slots.
    fn phased(&self, src: Pipe, dst: Pipe) -> bool {
        self.dynamic_waits
            .iter()
            .chain(&self.dynamic_sets)
            .any(|&(s, d, r)| (s, d) == (src, dst) && self.phase_regs.contains(&r))
    }

    /// The flag nodes of `items`. Recursion is bounded: `verify` checked the depth.
    fn nodes(&self, items: &[Item]) -> Vec<FlagNode> {
        items
            .iter()
            .map(|item| match item {
                Item::Instr(ins) => match ins.op {
                    Op::SetFlag {
                        src,
                        dst,
                        id: Val::Imm(i),
                    } => self.key(src, dst, i).map_or(FlagNode::Other, FlagNode::Set),
                    Op::WaitFlag {
                        src,
                        dst,
                        id: Val::Imm(i),
                    } => self
                        .key(src, dst, i)
                        .map_or(FlagNode::Other, FlagNode::Wait),
                    _ => FlagNode::Other,
                },
                Item::Loop(l) => {
                    let body = self.nodes(&l.body);
                    FlagNode::Loop {
                        after: self.loop_effect(&body),
                        body,
                    }
                }
            })
            .collect()
    }

    /// For each entry value, the state at the head of a loop with `body` once the back
    /// edge is taken into account: the meet (minimum) of the entry and the end of the
    /// body, iterated to its fixpoint. A flag's value only falls and has
    /// `PENDING_CAP + 1` values, so that many rounds reach it.
    fn loop_effect(&self, body: &[FlagNode]) -> LoopEffect {
        let mut out = LoopEffect::default();
        for (value, after) in (0..=PENDING_CAP).zip(out.iter_mut()) {
            let entry = vec![value; self.statics.len()];
            let mut head = entry.clone();
            for _ in 0..=PENDING_CAP {
                let mut end = head.clone();
                for node in body {
                    node.apply(&mut end);
                }
                let next: Pending = entry.iter().zip(&end).map(|(a, b)| *a.min(b)).collect();
                if next == head {
                    break;
                }
                head = next;
            }
            *after = head;
        }
        out
    }
}

impl FlagNode {
    /// Applies this item to `pending`. A wait that finds nothing leaves 0: the walk over
    /// the real states reports it.
    fn apply(&self, pending: &mut Pending) {
        match self {
            FlagNode::Set(k) => {
                if let Some(n) = pending.get_mut(*k) {
                    *n = (*n + 1).min(PENDING_CAP);
                }
            }
            FlagNode::Wait(k) => {
                if let Some(n) = pending.get_mut(*k) {
                    *n = n.saturating_sub(1);
                }
            }
            FlagNode::Other => {}
            FlagNode::Loop { after, .. } => *pending = through_loop(after, pending),
        }
    }
}

/// The state after a loop with effect `after` entered with `entry`.
fn through_loop(after: &LoopEffect, entry: &Pending) -> Pending {
    entry
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            after
                .get(usize::from(n))
                .and_then(|values| values.get(k))
                .copied()
                .unwrap_or(0)
        })
        .collect()
}
