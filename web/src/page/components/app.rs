//! The root component: owns the state, the compile worker and the page-level effects
//! (theme, keyboard shortcuts, debounced compile, session saving).

use std::rc::Rc;

use gloo::events::{EventListener, EventListenerOptions};
use gloo::timers::callback::Timeout;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::{
    banner::BannerBar,
    editor::Editor,
    embed_view::EmbedView,
    example_note::ExampleNote,
    gallery::Gallery,
    help::Help,
    panels::Panels,
    start_here::StartHere,
    statusbar::{StatusBar, StatusLine},
    toolbar::Toolbar,
    AppContext,
};
use crate::page::dom;
use crate::page::embed::{self, EmbedOptions, EmbedTheme};
use crate::page::share::{self, Panel};
use crate::page::state::{default_view, Action, AppState, Banner, Embedded, Overlay, Theme};
use crate::page::tracker::Purpose;
use crate::page::worker_link::WorkerLink;
use crate::protocol::Request;

/// An edit compiles at once unless a compile was sent less than this long ago; then it
/// waits for this much quiet, so typing compiles at most this often and never waits
/// for the end of a burst to see the first keystroke's result.
pub const DEBOUNCE_MS: u32 = 150;
/// A result stays on screen this long before the worker measures what each optional
/// pass buys (an edit in between cancels it).
const ABLATE_AFTER_MS: u32 = 800;
/// The session is saved after this much quiet.
const SESSION_SAVE_MS: u32 = 500;

/// The state a page load starts from: a share link, else the saved session, else the
/// default example. A bad link falls back with a banner, never a blank page.
fn initial_state() -> AppState {
    if let Some((options, notes)) = embed::parse(&dom::query()) {
        return embedded_state(options, notes);
    }
    let fragment = dom::fragment();
    let (view, banner) = if !fragment.is_empty() {
        let opened = share::open(&fragment);
        (
            opened.view.clone().unwrap_or_else(default_view),
            opened.message().map(Banner::error),
        )
    } else {
        // A damaged session keeps whatever it still holds, silently.
        let saved = dom::load_session().and_then(|s| share::open(&s).view);
        (saved.unwrap_or_else(default_view), None)
    };
    let mut state = AppState::new(view);
    state.ui.banner = banner;
    state.ui.theme = dom::load_theme();
    state.lessons.progress = dom::load_progress();
    state.lessons.work = dom::load_lesson_work();
    // A newcomer's first screen points at lesson 1; a share link opens what it holds.
    state.ui.start_here = fragment.is_empty()
        && state.view.lesson.is_none()
        && state.lessons.progress.passed() == 0
        && !dom::start_here_done();
    state
}

/// An embed's state: its link's view (never the saved session, which it neither reads
/// nor writes), the one panel its options ask for, and a message for each option or
/// part of the link it could not use.
fn embedded_state(options: EmbedOptions, notes: Vec<String>) -> AppState {
    let fragment = dom::fragment();
    let opened = (!fragment.is_empty()).then(|| share::open(&fragment));
    let mut view = opened
        .as_ref()
        .and_then(|o| o.view.clone())
        .unwrap_or_else(default_view);
    view.panel = options.panel;
    let messages: Vec<String> = opened
        .as_ref()
        .and_then(|o| o.message())
        .into_iter()
        .chain(notes)
        .collect();
    let mut state = AppState::new(view);
    state.ui.banner = (!messages.is_empty()).then(|| Banner::error(messages.join(" ")));
    state.ui.theme = match options.theme {
        EmbedTheme::System => Theme::System,
        EmbedTheme::Light => Theme::Light,
        EmbedTheme::Dark => Theme::Dark,
    };
    state.lessons.progress = dom::load_progress();
    state.ui.embed = Some(Embedded {
        ran: state.view.source.clone(),
        options,
    });
    state
}

#[derive(Properties)]
pub struct AppProps {
    /// The worker link, started before the app mounted (`WorkerLink::start`).
    pub link: Rc<WorkerLink>,
    /// Text typed into index.html's editor before the app mounted: it replaces the
    /// kernel the app would open.
    pub typed: Option<String>,
}

impl PartialEq for AppProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.link, &other.link) && self.typed == other.typed
    }
}

