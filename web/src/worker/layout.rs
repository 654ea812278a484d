//! Layered (Sugiyama-style) layout of the step graph, computed in the worker. Only
//! forward edges (in program order) take part in the layering: back edges (sync over a
//! loop back edge, loop-carried values) would make the graph cyclic, and the panel
//! draws them as curves on top of the layered picture.
//!
//! Why our own instead of a layout crate: `rust-sugiyama` (with petgraph and the sort
//! and hash-map code they instantiate) cost about 30 KB of the playground's
//! gzip budget (503 -> 473 KB of wasm when it went). Step graphs are small DAGs
//! already in topological (program) order, so the classic three phases fit in this file: longest-path layering, barycentre
//! ordering sweeps against crossings, and x positions pulled towards each node's
//! neighbours without overlap.

use std::collections::HashMap;

/// Node box size and gaps, in SVG units.
pub const NODE_W: f32 = 184.0;
pub const NODE_H: f32 = 52.0;
const GAP: f32 = 36.0;
const MARGIN: f32 = 24.0;
/// Ordering sweeps (down then up); crossings rarely improve after a few.
const SWEEPS: usize = 4;

/// Box centres by node id, and the picture's size.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Placement {
    pub centres: HashMap<u32, (f32, f32)>,
    pub width: f32,
    pub height: f32,
}

/// Lays out `nodes` (in program order) with `edges` (from, to). Edges that do not go
/// forward in program order or name unknown nodes are ignored for layering.
pub fn layout(nodes: &[u32], edges: &[(u32, u32)]) -> Placement {
    let index: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut forward: Vec<(usize, usize)> = edges
        .iter()
        .filter_map(|(a, b)| Some((*index.get(a)?, *index.get(b)?)))
        .filter(|(a, b)| a < b)
        .collect();
    forward.sort_unstable();
    forward.dedup();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for &(a, b) in &forward {
        if let (Some(p), Some(s)) = (preds.get_mut(b), succs.get_mut(a)) {
            p.push(a);
            s.push(b);
        }
    }

    // Longest path from the sources: program order is a topological order.
    let mut rank = vec![0usize; nodes.len()];
    for b in 0..nodes.len() {
        let r = preds
            .get(b)
            .into_iter()
            .flatten()
            .filter_map(|a| rank.get(*a))
            .map(|r| r + 1)
            .max()
            .unwrap_or(0);
        if let Some(slot) = rank.get_mut(b) {
            *slot = r;
        }
    }
    let depth = rank.iter().max().map_or(0, |r| r + 1);
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for (n, r) in rank.iter().enumerate() {
        if let Some(layer) = layers.get_mut(*r) {
            layer.push(n);
        }
    }

    // Barycentre sweeps: each node moves towards the mean position of its neighbours
    // in the layers already ordered (predecessors going down, successors going up).
    let mut pos = vec![0f32; nodes.len()];
    let set_positions = |layer: &[usize], pos: &mut Vec<f32>| {
        for (i, n) in layer.iter().enumerate() {
            if let Some(p) = pos.get_mut(*n) {
                *p = i as f32;
            }
        }
    };
    for layer in &layers {
        set_positions(layer, &mut pos);
    }
    for sweep in 0..SWEEPS {
        let down = sweep % 2 == 0;
        let ranks: Vec<usize> = if down {
            (1..depth).collect()
        } else {
            (0..depth.saturating_sub(1)).rev().collect()
        };
        for r in ranks {
            let neighbours = if down { &preds } else { &succs };
            if let Some(layer) = layers.get_mut(r) {
                layer.sort_by_key(|n| {
                    let mean = mean_of(neighbours.get(*n), &pos)
                        .unwrap_or_else(|| pos.get(*n).copied().unwrap_or_default());
                    // Positions are small non-negative numbers: scaled, they order
                    // as integers.
                    (mean.max(0.0) * 1024.0) as u64
                });
                set_positions(layer, &mut pos);
            }
        }
    }

    // x: each node as near the mean x of its predecessors as the layer's order and
    // the box spacing allow.
    let pitch = NODE_W + GAP;
    let mut x = vec![0f32; nodes.len()];
    for layer in &layers {
        let mut next_free = f32::NEG_INFINITY;
        for n in layer {
            let wanted = mean_of(preds.get(*n), &x).unwrap_or(next_free.max(0.0));
            let placed = wanted.max(next_free);
            if let Some(slot) = x.get_mut(*n) {
                *slot = placed;
            }
            next_free = placed + pitch;
        }
    }
    let min_x = x.iter().copied().fold(f32::INFINITY, f32::min);
    let mut placement = Placement::default();
    for (i, id) in nodes.iter().enumerate() {
        let left = x.get(i).copied().unwrap_or_default() - min_x;
        let r = rank.get(i).copied().unwrap_or_default();
        let cx = MARGIN + NODE_W / 2.0 + left;
        let cy = MARGIN + NODE_H / 2.0 + r as f32 * (NODE_H + GAP);
        placement.centres.insert(*id, (cx, cy));
        placement.width = placement.width.max(cx + NODE_W / 2.0 + MARGIN);
        placement.height = placement.height.max(cy + NODE_H / 2.0 + MARGIN);
    }
    placement
}

