//! The bottom line: compile state, counts, caret position. It takes only what it shows
//! as props (`StatusLine::of` reads them from the state), so typing re-renders it only
//! when one of them changes.

use yew::prelude::*;

use crate::page::state::AppState;
use crate::page::text;
use crate::protocol::options::{Preset, SyncMode};

/// The compiler's state, as the status line says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileStatus {
    /// The worker could not be loaded.
    Unavailable,
    Busy,
    /// Nothing compiled yet.
    Waiting,
    Errors(usize),
    Compiled {
        passes: usize,
        micros: u64,
    },
}

/// Everything the status bar shows.
#[derive(Properties, Clone, Debug, PartialEq, Eq)]
pub struct StatusLine {
    pub status: CompileStatus,
    /// The panels show the results of an older text (the worker crashed on this one).
    pub stale: bool,
    pub restarts: u32,
    pub preset: Preset,
    pub sync: SyncMode,
    /// The caret's 1-based line and column.
    pub line: usize,
    pub col: usize,
}

impl StatusLine {
    pub fn of(app: &AppState) -> StatusLine {
        let status = match (&app.results.compile, app.requests.is_busy()) {
            _ if app.ui.worker_unavailable.is_some() => CompileStatus::Unavailable,
            (_, true) => CompileStatus::Busy,
            (None, false) => CompileStatus::Waiting,
            (Some(c), false) if c.error_count() > 0 => CompileStatus::Errors(c.error_count()),
            (Some(c), false) => CompileStatus::Compiled {
                passes: c.passes.len(),
                micros: c.total_micros,
            },
        };
        let (line, col) = text::line_col(&app.view.source, app.ui.caret);
        StatusLine {
            status,
            stale: app.results.stale,
            restarts: app.ui.worker_restarts,
            preset: app.view.options.preset,
            sync: app.view.options.sync,
            line,
            col,
        }
    }
}

#[function_component]
pub fn StatusBar(props: &StatusLine) -> Html {
    let status = match props.status {
        CompileStatus::Unavailable => {
            html! { <span class="st st-error" data-testid="worker-unavailable">{"✕ compiler not loaded"}</span> }
        }
        CompileStatus::Busy => html! { <span class="st st-busy">{"● compiling…"}</span> },
        CompileStatus::Waiting => html! { <span class="st">{"waiting for the compiler"}</span> },
        CompileStatus::Errors(n) => {
            html! { <span class="st st-error">{format!("✕ {n} error{}", if n == 1 { "" } else { "s" })}</span> }
        }
        CompileStatus::Compiled { passes, micros } => html! {
            <span class="st st-ok" data-testid="compile-status" data-micros={micros.to_string()}>{format!("✓ compiled · {passes} passes · {:.2} ms", micros as f64 / 1000.0)}</span>
        },
    };
    html! {
        <footer class="statusbar">
            {status}
            <span class="st-spacer" />
            if props.stale {
                <span class="st st-error" data-testid="results-stale" title="The compiler stopped on the current text; the panels show the last text that compiled">{"showing results from before the crash"}</span>
            }
            if props.restarts > 0 {
                <span class="st">{format!("worker restarted ×{}", props.restarts)}</span>
            }
            <span class="st">{format!("preset {} · sync {}", props.preset.name(), props.sync.name())}</span>
            <span class="st">{format!("Ln {}, Col {}", props.line, props.col)}</span>
            <span class="st">{"? shortcuts"}</span>
        </footer>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::state::Action;

    #[test]
    fn the_status_line_follows_the_requests_and_the_caret() {
        let mut s = AppState::default();
        assert_eq!(StatusLine::of(&s).status, CompileStatus::Waiting);
        s.apply(Action::RequestSent(1));
        assert_eq!(StatusLine::of(&s).status, CompileStatus::Busy);
        s.apply(Action::SetSource("ab\ncd".into()));
        s.apply(Action::Caret(4));
        assert_eq!((StatusLine::of(&s).line, StatusLine::of(&s).col), (2, 2));
        s.apply(Action::WorkerUnavailable("404".into()));
        assert_eq!(StatusLine::of(&s).status, CompileStatus::Unavailable);
    }
}
