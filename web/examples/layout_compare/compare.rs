//! Measures the step graph's layered layout (`tilescope_web::worker::layout`, by rust-sugiyama)
//! against the `dagre` crate on every gallery example's step graph, compiled for the
//! `a3` and `teach` presets. docs/step-graph-layout.md has the method and the figures,
//! with those of the hand-written layout layout.rs had before (measured by this
//! program as it was in the commit that added it); reproduce them with
//!
//! ```text
//! cargo run --release -p tilescope-web --example layout_compare
//! ```
//!
//! (`-- --rows` prints one row per graph as well as the totals; `-- --synthetic` lays
//! out larger random DAGs instead of the gallery.)
//!
//! Every layout is measured on the picture the panel draws (`components/steps.rs`): a
//! forward edge is a cubic from the bottom centre of its source's box to the top centre
//! of its target's, with vertical tangents, drawn straight through whatever lies
//! between. So crossings are counted where two such curves cross (edges sharing a step
//! excluded), edges spanning several layers included as drawn.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use tilescope::compile::{compile, CompileOptions};
use tilescope_web::worker::layout::{self, Placement, NODE_H, NODE_W};

/// The gaps `src/layout.rs` uses, given to dagre as its spacing.
const GAP: f32 = 36.0;
const MARGIN: f32 = 24.0;
/// Line segments per drawn edge when the cubic is flattened.
const SAMPLES: usize = 32;
/// Timed runs per graph and layout; the median is reported.
const RUNS: usize = 41;

struct Graph {
    name: String,
    ids: Vec<u32>,
    /// The step graph's edges that are not back edges, as engine.rs hands them over.
    edges: Vec<(u32, u32)>,
}

type LayoutFn = fn(&[u32], &[(u32, u32)]) -> Placement;
type Edge = (u32, u32);
type Polyline = Vec<(f32, f32)>;

#[derive(Clone, Copy, Default)]
struct Figures {
    crossings: usize,
    /// (edge, step) pairs where an edge is drawn through a box not its own.
    through: usize,
    /// Total drawn length of the forward edges.
    length: f32,
    width: f32,
    height: f32,
    /// Pairs of overlapping boxes.
    overlaps: usize,
    /// Edges forward in program order whose target is not below their source (the
    /// panel would draw them as back edges).
    upward: usize,
    /// Steps the layout gave no place.
    missing: usize,
    /// Median layout time, microseconds.
    micros: f64,
    /// The same input laid out twice gave different pictures.
    unstable: bool,
}

pub fn main() {
    let rows = std::env::args().any(|a| a == "--rows");
    let synthetic = std::env::args().any(|a| a == "--synthetic");
    let graphs = if synthetic { random_dags() } else { gallery() };
    let layouts: [(&str, LayoutFn); 2] = [
        ("layout.rs (rust-sugiyama)", layout::layout),
        ("dagre", dagre_layout),
    ];
    let nodes: usize = graphs.iter().map(|g| g.ids.len()).sum();
    let edges: usize = graphs.iter().map(|g| forward(g).len()).sum();
    if synthetic {
        println!(
            "{} random DAGs: {nodes} nodes, {edges} edges\n",
            graphs.len()
        );
    } else {
        println!(
            "{} step graphs ({} examples x a3, teach): {nodes} steps, {edges} forward edges\n",
            graphs.len(),
            tilescope::examples::ALL.len()
        );
    }
    let figures: Vec<Vec<Figures>> = graphs
        .iter()
        .map(|g| layouts.iter().map(|(_, f)| measure(g, *f)).collect())
        .collect();

    if rows {
        print!("| graph | steps | edges |");
        for (name, _) in &layouts {
            print!(" {name} crossings / through / W x H / µs |");
        }
        println!();
        print!("| --- | --: | --: |");
        for _ in &layouts {
            print!(" --: |");
        }
        println!();
        for (g, fs) in graphs.iter().zip(&figures) {
            print!("| {} | {} | {} |", g.name, g.ids.len(), forward(g).len());
            for f in fs {
                print!(
                    " {} / {} / {:.0} x {:.0} / {:.0} |",
                    f.crossings, f.through, f.width, f.height, f.micros
                );
            }
            println!();
        }
        println!();
    }

    println!("| layout | crossings | edges through a box | graphs with crossings | edge length | total area (Mpx²) | widest | tallest | overlaps | upward edges | missing steps | median µs | max µs | unstable |");
    println!(
        "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |"
    );
    for (i, (name, _)) in layouts.iter().enumerate() {
        let col: Vec<Figures> = figures.iter().map(|fs| fs[i]).collect();
        let sum = |f: fn(&Figures) -> usize| col.iter().map(f).sum::<usize>();
        let mut times: Vec<f64> = col.iter().map(|f| f.micros).collect();
        times.sort_by(f64::total_cmp);
        println!(
            "| {name} | {} | {} | {} | {:.0} | {:.2} | {:.0} | {:.0} | {} | {} | {} | {:.0} | {:.0} | {} |",
            sum(|f| f.crossings),
            sum(|f| f.through),
            col.iter().filter(|f| f.crossings > 0).count(),
            col.iter().map(|f| f.length).sum::<f32>(),
            col.iter().map(|f| f.width * f.height).sum::<f32>() / 1e6,
            col.iter().map(|f| f.width).fold(0.0, f32::max),
            col.iter().map(|f| f.height).fold(0.0, f32::max),
            sum(|f| f.overlaps),
            sum(|f| f.upward),
            sum(|f| f.missing),
            times.get(times.len() / 2).copied().unwrap_or_default(),
            times.last().copied().unwrap_or_default(),
            col.iter().filter(|f| f.unstable).count(),
        );
    }
    // Per graph, whether a crate crosses fewer or more edges than layout.rs.
    println!();
    for (i, (name, _)) in layouts.iter().enumerate() {
        let (mut better, mut worse) = (0, 0);
        for fs in &figures {
            let (mine, base) = (fs[i].crossings, fs[0].crossings);
            better += usize::from(mine < base);
            worse += usize::from(mine > base);
        }
        if i > 0 {
            println!("{name}: fewer crossings than layout.rs on {better} graphs, more on {worse}");
        }
    }
}

