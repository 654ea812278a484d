//! The lesson track overlay: every lesson in order with the medal earned in it.

use yew::prelude::*;

use super::{dialog::Dialog, use_app};
use crate::page::lessons;
use crate::page::state::{Action, LessonAction};

#[function_component]
pub fn Lessons() -> Html {
    let app = use_app();
    let all = lessons::all();
    let hint = format!(
        "{} of {} passed · opening one replaces the editor text",
        app.lessons.progress.passed(),
        all.len()
    );
    html! {
        <Dialog title="Lessons" {hint} wide=true>
            <ol class="lesson-list">
                { for all.iter().map(|l| {
                    let medal = app.lessons.progress.medal(&l.id);
                    let app = app.clone();
                    let id = l.id.clone();
                    let onclick = Callback::from(move |_| app.dispatch(Action::Lesson(LessonAction::Open(id.clone()))));
                    let kind = match l.kind {
                        lessons::LessonKind::Kernel => "kernel",
                        lessons::LessonKind::Asm => "assembly",
                    };
                    html! {
                        <li>
                            <button class="lesson-item" {onclick} data-lesson={l.id.clone()}>
                                <span class="lesson-number">{l.number}</span>
                                <span class="lesson-title">{l.title.clone()}</span>
                                <span class="lesson-kind muted">{kind}</span>
                                <span class="lesson-medal">{medal.map(lessons::badge).unwrap_or("")}</span>
                            </button>
                        </li>
                    }
                }) }
            </ol>
        </Dialog>
    }
}
