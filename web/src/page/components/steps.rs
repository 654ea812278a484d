//! The step graph: steps as an SVG DAG (laid out in the worker), coloured by pipe, with
//! data, sync (labelled with the event id) and loop-carried edges. Clicking a step
//! selects it everywhere: its source span, its IR lines and its instructions on the
//! timeline.

use tilescope::diag::LineCol;
use yew::prelude::*;

use super::{panels::EmptyState, sync_card::SyncCard, use_app};
use crate::page::keys;
use crate::page::palette::pipe_color;
use crate::page::state::Action;
use crate::protocol::{StepEdge, StepEdgeKind, StepGraph, StepNode};

#[function_component]
pub fn StepsPanel() -> Html {
    let app = use_app();
    // The sync edge ← and → are on (an index into the graph's sync edges).
    let edge_focus = use_state(|| None::<usize>);
    let Some(graph) = app.results.compile.as_ref().and_then(|c| c.steps.clone()) else {
        return html! {
            <EmptyState title="Step graph">
                {"Each loop body becomes an ordered list of steps (load → compute → store). \
                  The graph appears here once the kernel compiles."}
            </EmptyState>
        };
    };
    if graph.nodes.is_empty() {
        return html! { <EmptyState title="No steps">{"This kernel has no steps."}</EmptyState> };
    }
    let selected = app.ui.selected_step;
    // The sync edges a click (or ← and →) opens the card of: (edge index, set instr).
    let sync_edges: Vec<(usize, u32)> = graph
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == StepEdgeKind::Sync)
        .filter_map(|(i, e)| Some((i, app.results.compile.as_ref()?.set_flag_of(e.from, e.to)?)))
        .collect();
    let focused_edge = (*edge_focus)
        .and_then(|k| sync_edges.get(k))
        .map(|(i, _)| *i);
    // What ← and → are on, in words (a sync within one step is a label, not a line).
    let edge_note = focused_edge.and_then(|i| graph.edges.get(i)).map(|e| {
        html! {
            <div class="step-detail edge-note" data-testid="edge-focus" aria-live="polite">
                {edge_title(e)}
            </div>
        }
    });
    let edges: Html = graph
        .edges
        .iter()
        .filter(|e| e.from != e.to)
        .enumerate()
        .scan(0usize, |back, (index, e)| {
            let lane = *back;
            if e.back || e.from > e.to {
                *back += 1;
            }
            let pick = (e.kind == StepEdgeKind::Sync)
                .then(|| app.results.compile.as_ref()?.set_flag_of(e.from, e.to))
                .flatten()
                .map(|i| {
                    let app = app.clone();
                    Callback::from(move |_: MouseEvent| app.dispatch(Action::SelectInstr(Some(i))))
                });
            Some(edge(
                &graph,
                e,
                lane,
                selected,
                pick,
                focused_edge == Some(index),
            ))
        })
        .collect();
    let nodes: Html = graph
        .nodes
        .iter()
        .map(|n| {
            let onclick = {
                let app = app.clone();
                let id = n.step.id;
                Callback::from(move |_: MouseEvent| {
                    let next = (app.ui.selected_step != Some(id)).then_some(id);
                    app.dispatch(Action::SelectStep(next));
                })
            };
            let own: Vec<String> = graph
                .edges
                .iter()
                .filter(|e| e.from == n.step.id && e.to == n.step.id)
                .filter_map(|e| e.label.clone())
                .collect();
            node(n, &own, selected == Some(n.step.id), onclick)
        })
        .collect();
    let detail = selected
        .and_then(|id| graph.node(id))
        .map(|n| {
            let LineCol { line, .. } = LineCol::at(&app.view.source, n.step.span.start as usize);
            html! {
                <div class="step-detail" aria-live="polite">
                    <span class="step-detail-id">{format!("step {}", n.step.id)}</span>
                    <span>{n.step.kind.clone()}</span>
                    <span class="muted">{format!("line {line}")}</span>
                    if let Some(v) = &n.step.loop_var { <span class="muted">{format!("in loop {v}")}</span> }
                    if let Some(c) = &n.step.branch { <span class="muted" data-testid="step-branch">{format!("runs only if {c}")}</span> }
                    <span class="muted">{"reads "}</span><code>{list(&n.step.reads)}</code>
                    <span class="muted">{"writes "}</span><code>{list(&n.step.writes)}</code>
                </div>
            }
        })
        .unwrap_or_else(|| html! {
            <div class="step-detail muted">{"Click a step to see its source, IR lines and instructions on the timeline."}</div>
        });
    // One tab stop: ↑ and ↓ select steps, ← and → go through the sync edges.
    let onkeydown = {
        let app = app.clone();
        let edge_focus = edge_focus.clone();
        let ids: Vec<u32> = graph.nodes.iter().map(|n| n.step.id).collect();
        Callback::from(move |e: KeyboardEvent| {
            let key = e.key();
            let edge_key = match key.as_str() {
                "ArrowRight" => Some("ArrowDown"),
                "ArrowLeft" => Some("ArrowUp"),
                _ => None,
            };
            if let Some(key) = edge_key {
                if let Some(k) = keys::list_move(key, *edge_focus, sync_edges.len()) {
                    e.prevent_default();
                    edge_focus.set(Some(k));
                    app.dispatch(Action::SelectInstr(Some(sync_edges[k].1)));
                }
                return;
            }
            let current = app
                .ui
                .selected_step
                .and_then(|id| ids.iter().position(|&s| s == id));
            if let Some(next) = keys::list_move(&key, current, ids.len()) {
                e.prevent_default();
                app.dispatch(Action::SelectStep(Some(ids[next])));
            }
        })
    };
    // Room on the left for back edges and on the right for in-step sync labels.
    let (w, h) = (graph.width + BACK_LANES + 150.0, graph.height);
    html! {
        <div class="steps">
            <div class="steps-head">
                <div class="legend">
                    <span class="legend-item"><svg width="26" height="8"><line x1="0" y1="4" x2="26" y2="4" class="edge-data" /></svg>{"data"}</span>
                    <span class="legend-item"><svg width="26" height="8"><line x1="0" y1="4" x2="26" y2="4" class="edge-sync" /></svg>{"sync (event id)"}</span>
                    <span class="legend-item"><svg width="26" height="8"><line x1="0" y1="4" x2="26" y2="4" class="edge-carried" /></svg>{"loop-carried"}</span>
                    <span class="legend-sep" />
                    { for tilescope::types::Pipe::ALL.iter().map(|p| html! {
                        <span class="legend-item"><span class="swatch" style={format!("background:{}", pipe_color(*p))} />{p.name()}</span>
                    }) }
                </div>
                {detail}
                {edge_note}
            </div>
            <SyncCard />
            <div class="steps-canvas" tabindex="0" {onkeydown} data-testid="steps-canvas"
                aria-label="Step graph: ↑ and ↓ select a step; ← and → go through the sync edges, each opening its pair's card">
                <svg class="step-graph" width={w.to_string()} height={h.to_string()}
                    viewBox={format!("0 0 {w} {h}")} role="img" aria-label="Step graph">
                    <defs>
                        <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                            <path d="M 0 0 L 10 5 L 0 10 z" class="arrow-head" />
                        </marker>
                        <marker id="arrow-sync" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                            <path d="M 0 0 L 10 5 L 0 10 z" class="arrow-head-sync" />
                        </marker>
                    </defs>
                    {edges}
                    {nodes}
                </svg>
            </div>
        </div>
    }
}

