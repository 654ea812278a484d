//! The bottom line: compile state, counts, caret position. It takes only what it shows
//! as props (`StatusLine::of` reads them from the state), so typing re-renders it only
//! when one of them changes.

use tilescope::diag::LineCol;
use yew::prelude::*;

use crate::page::state::AppState;
use crate::protocol::options::SyncStrategy;

/// The compiler's state, as the status line says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileStatus {
    /// The worker could not be loaded.
    Unavailable,
    Busy,
    /// Compiled; the simulation is running.
    Simulating,
    /// Compiled, but the simulation never finished (the text says why).
    RunStopped,
    /// Nothing compiled yet.
    Waiting,
    Errors(usize),
    Compiled {
        passes: usize,
        micros: u64,
        /// Problems of the run (races, simulation errors, a refused run), as Problems
        /// lists them.
        run_problems: usize,
    },
}

/// Everything the status bar shows.
#[derive(Properties, Clone, Debug, PartialEq)]
pub struct StatusLine {
    pub status: CompileStatus,
    /// Opens Problems (the error count is a button).
    pub on_problems: Callback<()>,
    /// The panels show the results of an older text (the worker crashed on this one).
    pub stale: bool,
    pub restarts: u32,
    pub preset: &'static str,
    pub sync: SyncStrategy,
    /// The caret's 1-based line and column.
    pub line: usize,
    pub col: usize,
}

impl StatusLine {
    pub fn of(app: &AppState, on_problems: Callback<()>) -> StatusLine {
        let status = match (&app.results.compile, app.requests.is_busy()) {
            _ if app.ui.worker_unavailable.is_some() => CompileStatus::Unavailable,
            (Some(_), true) if app.requests.simulating => CompileStatus::Simulating,
            (_, true) => CompileStatus::Busy,
            (Some(c), false) if c.error_count() == 0 && app.results.run_stopped.is_some() => {
                CompileStatus::RunStopped
            }
            (None, false) => CompileStatus::Waiting,
            (Some(c), false) if c.error_count() > 0 => CompileStatus::Errors(c.error_count()),
            (Some(c), false) => CompileStatus::Compiled {
                passes: c.passes.len(),
                micros: c.total_micros,
                run_problems: app.results.sim.as_ref().map_or(0, |s| s.problem_count()),
            },
        };
        let LineCol { line, col, .. } = LineCol::at(&app.view.source, app.ui.caret);
        StatusLine {
            status,
            on_problems,
            stale: app.results.stale,
            restarts: app.ui.worker_restarts,
            preset: crate::protocol::options::preset_name(&app.view.options),
            sync: app.view.options.sync,
            line,
            col,
        }
    }
}

#[function_component]
pub fn StatusBar(props: &StatusLine) -> Html {
    let open_problems = props.on_problems.reform(|_: MouseEvent| ());
    let status = match props.status {
        CompileStatus::Unavailable => {
            html! { <span class="st st-error" data-testid="worker-unavailable">{"✕ compiler not loaded"}</span> }
        }
        CompileStatus::Busy => {
            html! { <span class="st st-busy" data-testid="status-busy">{"● compiling…"}</span> }
        }
        CompileStatus::Simulating => {
            html! { <span class="st st-busy" data-testid="status-busy">{"● compiled · simulating…"}</span> }
        }
        CompileStatus::RunStopped => html! {
            <button class="st st-error st-link" data-testid="status-run-stopped" onclick={open_problems.clone()}
                title="Open Problems">{"✕ the run stopped"}</button>
        },
        CompileStatus::Waiting => html! { <span class="st">{"waiting for the compiler"}</span> },
        CompileStatus::Errors(n) => html! {
            <button class="st st-error st-link" data-testid="status-errors" onclick={open_problems.clone()}
                title="Open Problems">{format!("✕ {n} error{}", if n == 1 { "" } else { "s" })}</button>
        },
        CompileStatus::Compiled {
            passes,
            micros,
            run_problems,
        } => html! {
            <>
                <span class="st st-ok" data-testid="compile-status" data-micros={micros.to_string()}>{format!("✓ compiled · {passes} passes · {:.2} ms", micros as f64 / 1000.0)}</span>
                if run_problems > 0 {
                    <button class="st st-error st-link" data-testid="status-run-problems" onclick={open_problems.clone()}
                        title="Open Problems">{format!("✕ {run_problems} problem{} in the run", if run_problems == 1 { "" } else { "s" })}</button>
                }
            </>
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
            <span class="st">{format!("preset {} · sync {}", props.preset, props.sync.name())}</span>
            <span class="st">{format!("Ln {}, Col {}", props.line, props.col)}</span>
            <span class="st">{"? shortcuts"}</span>
        </footer>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::state::Action;
    use crate::page::tracker::Purpose;
    use crate::protocol::{CompileOutput, Response};

    #[test]
    fn the_status_line_follows_the_requests_and_the_caret() {
        let line = |s: &AppState| StatusLine::of(s, Callback::noop());
        let mut s = AppState::default();
        assert_eq!(line(&s).status, CompileStatus::Waiting);
        s.apply(Action::Sent(Purpose::Compile));
        assert_eq!(line(&s).status, CompileStatus::Busy);
        s.apply(Action::SetSource("ab\ncd".into()));
        s.apply(Action::Caret(4));
        assert_eq!((line(&s).line, line(&s).col), (2, 2));
        s.apply(Action::WorkerUnavailable("404".into()));
        assert_eq!(line(&s).status, CompileStatus::Unavailable);
    }

    #[test]
    fn a_run_that_never_finishes_is_not_reported_as_fine() {
        let line = |s: &AppState| StatusLine::of(s, Callback::noop());
        let mut s = AppState::default();
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Compiled {
                id: 1,
                output: CompileOutput::default(),
                simulating: true,
            }),
        ));
        assert_eq!(line(&s).status, CompileStatus::Simulating);
        s.apply(Action::WorkerRestarted("no answer in 15 s".into()));
        assert_eq!(line(&s).status, CompileStatus::RunStopped);
        assert!(s.results.run_stopped.is_some() && s.ui.banner.is_some());
        // Esc closes the banner; the next finished run clears the rest.
        s.apply(Action::Escape);
        assert!(s.ui.banner.is_none());
        s.apply(Action::WorkerRestarted("no answer in 15 s".into()));
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Simulated {
                id: 2,
                sim: Box::default(),
            }),
        ));
        assert!(
            s.ui.banner.is_none(),
            "a finished run ends the worker's trouble"
        );
        assert!(matches!(line(&s).status, CompileStatus::Compiled { .. }));
    }
}
