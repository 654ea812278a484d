//! Helpers for the insert-sync and emit tests: a small builder for lowered programs,
//! the compile-and-simulate round trip, and `assert_sync_minimal`.
#![allow(dead_code)]

pub mod programs;

use tilescope::compile::SyncStrategy;
use tilescope::isa::{Addr, DmaDim, Op, Program, Reg, Region, Tile, Val};
use tilescope::lowered::{
    Access, Buffer, BufferId, Instr, Item, Loop, LoopId, Lowered, Slot, Target,
};
use tilescope::machine::Machine;
use tilescope::passes::emit::emit;
use tilescope::passes::sync::{insert_sync, without_pair, Reason, SyncReport};
use tilescope::sim::{simulate, SimMode, SimResult};
use tilescope::tensor::Tensor;
use tilescope::types::{DType, MemSpace};

struct Open {
    id: LoopId,
    counter: Reg,
    count: Val,
    slots: Option<(u32, Reg)>,
    outer: Vec<Item>,
}

/// Builds a `Lowered` program instruction by instruction.
#[derive(Default)]
pub struct Builder {
    pub l: Lowered,
    items: Vec<Item>,
    open: Vec<Open>,
    loops: u32,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    pub fn tensor(&mut self, name: &str, shape: &[u64]) -> u32 {
        self.l.tensors.push(tilescope::isa::TensorDecl {
            name: name.into(),
            dtype: DType::F32,
            shape: shape.to_vec(),
        });
        self.l.tensors.len() as u32 - 1
    }

    pub fn buffer(
        &mut self,
        name: &str,
        space: MemSpace,
        bytes: u64,
        addrs: &[u64],
        rotates_with: Option<LoopId>,
    ) -> BufferId {
        self.l.buffers.push(Buffer {
            name: name.into(),
            space,
            bytes,
            addrs: addrs.to_vec(),
            rotates_with,
            span: None,
        });
        BufferId(self.l.buffers.len() as u32 - 1)
    }

    pub fn reg(&mut self) -> Reg {
        self.l.new_reg()
    }

    pub fn push(&mut self, op: Op, accesses: Vec<Access>) {
        self.items.push(Item::Instr(Instr {
            op,
            prov: Default::default(),
            accesses,
        }));
    }

    /// Opens a loop; returns its id, counter and (with `slots > 1`) slot register.
    pub fn begin_loop(&mut self, count: Val, slots: u32) -> (LoopId, Reg, Option<Reg>) {
        let id = LoopId(self.loops);
        self.loops += 1;
        let counter = self.reg();
        let slots = (slots > 1).then(|| (slots, self.reg()));
        let outer = std::mem::take(&mut self.items);
        self.open.push(Open {
            id,
            counter,
            count,
            slots,
            outer,
        });
        (id, counter, slots.map(|s| s.1))
    }

    pub fn end_loop(&mut self) {
        let o = self.open.pop().expect("end_loop without begin_loop");
        let body = std::mem::replace(&mut self.items, o.outer);
        self.items.push(Item::Loop(Loop {
            id: o.id,
            counter: o.counter,
            count: o.count,
            // A register count may be zero here, as the programs these tests build mean.
            min_count: 0,
            branch: None,
            slots: o.slots,
            body,
            span: Default::default(),
        }));
    }

    pub fn finish(mut self) -> Lowered {
        assert!(self.open.is_empty(), "unclosed loop");
        self.l.body = self.items;
        self.l
    }

    // Scalar helpers.
    pub fn mov(&mut self, v: i64) -> Reg {
        let r = self.reg();
        self.push(
            Op::Mov {
                dst: r,
                src: Val::Imm(v),
            },
            vec![],
        );
        r
    }

    pub fn alu(&mut self, op: tilescope::isa::AluOp, a: Reg, b: Val) -> Reg {
        let r = self.reg();
        self.push(Op::Alu { op, dst: r, a, b }, vec![]);
        r
    }
}

pub fn access(target: Target, slot: Slot, write: bool) -> Access {
    Access {
        target,
        slot,
        range: None,
        write,
        region: None,
    }
}

pub fn rd(b: BufferId) -> Access {
    access(Target::Buffer(b), Slot::All, false)
}
pub fn wr(b: BufferId) -> Access {
    access(Target::Buffer(b), Slot::All, true)
}
pub fn rd_cur(b: BufferId) -> Access {
    access(Target::Buffer(b), Slot::Current, false)
}
pub fn wr_cur(b: BufferId) -> Access {
    access(Target::Buffer(b), Slot::Current, true)
}
pub fn rd_gm(t: u32) -> Access {
    access(Target::Tensor(t), Slot::All, false)
}
pub fn wr_gm(t: u32) -> Access {
    access(Target::Tensor(t), Slot::All, true)
}

pub fn at(space: MemSpace, base: Option<Reg>, offset: i64) -> Addr {
    Addr {
        region: Region::Buf(space),
        base,
        offset,
    }
}

pub fn gm(t: u32, base: Option<Reg>, offset: i64) -> Addr {
    Addr {
        region: Region::Tensor(t),
        base,
        offset,
    }
}

