//! Functional execution of one dispatched instruction on the memories. Operands were
//! bounds-checked at dispatch (`memory::accesses`); every slice access here still goes
//! through `get` so a bug reports an error instead of panicking.

use super::memory::{region_index, Memory, Resolved};
use crate::isa::{Addr, ArgOp, BinOp, Op, Program, RedOp, Tile, UnOp, VSrc};
use crate::types::DType;
use half::{bf16, f16};

/// Reusable buffers so that no instruction allocates per element.
#[derive(Default)]
pub struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
    out: Vec<f32>,
    ia: Vec<i64>,
    ib: Vec<i64>,
    bytes: Vec<u8>,
}

type R<T> = Result<T, String>;

fn oob() -> String {
    "internal: access outside a checked operand".into()
}

fn slice(m: &Memory, region: usize, off: u64, len: u64) -> R<&[u8]> {
    m.regions
        .get(region)
        .and_then(|b| b.get(off as usize..(off + len) as usize))
        .ok_or_else(oob)
}

fn slice_mut(m: &mut Memory, region: usize, off: u64, len: u64) -> R<&mut [u8]> {
    m.regions
        .get_mut(region)
        .and_then(|b| b.get_mut(off as usize..(off + len) as usize))
        .ok_or_else(oob)
}

/// Appends `n` elements at byte `off` as f32.
fn read_f32s(bytes: &[u8], dt: DType, out: &mut Vec<f32>) {
    match dt {
        DType::F32 => out.extend(
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        ),
        DType::I32 => out.extend(
            bytes
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f32),
        ),
        DType::F16 => out.extend(
            bytes
                .chunks_exact(2)
                .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()),
        ),
        DType::BF16 => out.extend(
            bytes
                .chunks_exact(2)
                .map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f32()),
        ),
        DType::Mask => out.extend(bytes.iter().map(|&c| f32::from(c != 0))),
        DType::I8 => out.extend(bytes.iter().map(|&c| f32::from(c as i8))),
        DType::U8 => out.extend(bytes.iter().map(|&c| f32::from(c))),
    }
}

/// `dst += src`, element by element in `dt`: i32 wraps, floats add in f32 and round to
/// `dt` (a scatter's atomic add).
fn add_into(dst: &mut [u8], src: &[u8], dt: DType) {
    if dt == DType::I32 {
        for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
            let sum = i32::from_le_bytes([d[0], d[1], d[2], d[3]])
                .wrapping_add(i32::from_le_bytes([s[0], s[1], s[2], s[3]]));
            d.copy_from_slice(&sum.to_le_bytes());
        }
        return;
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    read_f32s(dst, dt, &mut a);
    read_f32s(src, dt, &mut b);
    for (x, y) in a.iter_mut().zip(&b) {
        *x += y;
    }
    write_f32s(dst, dt, &a);
}

/// Stores f32 values rounding to nearest-even into f16/bf16; into i32 as Rust `as`.
fn write_f32s(bytes: &mut [u8], dt: DType, vals: &[f32]) {
    match dt {
        DType::F32 => bytes
            .chunks_exact_mut(4)
            .zip(vals)
            .for_each(|(c, v)| c.copy_from_slice(&v.to_le_bytes())),
        DType::I32 => bytes
            .chunks_exact_mut(4)
            .zip(vals)
            .for_each(|(c, v)| c.copy_from_slice(&(*v as i32).to_le_bytes())),
        DType::F16 => bytes
            .chunks_exact_mut(2)
            .zip(vals)
            .for_each(|(c, v)| c.copy_from_slice(&f16::from_f32(*v).to_le_bytes())),
        DType::BF16 => bytes
            .chunks_exact_mut(2)
            .zip(vals)
            .for_each(|(c, v)| c.copy_from_slice(&bf16::from_f32(*v).to_le_bytes())),
        // Any nonzero value is true: a cast to a mask is `!= 0`.
        DType::Mask => bytes
            .iter_mut()
            .zip(vals)
            .for_each(|(c, v)| *c = u8::from(*v != 0.0)),
        // Truncated toward zero and saturated, as Rust's `as` (a float's cast).
        DType::I8 => bytes
            .iter_mut()
            .zip(vals)
            .for_each(|(c, v)| *c = *v as i8 as u8),
        DType::U8 => bytes.iter_mut().zip(vals).for_each(|(c, v)| *c = *v as u8),
    }
}

fn read_i32s(bytes: &[u8], out: &mut Vec<i64>) {
    out.extend(
        bytes
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64),
    );
}

fn write_i32s(bytes: &mut [u8], vals: &[i64]) {
    bytes
        .chunks_exact_mut(4)
        .zip(vals)
        .for_each(|(c, v)| c.copy_from_slice(&(*v as i32).to_le_bytes()));
}

