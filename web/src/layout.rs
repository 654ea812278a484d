//! Layered (Sugiyama) layout of the step graph, computed in the worker by
//! `rust-sugiyama`. Only forward edges (in program order) take part in the layering:
//! back edges (sync over a loop back edge, loop-carried values) would make the graph
//! cyclic, and the panel draws them as curves on top of the layered picture.

use std::collections::HashMap;

use rust_sugiyama::configure::Config;

/// Node box size and gaps, in SVG units.
pub const NODE_W: f32 = 184.0;
pub const NODE_H: f32 = 52.0;
const GAP: f64 = 36.0;
const MARGIN: f32 = 24.0;

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
    let order: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let vertices: Vec<(u32, (f64, f64))> = nodes
        .iter()
        .map(|n| (*n, (f64::from(NODE_W), f64::from(NODE_H))))
        .collect();
    let mut forward: Vec<(u32, u32)> = edges
        .iter()
        .copied()
        .filter(|(a, b)| matches!((order.get(a), order.get(b)), (Some(x), Some(y)) if x < y))
        .collect();
    crate::order::sort_by_key(&mut forward, |&(a, b)| (a.into(), b.into()));
    forward.dedup();
    let config = Config {
        vertex_spacing: GAP,
        ..Config::default()
    };
    // `from_vertices_and_edges` panics only on edges naming unknown vertices, which
    // the filter above removes.
    let components = rust_sugiyama::from_vertices_and_edges(&vertices, &forward, &config);

    // Components side by side, each normalised to start at its own origin, ordered by
    // their first node in program order so the picture reads left to right.
    let mut components: Vec<Vec<(u32, f64, f64)>> = components
        .into_iter()
        .map(|(coords, _, _)| {
            coords
                .into_iter()
                .map(|(id, (x, y))| (id as u32, x, y))
                .collect()
        })
        .collect();
    crate::order::sort_by_key(&mut components, |c| {
        let first = c
            .iter()
            .filter_map(|(id, _, _)| order.get(id).copied())
            .min()
            .unwrap_or(usize::MAX);
        (first as u64, 0)
    });
    let mut placement = Placement::default();
    let mut left = MARGIN;
    for comp in components {
        let min_x = comp.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
        let max_x = comp.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max);
        // The crate's y grows with rank in either direction depending on the
        // ranking; orient so that edges point down.
        let ys: HashMap<u32, f64> = comp.iter().map(|c| (c.0, c.2)).collect();
        let down = forward
            .iter()
            .filter_map(|(a, b)| Some(ys.get(b)? - ys.get(a)?))
            .sum::<f64>()
            >= 0.0;
        let ys: Vec<f64> = comp.iter().map(|c| if down { c.2 } else { -c.2 }).collect();
        let min_y = ys.iter().copied().fold(f64::INFINITY, f64::min);
        for ((id, x, _), y) in comp.iter().zip(&ys) {
            let cx = left + NODE_W / 2.0 + (x - min_x) as f32;
            let cy = MARGIN + NODE_H / 2.0 + (y - min_y) as f32;
            placement.centres.insert(*id, (cx, cy));
            placement.height = placement.height.max(cy + NODE_H / 2.0 + MARGIN);
        }
        left += (max_x - min_x) as f32 + NODE_W + GAP as f32 * 2.0;
    }
    placement.width = left - GAP as f32 * 2.0 + MARGIN;
    // Nodes the crate dropped (none expected) still get a place, in a row below.
    let mut x = MARGIN + NODE_W / 2.0;
    let bottom = placement.height.max(MARGIN) + NODE_H / 2.0;
    for n in nodes {
        if !placement.centres.contains_key(n) {
            placement.centres.insert(*n, (x, bottom));
            x += NODE_W + GAP as f32;
            placement.height = bottom + NODE_H / 2.0 + MARGIN;
            placement.width = placement.width.max(x);
        }
    }
    placement
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
}
