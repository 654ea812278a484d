//! The open lesson above the editor: the idea, the task, Check (graded by core's grader
//! in the worker, so typing never waits for it), the verdict and medal, hints one at a
//! time, and the reference solution after a pass or a few tries.

use yew::prelude::*;

use super::use_app;
use crate::page::lessons::{self, SOLUTION_AFTER_TRIES};
use crate::page::state::{Action, LessonAction, Overlay};

#[derive(Properties, PartialEq)]
pub struct LessonProps {
    /// Sends the editor's code to the grader.
    pub on_check: Callback<()>,
}

#[function_component]
pub fn LessonPane(props: &LessonProps) -> Html {
    let app = use_app();
    // Hooks before the early return (Yew needs the same hooks every render). After a
    // check, the verdict scrolls into view: it may be below a long task.
    let verdict_ref = use_node_ref();
    {
        let verdict_ref = verdict_ref.clone();
        use_effect_with(app.lessons.session.grade.clone(), move |grade| {
            if grade.is_some() {
                if let Some(verdict) = verdict_ref.cast::<web_sys::Element>() {
                    let options = web_sys::ScrollIntoViewOptions::new();
                    options.set_block(web_sys::ScrollLogicalPosition::Nearest);
                    verdict.scroll_into_view_with_scroll_into_view_options(&options);
                }
            }
        });
    }
    let Some(lesson) = app.open_lesson() else {
        return html! {};
    };
    let session = &app.lessons.session;
    let dispatch = |action: Action| {
        let app = app.clone();
        Callback::from(move |_: MouseEvent| app.dispatch(action.clone()))
    };
    let checking = app.requests.grade;
    let on_check = props.on_check.reform(|_: MouseEvent| ());
    // The verdict of the newest check; the previous one is hidden while it runs. Once
    // the code is edited it judged other code, and says so.
    let current = session.grade_is_for(&app.view.source);
    let next = app.next_lesson();
    let open_next = {
        let app = app.clone();
        let id = next.map(|l| l.id.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(id) = id.clone() {
                app.dispatch(Action::Lesson(LessonAction::Open(id)));
            }
        })
    };
    let verdict = session.grade.as_ref().filter(|_| !checking).map(|g| {
        let (class, title) = match (g.passed, g.medal) {
            (true, Some(medal)) => (
                "verdict verdict-pass",
                format!("Passed: {}", lessons::badge(medal)),
            ),
            _ => ("verdict verdict-fail", "Not yet".to_string()),
        };
        html! {
            <div class={classes!(class, (!current).then_some("verdict-stale"))} data-testid="lesson-verdict"
                data-check={session.tries.to_string()} data-stale={(!current).to_string()} ref={verdict_ref.clone()}>
                if !current {
                    <div class="verdict-stale-note" data-testid="lesson-verdict-stale">
                        {"You edited the code after this check: the verdict below is for the earlier code. Check again."}
                    </div>
                }
                <div class="verdict-title">{title}</div>
                if g.passed && current {
                    if let Some(next) = next {
                        <button class="tb-button primary small verdict-next" data-testid="lesson-next"
                            onclick={open_next.clone()}>
                            {format!("Next lesson: {} →", next.title)}
                        </button>
                    }
                }
                <ul class="checks">
                    { for g.checks.iter().map(|c| html! {
                        <li class={if c.passed { "check check-ok" } else { "check check-fail" }}>
                            <span class="check-mark">{if c.passed { "✓" } else { "✕" }}</span>
                            <span class="check-name">{c.name.clone()}</span>
                            <pre class="check-message">{c.message.clone()}</pre>
                        </li>
                    }) }
                </ul>
            </div>
        }
    });
    let hints = lesson.hints.iter().take(session.hints).enumerate().map(|(i, h)| {
        html! { <li class="hint" data-testid="lesson-hint">{format!("Hint {}: {h}", i + 1)}</li> }
    });
    let more_hints = session.hints < lesson.hints.len();
    let solution_button = if session.solution_shown {
        html! {}
    } else if session.solution_unlocked() {
        html! { <button class="tb-button small" onclick={dispatch(Action::Lesson(LessonAction::ShowSolution))}>{"Show solution"}</button> }
    } else {
        let left = SOLUTION_AFTER_TRIES.saturating_sub(session.tries);
        html! { <span class="muted small">{format!("Solution after a pass or {left} more checks")}</span> }
    };
    let medal = app.lessons.progress.medal(&lesson.id).map(|m| {
        html! { <span class="lesson-best" title="Your best medal in this lesson">{lessons::badge(m)}</span> }
    });
    let read_and_run = lesson.read_and_run.then(|| html! {
        <p class="muted small">{"Read-and-run: the starter already passes. Read the timeline, then check it."}</p>
    });
    html! {
        <div class="lesson" data-testid="lesson-pane" data-lesson={lesson.id.clone()}>
            <div class="lesson-head">
                <button class="tb-icon" title="All lessons (l)" aria-label="All lessons"
                    onclick={dispatch(Action::ShowOverlay(Overlay::Lessons))}>{"☰"}</button>
                <h2 class="lesson-heading">{format!("Lesson {} · {}", lesson.number, lesson.title)}</h2>
                {medal}
                <button class="tb-icon" data-testid="lesson-close" title="Leave the lesson (keeps your code)" aria-label="Leave the lesson"
                    onclick={dispatch(Action::Lesson(LessonAction::Close))}>{"×"}</button>
            </div>
            <div class="lesson-body">
                <p class="lesson-idea">{lesson.idea.trim()}</p>
                <p class="lesson-task"><strong>{"Task. "}</strong>{lesson.task.trim()}</p>
                {read_and_run}
                <div class="lesson-actions">
                    <button class="tb-button primary" data-testid="lesson-check" onclick={on_check} disabled={checking}>
                        {if checking { "Checking…" } else { "Check" }}
                    </button>
                    if more_hints {
                        <button class="tb-button small" data-testid="lesson-hint-button" onclick={dispatch(Action::Lesson(LessonAction::ShowHint))}>
                            {format!("Hint ({} of {})", session.hints + 1, lesson.hints.len())}
                        </button>
                    }
                    {solution_button}
                    <button class="tb-button small" onclick={dispatch(Action::Lesson(LessonAction::ResetStarter))} title="Put the starter code back">{"Reset"}</button>
                    <span class="muted small">{format!("Budgets on {}: gold ≤ {} cycles, silver ≤ {}", lesson.preset, lesson.budgets.gold, lesson.budgets.silver)}</span>
                </div>
                if session.hints > 0 { <ol class="hints">{ for hints }</ol> }
                {verdict}
                if session.solution_shown {
                    <div class="solution">
                        <div class="section-title">{"Reference solution"}</div>
                        <pre class="solution-code">{lesson.solution.trim()}</pre>
                    </div>
                }
            </div>
        </div>
    }
}