/// A resolved 2-D view: region, byte address, rows, cols, row stride (elements).
#[derive(Clone, Copy)]
struct View {
    region: usize,
    addr: u64,
    rows: u64,
    cols: u64,
    stride: u64,
}

fn view(t: &Tile, r: &Resolved, i: usize) -> View {
    View {
        region: region_index(t.addr.region),
        addr: r.addr[i],
        rows: r.val[2 * i].max(0) as u64,
        cols: r.val[2 * i + 1].max(0) as u64,
        stride: t.stride.max(0) as u64,
    }
}

/// Reads `v` as f32 broadcast to `rows x cols` (a 1-row or 1-col view repeats).
fn read_view(m: &Memory, v: View, dt: DType, rows: u64, cols: u64, out: &mut Vec<f32>) -> R<()> {
    out.clear();
    let eb = dt.bytes();
    for r in 0..rows {
        let sr = if v.rows == 1 { 0 } else { r };
        let off = v.addr + sr * v.stride * eb;
        if v.cols == 1 && cols != 1 {
            let start = out.len();
            read_f32s(slice(m, v.region, off, eb)?, dt, out);
            let x = out.get(start).copied().unwrap_or(0.0);
            out.resize(start + cols as usize, x);
        } else {
            read_f32s(slice(m, v.region, off, cols * eb)?, dt, out);
        }
    }
    Ok(())
}

fn read_view_i(m: &Memory, v: View, rows: u64, cols: u64, out: &mut Vec<i64>) -> R<()> {
    out.clear();
    for r in 0..rows {
        let sr = if v.rows == 1 { 0 } else { r };
        let off = v.addr + sr * v.stride * 4;
        if v.cols == 1 && cols != 1 {
            let start = out.len();
            read_i32s(slice(m, v.region, off, 4)?, out);
            let x = out.get(start).copied().unwrap_or(0);
            out.resize(start + cols as usize, x);
        } else {
            read_i32s(slice(m, v.region, off, cols * 4)?, out);
        }
    }
    Ok(())
}

fn write_view(m: &mut Memory, v: View, dt: DType, vals: &[f32]) -> R<()> {
    let eb = dt.bytes();
    for (r, row) in vals
        .chunks(v.cols.max(1) as usize)
        .take(v.rows as usize)
        .enumerate()
    {
        write_f32s(
            slice_mut(m, v.region, v.addr + r as u64 * v.stride * eb, v.cols * eb)?,
            dt,
            row,
        );
    }
    Ok(())
}

fn write_view_i(m: &mut Memory, v: View, vals: &[i64]) -> R<()> {
    for (r, row) in vals
        .chunks(v.cols.max(1) as usize)
        .take(v.rows as usize)
        .enumerate()
    {
        write_i32s(
            slice_mut(m, v.region, v.addr + r as u64 * v.stride * 4, v.cols * 4)?,
            row,
        );
    }
    Ok(())
}

/// An i32 reduction: sums wrap at 32 bits, as i32 arithmetic does everywhere; the
/// identities are 0, `i32::MIN` and `i32::MAX`.
fn reduce_i32(m: &mut Memory, s: &mut Scratch, op: RedOp, axis: u8, d: View, sv: View) -> R<()> {
    read_view_i(m, sv, sv.rows, sv.cols, &mut s.ia)?;
    let (init, f): (i32, fn(i32, i32) -> i32) = match op {
        RedOp::Sum => (0, i32::wrapping_add),
        RedOp::Max => (i32::MIN, i32::max),
        RedOp::Min => (i32::MAX, i32::min),
    };
    // Lanes hold i32 values (`read_i32s`).
    let lane = |x: i64| x as i32;
    s.ib.clear();
    let cols = sv.cols.max(1) as usize;
    if axis == 1 {
        s.ib.extend(
            s.ia.chunks(cols)
                .map(|row| i64::from(row.iter().fold(init, |acc, x| f(acc, lane(*x))))),
        );
    } else {
        let mut out = vec![init; cols];
        for row in s.ia.chunks(cols) {
            out.iter_mut()
                .zip(row)
                .for_each(|(o, x)| *o = f(*o, lane(*x)));
        }
        s.ib.extend(out.into_iter().map(i64::from));
    }
    write_view_i(m, d, &s.ib)
}

/// A reduction of `src` along `axis` fits `dst`: one column (axis 1) or one row.
fn reduced_shape(d: View, sv: View, axis: u8) -> R<()> {
    let want = if axis == 1 {
        (sv.rows, 1)
    } else {
        (1, sv.cols)
    };
    if (d.rows, d.cols) != want {
        return Err(format!(
            "reducing a {} x {} tile along axis {axis} gives {} x {}, but the destination is {} x {}",
            sv.rows, sv.cols, want.0, want.1, d.rows, d.cols
        ));
    }
    Ok(())
}