pub fn tile(addr: Addr, rows: i64, cols: i64) -> Tile {
    Tile {
        addr,
        rows: Val::Imm(rows),
        cols: Val::Imm(cols),
        stride: cols,
    }
}

/// A contiguous f32 transfer of `n` elements.
pub fn dma(dst: Addr, src: Addr, n: i64) -> Op {
    Op::Dma {
        dtype: DType::F32,
        dst,
        src,
        dims: vec![DmaDim {
            extent: Val::Imm(n),
            src_stride: 1,
            dst_stride: 1,
        }],
    }
}

/// Seeded inputs (zeros for tensors named `y*`).
pub fn inputs(p: &Program) -> Vec<Tensor> {
    p.tensors
        .iter()
        .enumerate()
        .map(|(k, d)| {
            let n = d.shape.iter().product::<u64>() as usize;
            if d.name.starts_with('y') {
                Tensor::zeros(d.dtype, d.shape.clone())
            } else {
                let v: Vec<f32> = (0..n)
                    .map(|i| ((i * 7 + k * 13) % 17) as f32 / 8.0 - 1.0)
                    .collect();
                Tensor::from_f32(d.dtype, d.shape.clone(), &v)
            }
        })
        .collect()
}

pub fn emit_ok(l: &Lowered, m: &Machine) -> Program {
    match emit(l, m) {
        Ok(p) => p,
        Err(d) => panic!("emit failed: {d:#?}"),
    }
}

pub fn run(l: &Lowered, m: &Machine) -> SimResult {
    let p = emit_ok(l, m);
    simulate(&p, m, inputs(&p), SimMode::FULL)
}

/// `l` with `strategy`'s sync inserted, and the report.
pub fn synced(l: &Lowered, strategy: SyncStrategy, m: &Machine) -> (Lowered, SyncReport) {
    let mut out = l.clone();
    match insert_sync(&mut out, strategy, m) {
        Ok(r) => (out, r),
        Err(d) => panic!("insert-sync failed: {d:#?}"),
    }
}

pub fn assert_clean(r: &SimResult, what: &str) {
    assert!(r.races.is_empty(), "{what}: races {:#?}", r.races);
    assert!(r.errors.is_empty(), "{what}: errors {:#?}", r.errors);
}

pub fn outputs(r: &SimResult) -> Vec<(String, Vec<f32>)> {
    r.outputs
        .iter()
        .map(|o| (o.name.clone(), o.tensor.to_f32_vec()))
        .collect()
}

/// `auto` sync leaves no race or flag error and computes what `barrier` computes; with
/// `none` the simulator shows races when `expect_races`. Returns the auto run.
pub fn assert_sync_correct(
    l: &Lowered,
    m: &Machine,
    expect_races: bool,
) -> (Lowered, SyncReport, SimResult) {
    let (auto, report) = synced(l, SyncStrategy::Auto, m);
    let ra = run(&auto, m);
    assert_clean(&ra, "auto");
    let (bar, _) = synced(l, SyncStrategy::Barrier, m);
    let rb = run(&bar, m);
    assert_clean(&rb, "barrier");
    assert_eq!(
        outputs(&ra),
        outputs(&rb),
        "auto and barrier outputs differ"
    );
    let (none, _) = synced(l, SyncStrategy::None, m);
    let rn = run(&none, m);
    if expect_races {
        assert!(!rn.races.is_empty(), "no race reported without sync");
    }
    (auto, report, ra)
}

/// Every set/wait pair `auto` inserts into `l` is needed: with `auto` the simulator is
/// clean, and deleting any single pair (its set, wait, primes and drains) makes it
/// report a race, a flag error or a deadlock. Pairs that only keep a pipe from setting
/// a flag before the previous wait (reason `FlagReuse`) are skipped: whether that
/// happens depends on timing, which the race detector does not see.
pub fn assert_sync_minimal(l: &Lowered, m: &Machine) {
    let (auto, report) = synced(l, SyncStrategy::Auto, m);
    assert_clean(&run(&auto, m), "auto");
    for (k, pair) in report.pairs.iter().enumerate() {
        if pair.reason == Reason::FlagReuse {
            continue;
        }
        let cut = without_pair(&auto, pair);
        let r = run(&cut, m);
        assert!(
            !r.races.is_empty() || !r.errors.is_empty(),
            "pair {k} ({} -> {}, ids {:?}) is redundant: the simulator is clean without it",
            pair.src,
            pair.dst,
            pair.ids
        );
    }
}

/// Counts instructions of the final program matching `f`.
pub fn count_ops(p: &Program, f: impl Fn(&Op) -> bool) -> usize {
    p.instrs.iter().filter(|i| f(&i.op)).count()
}

/// The program with its first top-level `mov` (a loop's trip count) set to `n`.
pub fn with_trips(l: &Lowered, n: i64) -> Lowered {
    let mut l = l.clone();
    for item in &mut l.body {
        if let Item::Instr(i) = item {
            if let Op::Mov { src, .. } = &mut i.op {
                *src = Val::Imm(n);
                break;
            }
        }
    }
    l
}
