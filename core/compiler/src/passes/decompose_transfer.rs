//! decompose-transfer: every load and store becomes DMA descriptors of at most the
//! machine's `dma_max_dims` dimensions. Unit dimensions drop, dimensions contiguous in
//! both the tensor and the tile collapse into one, and what is still too many peels into
//! loops around the descriptor. A dimension clamped by a tail keeps its own extent, read
//! at run time from the tile's valid extent; a strided range's GM stride is its step
//! times the axis's. Gathers and scatters move whole rows.

use super::{Context, Pass};
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::analysis::{region_shape, strides};
use crate::ir::{Index, Kernel, OpId, OpKind, Transfer, TransferDim};

pub struct DecomposeTransfer;

impl Pass for DecomposeTransfer {
    type In = crate::passes::stage::Tile;
    type Out = crate::passes::stage::Tile;

    fn name(&self) -> &'static str {
        "decompose-transfer"
    }

    fn description(&self) -> &'static str {
        "turn every load and store into DMA descriptors of at most dma_max_dims dimensions"
    }

    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        let machine = cx.machine();
        let max_dims = machine.dma_max_dims.max(1) as usize;
        let k = cx.ir_mut(self.name())?;
        let mut todo: Vec<OpId> = Vec::new();
        k.walk_ops(|id, op| {
            if matches!(op.kind, OpKind::Load { .. } | OpKind::Store { .. }) {
                todo.push(id);
            }
        });
        fold_transposed_stores(k, &todo);
        let mut errors = Vec::new();
        for id in todo {
            match transfer(k, id, max_dims).and_then(|t| aligned(k, id, t, &machine)) {
                Ok(t) => {
                    k.annotations.transfer.insert(id, t);
                }
                Err(d) => errors.push(d),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// A store of a UB transpose read by nothing else (`store y[..] = t.T`) stores `t`
/// itself with the tile strides swapped: the DMA transposes on the way to GM, and the
/// vector pipe does no work (a UB -> UB transpose would add a pipe and two syncs per
/// tile). Only untailed 2-D regions: tails would clamp the swapped axes.
fn fold_transposed_stores(k: &mut Kernel, stores: &[OpId]) {
    let uses = k.use_counts();
    for &id in stores {
        let OpKind::Store { index, value, .. } = &k.ops[id].kind else {
            continue;
        };
        let tailed = index
            .iter()
            .any(|ix| matches!(ix, Index::Range { clamped: true, .. } | Index::Indirect(_)));
        let value = *value;
        let Some(crate::ir::ValueDef::Result { op: t, .. }) = k.values.get(value).map(|v| v.def)
        else {
            continue;
        };
        let OpKind::Transpose { arg } = k.ops[t].kind else {
            continue;
        };
        let in_ub = |v| k.values.get(v).and_then(|x| x.space) == Some(crate::types::MemSpace::UB);
        let single = uses.get(value.index()) == Some(&1);
        if tailed || !single || !in_ub(value) || !in_ub(arg) || index.len() != 2 {
            continue;
        }
        if let OpKind::Store { value, .. } = &mut k.ops[id].kind {
            *value = arg;
        }
        k.annotations.transposed.insert(id);
        let path = k.blocks().into_iter().find(|(_, ops)| ops.contains(&t));
        if let Some(b) = path.and_then(|(p, _)| k.block_mut(&p)) {
            b.retain_ops(|o| o != t);
        }
    }
}

/// A peeled dimension moves the on-chip address by its tile stride each iteration; that
/// address must keep the space's alignment, or the transfer cannot be split this way.
fn aligned(
    k: &Kernel,
    id: OpId,
    t: Transfer,
    machine: &crate::machine::Machine,
) -> Result<Transfer, Diagnostic> {
    let op = &k.ops[id];
    let tile = match &op.kind {
        OpKind::Load { .. } => op.results.first().copied(),
        OpKind::Store { value, .. } => Some(*value),
        _ => None,
    };
    let Some(val) = tile.and_then(|v| k.values.get(v)) else {
        return Ok(t);
    };
    let Some(space) = val.space else { return Ok(t) };
    if space == crate::types::MemSpace::L0C {
        // A store from L0C (fix-to-gm) is one 2-D FIX move: nothing is peeled.
        return Ok(Transfer { peel: 0, ..t });
    }
    let align = machine.memories.get(space).alignment as i64;
    let eb = val.ty.dtype.bytes() as i64;
    let bad = t.dims[..t.peel.min(t.dims.len())]
        .iter()
        .find(|d| align > 1 && (d.tile_stride * eb) % align != 0);
    match bad {
        None => Ok(t),
        Some(d) => Err(Diagnostic::error(
            format!(
                "this transfer needs {} DMA dimensions but {} allows {}, and peeling the outer ones would start rows every {} bytes in {}, which needs {align}-byte alignment",
                t.dims.len(),
                machine.name,
                machine.dma_max_dims,
                d.tile_stride * eb,
                space.name().to_ascii_uppercase()
            ),
            op.span,
        )
        .with_note("move whole rows of the tensor, or fewer non-contiguous axes, per transfer")),
    }
}

fn transfer(k: &Kernel, id: OpId, max_dims: usize) -> Result<Transfer, Diagnostic> {
    let op = &k.ops[id];
    let (param, index, stored) = match &op.kind {
        OpKind::Load { param, index, .. } => (*param, index, None),
        OpKind::Store {
            param,
            index,
            value,
            ..
        } => (*param, index, Some(*value)),
        _ => return Ok(Transfer::default()),
    };
    let unsupported =
        |what: &str| Diagnostic::error(format!("lower-to-pipes does not support {what}"), op.span);
    // Verified IR: every parameter index names a parameter.
    let tensor = k
        .params
        .get(param)
        .map(|p| p.ty.shape.clone())
        .unwrap_or_default();
    let shape = region_shape(k, &tensor, index);
    if let Some(v) = stored {
        // Verified IR: every value handle names an arena entry.
        let mut vshape = k
            .values
            .get(v)
            .map(|x| x.ty.shape.clone())
            .unwrap_or_default();
        if k.annotations.transposed.contains(&id) {
            vshape.reverse();
        }
        if !crate::ir::typing::same_layout(&vshape, &shape) {
            return Err(
                unsupported("storing a value that broadcasts to the stored region")
                    .with_note(format!("the value is {vshape:?}, the region {shape:?}")),
            );
        }
    }
    let gm = strides(&tensor);
    let mut tile = strides(&shape);
    if k.annotations.transposed.contains(&id) {
        // The stored tile is the region transposed: region (i, j) is tile (j, i), on the
        // box's two axes above extent 1 (the others, of extent 1, are never stepped).
        let axes: Vec<usize> = (0..shape.len()).filter(|&a| shape[a] != 1).collect();
        if let [a0, a1] = axes.as_slice() {
            tile[*a0] = 1;
            tile[*a1] = shape[*a0] as i64;
        }
    }
    if let Some(k) = index.iter().position(|ix| matches!(ix, Index::Indirect(_))) {
        // The index picks positions along axis k; each brings the block of the axes
        // after it, which must be contiguous in GM: whole axes, or a range on the last.
        let rest_full = index.iter().skip(k + 1).all(|ix| matches!(ix, Index::Full));
        let last_range = index.len() == k + 2
            && matches!(index.get(k + 1), Some(Index::Range { clamped: false, .. }));
        if !(rest_full || last_range) {
            return Err(unsupported(
                "a gather or scatter that does not move whole or 2-D rows",
            ));
        }
        let len: u64 = shape.iter().skip(k + 1).product();
        return Ok(Transfer {
            dims: Vec::new(),
            peel: 0,
            // The front end checked the index tile's shape: axis k exists.
            rows: Some((shape.get(k).copied().unwrap_or(0), len)),
        });
    }
    let mut dims: Vec<TransferDim> = Vec::new();
    for (i, ix) in index.iter().enumerate() {
        let clamped = matches!(ix, Index::Range { clamped: true, .. });
        let extent = shape.get(i).copied().unwrap_or(1);
        if extent == 1 && !clamped {
            continue;
        }
        // A strided range steps over the tensor: its positions are `step` strides apart.
        let step = match ix {
            Index::Strided { step, .. } => *step as i64,
            _ => 1,
        };
        let d = TransferDim {
            extent,
            clamp_axis: clamped.then_some(i),
            gm_stride: gm.get(i).copied().unwrap_or(1) * step,
            tile_stride: tile.get(i).copied().unwrap_or(1),
        };
        // Collapse into the previous (outer) dimension when both are contiguous.
        if let Some(prev) = dims.last_mut() {
            let both_static = prev.clamp_axis.is_none() && d.clamp_axis.is_none();
            let ext = d.extent as i64;
            if both_static
                && prev.gm_stride == ext * d.gm_stride
                && prev.tile_stride == ext * d.tile_stride
            {
                prev.extent *= d.extent;
                prev.gm_stride = d.gm_stride;
                prev.tile_stride = d.tile_stride;
                continue;
            }
        }
        dims.push(d);
    }
    if dims.is_empty() {
        dims.push(TransferDim {
            extent: 1,
            clamp_axis: None,
            gm_stride: 1,
            tile_stride: 1,
        });
    }
    let peel = dims.len().saturating_sub(max_dims);
    Ok(Transfer {
        dims,
        peel,
        rows: None,
    })
}