/// The position of the largest (`ArgOp::Max`) or smallest lane, numpy's way: the
/// first of equal lanes, and the first NaN when there is one.
fn arg_pick(op: ArgOp, lanes: impl Iterator<Item = f64>) -> i64 {
    let mut best: Option<(usize, f64)> = None;
    for (i, x) in lanes.enumerate() {
        if x.is_nan() {
            return i as i64;
        }
        let better = match (best, op) {
            (None, _) => true,
            (Some((_, b)), ArgOp::Max) => x > b,
            (Some((_, b)), ArgOp::Min) => x < b,
        };
        if better {
            best = Some((i, x));
        }
    }
    best.map_or(0, |(i, _)| i as i64)
}

fn check_bcast(src: View, dst: View) -> R<()> {
    if (src.rows == dst.rows || src.rows == 1) && (src.cols == dst.cols || src.cols == 1) {
        Ok(())
    } else {
        Err(format!(
            "a {} x {} operand does not broadcast to the {} x {} destination",
            src.rows, src.cols, dst.rows, dst.cols
        ))
    }
}

pub fn unary(op: UnOp, x: f32) -> f32 {
    let sigmoid = |x: f32| 1.0 / (1.0 + (-x).exp());
    match op {
        UnOp::Exp => x.exp(),
        UnOp::Log => x.ln(),
        UnOp::Exp2 => x.exp2(),
        UnOp::Log2 => x.log2(),
        UnOp::Sqrt => x.sqrt(),
        UnOp::Rsqrt => 1.0 / x.sqrt(),
        UnOp::Abs => x.abs(),
        UnOp::Neg => -x,
        // As the reference: NaN stays NaN (`f32::max` would give 0).
        UnOp::Relu => {
            if x < 0.0 {
                0.0
            } else {
                x
            }
        }
        UnOp::Sigmoid => sigmoid(x),
        UnOp::Tanh => x.tanh(),
        UnOp::Gelu => 0.5 * x * (1.0 + (0.797_884_6 * (x + 0.044715 * x * x * x)).tanh()),
        UnOp::Silu => x * sigmoid(x),
        UnOp::Recip => 1.0 / x,
    }
}

/// The i32 lanes' unary ops, as numpy computes them: negation and `abs` wrap
/// (`abs(-2^31)` stays `-2^31`). `None` for the float-only ops, which validation refuses.
fn unary_i(op: UnOp) -> Option<fn(i32) -> i32> {
    match op {
        UnOp::Neg => Some(i32::wrapping_neg),
        UnOp::Abs => Some(i32::wrapping_abs),
        UnOp::Relu => Some(|x| x.max(0)),
        _ => None,
    }
}

pub fn binary(op: BinOp, a: f32, b: f32) -> f32 {
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Max => nan_max(a, b),
        BinOp::Min => nan_min(a, b),
        // No float form: `execute` refuses these before it gets here.
        BinOp::And
        | BinOp::Or
        | BinOp::Xor
        | BinOp::Shl
        | BinOp::Shr
        | BinOp::FloorDiv
        | BinOp::Mod => f32::NAN,
    }
}

/// numpy's `maximum`: NaN in either operand gives NaN (`f32::max` would drop it), as in
/// the reference interpreter.
fn nan_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || a > b {
        a
    } else {
        b
    }
}

/// numpy's `minimum`: NaN propagates.
fn nan_min(a: f32, b: f32) -> f32 {
    if a.is_nan() || a < b {
        a
    } else {
        b
    }
}

fn binary_i(op: BinOp, a: i64, b: i64) -> i64 {
    let (a, b) = (a as i32, b as i32);
    (match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::Max => a.max(b),
        BinOp::Min => a.min(b),
        BinOp::Div => a.checked_div(b).unwrap_or(0),
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Shl if (0..32).contains(&b) => a.wrapping_shl(b as u32),
        BinOp::Shl => 0,
        BinOp::Shr if (0..32).contains(&b) => a >> b,
        BinOp::Shr => a >> 31,
        BinOp::FloorDiv | BinOp::Mod if b == 0 => 0,
        BinOp::FloorDiv => {
            let q = a.wrapping_div(b);
            let inexact = a.wrapping_rem(b) != 0;
            q - i32::from(inexact && (a < 0) != (b < 0))
        }
        BinOp::Mod => {
            let r = a.wrapping_rem(b);
            r + if r != 0 && (r < 0) != (b < 0) { b } else { 0 }
        }
    }) as i64
}

