//! The root component: owns the state, the compile worker and the page-level effects
//! (theme, keyboard shortcuts, debounced compile, session saving).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use gloo::events::{EventListener, EventListenerOptions};
use gloo::timers::callback::Timeout;
use gloo::worker::{Spawnable, WorkerBridge};
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::{
    banner::BannerBar, editor::Editor, example_note, gallery::Gallery, help::Help, panels::Panels,
    statusbar::StatusBar, toolbar::Toolbar, AppContext,
};
use crate::codec::Postcard;
use crate::dom;
use crate::protocol::{Request, RequestId, Response};
use crate::share::{self, Panel};
use crate::state::{default_view, Action, AppState, Banner, Overlay};
use crate::worker::CompileWorker;

/// An edit compiles at once unless a compile was sent less than this long ago; then it
/// waits for this much quiet, so typing compiles at most this often and never waits
/// for the end of a burst to see the first keystroke's result.
pub const DEBOUNCE_MS: u32 = 150;
/// A worker that has not answered in this long is replaced.
pub const WORKER_TIMEOUT_MS: u32 = 15_000;
/// A result stays on screen this long before the worker measures what each optional
/// pass buys (an edit in between cancels it).
const ABLATE_AFTER_MS: u32 = 800;
/// The session is saved after this much quiet.
const SESSION_SAVE_MS: u32 = 500;
/// The playground's own script (Trunk.toml's `pattern_script`): the worker runs the same
/// module as the page.
const SCRIPT_ID: &str = "tilescope-script";

/// The state a page load starts from: a share link, else the saved session, else the
/// default example. A bad link falls back with a banner, never a blank page.
fn initial_state() -> AppState {
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
    state.banner = banner;
    state.theme = dom::load_theme();
    #[cfg(feature = "lessons")]
    {
        state.progress = dom::load_progress();
    }
    state
}

/// The worker connection: the bridge plus what the watchdog needs to know.
#[derive(Default)]
struct WorkerLink {
    bridge: RefCell<Option<WorkerBridge<CompileWorker>>>,
    next_id: Cell<RequestId>,
    /// Newest id answered (or abandoned): the watchdog restarts only if it falls behind.
    answered: Cell<RequestId>,
    /// The newest compile request (trace requests take ids too).
    newest_compile: Cell<RequestId>,
    /// Compile requests sent and not yet answered, oldest first (at most
    /// `MAX_UNANSWERED`): a crash is reported with its input, and the newest is resent
    /// to the replacement worker.
    unanswered: RefCell<VecDeque<Request>>,
}

/// Unanswered requests remembered for crash reports; more only pile up if the worker
/// hangs, and the watchdog replaces it then.
const MAX_UNANSWERED: usize = 8;

impl WorkerLink {
    fn spawn(self: &Rc<Self>, dispatcher: UseReducerDispatcher<AppState>) {
        let link = Rc::clone(self);
        let bridge = CompileWorker::spawner()
            .encoding::<Postcard>()
            .callback(move |response: Response| {
                if let Response::Trace { json, .. } = &response {
                    if !json.is_empty() {
                        dom::download("tilescope-trace.json", json.as_bytes(), "application/json");
                    }
                    return;
                }
                // A compile that goes on to simulate is answered only by `Simulated`.
                let done = !matches!(
                    response,
                    Response::Compiled {
                        simulating: true,
                        ..
                    }
                );
                let id = response.id();
                if done {
                    link.answered.set(link.answered.get().max(id));
                }
                let Response::Crashed { id, message } = response else {
                    if done {
                        link.forget_answered();
                    }
                    dispatcher.dispatch(Action::Received(Box::new(response)));
                    return;
                };
                let input = link.input_of(id);
                link.forget_answered();
                dispatcher.dispatch(Action::WorkerCrashed { id, message, input });
                // The crashed worker closed itself; replace the bridge outside its own
                // callback, and give the new worker what the old one had not reached.
                let link = Rc::clone(&link);
                let dispatcher = dispatcher.clone();
                Timeout::new(0, move || {
                    link.spawn(dispatcher);
                    link.resend_newest();
                })
                .forget();
            })
            .spawn(&dom::script_src(SCRIPT_ID));
        *self.bridge.borrow_mut() = Some(bridge);
    }

    fn send(
        self: &Rc<Self>,
        make: impl FnOnce(RequestId) -> Request,
        dispatcher: UseReducerDispatcher<AppState>,
    ) {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        self.newest_compile.set(id);
        let request = make(id);
        if let Some(bridge) = self.bridge.borrow().as_ref() {
            bridge.send(request.clone());
        }
        let mut unanswered = self.unanswered.borrow_mut();
        unanswered.push_back(request);
        if unanswered.len() > MAX_UNANSWERED {
            unanswered.pop_front();
        }
        drop(unanswered);
        dispatcher.dispatch(Action::RequestSent(id));
        self.watch(id, dispatcher);
    }

