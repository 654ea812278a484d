//! What the loaded example teaches, above the editor: its title and the teaching text
//! of its header comment, so a newcomer's first screen says what to look at. Dismissed
//! until the next example is loaded.

use yew::prelude::*;

use crate::catalog;
use crate::page::state::{Action, AppState};

#[derive(Properties, PartialEq)]
pub struct ExampleNoteProps {
    /// The gallery example in the editor, if its note shows (no lesson is open and the
    /// note was not hidden).
    pub example: Option<String>,
    pub dispatch: UseReducerDispatcher<AppState>,
}

impl ExampleNoteProps {
    pub fn of(app: &AppState) -> Option<String> {
        let shown = app.view.lesson.is_none() && !app.ui.example_note_hidden;
        app.view.example.clone().filter(|_| shown)
    }
}

#[function_component]
pub fn ExampleNote(props: &ExampleNoteProps) -> Html {
    let Some(example) = props.example.as_deref().and_then(catalog::find) else {
        return html! {};
    };
    let dispatch = props.dispatch.clone();
    let dismiss = Callback::from(move |_| dispatch.dispatch(Action::HideExampleNote));
    html! {
        <div class="example-note" data-testid="example-note">
            // The teaching text opens with the example's name.
            <div class="example-note-text">{example.description()}</div>
            <button class="tb-icon" onclick={dismiss} aria-label="Hide the example's notes"
                title="Hide until the next example">{"×"}</button>
        </div>
    }
}
