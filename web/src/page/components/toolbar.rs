//! The top bar: example gallery, compile options, share and downloads, theme, help.

use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use super::use_app;
use crate::catalog;
use crate::page::dom;
use crate::page::lessons;
use crate::page::share;
use crate::page::state::{Action, Overlay, Theme};
use crate::protocol::options::{AliasMode, Preset, SyncStrategy};

#[derive(Properties, PartialEq)]
pub struct ToolbarProps {
    /// Asks the worker for the Chrome trace (it arrives as a download).
    pub on_trace: Callback<()>,
}

#[function_component]
pub fn Toolbar(props: &ToolbarProps) -> Html {
    let app = use_app();
    let options = &app.view.options;
    // Compressing a big kernel takes a while: only when the view changed, not on
    // every render.
    let link = use_memo(app.view.clone(), share::encode);

    // What the editor holds: the open lesson, an example (edited or not), or scratch.
    let lesson = app.open_lesson();
    let (source_kind, source_label) =
        match (lesson, app.view.example.as_deref().and_then(catalog::find)) {
            (Some(l), _) => ("Lesson", format!("{} · {}", l.number, l.title)),
            (None, Some(e)) if e.source == app.view.source => ("Example", e.title.to_string()),
            (None, Some(e)) => ("Example", format!("{} (edited)", e.title)),
            (None, None) => ("Example", "Scratch".to_string()),
        };
    let preset_title = match lesson {
        Some(l) => format!(
            "The lesson is graded on {}: its preset is fixed while it is open",
            l.preset
        ),
        None => "Machine preset: buffer sizes and costs".to_string(),
    };

    let on_preset = {
        let app = app.clone();
        Callback::from(move |e: Event| {
            if let Some(p) = e
                .target_dyn_into::<HtmlSelectElement>()
                .and_then(|s| Preset::from_name(&s.value()))
            {
                app.dispatch(Action::SetPreset(p));
            }
        })
    };
    let on_sync = {
        let app = app.clone();
        Callback::from(move |e: Event| {
            if let Some(s) = e
                .target_dyn_into::<HtmlSelectElement>()
                .and_then(|s| SyncStrategy::from_name(&s.value()))
            {
                app.dispatch(Action::SetSync(s));
            }
        })
    };
    let on_alias = {
        let app = app.clone();
        Callback::from(move |e: Event| {
            let value = e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value());
            if let Some(a) = AliasMode::ALL
                .into_iter()
                .find(|a| Some(a.name()) == value.as_deref())
            {
                app.dispatch(Action::SetAlias(a));
            }
        })
    };
    let on_multibuffer = {
        let app = app.clone();
        Callback::from(move |e: Event| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                app.dispatch(Action::SetMultibuffer(input.checked()));
            }
        })
    };
    let on_share = {
        let app = app.clone();
        let link = link.clone();
        Callback::from(move |_| {
            dom::set_fragment(&link);
            dom::copy_to_clipboard(&dom::href());
            app.dispatch(Action::ShowOverlay(Overlay::Share));
        })
    };
    let sim = app.results.sim.clone();
    let on_trace = props.on_trace.reform(|_: MouseEvent| ());
    let on_npy = {
        let sim = sim.clone();
        Callback::from(move |_| {
            for t in sim.iter().flat_map(|s| s.outputs.iter()) {
                dom::download(
                    &format!("{}.npy", t.name),
                    &t.npy,
                    "application/octet-stream",
                );
            }
        })
    };
    let has_trace = sim.as_ref().is_some_and(|s| s.total_slices > 0);
    let has_outputs = sim.as_ref().is_some_and(|s| !s.outputs.is_empty());

    let on_theme = {
        let app = app.clone();
        Callback::from(move |_| {
            let dark = match app.ui.theme {
                Theme::System => dom::prefers_dark(),
                Theme::Dark => true,
                Theme::Light => false,
            };
            app.dispatch(Action::SetTheme(if dark {
                Theme::Light
            } else {
                Theme::Dark
            }));
        })
    };
    let open = |overlay: Overlay| {
        let app = app.clone();
        Callback::from(move |_| app.dispatch(Action::ShowOverlay(overlay)))
    };

    html! {
        <header class="toolbar">
            <div class="brand" title="Tilescope: a tile kernel compiler and pipe simulator">
                <span class="brand-mark" aria-hidden="true"></span>
                <span class="brand-name">{"tilescope"}</span>
            </div>
            <button class="tb-button tb-examples" onclick={open(Overlay::Gallery)} title="Example gallery (e)">
                <span class="tb-label">{source_kind}</span>
                <span class="tb-value" data-testid="source-label">{source_label}</span>
                <span class="caret" aria-hidden="true">{"▾"}</span>
            </button>
            if !lessons::all().is_empty() {
                <button class="tb-button" data-testid="lessons" onclick={open(Overlay::Lessons)} title="The graded lesson track (l)">
                    {"Lessons"}
                    if app.lessons_passed() > 0 {
                        <span class="tb-value">{format!("{}/{}", app.lessons_passed(), lessons::all().len())}</span>
                    }
                </button>
            }
            <div class="tb-sep" />
            <label class="tb-field" title={preset_title}>
                <span class="tb-label">{"Preset"}</span>
                <select data-testid="preset-select" onchange={on_preset} disabled={lesson.is_some()}>
                    { for Preset::ALL.iter().map(|p| html! {
                        <option value={p.name()} selected={Preset::of(options) == Some(*p)}>{p.name()}</option>
                    }) }
                </select>
            </label>
            <label class="tb-field" title="Synchronisation strategy of insert-sync">
                <span class="tb-label">{"Sync"}</span>
                <select data-testid="sync-select" onchange={on_sync}>
                    { for SyncStrategy::ALL.iter().map(|s| html! {
                        <option value={s.name()} selected={*s == options.sync}>{s.name()}</option>
                    }) }
                </select>
            </label>
            <label class="tb-field" title="Alias information of insert-sync: coarse treats each memory space and all tensors as one region (the ablation)">
                <span class="tb-label">{"Alias"}</span>
                <select data-testid="alias-select" onchange={on_alias}>
                    { for AliasMode::ALL.iter().map(|a| html! {
                        <option value={a.name()} selected={*a == options.alias}>{a.name()}</option>
                    }) }
                </select>
            </label>
            <label class="tb-field tb-check" title="Let the compiler choose buffer slots for loops without @buffers">
                <input type="checkbox" checked={options.auto_multi_buffer} onchange={on_multibuffer} />
                <span>{"Auto multi-buffer"}</span>
            </label>
            <div class="tb-spacer" />
            <button class="tb-button" data-testid="share" data-link={(*link).clone()} onclick={on_share} title="Copy a link to this exact view, or embed it in a course page">{"Share"}</button>
            <button class="tb-button" data-testid="download-trace" onclick={on_trace} disabled={!has_trace}
                title={if has_trace { "Download the trace (Chrome Trace JSON, opens in Perfetto)" } else { "Available after a simulation" }}>
                {"Trace ↓"}
            </button>
            <button class="tb-button" onclick={on_npy} disabled={!has_outputs}
                title={if has_outputs { "Download the output tensors as .npy" } else { "Available after a simulation" }}>
                {".npy ↓"}
            </button>
            <div class="tb-sep" />
            <button class="tb-icon" onclick={on_theme} title="Switch light / dark theme" aria-label="Switch theme">{"◐"}</button>
            <button class="tb-icon" onclick={open(Overlay::Help)} title="Keyboard shortcuts (?)" aria-label="Help">{"?"}</button>
        </header>
    }
}