    /// The source of compile request `id`, if it is still remembered.
    fn input_of(&self, id: RequestId) -> String {
        self.unanswered
            .borrow()
            .iter()
            .find_map(|r| match r {
                Request::Compile { id: i, source, .. } if *i == id => Some(source.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    fn forget_answered(&self) {
        let answered = self.answered.get();
        self.unanswered.borrow_mut().retain(|r| r.id() > answered);
    }

    /// Sends the newest unanswered compile to the (new) worker: requests queued behind
    /// the one that crashed died with the old worker.
    fn resend_newest(&self) {
        let newest = self.unanswered.borrow().back().cloned();
        if let (Some(request), Some(bridge)) = (newest, self.bridge.borrow().as_ref()) {
            bridge.send(request);
        }
    }

    /// Sends a request that is not a compile (a trace or a grade) and returns its id.
    fn send_other(&self, make: impl FnOnce(RequestId) -> Request) -> RequestId {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        if let Some(bridge) = self.bridge.borrow().as_ref() {
            bridge.send(make(id));
        }
        id
    }

    /// Sends `make`'s request after `delay` ms, then reports its id to `sent`; dropping
    /// the returned timeout (an edit in between) cancels it.
    fn send_later(
        self: &Rc<Self>,
        delay: u32,
        make: impl FnOnce(RequestId) -> Request + 'static,
        sent: impl FnOnce(RequestId) + 'static,
    ) -> Timeout {
        let link = Rc::clone(self);
        Timeout::new(delay, move || sent(link.send_other(make)))
    }

    /// Asks for the newest simulation's Chrome trace; the answer becomes a download.
    fn request_trace(&self) {
        self.send_other(|id| Request::Trace { id });
    }

    fn watch(self: &Rc<Self>, id: RequestId, dispatcher: UseReducerDispatcher<AppState>) {
        let link = Rc::clone(self);
        Timeout::new(WORKER_TIMEOUT_MS, move || {
            if link.answered.get() < id && link.newest_compile.get() == id {
                link.answered.set(id);
                dispatcher.dispatch(Action::WorkerRestarted(format!(
                    "no answer in {} s",
                    WORKER_TIMEOUT_MS / 1000
                )));
                link.spawn(dispatcher);
            }
        })
        .forget();
    }
}

#[function_component]
pub fn App() -> Html {
    let state = use_reducer(initial_state);
    let link = use_memo((), |_| Rc::new(WorkerLink::default()));

    {
        let link = Rc::clone(&link);
        let dispatcher = state.dispatcher();
        use_effect_with((), move |_| {
            link.spawn(dispatcher);
            move || {
                link.bridge.borrow_mut().take();
            }
        });
    }

    use_effect_with(state.theme, |theme| dom::apply_theme(*theme));

    // Compile at once after a quiet spell, else after a pause in typing (`DEBOUNCE_MS`);
    // dropping the timeout cancels it.
    {
        let link = Rc::clone(&link);
        let dispatcher = state.dispatcher();
        let last_sent = use_mut_ref(|| f64::NEG_INFINITY);
        use_effect_with(
            (
                state.view.source.clone(),
                state.view.options.clone(),
                state.view.seed,
                state.is_asm(),
            ),
            move |(source, options, seed, asm)| {
                let (source, options, seed, asm) = (source.clone(), options.clone(), *seed, *asm);
                let quiet = dom::now_ms() - *last_sent.borrow() >= f64::from(DEBOUNCE_MS);
                let delay = if quiet { 0 } else { DEBOUNCE_MS };
                let timeout = Timeout::new(delay, move || {
                    *last_sent.borrow_mut() = dom::now_ms();
                    link.send(
                        |id| Request::Compile {
                            id,
                            source,
                            options,
                            seed,
                            asm,
                        },
                        dispatcher,
                    );
                });
                move || drop(timeout)
            },
        );
    }

    // The Compare panel's second run, after the first (the worker answers in order).
    {
        let link = Rc::clone(&link);
        let dispatcher = state.dispatcher();
        let key = (
            state.view.source.clone(),
            state.view.options.clone(),
            state.view.compare.clone(),
            state.view.seed,
        );
        use_effect_with(key, move |(source, _, compare, seed)| {
            let request = compare
                .clone()
                .map(|options| (source.clone(), options, *seed));
            let timeout = request.map(|(source, options, seed)| {
                link.send_later(
                    DEBOUNCE_MS,
                    move |id| Request::Compare {
                        id,
                        source,
                        options,
                        seed,
                    },
                    move |id| dispatcher.dispatch(Action::CompareSent(id)),
                )
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
            state.sim_generation,
            state.view.source.clone(),
            state.view.options.clone(),
            state.view.seed,
        );
        use_effect_with(key, move |_| {
            let ready = state.sim.is_some() && !state.is_asm() && state.ablation.is_none();
            let timeout = ready.then(|| {
                let (source, options, seed) = (
                    state.view.source.clone(),
                    state.view.options.clone(),
                    state.view.seed,
                );
                link.send_later(
                    ABLATE_AFTER_MS,
                    move |id| Request::Ablate {
                        id,
                        source,
                        options,
                        seed,
                    },
                    move |id| state.dispatch(Action::AblateSent(id)),
                )
            });
            move || drop(timeout)
        });
    }

    // Remember the session; the link in the address bar only changes on Share.
    // Encoding waits for the pause too: compressing a big kernel on every keystroke
    // would make typing lag.
    use_effect_with(state.view.clone(), |view| {
        let view = view.clone();
        let timeout = Timeout::new(SESSION_SAVE_MS, move || {
            dom::save_session(&share::encode(&view))
        });
        move || drop(timeout)
    });

    // After a crash, save at once: the user may reload straight away.
    {
        let state = state.clone();
        use_effect_with(state.worker_restarts, move |restarts| {
            if *restarts > 0 {
                dom::save_session(&share::encode(&state.view));
            }
        });
    }

    // Page-wide shortcuts.
    {
        let dispatcher = state.dispatcher();
        use_effect_with((), move |_| {
            let listener = dom::document().map(|doc| {
                // Not passive: shortcuts call preventDefault.
                let options = EventListenerOptions::enable_prevent_default();
                EventListener::new_with_options(&doc, "keydown", options, move |event| {
                    if let Some(event) = event.dyn_ref::<web_sys::KeyboardEvent>() {
                        handle_shortcut(event, &dispatcher);
                    }
                })
            });
            move || drop(listener)
        });
    }

    // Medals survive reloads.
    use_effect_with(state.progress.clone(), dom::save_progress);

    let on_trace = {
        let link = Rc::clone(&link);
        Callback::from(move |_| link.request_trace())
    };
    let lesson = lesson_pane(&state, &link);
    let theme_class = match state.theme {
        crate::state::Theme::System => "",
        _ => "themed",
    };
    html! {
        <ContextProvider<AppContext> context={state.clone()}>
            <div class={classes!("app", theme_class)}>
                <Toolbar {on_trace} />
                <BannerBar />
                <main class="workspace">
                    <section class="pane pane-editor" aria-label="Kernel source">
                        {lesson}
                        {example_note::example_note(&state)}
                        <Editor />
                    </section>
                    <section class="pane pane-panels" aria-label="Compiler output">
                        <Panels />
                    </section>
                </main>
                <StatusBar />
                if state.overlay == Overlay::Help { <Help /> }
                if state.overlay == Overlay::Gallery { <Gallery /> }
                if state.overlay == Overlay::Lessons { {lesson_track()} }
            </div>
        </ContextProvider<AppContext>>
    }
}

/// The open lesson above the editor, its Check sending the code to the grader.
#[cfg(feature = "lessons")]
fn lesson_pane(state: &UseReducerHandle<AppState>, link: &Rc<WorkerLink>) -> Html {
    use super::lesson::LessonPane;
    if state.view.lesson.is_none() {
        return Html::default();
    }
    let on_check = {
        let link = Rc::clone(link);
        let state = state.clone();
        Callback::from(move |_| {
            let Some(lesson) = state.view.lesson.clone() else {
                return;
            };
            let source = state.view.source.clone();
            let id = link.send_other(|id| Request::Grade { id, lesson, source });
            state.dispatch(Action::Lesson(crate::state::LessonAction::GradeSent(id)));
        })
    };
    html! { <LessonPane {on_check} /> }
}

/// Without the lesson track (the budgeted build) there is no lesson to show.
#[cfg(not(feature = "lessons"))]
fn lesson_pane(_: &UseReducerHandle<AppState>, _: &Rc<WorkerLink>) -> Html {
    Html::default()
}

/// The lesson track overlay.
#[cfg(feature = "lessons")]
fn lesson_track() -> Html {
    html! { <super::lessons::Lessons /> }
}

#[cfg(not(feature = "lessons"))]
fn lesson_track() -> Html {
    Html::default()
}

fn handle_shortcut(event: &web_sys::KeyboardEvent, dispatcher: &UseReducerDispatcher<AppState>) {
    let key = event.key();
    if key == "Escape" {
        dispatcher.dispatch(Action::ShowOverlay(Overlay::None));
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
        "l" if !crate::lessons::all().is_empty() => {
            dispatcher.dispatch(Action::ShowOverlay(Overlay::Lessons))
        }
        "d" => dispatcher.dispatch(Action::ToggleDiff),
        "h" => dispatcher.dispatch(Action::ToggleHideUnchanged),
        _ => return,
    }
    event.prevent_default();
}
