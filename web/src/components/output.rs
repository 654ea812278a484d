//! Simulation results: output tensors, races and simulation errors.

use yew::prelude::*;

use super::{panels::EmptyState, use_app};

#[function_component]
pub fn OutputPanel() -> Html {
    let app = use_app();
    let Some(sim) = app.sim.clone() else {
        return html! {
            <EmptyState title="Output">
                {"After a simulation: the output tensors (downloadable as .npy), the comparison \
                  with the reference interpreter, races and simulation errors."}
            </EmptyState>
        };
    };
    html! {
        <div class="output">
            <div class="kv"><span>{"cycles"}</span><span>{sim.cycles}</span></div>
            <h3>{"Outputs"}</h3>
            <ul>
                { for sim.outputs.iter().map(|t| html! {
                    <li><code>{format!("{}: {}{:?}", t.name, t.dtype, t.shape)}</code></li>
                }) }
            </ul>
            <h3>{format!("Races ({})", sim.races.len())}</h3>
            <ul>{ for sim.races.iter().map(|r| html! { <li>{r.message.clone()}</li> }) }</ul>
            <h3>{format!("Errors ({})", sim.errors.len())}</h3>
            <ul>{ for sim.errors.iter().map(|e| html! { <li>{e.message.clone()}</li> }) }</ul>
        </div>
    }
}
