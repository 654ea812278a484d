//! Diagnostics as `kernel.tile:line:col`, each a link to its place in the source.

use tilescope::diag::Severity;
use yew::prelude::*;

use super::{panels::EmptyState, use_app};
use crate::state::Action;
use crate::text;

#[function_component]
pub fn ProblemsPanel() -> Html {
    let app = use_app();
    let Some(compile) = app.compile.clone() else {
        return html! { <EmptyState title="No results yet">{"The compiler has not answered yet."}</EmptyState> };
    };
    if compile.diagnostics.is_empty() {
        return html! { <EmptyState title="No problems">{"The kernel compiles cleanly."}</EmptyState> };
    }
    let source = app.view.source.clone();
    let rows = compile.diagnostics.iter().map(|d| {
        let (sev_class, sev) = match d.severity {
            Severity::Error => ("sev sev-error", "error"),
            Severity::Warning => ("sev sev-warning", "warning"),
            Severity::Note => ("sev sev-note", "note"),
        };
        let location = match d.span {
            Some(span) => {
                let (line, col) = text::line_col(&source, span.start as usize);
                format!("kernel.tile:{line}:{col}")
            }
            None => "kernel.tile".to_string(),
        };
        let onclick = {
            let app = app.clone();
            let span = d.span;
            Callback::from(move |_| {
                if let Some(span) = span {
                    app.dispatch(Action::JumpTo(span.start as usize));
                }
            })
        };
        html! {
            <li class="problem">
                <button class="problem-main" {onclick} disabled={d.span.is_none()}>
                    <span class={sev_class}>{sev}</span>
                    <span class="problem-loc">{location}</span>
                    <span class="problem-msg">{d.message.clone()}</span>
                </button>
                { for d.labels.iter().map(|l| {
                    let (line, col) = text::line_col(&source, l.span.start as usize);
                    html! { <div class="problem-note">{format!("{line}:{col}: {}", l.message)}</div> }
                }) }
                { for d.notes.iter().map(|n| html! { <div class="problem-note">{format!("note: {n}")}</div> }) }
            </li>
        }
    });
    html! { <ul class="problems">{ for rows }</ul> }
}