/// Every gallery example's step graph, for both presets.
fn gallery() -> Vec<Graph> {
    let mut graphs = Vec::new();
    for e in tilescope::examples::ALL {
        for preset in ["a3", "teach"] {
            let options = CompileOptions {
                preset: Some(preset.into()),
                ..CompileOptions::default()
            };
            let out = compile(e.source, &options);
            let Some(steps) = out.steps else {
                eprintln!("{} ({preset}) has no step graph", e.name);
                continue;
            };
            graphs.push(Graph {
                name: format!("{} ({preset})", e.name),
                ids: steps.nodes.iter().map(|n| n.id).collect(),
                edges: steps
                    .edges
                    .iter()
                    .filter(|e| !e.back)
                    .map(|e| (e.from, e.to))
                    .collect(),
            });
        }
    }
    graphs
}

/// Larger graphs than the gallery's, shaped like step graphs (each node fed by one to
/// three of the six before it), to see how the layouts scale: `--synthetic`.
fn random_dags() -> Vec<Graph> {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |below: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % below
    };
    let mut graphs = Vec::new();
    for n in [12u32, 24, 48] {
        for k in 0..8 {
            let mut edges = Vec::new();
            for b in 1..n {
                for _ in 0..=next(3) {
                    let a = b - 1 - next(u64::from(b.min(6))) as u32;
                    edges.push((a, b));
                }
            }
            graphs.push(Graph {
                name: format!("random {n} #{k}"),
                ids: (0..n).collect(),
                edges,
            });
        }
    }
    graphs
}

/// The edges forward in program order, once each: what every layout lays out.
fn forward(g: &Graph) -> Vec<(u32, u32)> {
    let at: HashMap<u32, usize> = g.ids.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut seen = HashSet::new();
    g.edges
        .iter()
        .copied()
        .filter(|(a, b)| matches!((at.get(a), at.get(b)), (Some(x), Some(y)) if x < y))
        .filter(|e| seen.insert(*e))
        .collect()
}

fn measure(g: &Graph, f: LayoutFn) -> Figures {
    let p = f(&g.ids, &g.edges);
    let unstable = f(&g.ids, &g.edges) != p;
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f(std::hint::black_box(&g.ids), &g.edges));
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let mut fig = Figures {
        width: p.width,
        height: p.height,
        micros: times[RUNS / 2],
        unstable,
        ..Figures::default()
    };
    let c = |n: u32| p.centres.get(&n).copied();
    fig.missing = g.ids.iter().filter(|n| c(**n).is_none()).count();
    for (i, a) in g.ids.iter().enumerate() {
        for b in &g.ids[i + 1..] {
            if let (Some(pa), Some(pb)) = (c(*a), c(*b)) {
                fig.overlaps +=
                    usize::from((pa.0 - pb.0).abs() < NODE_W && (pa.1 - pb.1).abs() < NODE_H);
            }
        }
    }
    let mut drawn: Vec<(Edge, Polyline)> = Vec::new();
    for (a, b) in forward(g) {
        let (Some(pa), Some(pb)) = (c(a), c(b)) else {
            continue;
        };
        if pb.1 <= pa.1 {
            fig.upward += 1;
            continue;
        }
        let curve = flatten(pa, pb);
        fig.length += curve.windows(2).map(|w| dist(w[0], w[1])).sum::<f32>();
        for n in &g.ids {
            if *n != a && *n != b {
                if let Some(pn) = c(*n) {
                    fig.through += usize::from(curve.windows(2).any(|w| hits_box(w[0], w[1], pn)));
                }
            }
        }
        drawn.push(((a, b), curve));
    }
    for (i, (e, ce)) in drawn.iter().enumerate() {
        for (f, cf) in &drawn[i + 1..] {
            if e.0 == f.0 || e.0 == f.1 || e.1 == f.0 || e.1 == f.1 {
                continue;
            }
            for s in ce.windows(2) {
                for t in cf.windows(2) {
                    fig.crossings += usize::from(cross(s[0], s[1], t[0], t[1]));
                }
            }
        }
    }
    fig
}