/// The mean of `values` at `of`, or `None` when `of` is empty.
fn mean_of(of: Option<&Vec<usize>>, values: &[f32]) -> Option<f32> {
    let picked: Vec<f32> = of?.iter().filter_map(|i| values.get(*i).copied()).collect();
    (!picked.is_empty()).then(|| picked.iter().sum::<f32>() / picked.len() as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlaps(a: (f32, f32), b: (f32, f32)) -> bool {
        (a.0 - b.0).abs() < NODE_W && (a.1 - b.1).abs() < NODE_H
    }

    #[test]
    fn chain_is_layered_top_to_bottom() {
        let p = layout(&[0, 1, 2], &[(0, 1), (1, 2)]);
        let y = |n| p.centres[&n].1;
        assert!(y(0) < y(1) && y(1) < y(2), "{p:?}");
        assert!(p.width >= NODE_W && p.height >= 3.0 * NODE_H);
    }

    #[test]
    fn back_edges_and_unknown_nodes_do_not_break_layering() {
        let p = layout(&[0, 1, 2, 3], &[(0, 1), (1, 0), (2, 2), (1, 9), (0, 2)]);
        assert_eq!(p.centres.len(), 4);
        let ids = [0u32, 1, 2, 3];
        for a in ids {
            for b in ids {
                if a < b {
                    assert!(!overlaps(p.centres[&a], p.centres[&b]), "{a} {b}: {p:?}");
                }
            }
        }
        for (x, y) in p.centres.values() {
            assert!(*x - NODE_W / 2.0 >= 0.0 && *x + NODE_W / 2.0 <= p.width);
            assert!(*y - NODE_H / 2.0 >= 0.0 && *y + NODE_H / 2.0 <= p.height);
        }
    }

    #[test]
    fn empty_graph_is_empty() {
        let p = layout(&[], &[]);
        assert!(p.centres.is_empty());
    }

    #[test]
    fn a_diamond_shares_its_middle_layer_without_overlap() {
        let p = layout(&[10, 11, 12, 13], &[(10, 11), (10, 12), (11, 13), (12, 13)]);
        let c = |n| p.centres[&n];
        assert_eq!(c(11).1, c(12).1);
        assert!(c(10).1 < c(11).1 && c(11).1 < c(13).1);
        assert!(!overlaps(c(11), c(12)));
        // The join sits between the two branches.
        let (lo, hi) = (c(11).0.min(c(12).0), c(11).0.max(c(12).0));
        assert!(lo <= c(13).0 && c(13).0 <= hi, "{p:?}");
    }

    #[test]
    fn sweeps_uncross_two_parallel_chains() {
        // 0 -> 3 and 1 -> 2: program order puts 2 left of 3, crossing the edges.
        let p = layout(&[0, 1, 2, 3], &[(0, 3), (1, 2)]);
        let x = |n: u32| p.centres[&n].0;
        assert_eq!((x(0) < x(1)), (x(3) < x(2)), "{p:?}");
    }
}
