//! The example gallery overlay: each kernel with its teaching text.

use yew::prelude::*;

use super::{dialog::Dialog, use_app};
use crate::catalog::EXAMPLES;
use crate::page::state::Action;

#[function_component]
pub fn Gallery() -> Html {
    let app = use_app();
    let current = app.view.example.clone();
    html! {
        <Dialog title="Examples" hint="Loading one replaces the editor text" wide=true>
                <div class="gallery">
                    { for EXAMPLES.iter().map(|e| {
                        let app = app.clone();
                        let id = e.name.to_string();
                        let onclick = Callback::from(move |_| app.dispatch(Action::LoadExample(id.clone())));
                        let selected = current.as_deref() == Some(e.name);
                        html! {
                            <button class={classes!("card", selected.then_some("card-selected"))} {onclick} data-example={e.name}>
                                <span class="card-title">{e.title}</span>
                                <span class="card-file">{format!("{}.tile", e.name)}</span>
                                <span class="card-text">{e.description()}</span>
                            </button>
                        }
                    }) }
                </div>
        </Dialog>
    }
}
