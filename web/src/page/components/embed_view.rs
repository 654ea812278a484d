//! The embedded view (`?embed=PANEL`, docs/publishing.md): a bar with Run (or the
//! lesson's Check) and "Open in Tilescope", the editor, the one panel the embed asks
//! for, and the status line. It flows top to bottom and scrolls, and tells the window
//! around it the height it needs.

use yew::prelude::*;

use super::{
    banner::BannerBar,
    editor::Editor,
    panels::panel_body,
    statusbar::{StatusBar, StatusLine},
    use_app,
};
use crate::page::dom;
use crate::page::share::{self, ViewState};
use crate::page::state::Action;

#[derive(Properties, PartialEq)]
pub struct EmbedViewProps {
    /// The open lesson's pane (with its Check), or nothing.
    pub lesson: Html,
    /// The theme class of the app's root.
    pub class: AttrValue,
}

#[function_component]
pub fn EmbedView(props: &EmbedViewProps) -> Html {
    let app = use_app();
    let Some(embed) = app.ui.embed.clone() else {
        return Html::default();
    };
    // The full page in a new tab, with the code as it is now.
    let open_link = use_memo(app.view.clone(), open_url);

    // Tell the window around the embed the height it needs, whenever it changes.
    let last_height = use_mut_ref(|| 0);
    use_effect(move || {
        let height = dom::content_height();
        if height != *last_height.borrow() {
            *last_height.borrow_mut() = height;
            dom::post_height(height);
        }
    });

    let title = app.source_title();
    let run = {
        let app = app.clone();
        Callback::from(move |_| app.dispatch(Action::Run))
    };
    let back = {
        let app = app.clone();
        let panel = embed.options.panel;
        Callback::from(move |_| app.dispatch(Action::SelectPanel(panel)))
    };
    let edited = app.edited_since_run();
    let open_problems = {
        let app = app.clone();
        Callback::from(move |_| app.dispatch(Action::SelectPanel(share::Panel::Problems)))
    };
    let rows = app.view.source.lines().count().max(1);
    html! {
        <div class={classes!("app", "embed", props.class.clone())} data-testid="embed">
            <header class="embed-bar">
                <span class="brand-mark" aria-hidden="true"></span>
                <span class="embed-title">{title}</span>
                if app.open_lesson().is_none() {
                    <button class="tb-button primary" data-testid="embed-run" onclick={run}
                        title="Compile and simulate the kernel (Ctrl+Enter)">{"Run"}</button>
                }
                if edited {
                    <span class="embed-note" data-testid="embed-edited">{"Edited: Run to see the result"}</span>
                }
                if embed.options.read_only {
                    <span class="embed-note">{"Read-only"}</span>
                }
                <span class="tb-spacer" />
                if app.view.panel != embed.options.panel {
                    <button class="tb-button" onclick={back}>{format!("Back to {}", embed.options.panel.title())}</button>
                }
                <a class="tb-button embed-open" data-testid="embed-open" href={(*open_link).clone()}
                    target="_blank" rel="noopener" title="The full playground, in a new tab, with this code">
                    {"Open in Tilescope ↗"}
                </a>
            </header>
            <BannerBar banner={app.ui.banner.clone()} dispatch={app.dispatcher()} />
            <main class="embed-body">
                <section class="pane pane-editor" aria-label="Kernel source"
                    style={format!("--editor-rows: {rows}")}>
                    {props.lesson.clone()}
                    <Editor />
                </section>
                <section class="pane pane-panels" aria-label={app.view.panel.title()}
                    data-testid="embed-panel" data-panel={app.view.panel.name()}>
                    <div class="panel-body">{panel_body(app.view.panel)}</div>
                </section>
            </main>
            <StatusBar ..StatusLine::of(&app, open_problems) />
        </div>
    }
}

/// The full page holding `view`: this site's page without the embed's query.
fn open_url(view: &ViewState) -> String {
    format!("{}#{}", dom::page_url(), share::encode(view))
}
