//! The step graph: steps as nodes with data, sync and loop-carried edges.

use yew::prelude::*;

use super::{panels::EmptyState, use_app};

#[function_component]
pub fn StepsPanel() -> Html {
    let app = use_app();
    let graph = app.compile.as_ref().and_then(|c| c.steps.clone());
    match graph {
        Some(graph) if !graph.nodes.is_empty() => html! {
            <ol class="step-list">
                { for graph.nodes.iter().map(|n| html! {
                    <li class="step"><span class="step-id">{format!("s{}", n.id)}</span>{n.label.clone()}</li>
                }) }
            </ol>
        },
        _ => html! {
            <EmptyState title="Step graph">
                {"Each loop body becomes an ordered list of steps (load → compute → store). \
                  The graph of steps, with data, sync and loop-carried edges, appears here \
                  once the compiler's form-steps pass is available."}
            </EmptyState>
        },
    }
}
