//! Hand-built lowered programs standing in for lower-to-pipes output.

use super::*;
use tilescope::isa::{AluOp, UnOp, VSrc};

/// y = exp(x) over `tiles` tiles of 8 x 64 f32, `slots`-buffered:
/// MTE2 load -> V exp -> MTE3 store.
pub fn streamed_exp(tiles: i64, slots: u32) -> Lowered {
    let mut b = Builder::new();
    let rows = 8 * tiles as u64;
    let x = b.tensor("x", &[rows, 64]);
    let y = b.tensor("y", &[rows, 64]);
    let (lid, ctr, slot) = b.begin_loop(Val::Imm(tiles), slots);
    let off = |b: &mut Builder| b.alu(AluOp::Mul, ctr, Val::Imm(2048));
    stream_tile(&mut b, (x, y), off, (lid, slot, slots), UnOp::Exp);
    b.end_loop();
    b.finish()
}

/// In the body of loop `lid` (slot register `slot`, `slots` slots): load the 8 x 64
/// tile at the byte offset `off` computes of `x` into a `slots`-buffered UB tile (MTE2), apply `op`
/// in place (V), store it at the same offset of `y` (MTE3).
fn stream_tile(
    b: &mut Builder,
    (x, y): (u32, u32),
    off: impl FnOnce(&mut Builder) -> Reg,
    (lid, slot, slots): (LoopId, Option<Reg>, u32),
    op: UnOp,
) {
    let addrs: Vec<u64> = (0..slots.max(1) as u64).map(|s| s * 2048).collect();
    let t = b.buffer("t", MemSpace::UB, 2048, &addrs, (slots > 1).then_some(lid));
    let (base, cur, upd) = match slot {
        Some(s) => (
            Some(b.alu(AluOp::Mul, s, Val::Imm(2048))),
            rd_cur(t),
            wr_cur(t),
        ),
        None => (None, rd(t), wr(t)),
    };
    let off = off(b);
    b.push(
        dma(at(MemSpace::UB, base, 0), gm(x, Some(off), 0), 512),
        vec![upd, rd_gm(x)],
    );
    let tl = tile(at(MemSpace::UB, base, 0), 8, 64);
    b.push(
        Op::VUnary {
            op,
            dtype: DType::F32,
            dst: tl,
            src: tl,
        },
        vec![cur, upd],
    );
    b.push(
        dma(gm(y, Some(off), 0), at(MemSpace::UB, base, 0), 512),
        vec![cur, wr_gm(y)],
    );
}

