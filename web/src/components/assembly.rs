//! The final assembly text.

use yew::prelude::*;

use super::{panels::EmptyState, use_app};

#[function_component]
pub fn AssemblyPanel() -> Html {
    let app = use_app();
    match app.compile.as_ref().and_then(|c| c.asm.clone()) {
        Some(asm) => html! {
            <pre class="code-view">
                { for asm.lines().enumerate().map(|(i, l)| html! {
                    <div class="code-line"><span class="code-ln">{i + 1}</span><span>{l.to_string()}</span></div>
                }) }
            </pre>
        },
        None => html! {
            <EmptyState title="Assembly">
                {"The per-pipe assembly emitted by the last pass appears here once the kernel \
                  compiles through emit."}
            </EmptyState>
        },
    }
}