/// The panel's forward edge from the box centred at `a` to the one at `b`, as a
/// polyline.
fn flatten(a: (f32, f32), b: (f32, f32)) -> Vec<(f32, f32)> {
    let (x1, y1, x2, y2) = (a.0, a.1 + NODE_H / 2.0, b.0, b.1 - NODE_H / 2.0);
    let my = (y1 + y2) / 2.0;
    (0..=SAMPLES)
        .map(|i| {
            let t = i as f32 / SAMPLES as f32;
            let u = 1.0 - t;
            let (w0, w1, w2, w3) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
            (
                w0 * x1 + w1 * x1 + w2 * x2 + w3 * x2,
                w0 * y1 + w1 * my + w2 * my + w3 * y2,
            )
        })
        .collect()
}

fn dist(a: (f32, f32), b: (f32, f32)) -> f32 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// Whether segments `p1 p2` and `q1 q2` cross at a point inside both.
fn cross(p1: (f32, f32), p2: (f32, f32), q1: (f32, f32), q2: (f32, f32)) -> bool {
    let orient = |a: (f32, f32), b: (f32, f32), c: (f32, f32)| {
        let v = (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
        if v.abs() < 1e-3 {
            0
        } else if v > 0.0 {
            1
        } else {
            -1
        }
    };
    let (d1, d2) = (orient(q1, q2, p1), orient(q1, q2, p2));
    let (d3, d4) = (orient(p1, p2, q1), orient(p1, p2, q2));
    d1 * d2 < 0 && d3 * d4 < 0
}

/// Whether segment `a b` enters the inside of the box centred at `c` (shrunk by a unit,
/// so an edge grazing a border does not count).
fn hits_box(a: (f32, f32), b: (f32, f32), c: (f32, f32)) -> bool {
    let (x0, x1) = (c.0 - NODE_W / 2.0 + 1.0, c.0 + NODE_W / 2.0 - 1.0);
    let (y0, y1) = (c.1 - NODE_H / 2.0 + 1.0, c.1 + NODE_H / 2.0 - 1.0);
    // Liang-Barsky clipping: is some t in [0, 1] inside all four half-planes?
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut lo, mut hi) = (0f32, 1f32);
    for (p, q) in [
        (-dx, a.0 - x0),
        (dx, x1 - a.0),
        (-dy, a.1 - y0),
        (dy, y1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                lo = lo.max(t);
            } else {
                hi = hi.min(t);
            }
        }
    }
    lo < hi
}

/// The `dagre` crate (a port of dagre.js: network-simplex ranking, barycentre ordering,
/// Brandes-Köpf x positions).
fn dagre_layout(nodes: &[u32], edges: &[(u32, u32)]) -> Placement {
    use dagre::graph::{Graph, GraphOptions};
    use dagre::{EdgeLabel, GraphLabel, LayoutOptions, NodeLabel};
    let index: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut g: Graph<NodeLabel, EdgeLabel> = Graph::with_options(GraphOptions {
        directed: true,
        multigraph: false,
        compound: false,
    });
    for n in nodes {
        let label = NodeLabel {
            width: f64::from(NODE_W),
            height: f64::from(NODE_H),
            ..NodeLabel::default()
        };
        g.set_node(n.to_string(), Some(label));
    }
    for (a, b) in edges {
        if matches!((index.get(a), index.get(b)), (Some(x), Some(y)) if x < y) {
            g.set_edge(
                a.to_string(),
                b.to_string(),
                Some(EdgeLabel::default()),
                None,
            );
        }
    }
    dagre::layout(
        &mut g,
        Some(LayoutOptions {
            nodesep: f64::from(GAP),
            ranksep: f64::from(GAP),
            marginx: f64::from(MARGIN),
            marginy: f64::from(MARGIN),
            ..LayoutOptions::default()
        }),
    );
    let mut placement = Placement::default();
    for n in nodes {
        if let Some(label) = g.node(&n.to_string()) {
            if let (Some(x), Some(y)) = (label.x, label.y) {
                placement.centres.insert(*n, (x as f32, y as f32));
            }
        }
    }
    if let Some(gl) = g.graph_label::<GraphLabel>() {
        placement.width = gl.width as f32;
        placement.height = gl.height as f32;
    }
    placement
}
