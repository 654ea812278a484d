//! A modal dialog over a dimmed page; a click outside, Esc or the close button dismisses
//! it. It takes the focus when it opens, keeps it while open (Tab and Shift+Tab cycle
//! through its controls, never the page behind it), and gives it back when it closes.

use wasm_bindgen::JsCast;
use web_sys::HtmlElement;
use yew::prelude::*;

use super::use_app;
use crate::page::state::{Action, Overlay};

/// What Tab can reach inside the dialog.
const FOCUSABLE: &str = "a[href], button:not([disabled]), input:not([disabled]), \
    select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex='-1'])";

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
    let dialog = use_node_ref();
    // Focus in on open; back to what had it on close.
    {
        let dialog = dialog.clone();
        use_effect_with((), move |_| {
            let before = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.active_element())
                .and_then(|e| e.dyn_into::<HtmlElement>().ok());
            if let Some(d) = dialog.cast::<HtmlElement>() {
                let _ = d.focus();
            }
            move || {
                if let Some(e) = before {
                    let _ = e.focus();
                }
            }
        });
    }
    let onkeydown = {
        let dialog = dialog.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() != "Tab" {
                return;
            }
            let Some(d) = dialog.cast::<HtmlElement>() else {
                return;
            };
            let Ok(list) = d.query_selector_all(FOCUSABLE) else {
                return;
            };
            let items: Vec<HtmlElement> = (0..list.length())
                .filter_map(|i| list.item(i)?.dyn_into::<HtmlElement>().ok())
                .collect();
            let (Some(first), Some(last)) = (items.first(), items.last()) else {
                e.prevent_default();
                return;
            };
            let active = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|doc| doc.active_element());
            let at = |el: &HtmlElement| active.as_ref().is_some_and(|a| a == el.as_ref());
            let on_dialog = active.as_ref().is_some_and(|a| a == d.as_ref());
            if e.shift_key() && (at(first) || on_dialog) {
                e.prevent_default();
                let _ = last.focus();
            } else if !e.shift_key() && at(last) {
                e.prevent_default();
                let _ = first.focus();
            }
        })
    };
    let close = Callback::from(move |_| app.dispatch(Action::ShowOverlay(Overlay::None)));
    html! {
        <div class="overlay" onclick={close.clone()}>
            <div class={classes!("dialog", props.wide.then_some("dialog-wide"))} role="dialog"
                aria-modal="true" aria-label={props.title.clone()} tabindex="-1" ref={dialog}
                {onkeydown} onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}>
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
