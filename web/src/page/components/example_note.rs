//! What the loaded example teaches, above the editor: its title and the teaching text
//! of its header comment, so a newcomer's first screen says what to look at. Dismissed
//! until the next example is loaded.

use yew::prelude::*;

use super::use_app;
use crate::catalog;
use crate::page::state::Action;

#[function_component]
pub fn ExampleNote() -> Html {
    let app = use_app();
    let example = app.view.example.as_deref().and_then(catalog::find);
    let Some(example) =
        example.filter(|_| app.view.lesson.is_none() && !app.ui.example_note_hidden)
    else {
        return html! {};
    };
    let app = app.clone();
    let dismiss = Callback::from(move |_| app.dispatch(Action::HideExampleNote));
    html! {
        <div class="example-note" data-testid="example-note">
            // The teaching text opens with the example's name.
            <div class="example-note-text">{example.description()}</div>
            <button class="tb-icon" onclick={dismiss} aria-label="Hide the example's notes"
                title="Hide until the next example">{"×"}</button>
        </div>
    }
}