/// Copies `dims` (outermost first; extents, src and dst strides in elements) of raw
/// elements, through a scratch buffer so source and destination may share a region.
fn copy_strided(
    m: &mut Memory,
    s: &mut Scratch,
    eb: u64,
    src: (usize, u64),
    dst: (usize, u64),
    dims: &[(u64, u64, u64)],
) -> R<()> {
    let mut idx = [0u64; 4];
    let n = dims.len().min(4);
    if dims.iter().any(|d| d.0 == 0) {
        return Ok(());
    }
    // The innermost dimension moves as one slice when both sides are contiguous.
    let (inner_e, inner_ss, inner_ds) = dims.get(n.wrapping_sub(1)).copied().unwrap_or((1, 1, 1));
    let run = inner_ss == 1 && inner_ds == 1;
    let outer = if run { n - 1 } else { n };
    loop {
        let (mut so, mut d_o) = (0u64, 0u64);
        for (i, d) in dims.iter().enumerate().take(outer) {
            so += idx[i] * d.1;
            d_o += idx[i] * d.2;
        }
        if run {
            s.bytes.clear();
            s.bytes
                .extend_from_slice(slice(m, src.0, src.1 + so * eb, inner_e * eb)?);
            slice_mut(m, dst.0, dst.1 + d_o * eb, inner_e * eb)?.copy_from_slice(&s.bytes);
        } else {
            s.bytes.clear();
            s.bytes
                .extend_from_slice(slice(m, src.0, src.1 + so * eb, eb)?);
            slice_mut(m, dst.0, dst.1 + d_o * eb, eb)?.copy_from_slice(&s.bytes);
        }
        // Odometer over the outer dimensions.
        let mut k = outer;
        loop {
            if k == 0 {
                return Ok(());
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < dims.get(k).map_or(0, |d| d.0) {
                break;
            }
            idx[k] = 0;
        }
    }
}

fn addr_region(a: &Addr) -> usize {
    region_index(a.region)
}

/// Executes `op` on the memories.
pub fn execute(prog: &Program, m: &mut Memory, s: &mut Scratch, op: &Op, r: &Resolved) -> R<()> {
    match op {
        Op::Dma {
            dtype,
            dst,
            src,
            dims,
        } => {
            let d: Vec<(u64, u64, u64)> = dims
                .iter()
                .zip(r.val)
                .map(|(d, e)| {
                    (
                        e.max(0) as u64,
                        d.src_stride.max(0) as u64,
                        d.dst_stride.max(0) as u64,
                    )
                })
                .collect();
            copy_strided(
                m,
                s,
                dtype.bytes(),
                (addr_region(src), r.addr[1]),
                (addr_region(dst), r.addr[0]),
                &d,
            )
        }
        Op::DmaPad {
            dtype,
            dst,
            src,
            width,
            src_stride,
            dst_stride,
            value,
            ..
        } => {
            let (rows, len, left) = (
                r.val[0].max(0) as u64,
                r.val[1].max(0) as u64,
                r.val[2].max(0) as u64,
            );
            let width = (*width).max(0) as u64;
            if left + len > width {
                return Err(format!(
                    "dmapad fills {left} lanes and copies {len} elements into a row of {width}"
                ));
            }
            let eb = dtype.bytes();
            let mut fill = vec![0u8; eb as usize];
            if *dtype == DType::I32 {
                fill.copy_from_slice(&(*value as i32).to_le_bytes());
            } else {
                write_f32s(&mut fill, *dtype, &[*value as f32]);
            }
            let (sstride, dstride) = ((*src_stride).max(0) as u64, (*dst_stride).max(0) as u64);
            for row in 0..rows {
                // A row of fill only (`len` 0) reads nothing: its source may lie past
                // the tensor (the rows a padded load fills below it).
                let from = if len == 0 {
                    Vec::new()
                } else {
                    slice(
                        m,
                        addr_region(src),
                        r.addr[1] + row * sstride * eb,
                        len * eb,
                    )?
                    .to_vec()
                };
                let to = slice_mut(
                    m,
                    addr_region(dst),
                    r.addr[0] + row * dstride * eb,
                    width * eb,
                )?;
                for (lane, out) in to.chunks_exact_mut(eb as usize).enumerate() {
                    let lane = lane as u64;
                    if lane >= left && lane < left + len {
                        let at = ((lane - left) * eb) as usize;
                        out.copy_from_slice(&from[at..at + eb as usize]);
                    } else {
                        out.copy_from_slice(&fill);
                    }
                }
            }
            Ok(())
        }
        Op::Gather {
            dtype,
            dst,
            src,
            index,
            src_stride,
            dst_stride,
            ..
        }
        | Op::Scatter {
            dtype,
            dst,
            src,
            index,
            src_stride,
            dst_stride,
            ..
        } => {
            let gather = matches!(op, Op::Gather { .. });
            let (rows, len) = (r.val[0].max(0) as u64, r.val[1].max(0) as u64);
            let eb = dtype.bytes();
            s.ia.clear();
            read_i32s(
                slice(m, addr_region(index), r.addr[2], rows * 4)?,
                &mut s.ia,
            );
            let (gm, gm_addr, gm_stride) = if gather {
                (src, r.addr[1], *src_stride)
            } else {
                (dst, r.addr[0], *dst_stride)
            };
            let gm_bytes = m.regions.get(addr_region(gm)).map_or(0, |b| b.len() as u64);
            let row_bytes = gm_stride.max(0) as u64 * eb;
            // Rows `ix` with gm_addr + ix * row_bytes + len * eb <= gm_bytes are in range.
            let room = gm_bytes.checked_sub(gm_addr + len * eb);
            let limit = match room {
                None => 0,
                Some(_) if row_bytes == 0 => u64::MAX,
                Some(room) => room / row_bytes + 1,
            };
            let indices = std::mem::take(&mut s.ia);
            for (k, &ix) in indices.iter().enumerate() {
                if ix < 0 || ix as u64 >= limit {
                    s.ia = indices;
                    return Err(format!(
                        "{} index {ix} (element {k} of the index tile) is out of range 0..{limit} for `{}`",
                        if gather { "gather" } else { "scatter" },
                        prog.region_name(gm.region)
                    ));
                }
                let g = gm_addr + ix as u64 * row_bytes;
                let k = k as u64;
                let (from, to) = if gather {
                    (
                        (addr_region(src), g),
                        (
                            addr_region(dst),
                            r.addr[0] + k * (*dst_stride).max(0) as u64 * eb,
                        ),
                    )
                } else {
                    (
                        (
                            addr_region(src),
                            r.addr[1] + k * (*src_stride).max(0) as u64 * eb,
                        ),
                        (addr_region(dst), g),
                    )
                };
                s.bytes.clear();
                s.bytes
                    .extend_from_slice(slice(m, from.0, from.1, len * eb)?);
                let add = matches!(op, Op::Scatter { add: true, .. });
                if add {
                    // The row adds into its destination, rounded to the dtype.
                    add_into(slice_mut(m, to.0, to.1, len * eb)?, &s.bytes, *dtype);
                } else {
                    slice_mut(m, to.0, to.1, len * eb)?.copy_from_slice(&s.bytes);
                }
            }
            s.ia = indices;
            Ok(())
        }
        Op::Mov2d {
            dtype,
            dst,
            src,
            transpose,
        } => {
            let (d, sv) = (view(dst, r, 0), view(src, r, 1));
            let want = if *transpose {
                (sv.cols, sv.rows)
            } else {
                (sv.rows, sv.cols)
            };
            if (d.rows, d.cols) != want {
                return Err(format!(
                    "mov2d destination is {} x {}, expected {} x {}",
                    d.rows, d.cols, want.0, want.1
                ));
            }
            let eb = dtype.bytes();
            if !*transpose {
                let dims = [(sv.rows, sv.stride, d.stride), (sv.cols, 1, 1)];
                return copy_strided(m, s, eb, (sv.region, sv.addr), (d.region, d.addr), &dims);
            }
            // Transposed: source column c becomes destination row c.
            let dims = [(sv.cols, 1, d.stride), (sv.rows, sv.stride, 1)];
            copy_strided(m, s, eb, (sv.region, sv.addr), (d.region, d.addr), &dims)
        }
        Op::Mmad { dtype, c, a, b, .. } => {
            let dim = |i: usize| r.val[i].max(0) as usize;
            let mnk = (dim(0), dim(1), dim(2));
            product(m, s, *dtype, [c, a, b], r, mnk, r.val[3] != 0)
        }
        // `mmad` with one row: the same loop, so the same bits.
        Op::Mmv { dtype, c, a, b, .. } => {
            let dim = |i: usize| r.val[i].max(0) as usize;
            product(
                m,
                s,
                *dtype,
                [c, a, b],
                r,
                (1, dim(0), dim(1)),
                r.val[2] != 0,
            )
        }
        Op::Fix { dtype, dst, src } => {
            convert(m, s, view(dst, r, 0), view(src, r, 1), *dtype, DType::F32)
        }
        Op::VCast { to, from, dst, src } => {
            convert(m, s, view(dst, r, 0), view(src, r, 1), *to, *from)
        }
        Op::VCopy {
            dtype: DType::I32,
            dst,
            src,
        } => {
            let (d, sv) = (view(dst, r, 0), view(src, r, 1));
            check_bcast(sv, d)?;
            read_view_i(m, sv, d.rows, d.cols, &mut s.ia)?;
            write_view_i(m, d, &s.ia)
        }
        Op::VCopy { dtype, dst, src } => {
            convert(m, s, view(dst, r, 0), view(src, r, 1), *dtype, *dtype)
        }
        Op::VUnary {
            op,
            dtype,
            dst,
            src,
        } => {
            let (d, sv) = (view(dst, r, 0), view(src, r, 1));
            check_bcast(sv, d)?;
            let op = *op;
            if *dtype == DType::I32 {
                let f = unary_i(op).ok_or_else(|| format!("vector {op:?} is float-only"))?;
                read_view_i(m, sv, d.rows, d.cols, &mut s.ia)?;
                s.ia.iter_mut().for_each(|x| *x = f(*x as i32) as i64);
                return write_view_i(m, d, &s.ia);
            }
            read_view(m, sv, *dtype, d.rows, d.cols, &mut s.a)?;
            s.a.iter_mut().for_each(|x| *x = unary(op, *x));
            write_view(m, d, *dtype, &s.a)
        }
        Op::VBinary {
            op,
            dtype,
            dst,
            a,
            b,
        } => {
            let d = view(dst, r, 0);
            let op = *op;
            if *dtype == DType::I32 {
                read_ints(m, s, [a, b], 1, r, d)?;
                s.ia.iter_mut()
                    .zip(&s.ib)
                    .for_each(|(x, y)| *x = binary_i(op, *x, *y));
                return write_view_i(m, d, &s.ia);
            }
            if op.is_integer_only() {
                return Err(format!("{op:?} takes i32 lanes, not {dtype:?}"));
            }
            read_floats(m, s, [a, b], 1, *dtype, r, d)?;
            s.a.iter_mut()
                .zip(&s.b)
                .for_each(|(x, y)| *x = binary(op, *x, *y));
            write_view(m, d, *dtype, &s.a)
        }
        // i32 lanes compare exactly (not through f32, which rounds past 2^24).
        Op::VCmp {
            op,
            dtype,
            dst,
            a,
            b,
        } => {
            let d = view(dst, r, 0);
            let op = *op;
            s.out.clear();
            if *dtype == DType::I32 {
                read_ints(m, s, [a, b], 1, r, d)?;
                let lanes = s.ia.iter().zip(&s.ib);
                s.out.extend(lanes.map(|(x, y)| f32::from(op.holds(x, y))));
            } else {
                read_floats(m, s, [a, b], 1, *dtype, r, d)?;
                let lanes = s.a.iter().zip(&s.b);
                s.out.extend(lanes.map(|(x, y)| f32::from(op.holds(x, y))));
            }
            write_view(m, d, DType::Mask, &s.out)
        }
        Op::VSel {
            dtype,
            dst,
            mask,
            a,
            b,
        } => {
            let d = view(dst, r, 0);
            let mv = view(mask, r, 1);
            check_bcast(mv, d)?;
            let mut keep = std::mem::take(&mut s.out);
            let read = read_view(m, mv, DType::Mask, d.rows, d.cols, &mut keep);
            let result = read.and_then(|()| {
                if *dtype == DType::I32 {
                    read_ints(m, s, [a, b], 2, r, d)?;
                    select(&keep, &mut s.ia, &s.ib);
                    return write_view_i(m, d, &s.ia);
                }
                read_floats(m, s, [a, b], 2, *dtype, r, d)?;
                select(&keep, &mut s.a, &s.b);
                write_view(m, d, *dtype, &s.a)
            });
            s.out = keep;
            result
        }
        Op::VIota { axis, dst, .. } => {
            let d = view(dst, r, 0);
            s.ia.clear();
            for row in 0..d.rows {
                let lane = |col: u64| if *axis == 0 { row } else { col } as i64;
                s.ia.extend((0..d.cols).map(lane));
            }
            write_view_i(m, d, &s.ia)
        }
        Op::VDup { dtype, dst, value } => {
            let d = view(dst, r, 0);
            let n = (d.rows * d.cols) as usize;
            if *dtype == DType::I32 {
                let v = if let VSrc::Float(x) = value {
                    *x as i64
                } else {
                    r.vector_scalar(1)
                };
                fill(&mut s.ia, n, v);
                return write_view_i(m, d, &s.ia);
            }
            fill(
                &mut s.a,
                n,
                super::memory::scalar_of(value, r.vector_scalar(1)),
            );
            write_view(m, d, *dtype, &s.a)
        }
        Op::VReduce {
            op,
            dtype,
            axis,
            dst,
            src,
        } => {
            let (d, sv) = (view(dst, r, 0), view(src, r, 1));
            reduced_shape(d, sv, *axis)?;
            if *dtype == DType::I32 {
                return reduce_i32(m, s, *op, *axis, d, sv);
            }
            read_view(m, sv, *dtype, sv.rows, sv.cols, &mut s.a)?;
            let (init, f): (f32, fn(f32, f32) -> f32) = match op {
                RedOp::Sum => (0.0, |a, b| a + b),
                RedOp::Max => (f32::NEG_INFINITY, nan_max),
                RedOp::Min => (f32::INFINITY, nan_min),
            };
            s.out.clear();
            let cols = sv.cols.max(1) as usize;
            if *axis == 1 {
                s.out.extend(
                    s.a.chunks(cols)
                        .map(|row| row.iter().fold(init, |acc, x| f(acc, *x))),
                );
            } else {
                s.out.resize(sv.cols as usize, init);
                for row in s.a.chunks(cols) {
                    s.out.iter_mut().zip(row).for_each(|(o, x)| *o = f(*o, *x));
                }
            }
            write_view(m, d, *dtype, &s.out)
        }
        Op::VArgReduce {
            op,
            dtype,
            axis,
            dst,
            src,
        } => {
            let (d, sv) = (view(dst, r, 0), view(src, r, 1));
            reduced_shape(d, sv, *axis)?;
            // Every lane as f64, which holds i32 and the float dtypes exactly.
            let lanes: Vec<f64> = if *dtype == DType::I32 {
                read_view_i(m, sv, sv.rows, sv.cols, &mut s.ia)?;
                s.ia.iter().map(|&x| x as f64).collect()
            } else {
                read_view(m, sv, *dtype, sv.rows, sv.cols, &mut s.a)?;
                s.a.iter().map(|&x| f64::from(x)).collect()
            };
            let cols = sv.cols.max(1) as usize;
            s.ib.clear();
            if *axis == 1 {
                s.ib.extend(
                    lanes
                        .chunks(cols)
                        .map(|row| arg_pick(*op, row.iter().copied())),
                );
            } else {
                let rows = lanes.len() / cols;
                s.ib.extend((0..cols).map(|c| {
                    arg_pick(
                        *op,
                        (0..rows).map(|r| lanes.get(r * cols + c).copied().unwrap_or(0.0)),
                    )
                }));
            }
            write_view_i(m, d, &s.ib)
        }
        // The S pipe runs the scalar instructions and loop control itself
        // (`timing::Engine::s_step`); flags and barriers move no data.
        Op::Mov { .. }
        | Op::Alu { .. }
        | Op::Sld { .. }
        | Op::Sst { .. }
        | Op::Sldg { .. }
        | Op::Loop { .. }
        | Op::EndLoop
        | Op::SetFlag { .. }
        | Op::WaitFlag { .. }
        | Op::Barrier { .. } => Ok(()),
    }
}

/// `C[mm, nn] = (acc ? C : 0) + A[mm, kk] @ B[kk, nn]` for `mmad` and `mmv`, with C, A
/// and B at `r.addr[0..3]`.
fn product(
    m: &mut Memory,
    s: &mut Scratch,
    dtype: DType,
    [c, a, b]: [&Addr; 3],
    r: &Resolved,
    (mm, kk, nn): (usize, usize, usize),
    acc: bool,
) -> R<()> {
    let eb = dtype.bytes();
    s.a.clear();
    read_f32s(
        slice(m, addr_region(a), r.addr[1], (mm * kk) as u64 * eb)?,
        dtype,
        &mut s.a,
    );
    s.b.clear();
    read_f32s(
        slice(m, addr_region(b), r.addr[2], (kk * nn) as u64 * eb)?,
        dtype,
        &mut s.b,
    );
    // The product is summed from zero in k order and only then added to C:
    // `C + (A @ B)`, the reference interpreter's `acc + x @ w`, bit for bit.
    s.out.clear();
    s.out.resize(mm * nn, 0.0);
    for i in 0..mm {
        for p in 0..kk {
            let x = s.a.get(i * kk + p).copied().unwrap_or(0.0);
            let brow = s.b.get(p * nn..(p + 1) * nn).unwrap_or(&[]);
            if let Some(orow) = s.out.get_mut(i * nn..(i + 1) * nn) {
                orow.iter_mut().zip(brow).for_each(|(o, y)| *o += x * y);
            }
        }
    }
    if acc {
        s.a.clear();
        read_f32s(
            slice(m, addr_region(c), r.addr[0], (mm * nn) as u64 * 4)?,
            DType::F32,
            &mut s.a,
        );
        s.out.iter_mut().zip(&s.a).for_each(|(o, c)| *o += c);
    }
    write_f32s(
        slice_mut(m, addr_region(c), r.addr[0], (mm * nn) as u64 * 4)?,
        DType::F32,
        &s.out,
    );
    Ok(())
}

/// Reads the two vector sources `srcs` (memory positions `first` and `first + 1`)
/// broadcast to the destination `d` into `bufs`: a tile through `tile`, a scalar through
/// `scalar` (given the operand and its resolved value).
fn read_sources<T: Copy>(
    srcs: [&VSrc; 2],
    first: usize,
    r: &Resolved,
    d: View,
    bufs: [&mut Vec<T>; 2],
    mut tile: impl FnMut(View, &mut Vec<T>) -> R<()>,
    scalar: impl Fn(&VSrc, i64) -> T,
) -> R<()> {
    let n = (d.rows * d.cols) as usize;
    for (i, (src, buf)) in (first..).zip(srcs.into_iter().zip(bufs)) {
        match src {
            VSrc::Tile(t) => {
                check_bcast(view(t, r, i), d)?;
                tile(view(t, r, i), buf)?;
            }
            other => fill(buf, n, scalar(other, r.vector_scalar(i))),
        }
    }
    Ok(())
}

/// The sources as f32 lanes, into `s.a` and `s.b`.
fn read_floats(
    m: &Memory,
    s: &mut Scratch,
    srcs: [&VSrc; 2],
    first: usize,
    dtype: DType,
    r: &Resolved,
    d: View,
) -> R<()> {
    let tile = |v, buf: &mut Vec<f32>| read_view(m, v, dtype, d.rows, d.cols, buf);
    let scalar = super::memory::scalar_of;
    read_sources(srcs, first, r, d, [&mut s.a, &mut s.b], tile, scalar)
}

/// The sources as exact i32 lanes, into `s.ia` and `s.ib`.
fn read_ints(
    m: &Memory,
    s: &mut Scratch,
    srcs: [&VSrc; 2],
    first: usize,
    r: &Resolved,
    d: View,
) -> R<()> {
    let tile = |v, buf: &mut Vec<i64>| read_view_i(m, v, d.rows, d.cols, buf);
    let scalar = |src: &VSrc, reg| match src {
        VSrc::Float(x) => *x as i64,
        _ => reg,
    };
    read_sources(srcs, first, r, d, [&mut s.ia, &mut s.ib], tile, scalar)
}

/// `a = keep ? a : b`, lane by lane.
fn select<T: Copy>(keep: &[f32], a: &mut [T], b: &[T]) {
    for ((x, y), k) in a.iter_mut().zip(b).zip(keep) {
        if *k == 0.0 {
            *x = *y;
        }
    }
}

fn fill<T: Copy>(buf: &mut Vec<T>, n: usize, v: T) {
    buf.clear();
    buf.resize(n, v);
}

/// Integer lanes of `from` into `to`, each wrapped into `to`'s range.
fn convert_ints(
    m: &mut Memory,
    s: &mut Scratch,
    d: View,
    sv: View,
    to: DType,
    from: DType,
) -> R<()> {
    let (fb, tb) = (from.bytes(), to.bytes());
    let read = |c: &[u8]| -> i64 {
        match from {
            DType::I8 => i64::from(c[0] as i8),
            DType::U8 => i64::from(c[0]),
            _ => i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        }
    };
    s.ia.clear();
    for r in 0..d.rows {
        let sr = if sv.rows == 1 { 0 } else { r };
        let row = slice(m, sv.region, sv.addr + sr * sv.stride * fb, sv.cols * fb)?;
        for c in 0..d.cols {
            let sc = if sv.cols == 1 { 0 } else { c };
            let at = (sc * fb) as usize;
            s.ia.push(to.wrap_int(read(&row[at..at + fb as usize])));
        }
    }
    for (r, row) in s.ia.chunks(d.cols.max(1) as usize).enumerate() {
        let out = slice_mut(m, d.region, d.addr + r as u64 * d.stride * tb, d.cols * tb)?;
        for (c, &x) in out.chunks_exact_mut(tb as usize).zip(row) {
            match to {
                DType::I32 => c.copy_from_slice(&(x as i32).to_le_bytes()),
                _ => c[0] = x as u8,
            }
        }
    }
    Ok(())
}

fn convert(m: &mut Memory, s: &mut Scratch, d: View, sv: View, to: DType, from: DType) -> R<()> {
    check_bcast(sv, d)?;
    if from == DType::I32 && to == DType::I32 {
        read_view_i(m, sv, d.rows, d.cols, &mut s.ia)?;
        return write_view_i(m, d, &s.ia);
    }
    let int = |t: DType| matches!(t, DType::I32 | DType::I8 | DType::U8);
    if int(from) && int(to) {
        // Integer to integer wraps, as numpy's `astype` does (not through f32, which
        // would round an i32 and saturate an 8-bit result).
        return convert_ints(m, s, d, sv, to, from);
    }
    read_view(m, sv, from, d.rows, d.cols, &mut s.a)?;
    write_view(m, d, to, &s.a)
}
