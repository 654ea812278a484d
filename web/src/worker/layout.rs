//! Layered (Sugiyama) layout of the step graph, computed in the worker by
//! `rust-sugiyama`: network-simplex layering, barycentre ordering with transposition
//! against crossings, and Brandes-Köpf x positions, each connected component by itself.
//! Only forward edges (in program order) take part in the layering: back edges (sync
//! over a loop back edge, loop-carried values) would make the graph cyclic, and the panel
//! draws them as curves on top of the layered picture.
//!
//! docs/step-graph-layout.md measures it against the hand-written layout it replaced
//! and the `dagre` crate on the gallery's step graphs (`examples/layout_compare.rs`):
//! no crossings for any of them, and far fewer edges drawn through a box they skip.

use std::collections::HashMap;

use rust_sugiyama::configure::Config;

/// Node box size and gaps, in SVG units.
pub const NODE_W: f32 = 184.0;
pub const NODE_H: f32 = 52.0;
const GAP: f32 = 36.0;
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
    let index: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    // The crate names vertices by their position in `vertices`, whatever id they are
    // given, so steps go in by position in program order.
    let size = (f64::from(NODE_W), f64::from(NODE_H));
    let vertices: Vec<(u32, (f64, f64))> = (0..nodes.len()).map(|i| (i as u32, size)).collect();
    let mut forward: Vec<(u32, u32)> = edges
        .iter()
        .filter_map(|(a, b)| Some((*index.get(a)? as u32, *index.get(b)? as u32)))
        .filter(|(a, b)| a < b)
        .collect();
    forward.sort_unstable();
    forward.dedup();
    let config = Config {
        vertex_spacing: f64::from(GAP),
        ..Config::default()
    };
    // `from_vertices_and_edges` panics only on edges naming unknown vertices, which
    // the filter above removes.
    let mut components: Vec<Vec<(usize, (f64, f64))>> =
        rust_sugiyama::from_vertices_and_edges(&vertices, &forward, &config)
            .into_iter()
            .map(|(coords, _, _)| coords)
            .collect();
    // A step the crate left out (none is expected) still gets a place, by itself.
    let mut placed = vec![false; nodes.len()];
    for (i, _) in components.iter().flatten() {
        if let Some(p) = placed.get_mut(*i) {
            *p = true;
        }
    }
    let left_out = placed.iter().enumerate().filter(|(_, p)| !**p);
    components.extend(left_out.map(|(i, _)| vec![(i, (0.0, 0.0))]));

    // Components side by side, ordered by their first step in program order so the
    // picture reads left to right; each starts at its own origin.
    let mut by_first: Vec<(usize, usize)> = components
        .iter()
        .enumerate()
        .map(|(c, coords)| (coords.iter().map(|v| v.0).min().unwrap_or(usize::MAX), c))
        .collect();
    by_first.sort_unstable();
    let mut placement = Placement::default();
    let mut left = MARGIN;
    for coords in by_first.iter().filter_map(|(_, c)| components.get(*c)) {
        let xs = coords.iter().map(|(_, (x, _))| *x);
        let min_x = xs.clone().fold(f64::INFINITY, f64::min);
        let max_x = xs.fold(f64::NEG_INFINITY, f64::max);
        let min_y = coords
            .iter()
            .map(|(_, (_, y))| *y)
            .fold(f64::INFINITY, f64::min);
        for (i, (x, y)) in coords {
            if let Some(id) = nodes.get(*i) {
                let cx = left + NODE_W / 2.0 + (x - min_x) as f32;
                let cy = MARGIN + NODE_H / 2.0 + (y - min_y) as f32;
                placement.centres.insert(*id, (cx, cy));
                placement.height = placement.height.max(cy + NODE_H / 2.0 + MARGIN);
            }
        }
        left += (max_x - min_x) as f32 + NODE_W + GAP;
    }
    if !nodes.is_empty() {
        placement.width = left - GAP + MARGIN;
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
    fn ids_need_not_be_positions() {
        let p = layout(&[30, 10, 20], &[(30, 10), (10, 20)]);
        let y = |n| p.centres[&n].1;
        assert_eq!(p.centres.len(), 3);
        assert!(y(30) < y(10) && y(10) < y(20), "{p:?}");
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
        let y = |n| p.centres[&n].1;
        assert!(y(0) < y(1) && y(0) < y(2), "{p:?}");
    }

    #[test]
    fn empty_graph_is_empty() {
        let p = layout(&[], &[]);
        assert!(p.centres.is_empty());
        assert_eq!((p.width, p.height), (0.0, 0.0));
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
    fn an_edge_skipping_a_layer_is_not_drawn_through_the_step_it_skips() {
        // The panel draws 0 -> 2 as a curve whose middle is halfway between the two
        // boxes' x, at step 1's height.
        let p = layout(&[0, 1, 2], &[(0, 1), (1, 2), (0, 2)]);
        let c = |n| p.centres[&n];
        let middle = (c(0).0 + c(2).0) / 2.0;
        assert!((middle - c(1).0).abs() >= NODE_W / 2.0, "{p:?}");
    }

    #[test]
    fn unconnected_chains_sit_side_by_side_in_program_order() {
        // 0 -> 3 and 1 -> 2: program order would put 2 left of 3, crossing the edges.
        let p = layout(&[0, 1, 2, 3], &[(0, 3), (1, 2)]);
        let x = |n: u32| p.centres[&n].0;
        assert!(x(0) < x(1) && x(3) < x(2), "{p:?}");
    }
}