/// Width reserved left of the graph for back edges, which are drawn there.
const BACK_LANES: f32 = 120.0;

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "—".into()
    } else {
        names.join(", ")
    }
}

/// A step box: number, kind, a chip per pipe; syncs within the step (set and wait in
/// the same step, across the loop's back edge) are listed beside it rather than drawn
/// as loops, which would pile up.
fn node(n: &StepNode, own: &[String], selected: bool, onclick: Callback<MouseEvent>) -> Html {
    let (x, y) = (BACK_LANES + n.x - n.w / 2.0, n.y - n.h / 2.0);
    let chips = n.step.pipes.iter().enumerate().map(|(i, p)| {
        let cx = x + 10.0 + i as f32 * 33.0;
        html! {
            <g>
                <rect x={cx.to_string()} y={(y + 28.0).to_string()} width="31" height="15" rx="3"
                    fill={pipe_color(*p)} />
                <text x={(cx + 15.5).to_string()} y={(y + 39.0).to_string()} class="chip-text">{p.name()}</text>
            </g>
        }
    });
    let shown = own.len().min(4);
    let own_labels = own.iter().take(shown).enumerate().map(|(i, l)| {
        let ly = n.y - (shown as f32 - 1.0) * 6.5 + i as f32 * 13.0 + 3.0;
        html! { <text x={(x + n.w + 8.0).to_string()} y={ly.to_string()} class="edge-label">{format!("⟲ {l}")}</text> }
    });
    let more = (own.len() > shown).then(|| {
        let ly = n.y + shown as f32 * 6.5 + 10.0;
        html! { <text x={(x + n.w + 8.0).to_string()} y={ly.to_string()} class="edge-label">{format!("+{} more", own.len() - shown)}</text> }
    });
    let stripe = n
        .step
        .pipes
        .first()
        .map_or("var(--muted)", |p| pipe_color(*p));
    html! {
        <g class={classes!("step-node", selected.then_some("step-selected"))}
            data-testid="step-node" data-step={n.step.id.to_string()} {onclick}>
            <title>{format!("step {} · {}{}\nreads: {}\nwrites: {}{}", n.step.id, n.step.kind,
                n.step.branch.as_ref().map_or(String::new(), |c| format!("\nruns only if {c}")),
                list(&n.step.reads), list(&n.step.writes),
                if own.is_empty() { String::new() } else { format!("\nsyncs within the step: {}", own.join(", ")) })}</title>
            <rect class="step-box" x={x.to_string()} y={y.to_string()} width={n.w.to_string()} height={n.h.to_string()} rx="6" />
            <rect x={x.to_string()} y={y.to_string()} width="4" height={n.h.to_string()} rx="2" fill={stripe} />
            <text x={(x + 10.0).to_string()} y={(y + 17.0).to_string()} class="step-title">
                <tspan class="step-num">{format!("s{}", n.step.id)}</tspan>
                {format!("  {}", n.step.kind)}
                if n.step.branch.is_some() { <tspan class="muted">{"  if"}</tspan> }
            </text>
            {for chips}
            {for own_labels}
            {more}
        </g>
    }
}