/// y = A @ B for 16 x (16*ktiles) by (16*ktiles) x 16, accumulating in L0C across the
/// K loop: MTE2 -> MTE1 -> M (loop-carried accumulator) -> FIX.
pub fn matmul_chain(ktiles: i64) -> Lowered {
    let mut b = Builder::new();
    let k = 16 * ktiles as u64;
    let a = b.tensor("a", &[16, k]);
    let bm = b.tensor("b", &[k, 16]);
    let y = b.tensor("y", &[16, 16]);
    let a1 = b.buffer("a.l1", MemSpace::L1, 1024, &[0], None);
    let b1 = b.buffer("b.l1", MemSpace::L1, 1024, &[1024], None);
    let a0 = b.buffer("a.l0a", MemSpace::L0A, 1024, &[0], None);
    let b0 = b.buffer("b.l0b", MemSpace::L0B, 1024, &[0], None);
    let c = b.buffer("c", MemSpace::L0C, 1024, &[0], None);
    let (_, kk, _) = b.begin_loop(Val::Imm(ktiles), 1);
    let aoff = b.alu(AluOp::Mul, kk, Val::Imm(64));
    let boff = b.alu(AluOp::Mul, kk, Val::Imm(1024));
    b.push(
        Op::Dma {
            dtype: DType::F32,
            dst: at(MemSpace::L1, None, 0),
            src: gm(a, Some(aoff), 0),
            dims: vec![
                DmaDim {
                    extent: Val::Imm(16),
                    src_stride: k as i64,
                    dst_stride: 16,
                },
                DmaDim {
                    extent: Val::Imm(16),
                    src_stride: 1,
                    dst_stride: 1,
                },
            ],
        },
        vec![wr(a1), rd_gm(a)],
    );
    b.push(
        dma(at(MemSpace::L1, None, 1024), gm(bm, Some(boff), 0), 256),
        vec![wr(b1), rd_gm(bm)],
    );
    let l1t = |off| tile(at(MemSpace::L1, None, off), 16, 16);
    b.push(
        Op::Mov2d {
            dtype: DType::F32,
            dst: tile(at(MemSpace::L0A, None, 0), 16, 16),
            src: l1t(0),
            transpose: false,
        },
        vec![wr(a0), rd(a1)],
    );
    b.push(
        Op::Mov2d {
            dtype: DType::F32,
            dst: tile(at(MemSpace::L0B, None, 0), 16, 16),
            src: l1t(1024),
            transpose: false,
        },
        vec![wr(b0), rd(b1)],
    );
    let accum = b.alu(AluOp::Min, kk, Val::Imm(1));
    b.push(
        Op::Mmad {
            dtype: DType::F32,
            c: at(MemSpace::L0C, None, 0),
            a: at(MemSpace::L0A, None, 0),
            b: at(MemSpace::L0B, None, 0),
            m: Val::Imm(16),
            k: Val::Imm(16),
            n: Val::Imm(16),
            acc: Val::Reg(accum),
        },
        vec![rd(a0), rd(b0), rd(c), wr(c)],
    );
    b.end_loop();
    b.push(
        Op::Fix {
            dtype: DType::F32,
            dst: tile(gm(y, None, 0), 16, 16),
            src: tile(at(MemSpace::L0C, None, 0), 16, 16),
        },
        vec![rd(c), wr_gm(y)],
    );
    b.finish()
}

/// Nested loops: for each of `outer` row blocks, clear an accumulator row, then add
/// `inner` tiles into it, then store it.
pub fn nested(outer: i64, inner: i64) -> Lowered {
    let mut b = Builder::new();
    let x = b.tensor("x", &[(outer * inner * 8) as u64, 64]);
    let y = b.tensor("y", &[(outer * 8) as u64, 64]);
    let t = b.buffer("t", MemSpace::UB, 2048, &[0], None);
    let acc = b.buffer("acc", MemSpace::UB, 2048, &[2048], None);
    let (_, o, _) = b.begin_loop(Val::Imm(outer), 1);
    let at_acc = tile(at(MemSpace::UB, None, 2048), 8, 64);
    b.push(
        Op::VDup {
            dtype: DType::F32,
            dst: at_acc,
            value: VSrc::Float(0.0),
        },
        vec![wr(acc)],
    );
    let (_, i, _) = b.begin_loop(Val::Imm(inner), 1);
    let row = b.alu(AluOp::Mul, o, Val::Imm(inner));
    let row = b.alu(AluOp::Add, row, Val::Reg(i));
    let off = b.alu(AluOp::Mul, row, Val::Imm(2048));
    b.push(
        dma(at(MemSpace::UB, None, 0), gm(x, Some(off), 0), 512),
        vec![wr(t), rd_gm(x)],
    );
    let tt = tile(at(MemSpace::UB, None, 0), 8, 64);
    b.push(
        Op::VBinary {
            op: tilescope::isa::BinOp::Add,
            dtype: DType::F32,
            dst: at_acc,
            a: VSrc::Tile(at_acc),
            b: VSrc::Tile(tt),
        },
        vec![rd(acc), rd(t), wr(acc)],
    );
    b.end_loop();
    let yoff = b.alu(AluOp::Mul, o, Val::Imm(2048));
    b.push(
        dma(gm(y, Some(yoff), 0), at(MemSpace::UB, None, 2048), 512),
        vec![rd(acc), wr_gm(y)],
    );
    b.end_loop();
    b.finish()
}

