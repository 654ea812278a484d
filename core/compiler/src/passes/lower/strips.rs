//! Column strips of L0C accumulators. subtile-matmul splits a product into N blocks of
//! one accumulator (`matmul %a, %b, acc=%acc[.., %nb .. %nb + n]`). In a row-major tile
//! such a block would be strided, and would start `4 * nb` bytes into a row, off L0C's
//! alignment. So an accumulator with N blocks is laid out in column strips as wide as
//! its blocks: strip `j` holds columns `j*n .. (j+1)*n` of every row, rows `n` apart,
//! and every block is a dense tile at an aligned address (the matrix unit's own L0C
//! layout is blocked the same way, in 16-column fractals). The FIX that moves such an
//! accumulator out moves one strip at a time (`Lw::fix`).
//!
//! The layout belongs to the accumulator's values: it is read off its blocked products
//! and carried to every value that shares its buffer by a loop (init, argument, yield,
//! result) or by a product (accumulator, result). A value reached with two layouts is
//! an internal error; a value no blocked product reaches is row-major (one strip).

use crate::dense::DenseMap;
use crate::ir::{Index, Kernel, OpKind, ValueId, ValueMap};

/// The strip count of every value linked to an accumulating product (1: row-major).
pub(super) fn l0c_strips(k: &Kernel) -> Result<ValueMap<u64>, String> {
    let mut groups: Vec<Vec<ValueId>> = Vec::new();
    let mut seeds: Vec<(ValueId, u64)> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    k.walk_ops(|_, op| match &op.kind {
        OpKind::For(_) => groups.extend(op.carried_groups()),
        OpKind::MatMul {
            acc: Some(a),
            acc_block,
            ..
        } => {
            groups.push(
                std::iter::once(*a)
                    .chain(op.results.iter().copied())
                    .collect(),
            );
            let cols = k.values.get(*a).and_then(|v| v.ty.shape.get(1).copied());
            let strips = match (acc_block.get(1), cols) {
                (None | Some(Index::Full), _) => Some(1),
                (Some(Index::Range { len, .. }), Some(cols)) if *len > 0 => {
                    cols.is_multiple_of(*len).then_some(cols / len)
                }
                _ => None,
            };
            match strips {
                Some(q) => seeds.push((*a, q)),
                None => errors.push("an accumulator block that does not divide its columns".into()),
            }
        }
        _ => {}
    });
    if let Some(e) = errors.pop() {
        return Err(e);
    }
    let mut strips: ValueMap<u64> = DenseMap::new();
    let set = |strips: &mut ValueMap<u64>, v: ValueId, q: u64| match strips.get(&v) {
        Some(&old) if old != q => Err(format!(
            "an L0C accumulator laid out in both {old} and {q} column strips"
        )),
        Some(_) => Ok(false),
        None => {
            strips.insert(v, q);
            Ok(true)
        }
    };
    for (v, q) in seeds {
        set(&mut strips, v, q)?;
    }
    // Each round that changes anything lays out at least one more value, so this ends.
    loop {
        let mut changed = false;
        for g in &groups {
            let Some(q) = g.iter().find_map(|v| strips.get(v).copied()) else {
                continue;
            };
            for &v in g {
                changed |= set(&mut strips, v, q)?;
            }
        }
        if !changed {
            return Ok(strips);
        }
    }
}
