//! A one-line message under the toolbar (bad link, worker restarted, link copied).

use yew::prelude::*;

use super::use_app;
use crate::state::{Action, BannerKind};

#[function_component]
pub fn BannerBar() -> Html {
    let app = use_app();
    let Some(banner) = app.banner.clone() else {
        return html! {};
    };
    let class = match banner.kind {
        BannerKind::Info => "banner banner-info",
        BannerKind::Error => "banner banner-error",
    };
    let dismiss = Callback::from(move |_| app.dispatch(Action::DismissBanner));
    html! {
        <div {class} role="status">
            <span class="banner-text">{banner.text}</span>
            <button class="tb-icon" onclick={dismiss} aria-label="Dismiss">{"×"}</button>
        </div>
    }
}