/// A loop whose trip count is a register holding `trips` (0 in the zero-trip test),
/// between a vector fill and a store of the same tile.
pub fn maybe_empty_loop(trips: i64) -> Lowered {
    let mut b = Builder::new();
    let x = b.tensor("x", &[8, 64]);
    let y = b.tensor("y", &[8, 64]);
    let t = b.buffer("t", MemSpace::UB, 2048, &[0], None);
    let tt = tile(at(MemSpace::UB, None, 0), 8, 64);
    b.push(
        Op::VDup {
            dtype: DType::F32,
            dst: tt,
            value: VSrc::Float(1.5),
        },
        vec![wr(t)],
    );
    let n = b.mov(trips);
    b.begin_loop(Val::Reg(n), 1);
    b.push(
        dma(at(MemSpace::UB, None, 0), gm(x, None, 0), 512),
        vec![wr(t), rd_gm(x)],
    );
    b.push(
        Op::VUnary {
            op: UnOp::Abs,
            dtype: DType::F32,
            dst: tt,
            src: tt,
        },
        vec![rd(t), wr(t)],
    );
    b.end_loop();
    b.push(
        dma(gm(y, None, 0), at(MemSpace::UB, None, 0), 512),
        vec![rd(t), wr_gm(y)],
    );
    b.finish()
}

/// Two loads into two tiles, each consumed by its own vector op: two MTE2 -> V pairs.
pub fn two_loads() -> Lowered {
    loads_first(2)
}

/// `n` loads into UB tiles of their own, all before the first negate; then each tile
/// negated (V) and stored (MTE3). Every set of the MTE2 -> V pairs comes before every
/// wait, so each of their ids stays live until the negates begin.
pub fn loads_first(n: i64) -> Lowered {
    let mut b = Builder::new();
    let (x, y) = (
        b.tensor("x", &[8 * n as u64, 64]),
        b.tensor("y", &[8 * n as u64, 64]),
    );
    let tiles: Vec<_> = (0..n)
        .map(|k| {
            (
                b.buffer(
                    &format!("t{k}"),
                    MemSpace::UB,
                    2048,
                    &[2048 * k as u64],
                    None,
                ),
                2048 * k,
            )
        })
        .collect();
    for &(t, addr) in &tiles {
        load_tile(&mut b, x, (t, addr), addr);
    }
    for &(t, addr) in &tiles {
        negate_tile(&mut b, (t, addr));
        store_tile(&mut b, y, (t, addr), addr);
    }
    b.finish()
}

/// `n` tiles of y = -x, straight-line: load tile k (MTE2), negate it (V), store it
/// (MTE3). With `shared`, every tile goes through one UB buffer, so the next load waits
/// for the negate (V -> MTE2) and the next negate for the store (MTE3 -> V): each pair's
/// wait happens before the next pair's set. Otherwise each tile has a buffer of its own
/// and nothing orders a pipe's later work after another pipe's earlier work.
pub fn chain(n: i64, shared: bool) -> Lowered {
    let mut b = Builder::new();
    let (x, y) = (
        b.tensor("x", &[8 * n as u64, 64]),
        b.tensor("y", &[8 * n as u64, 64]),
    );
    let one = b.buffer("t", MemSpace::UB, 2048, &[0], None);
    for k in 0..n {
        let tile = if shared {
            (one, 0)
        } else {
            let addr = 2048 * k;
            (
                b.buffer(&format!("t{k}"), MemSpace::UB, 2048, &[addr as u64], None),
                addr,
            )
        };
        load_tile(&mut b, x, tile, 2048 * k);
        negate_tile(&mut b, tile);
        store_tile(&mut b, y, tile, 2048 * k);
    }
    b.finish()
}

/// Loads the 8 x 64 f32 tile at byte `off` of tensor `x` into UB buffer `t` at `addr`.
pub fn load_tile(b: &mut Builder, x: u32, (t, addr): (BufferId, i64), off: i64) {
    b.push(
        dma(at(MemSpace::UB, None, addr), gm(x, None, off), 512),
        vec![wr(t), rd_gm(x)],
    );
}