/// An edge between two steps: forward edges run from the bottom of one box to the top
/// of the next; back edges (a wait before its set in program order, a loop-carried
/// value) loop round the left side, each in its own lane.
fn edge(
    g: &StepGraph,
    e: &StepEdge,
    lane: usize,
    selected: Option<u32>,
    pick: Option<Callback<MouseEvent>>,
    focused: bool,
) -> Html {
    let (Some(a), Some(b)) = (g.node(e.from), g.node(e.to)) else {
        return html! {};
    };
    let class = match e.kind {
        StepEdgeKind::Data => "edge-data",
        StepEdgeKind::Sync => "edge-sync",
        StepEdgeKind::LoopCarried => "edge-carried",
    };
    let marker = if e.kind == StepEdgeKind::Sync {
        "url(#arrow-sync)"
    } else {
        "url(#arrow)"
    };
    let touches = selected.is_some_and(|s| s == e.from || s == e.to);
    let (ax, bx) = (a.x + BACK_LANES, b.x + BACK_LANES);
    let (d, lx, ly, anchor) = if !e.back && b.y > a.y {
        let (x1, y1, x2, y2) = (ax, a.y + a.h / 2.0, bx, b.y - b.h / 2.0);
        let my = (y1 + y2) / 2.0;
        (
            format!("M {x1} {y1} C {x1} {my}, {x2} {my}, {x2} {y2}"),
            (x1 + x2) / 2.0 + 5.0,
            my + 3.0,
            "start",
        )
    } else {
        let (x1, y1) = (ax - a.w / 2.0, a.y + 6.0);
        let (x2, y2) = (bx - b.w / 2.0, b.y - 6.0);
        let bulge = x1.min(x2) - 16.0 - (lane % 4) as f32 * 12.0;
        (
            format!("M {x1} {y1} C {bulge} {y1}, {bulge} {y2}, {x2} {y2}"),
            bulge - 3.0,
            (y1 + y2) / 2.0 + 3.0 + (lane % 4) as f32 * 11.0,
            "end",
        )
    };
    let label = e.label.clone().map(|l| {
        html! { <text x={lx.to_string()} y={ly.to_string()} class="edge-label" text-anchor={anchor}>{l}</text> }
    });
    let clickable = pick.is_some();
    html! {
        <g class={classes!("edge", touches.then_some("edge-active"), clickable.then_some("edge-pick"), focused.then_some("edge-focus"))}
            onclick={pick} data-testid={clickable.then_some("sync-edge")}>
            <title>{edge_title(e)}</title>
            <path d={d} class={class} marker-end={marker} fill="none" />
            {label}
        </g>
    }
}

/// An edge in words: its kind, its steps and its label (`MTE2->V #0`).
fn edge_title(e: &StepEdge) -> String {
    let kind = match e.kind {
        StepEdgeKind::Data => "data",
        StepEdgeKind::Sync => "sync",
        StepEdgeKind::LoopCarried => "loop-carried",
    };
    let label = e
        .label
        .as_deref()
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    format!("{kind} edge s{} → s{}{label}", e.from, e.to)
}