#[function_component]
pub fn App(props: &AppProps) -> Html {
    let typed = props.typed.clone();
    let state = use_reducer(move || {
        let mut state = initial_state();
        if let Some(text) = typed {
            state.apply(Action::SetSource(text));
        }
        state
    });
    let link = Rc::clone(&props.link);

    {
        let link = Rc::clone(&link);
        let dispatcher = state.dispatcher();
        use_effect_with((), move |_| {
            link.attach(dispatcher);
            move || link.detach()
        });
    }

    let embedded = state.ui.embed.is_some();
    use_effect_with((state.ui.theme, embedded), |(theme, embedded)| {
        dom::apply_theme(*theme, !*embedded)
    });

    // Compile at once after a quiet spell, else after a pause in typing (`DEBOUNCE_MS`);
    // dropping the timeout cancels it.
    {
        let link = Rc::clone(&link);
        let last_sent = use_mut_ref(|| f64::NEG_INFINITY);
        use_effect_with(
            (
                state.compiled_source().to_string(),
                state.view.options.clone(),
                state.view.seed,
                state.is_asm(),
            ),
            move |(source, options, seed, asm)| {
                let (source, options, seed, asm) = (source.clone(), options.clone(), *seed, *asm);
                let quiet = crate::clock::now_ms() - *last_sent.borrow() >= f64::from(DEBOUNCE_MS);
                let delay = if quiet { 0 } else { DEBOUNCE_MS };
                let timeout = Timeout::new(delay, move || {
                    *last_sent.borrow_mut() = crate::clock::now_ms();
                    link.send(Purpose::Compile, |id| Request::Compile {
                        id,
                        source,
                        options,
                        seed,
                        asm,
                    });
                });
                move || drop(timeout)
            },
        );
    }

    // The Compare panel's second run, after the first (the worker answers in order).
    // An embed shows no Compare panel.
    {
        let link = Rc::clone(&link);
        let key = (
            state.view.source.clone(),
            state.view.options.clone(),
            state.view.compare.clone(),
            state.view.seed,
        );
        use_effect_with(key, move |(source, _, compare, seed)| {
            let request = compare
                .clone()
                .filter(|_| !embedded)
                .map(|options| (source.clone(), options, *seed));
            let timeout = request.map(|(source, options, seed)| {
                link.send_later(DEBOUNCE_MS, Purpose::Compare, move |id| Request::Compare {
                    id,
                    source,
                    options,
                    seed,
                })
            });
            move || drop(timeout)
        });
    }

    // What each optional pass buys, once a simulation has been on screen for a moment:
    // the worker runs the kernel again without each, which must never delay a result.
    {
        let link = Rc::clone(&link);
        let state = state.clone();
        // An edit (a new key) drops the timeout, so a request always carries the text
        // whose result is on screen.
        let key = (
            state.results.sim_generation,
            state.view.source.clone(),
            state.view.options.clone(),
            state.view.seed,
        );
        use_effect_with(key, move |_| {
            // Not in an embed: a course page may hold several, and none shows it.
            let ready = state.results.sim.is_some()
                && !state.is_asm()
                && state.results.ablation.is_none()
                && state.ui.embed.is_none();
            let timeout = ready.then(|| {
                let (source, options, seed) = (
                    state.view.source.clone(),
                    state.view.options.clone(),
                    state.view.seed,
                );
                link.send_later(ABLATE_AFTER_MS, Purpose::Ablation, move |id| {
                    Request::Ablate {
                        id,
                        source,
                        options,
                        seed,
                    }
                })
            });
            move || drop(timeout)
        });
    }

    // Remember the session; the link in the address bar only changes on Share.
    // Encoding waits for the pause too: compressing a big kernel on every keystroke
    // would make typing lag.
    // An embed keeps its own state: it never saves over the full page's session.
    use_effect_with((state.view.clone(), embedded), |(view, embedded)| {
        let view = view.clone();
        let timeout = (!*embedded).then(|| {
            Timeout::new(SESSION_SAVE_MS, move || {
                dom::save_session(&share::encode(&view), &view.source)
            })
        });
        move || drop(timeout)
    });

    // After a crash, save at once: the user may reload straight away.
    {
        let state = state.clone();
        use_effect_with(state.ui.worker_restarts, move |restarts| {
            if *restarts > 0 && state.ui.embed.is_none() {
                dom::save_session(&share::encode(&state.view), &state.view.source);
            }
        });
    }

    // Page-wide shortcuts.
    {
        let dispatcher = state.dispatcher();
        use_effect_with(embedded, move |embedded| {
            let embedded = *embedded;
            let listener = dom::document().map(|doc| {
                // Not passive: shortcuts call preventDefault.
                let options = EventListenerOptions::enable_prevent_default();
                EventListener::new_with_options(&doc, "keydown", options, move |event| {
                    if let Some(event) = event.dyn_ref::<web_sys::KeyboardEvent>() {
                        handle_shortcut(event, &dispatcher, embedded);
                    }
                })
            });
            move || drop(listener)
        });
    }

    // Medals, every lesson's work and the dismissed "Start here" survive reloads. An
    // embed keeps the medals it earns (joined with the saved ones), and nothing else.
    use_effect_with(
        (state.lessons.progress.clone(), embedded),
        |(progress, embedded)| {
            if *embedded {
                dom::merge_progress(progress);
            } else {
                dom::save_progress(progress);
            }
        },
    );
    use_effect_with(
        (state.lessons.work.clone(), embedded),
        |(work, embedded)| {
            if !*embedded {
                dom::save_lesson_work(work);
            }
        },
    );
    use_effect_with((state.ui.start_here, embedded), |(shown, embedded)| {
        if !*shown && !*embedded {
            dom::set_start_here_done();
        }
    });

    let on_trace = {
        let link = Rc::clone(&link);
        Callback::from(move |_| link.request_trace())
    };
    let open_problems = {
        let dispatcher = state.dispatcher();
        Callback::from(move |_| dispatcher.dispatch(Action::SelectPanel(Panel::Problems)))
    };
    let lesson = lesson_pane(&state, &link);
    let theme_class = match state.ui.theme {
        Theme::System => "",
        _ => "themed",
    };
    if embedded {
        return html! {
            <ContextProvider<AppContext> context={state.clone()}>
                <EmbedView {lesson} class={theme_class} />
            </ContextProvider<AppContext>>
        };
    }
    html! {
        <ContextProvider<AppContext> context={state.clone()}>
            <div class={classes!("app", theme_class)}>
                <Toolbar {on_trace} />
                <BannerBar banner={state.ui.banner.clone()} dispatch={state.dispatcher()} />
                <main class="workspace">
                    <section class="pane pane-editor" aria-label="Kernel source"
                        style={format!("--editor-rows: {}", state.view.source.lines().count().max(1))}>
                        <StartHere shown={state.ui.start_here} dispatch={state.dispatcher()} />
                        {lesson}
                        <ExampleNote example={super::example_note::ExampleNoteProps::of(&state)}
                            dispatch={state.dispatcher()} />
                        <Editor />
                    </section>
                    <section class="pane pane-panels" aria-label="Compiler output">
                        <Panels />
                    </section>
                </main>
                <StatusBar ..StatusLine::of(&state, open_problems) />
                if state.ui.overlay == Overlay::Help { <Help /> }
                if state.ui.overlay == Overlay::Gallery { <Gallery /> }
                if state.ui.overlay == Overlay::Lessons { <super::lessons::Lessons /> }
                if state.ui.overlay == Overlay::Share { <super::share_dialog::ShareDialog /> }
            </div>
        </ContextProvider<AppContext>>
    }
}

