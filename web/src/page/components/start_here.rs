//! The card a newcomer's first screen shows above the editor: where to begin (lesson 1)
//! and what the page is. Gone for good once dismissed or once a lesson is opened.

use yew::prelude::*;

use crate::page::lessons;
use crate::page::state::{Action, AppState, LessonAction};

#[derive(Properties, PartialEq)]
pub struct StartHereProps {
    /// The card has not been dismissed and no lesson opened yet.
    pub shown: bool,
    pub dispatch: UseReducerDispatcher<AppState>,
}

#[function_component]
pub fn StartHere(props: &StartHereProps) -> Html {
    let first = lessons::all().iter().min_by_key(|l| l.number);
    let Some(first) = first.filter(|_| props.shown) else {
        return html! {};
    };
    let open = {
        let dispatch = props.dispatch.clone();
        let id = first.id.clone();
        Callback::from(move |_| dispatch.dispatch(Action::Lesson(LessonAction::Open(id.clone()))))
    };
    let dismiss = {
        let dispatch = props.dispatch.clone();
        Callback::from(move |_| dispatch.dispatch(Action::DismissStartHere))
    };
    html! {
        <div class="start-here" data-testid="start-here">
            <div class="start-here-text">
                <strong>{"New here? "}</strong>
                {format!(
                    "Tilescope compiles a tile kernel for an accelerator core and shows every pass, \
                     the steps and a timeline of its pipes. The {} graded lessons teach it from the \
                     first load and store.",
                    lessons::all().len()
                )}
            </div>
            <button class="tb-button primary" data-testid="start-here-open" onclick={open}>
                {format!("Start lesson {}: {} →", first.number, first.title)}
            </button>
            <button class="tb-icon" data-testid="start-here-dismiss" onclick={dismiss}
                aria-label="Dismiss" title="Do not show this again">{"×"}</button>
        </div>
    }
}
