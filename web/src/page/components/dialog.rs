//! A modal dialog over a dimmed page; a click outside or the close button dismisses it.

use yew::prelude::*;

use super::use_app;
use crate::page::state::{Action, Overlay};

#[derive(Properties, PartialEq)]
pub struct DialogProps {
    pub title: AttrValue,
    #[prop_or_default]
    pub hint: Option<AttrValue>,
    #[prop_or_default]
    pub wide: bool,
    pub children: Html,
}

#[function_component]
pub fn Dialog(props: &DialogProps) -> Html {
    let app = use_app();
    let close = Callback::from(move |_| app.dispatch(Action::ShowOverlay(Overlay::None)));
    html! {
        <div class="overlay" onclick={close.clone()}>
            <div class={classes!("dialog", props.wide.then_some("dialog-wide"))} role="dialog"
                aria-label={props.title.clone()}
                onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}>
                <div class="dialog-head">
                    <h2>{props.title.clone()}</h2>
                    if let Some(hint) = &props.hint {
                        <span class="dialog-hint">{hint.clone()}</span>
                    }
                    <button class="tb-icon" onclick={close} aria-label="Close">{"×"}</button>
                </div>
                {props.children.clone()}
            </div>
        </div>
    }
}