/// The open lesson above the editor, its Check sending the code to the grader.
fn lesson_pane(state: &UseReducerHandle<AppState>, link: &Rc<WorkerLink>) -> Html {
    use super::lesson::LessonPane;
    if state.view.lesson.is_none() {
        return Html::default();
    }
    let on_check = {
        let link = Rc::clone(link);
        let state = state.clone();
        Callback::from(move |_| {
            let Some(lesson) = state.open_lesson() else {
                return;
            };
            let lesson = Box::new(lesson.clone());
            let source = state.view.source.clone();
            link.send(Purpose::Grade, |id| Request::Grade { id, lesson, source });
        })
    };
    html! { <LessonPane {on_check} /> }
}

fn handle_shortcut(
    event: &web_sys::KeyboardEvent,
    dispatcher: &UseReducerDispatcher<AppState>,
    embedded: bool,
) {
    let key = event.key();
    if key == "Escape" {
        dispatcher.dispatch(Action::Escape);
        return;
    }
    // An embed has its one panel and no overlays: Ctrl+Enter (Cmd+Enter) is Run.
    if embedded {
        if key == "Enter" && (event.ctrl_key() || event.meta_key()) {
            event.prevent_default();
            dispatcher.dispatch(Action::Run);
        }
        return;
    }
    if event.alt_key() && !event.ctrl_key() && !event.meta_key() {
        // Alt+digit: `code` is layout-independent where `key` may be a symbol.
        let code = event.code();
        if let Some(n) = code
            .strip_prefix("Digit")
            .and_then(|d| d.parse::<usize>().ok())
        {
            if let Some(panel) = n.checked_sub(1).and_then(|i| Panel::ALL.get(i)) {
                event.prevent_default();
                dispatcher.dispatch(Action::SelectPanel(*panel));
            }
        }
        return;
    }
    if dom::in_text_field(event) || event.ctrl_key() || event.meta_key() {
        return;
    }
    match key.as_str() {
        "?" => dispatcher.dispatch(Action::ShowOverlay(Overlay::Help)),
        "e" => dispatcher.dispatch(Action::ShowOverlay(Overlay::Gallery)),
        "l" if !crate::page::lessons::all().is_empty() => {
            dispatcher.dispatch(Action::ShowOverlay(Overlay::Lessons))
        }
        "d" => dispatcher.dispatch(Action::ToggleDiff),
        "h" => dispatcher.dispatch(Action::ToggleHideUnchanged),
        _ => return,
    }
    event.prevent_default();
}
