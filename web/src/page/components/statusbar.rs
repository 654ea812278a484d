//! The bottom line: compile state, counts, caret position.

use yew::prelude::*;

use super::use_app;
use crate::page::text;

#[function_component]
pub fn StatusBar() -> Html {
    let app = use_app();
    let (line, col) = text::line_col(&app.view.source, app.ui.caret);
    let status = match (&app.results.compile, app.requests.is_busy()) {
        _ if app.ui.worker_unavailable.is_some() => {
            html! { <span class="st st-error" data-testid="worker-unavailable">{"✕ compiler not loaded"}</span> }
        }
        (_, true) => html! { <span class="st st-busy">{"● compiling…"}</span> },
        (None, false) => html! { <span class="st">{"waiting for the compiler"}</span> },
        (Some(c), false) if c.error_count() > 0 => {
            let n = c.error_count();
            html! { <span class="st st-error">{format!("✕ {n} error{}", if n == 1 { "" } else { "s" })}</span> }
        }
        (Some(c), false) => html! {
            <span class="st st-ok" data-testid="compile-status" data-micros={c.total_micros.to_string()}>{format!("✓ compiled · {} passes · {:.2} ms", c.passes.len(), c.total_micros as f64 / 1000.0)}</span>
        },
    };
    let options = &app.view.options;
    html! {
        <footer class="statusbar">
            {status}
            <span class="st-spacer" />
            if app.results.stale {
                <span class="st st-error" data-testid="results-stale" title="The compiler stopped on the current text; the panels show the last text that compiled">{"showing results from before the crash"}</span>
            }
            if app.ui.worker_restarts > 0 {
                <span class="st">{format!("worker restarted ×{}", app.ui.worker_restarts)}</span>
            }
            <span class="st">{format!("preset {} · sync {}", options.preset.name(), options.sync.name())}</span>
            <span class="st">{format!("Ln {line}, Col {col}")}</span>
            <span class="st">{"? shortcuts"}</span>
        </footer>
    }
}