/// Negates the 8 x 64 f32 tile of UB buffer `t` at `addr` in place.
pub fn negate_tile(b: &mut Builder, (t, addr): (BufferId, i64)) {
    let tt = tile(at(MemSpace::UB, None, addr), 8, 64);
    b.push(
        Op::VUnary {
            op: UnOp::Neg,
            dtype: DType::F32,
            dst: tt,
            src: tt,
        },
        vec![rd(t), wr(t)],
    );
}

/// Stores the tile of UB buffer `t` at `addr` to byte `off` of tensor `y`.
pub fn store_tile(b: &mut Builder, y: u32, (t, addr): (BufferId, i64), off: i64) {
    b.push(
        dma(gm(y, None, off), at(MemSpace::UB, None, addr), 512),
        vec![rd(t), wr_gm(y)],
    );
}

/// y = -x streamed through a perfect nest of `outer` x `inner` iterations (the inner
/// count in a register when `inner_in_reg`, so it may be zero), the tile rotating over
/// `slots` slots with the inner loop.
pub fn nested_stream(outer: i64, inner: i64, slots: u32, inner_in_reg: bool) -> Lowered {
    let mut b = Builder::new();
    let rows = (8 * outer * inner).max(8) as u64;
    let x = b.tensor("x", &[rows, 64]);
    let y = b.tensor("y", &[rows, 64]);
    let n = inner_in_reg.then(|| b.mov(inner));
    let (_, o, _) = b.begin_loop(Val::Imm(outer), 1);
    let count = n.map_or(Val::Imm(inner), Val::Reg);
    let (lid, i, slot) = b.begin_loop(count, slots);
    let off = |b: &mut Builder| {
        let row = b.alu(AluOp::Mul, o, Val::Imm(inner));
        let row = b.alu(AluOp::Add, row, Val::Reg(i));
        b.alu(AluOp::Mul, row, Val::Imm(2048))
    };
    stream_tile(&mut b, (x, y), off, (lid, slot, slots), UnOp::Neg);
    b.end_loop();
    b.end_loop();
    b.finish()
}

/// A row `w` loaded once before a loop and added to a fresh tile in each of `trips`
/// iterations (filled on V, stored on MTE3); after the loop `w` is loaded again, over
/// the tile every iteration read: a read-after-write into the loop and a
/// write-after-read out of it, both the same in every iteration.
pub fn invariant_operand(trips: i64) -> Lowered {
    let mut b = Builder::new();
    let wt = b.tensor("w", &[8, 64]);
    let y = b.tensor("y", &[8 * trips as u64, 64]);
    let w = b.buffer("w", MemSpace::UB, 2048, &[0], None);
    let t = b.buffer("t", MemSpace::UB, 2048, &[2048], None);
    let wl = tile(at(MemSpace::UB, None, 0), 8, 64);
    let tl = tile(at(MemSpace::UB, None, 2048), 8, 64);
    let load_w = |b: &mut Builder| {
        b.push(
            dma(at(MemSpace::UB, None, 0), gm(wt, None, 0), 512),
            vec![wr(w), rd_gm(wt)],
        )
    };
    load_w(&mut b);
    let (_, i, _) = b.begin_loop(Val::Imm(trips), 1);
    b.push(
        Op::VDup {
            dtype: DType::F32,
            dst: tl,
            value: VSrc::Float(1.0),
        },
        vec![wr(t)],
    );
    b.push(
        Op::VBinary {
            op: tilescope::isa::BinOp::Add,
            dtype: DType::F32,
            dst: tl,
            a: VSrc::Tile(tl),
            b: VSrc::Tile(wl),
        },
        vec![rd(t), rd(w), wr(t)],
    );
    let off = b.alu(AluOp::Mul, i, Val::Imm(2048));
    b.push(
        dma(gm(y, Some(off), 0), at(MemSpace::UB, None, 2048), 512),
        vec![rd(t), wr_gm(y)],
    );
    b.end_loop();
    load_w(&mut b);
    b.finish()
}
