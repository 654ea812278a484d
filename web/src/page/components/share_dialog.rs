//! Share (the toolbar's button, which has copied the link already): the link, and an
//! `<iframe>` snippet for a course page with its options (`page::embed`).

use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use super::{dialog::Dialog, use_app};
use crate::page::dom;
use crate::page::embed::{self, EmbedOptions, EmbedTheme, PANELS};
use crate::page::share;

#[function_component]
pub fn ShareDialog() -> Html {
    let app = use_app();
    let fragment = use_memo(app.view.clone(), share::encode);
    let options = use_state(EmbedOptions::default);
    let height = use_state(|| embed::DEFAULT_HEIGHT);
    let page = dom::page_url();
    let link = format!("{page}#{fragment}");
    let title = app.source_title();
    let snippet = embed::snippet(&page, &fragment, &options, *height, &title);
    let preview = format!("{page}{}#{fragment}", embed::query(&options));

    // Each option's control: the new options from its element.
    let set = |change: fn(&mut EmbedOptions, &str)| {
        let options = options.clone();
        Callback::from(move |e: Event| {
            if let Some(select) = e.target_dyn_into::<HtmlSelectElement>() {
                let mut next = (*options).clone();
                change(&mut next, &select.value());
                options.set(next);
            }
        })
    };
    let on_panel = set(|o, v| {
        if let Some(p) = PANELS.iter().find(|p| p.name() == v) {
            o.panel = *p;
        }
    });
    let on_theme = set(|o, v| {
        if let Some(theme) = EmbedTheme::from_name(v) {
            o.theme = theme;
        }
    });
    let on_read_only = {
        let options = options.clone();
        Callback::from(move |e: Event| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                options.set(EmbedOptions {
                    read_only: input.checked(),
                    ..(*options).clone()
                });
            }
        })
    };
    let on_height = {
        let height = height.clone();
        Callback::from(move |e: Event| {
            if let Some(v) = e
                .target_dyn_into::<HtmlInputElement>()
                .and_then(|i| i.value().parse::<u32>().ok())
            {
                height.set(v.clamp(embed::MIN_HEIGHT, embed::MAX_HEIGHT));
            }
        })
    };
    let copy = |text: String| Callback::from(move |_| dom::copy_to_clipboard(&text));
    html! {
        <Dialog title="Share">
            <h3 class="dialog-sub">{"Link"}</h3>
            <p class="dialog-foot">{"Copied to the clipboard: it holds the source, the options and this view."}</p>
            <div class="share-row">
                <input class="share-text" readonly=true value={link.clone()} aria-label="Share link"
                    data-testid="share-link" />
                <button class="tb-button" onclick={copy(link)}>{"Copy"}</button>
            </div>
            <h3 class="dialog-sub">{"Embed in a course page"}</h3>
            <div class="share-options">
                <label class="tb-field">
                    <span>{"Panel"}</span>
                    <select data-testid="embed-panel-select" onchange={on_panel}>
                        { for PANELS.iter().map(|p| html! {
                            <option value={p.name()} selected={*p == options.panel}>{p.title()}</option>
                        }) }
                    </select>
                </label>
                <label class="tb-field tb-check">
                    <input type="checkbox" data-testid="embed-readonly" checked={options.read_only}
                        onchange={on_read_only} />
                    <span>{"Read-only"}</span>
                </label>
                <label class="tb-field">
                    <span>{"Height (px)"}</span>
                    <input type="number" class="share-height" min={embed::MIN_HEIGHT.to_string()}
                        max={embed::MAX_HEIGHT.to_string()} step="20" value={height.to_string()}
                        onchange={on_height} />
                </label>
                <label class="tb-field">
                    <span>{"Theme"}</span>
                    <select onchange={on_theme}>
                        { for EmbedTheme::ALL.iter().map(|t| html! {
                            <option value={t.name()} selected={*t == options.theme}>{t.name()}</option>
                        }) }
                    </select>
                </label>
            </div>
            <textarea class="share-snippet" readonly=true rows="4" value={snippet.clone()}
                aria-label="Embed snippet" data-testid="embed-snippet" />
            <div class="share-row">
                <button class="tb-button primary" onclick={copy(snippet)}>{"Copy the snippet"}</button>
                <a class="tb-button" href={preview} target="_blank" rel="noopener">{"Preview ↗"}</a>
            </div>
            <p class="dialog-foot">{"The embed runs the kernel when it loads and on Run; a lesson is graded as here. "}<a href="publishing.html#embedding-in-a-course-page" target="_blank" rel="noopener">{"Publishing and embedding"}</a>{": hosting the site, offline use, fitting the frame to its content."}</p>
        </Dialog>
    }
}
