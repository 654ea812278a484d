//! A one-line message under the toolbar (bad link, worker restarted, link copied). A
//! crash report also shows the input that caused it, with a button to copy it.

use yew::prelude::*;

use crate::page::dom;
use crate::page::state::{Action, AppState, Banner, BannerKind};

/// The crash report shows at most this much of the input (all of it is copied).
const MAX_SHOWN_INPUT_CHARS: usize = 4000;

#[derive(Properties, PartialEq)]
pub struct BannerProps {
    pub banner: Option<Banner>,
    pub dispatch: UseReducerDispatcher<AppState>,
}

/// Takes only its banner, so typing does not re-render it.
#[function_component]
pub fn BannerBar(props: &BannerProps) -> Html {
    let Some(banner) = props.banner.clone() else {
        return html! {};
    };
    let class = match banner.kind {
        BannerKind::Info => "banner banner-info",
        BannerKind::Error => "banner banner-error",
    };
    let dispatch = props.dispatch.clone();
    let dismiss = Callback::from(move |_| dispatch.dispatch(Action::DismissBanner));
    let input = banner.input.map(|input| {
        let shown: String = input.chars().take(MAX_SHOWN_INPUT_CHARS).collect();
        let copy = Callback::from(move |_| dom::copy_to_clipboard(&input));
        html! {
            <>
                <button class="tb-button" data-testid="banner-copy" onclick={copy}>{"Copy input"}</button>
                <details class="banner-input">
                    <summary>{"Show input"}</summary>
                    <pre data-testid="banner-input">{shown}</pre>
                </details>
            </>
        }
    });
    html! {
        <div {class} role="status" data-testid="banner">
            <span class="banner-text">{banner.text}</span>
            {for input}
            <button class="tb-icon" onclick={dismiss} aria-label="Dismiss">{"×"}</button>
        </div>
    }
}
