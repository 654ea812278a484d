//! Everything wrong, in one list: compile diagnostics (jump to the source), races and
//! simulation errors (jump to the timeline cycle and the instruction's source line).

use tilescope::diag::LineCol;
use tilescope::diag::{Diagnostic, Severity};
use tilescope::lesson::LessonKind;
use yew::prelude::*;

use super::{panels::EmptyState, use_app, AppContext};
use crate::page::state::Action;
use crate::protocol::InstrRef;

#[function_component]
pub fn ProblemsPanel() -> Html {
    let app = use_app();
    let Some(compile) = app.results.compile.clone() else {
        return html! { <EmptyState title="No results yet">{"The compiler has not answered yet."}</EmptyState> };
    };
    let sim = app.results.sim.clone();
    let sim_count = sim.as_ref().map_or(0, |s| s.problem_count());
    if let Some(why) = app
        .results
        .run_stopped
        .clone()
        .filter(|_| compile.error_count() == 0)
    {
        return html! {
            <EmptyState title="The run stopped">
                <span data-testid="problems-run-stopped">
                    {format!("The kernel compiles, but {why}: there is no simulation to show. \
                              Edit the kernel to try again.")}
                </span>
            </EmptyState>
        };
    }
    if compile.diagnostics.is_empty() && sim_count == 0 {
        let text = if app.requests.simulating {
            "The kernel compiles cleanly; the simulation is running."
        } else {
            "The kernel compiles cleanly, simulates without errors and has no races."
        };
        return html! { <EmptyState title="No problems">{text}</EmptyState> };
    }
    let diags = compile
        .diagnostics
        .iter()
        .chain(sim.iter().flat_map(|s| s.diagnostics.iter()))
        .map(|d| diagnostic_row(&app, d));
    let races = sim.iter().flat_map(|s| s.races.iter()).map(|r| {
        runtime_row(
            &app,
            "race",
            &format!("{} in {} (×{})", r.message, r.place, r.count),
            r.first.first_cycle.or(r.second.first_cycle),
            &[&r.first, &r.second],
        )
    });
    let errors = sim.iter().flat_map(|s| s.errors.iter()).map(|e| {
        let mut instrs: Vec<&InstrRef> = e.instr.iter().collect();
        instrs.extend(e.related.iter());
        runtime_row(&app, &e.kind, &e.message, Some(e.cycle), &instrs)
    });
    html! { <ul class="problems">{for diags}{for errors}{for races}</ul> }
}

/// `file:line:col` of `at`, named as the grader names the student's file.
pub(super) fn location(app: &AppContext, at: u32) -> String {
    let LineCol { line, col, .. } = LineCol::at(&app.view.source, at as usize);
    format!("{}:{line}:{col}", file_name(app))
}

fn file_name(app: &AppContext) -> &'static str {
    let kind = if app.is_asm() {
        LessonKind::Asm
    } else {
        LessonKind::Kernel
    };
    kind.file_name()
}

fn diagnostic_row(app: &AppContext, d: &Diagnostic) -> Html {
    let (sev_class, sev) = match d.severity {
        Severity::Error => ("sev sev-error", "error"),
        Severity::Warning => ("sev sev-warning", "warning"),
        Severity::Note => ("sev sev-note", "note"),
    };
    let loc = d
        .span
        .map_or(file_name(app).to_string(), |s| location(app, s.start));
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
                <span class="problem-loc">{loc}</span>
                <span class="problem-msg">{d.message.clone()}</span>
            </button>
            { for d.labels.iter().map(|l| html! {
                <div class="problem-note">{format!("{}: {}", location(app, l.span.start), l.message)}</div>
            }) }
            { for d.notes.iter().map(|n| html! { <div class="problem-note">{format!("note: {n}")}</div> }) }
        </li>
    }
}

/// A race or simulation error: the row jumps to the cycle, each named instruction to
/// its source line.
fn runtime_row(
    app: &AppContext,
    kind: &str,
    message: &str,
    cycle: Option<u64>,
    instrs: &[&InstrRef],
) -> Html {
    let onclick = {
        let app = app.clone();
        Callback::from(move |_| {
            if let Some(c) = cycle {
                app.dispatch(Action::ShowCycle(c));
            }
        })
    };
    let sides = instrs.iter().map(|i| {
        let app = app.clone();
        let (index, span) = (i.index, i.span);
        let loc = span.map(|s| location(&app, s.start));
        let onclick = Callback::from(move |_| {
            app.dispatch(Action::SelectInstr(Some(index)));
            if let Some(span) = span {
                app.dispatch(Action::LinkSpan(Some(span)));
            }
        });
        html! {
            <button class="problem-instr" {onclick}>
                <span class="problem-pipe">{i.pipe.name()}</span>
                <code>{i.text.clone()}</code>
                if let Some(a) = &i.access { <span class="muted">{format!(" {a}")}</span> }
                if let Some(loc) = loc { <span class="problem-loc">{loc}</span> }
            </button>
        }
    });
    html! {
        <li class="problem">
            <button class="problem-main" {onclick} disabled={cycle.is_none()}>
                <span class="sev sev-error">{kind.to_string()}</span>
                <span class="problem-loc">{cycle.map(|c| format!("cycle {c}")).unwrap_or_default()}</span>
                <span class="problem-msg">{message.to_string()}</span>
            </button>
            {for sides}
        </li>
    }
}
