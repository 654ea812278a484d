//! The page's end of the link to the compile worker: postcard messages over the
//! worker's `postMessage`, the request tracker (`tracker.rs`, the page's only record of
//! request ids), the watchdog, crash recovery, cancelling a long run, and the worker's
//! start.
//!
//! The page takes the worker before it renders anything (`WorkerLink::start`, called
//! first in the page's `main`). Until the app attaches its dispatcher, whatever the worker says waits in
//! `early`; until the worker says it listens (`WORKER_READY`), requests wait in the
//! connection.
//!
//! The link owns the `web_sys::Worker` (gloo-worker's bridge cannot terminate one; see
//! `worker::serve`): a new compile while an older one has run for `CANCEL_AFTER_MS`
//! replaces the worker, so an edit never waits behind a long simulation, and the
//! watchdog's replacement really stops a worker that hangs.
//!
//! index.html's script starts the first worker before the page's module has arrived,
//! so both modules download together; the link adopts it, and asks the same script
//! (`tilescopeStartWorker`) for a replacement. The worker's first script, a loader of
//! our own, reports on a `BroadcastChannel`: a module that fails to load (a 404, a
//! corrupt file, offline) is reported at once, so the page can say so instead of
//! waiting for the watchdog. A module that loaded reports the worker's Resource Timing
//! entries, which the page keeps as the detail of a `tilescope:worker-loaded`
//! performance mark: the browser budget test reads how the worker's files arrived
//! there, since a worker's downloads are not in the page's own timeline.

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Timeout;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::UseReducerDispatcher;

use crate::clock;
use crate::page::dom;
use crate::page::state::{Action, AppState};
use crate::page::tracker::{Answer, Purpose, Tracker};
use crate::protocol::{codec, Request, RequestId, Response, WORKER_READY};

/// A worker that has not answered in this long is replaced.
pub const WORKER_TIMEOUT_MS: u32 = 15_000;
/// Work still unanswered after this long when a newer compile is sent (an older
/// compile, or the ablation, comparison or grade of an older text) is abandoned: the
/// worker is replaced rather than left to finish runs nobody will see. Shorter work
/// finishes first (replacing the worker costs the new one's start, some tens of ms).
pub const CANCEL_AFTER_MS: f64 = 300.0;
/// What index.html's script started while the page's module downloaded: `{ worker,
/// channel, inbox, loaded, failed }`.
const BOOT_WORKER: &str = "tilescopeWorker";
/// index.html's function that starts a worker and returns the same shape.
const START_WORKER: &str = "tilescopeStartWorker";
/// The performance mark set when the worker's module has loaded; its detail lists the
/// worker's Resource Timing entries.
pub const WORKER_LOADED_MARK: &str = "tilescope:worker-loaded";
/// The performance mark set each time a long run is cancelled by replacing the worker.
pub const WORKER_REPLACED_MARK: &str = "tilescope:worker-replaced";

/// What the worker link tells the app.
enum Event {
    /// An answer the tracker found current, with its purpose; boxed: results are large
    /// next to a message.
    Response(Purpose, Box<Response>),
    /// The worker's script or module could not be loaded; the text says why.
    LoadFailed(String),
}

/// One running worker: it is terminated when dropped.
struct Connection {
    worker: web_sys::Worker,
    /// The worker listens (it posted `WORKER_READY`).
    ready: bool,
    /// Encoded requests sent before it listened, oldest first.
    pending: Vec<Vec<u8>>,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
}

impl Connection {
    fn post(&mut self, bytes: Vec<u8>) {
        if self.ready {
            let _ = self
                .worker
                .post_message(&js_sys::Uint8Array::from(bytes.as_slice()));
        } else {
            self.pending.push(bytes);
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.worker.set_onmessage(None);
        self.worker.terminate();
    }
}

/// The worker connection plus what the watchdog needs to know.
#[derive(Default)]
pub struct WorkerLink {
    connection: RefCell<Option<Connection>>,
    /// Every request's id and purpose, and which are unanswered.
    tracker: RefCell<Tracker>,
    /// Where events go once the app has mounted.
    dispatcher: RefCell<Option<UseReducerDispatcher<AppState>>>,
    /// Events that arrived before the app attached, oldest first.
    early: RefCell<Vec<Event>>,
    /// The channel the current worker's loader reports a load failure on, and its
    /// listener (dropped with the worker it belongs to).
    load_watch: RefCell<Option<LoadWatch>>,
}

struct LoadWatch {
    channel: web_sys::BroadcastChannel,
    _listener: Closure<dyn FnMut(web_sys::MessageEvent)>,
}

impl Drop for LoadWatch {
    fn drop(&mut self) {
        self.channel.set_onmessage(None);
        self.channel.close();
    }
}

impl PartialEq for WorkerLink {
    /// One link per page: two handles are equal when they are the same link.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl WorkerLink {
    /// Spawns the worker at once; the app attaches to the link when it mounts.
    pub fn start() -> Rc<WorkerLink> {
        let link = Rc::new(WorkerLink::default());
        link.spawn();
        link
    }

    /// Sends events to `dispatcher` from now on, first those that arrived before.
    pub fn attach(&self, dispatcher: UseReducerDispatcher<AppState>) {
        *self.dispatcher.borrow_mut() = Some(dispatcher);
        let early = std::mem::take(&mut *self.early.borrow_mut());
        for event in early {
            self.deliver(event);
        }
    }

    /// Stops the worker (the app unmounts).
    pub fn detach(&self) {
        self.dispatcher.borrow_mut().take();
        self.connection.borrow_mut().take();
        self.load_watch.borrow_mut().take();
    }

    fn deliver(&self, event: Event) {
        let dispatcher = self.dispatcher.borrow().clone();
        let Some(dispatcher) = dispatcher else {
            self.early.borrow_mut().push(event);
            return;
        };
        match event {
            Event::Response(purpose, response) => {
                dispatcher.dispatch(Action::Received(purpose, response))
            }
            Event::LoadFailed(message) => dispatcher.dispatch(Action::WorkerUnavailable(message)),
        }
    }

    /// Starts a worker, replacing (and terminating) the current one. The first is the
    /// one index.html started while the page's module downloaded; later ones come from
    /// the same function of index.html (`tilescopeStartWorker`), so one piece of code
    /// knows how a worker starts.
    fn spawn(self: &Rc<Self>) {
        self.connection.borrow_mut().take();
        self.load_watch.borrow_mut().take();
        let started = dom::take_global(BOOT_WORKER)
            .or_else(|| dom::call_global(START_WORKER))
            .unwrap_or(wasm_bindgen::JsValue::UNDEFINED);
        let field = |name: &str| {
            js_sys::Reflect::get(&started, &name.into())
                .ok()
                .filter(|v| !v.is_undefined() && !v.is_null())
        };
        let worker = field("worker").and_then(|w| w.dyn_into::<web_sys::Worker>().ok());
        let channel = field("channel").and_then(|c| c.dyn_into::<web_sys::BroadcastChannel>().ok());
        let (Some(worker), Some(channel)) = (worker, channel) else {
            let reason = field("failed")
                .and_then(|f| f.as_string())
                .unwrap_or_else(|| format!("the page has no `{START_WORKER}` to start it"));
            self.deliver(Event::LoadFailed(reason));
            return;
        };
        let weak = Rc::downgrade(self);
        let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
            move |event: web_sys::MessageEvent| {
                if let Some(link) = weak.upgrade() {
                    link.message(event.data());
                }
            },
        );
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        *self.connection.borrow_mut() = Some(Connection {
            worker,
            ready: false,
            pending: Vec::new(),
            _on_message: on_message,
        });
        *self.load_watch.borrow_mut() = Some(self.watch_load(channel));
        // What the worker and its loader said before the page listened.
        if let Some(loaded) = field("loaded") {
            dom::mark_with_detail(WORKER_LOADED_MARK, &loaded);
        }
        if let Some(inbox) = field("inbox").map(|i| js_sys::Array::from(&i)) {
            for data in inbox.iter() {
                self.message(data);
            }
        }
        if let Some(reason) = field("failed").and_then(|f| f.as_string()) {
            self.load_failed(reason);
        }
    }

    /// Listens on the loader's channel: a worker that loaded reports its downloads, one
    /// that could not load says why.
    fn watch_load(self: &Rc<Self>, channel: web_sys::BroadcastChannel) -> LoadWatch {
        let weak = Rc::downgrade(self);
        let listener = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
            move |event: web_sys::MessageEvent| {
                let data = event.data();
                let field = |name: &str| js_sys::Reflect::get(&data, &name.into()).ok();
                if let Some(loaded) = field("loaded").filter(|v| !v.is_undefined()) {
                    dom::mark_with_detail(WORKER_LOADED_MARK, &loaded);
                    return;
                }
                let reason = field("failed")
                    .and_then(|v| v.as_string())
                    .unwrap_or_else(|| "the worker's loader sent no reason".to_string());
                if let Some(link) = weak.upgrade() {
                    // Dropped outside this listener, which the load watch owns.
                    Timeout::new(0, move || link.load_failed(reason)).forget();
                }
            },
        );
        channel.set_onmessage(Some(listener.as_ref().unchecked_ref()));
        LoadWatch {
            channel,
            _listener: listener,
        }
    }

    fn load_failed(&self, reason: String) {
        self.tracker.borrow_mut().abandon_all();
        self.connection.borrow_mut().take();
        self.load_watch.borrow_mut().take();
        self.deliver(Event::LoadFailed(reason));
    }

    /// A message from the worker: that it listens, or a response.
    fn message(self: &Rc<Self>, data: wasm_bindgen::JsValue) {
        if data.as_string().as_deref() == Some(WORKER_READY) {
            if let Some(connection) = self.connection.borrow_mut().as_mut() {
                connection.ready = true;
                for bytes in std::mem::take(&mut connection.pending) {
                    connection.post(bytes);
                }
            }
            return;
        }
        let bytes = js_sys::Uint8Array::new(&data).to_vec();
        let response = codec::from_bytes(&bytes).unwrap_or_else(|e| Response::Crashed {
            id: self.tracker.borrow().newest_compile(),
            message: format!("a message from the worker did not decode: {e}"),
        });
        self.received(response);
    }

    /// Sends `request` to the worker (held until it listens).
    fn post(self: &Rc<Self>, request: &Request) {
        match codec::to_bytes(request) {
            Ok(bytes) => {
                if let Some(connection) = self.connection.borrow_mut().as_mut() {
                    connection.post(bytes);
                }
            }
            // The protocol's round-trip test rules this out for every message type; if
            // it happened, the request is answered as a crash, not left to the watchdog.
            Err(e) => {
                let link = Rc::clone(self);
                let crash = Response::Crashed {
                    id: request.id(),
                    message: format!("the page could not encode a request: {e}"),
                };
                Timeout::new(0, move || link.received(crash)).forget();
            }
        }
    }

    fn received(self: &Rc<Self>, response: Response) {
        if let Response::Crashed { id, message } = response {
            let (purpose, input) = self.tracker.borrow_mut().crashed(id);
            if let Some(dispatcher) = self.dispatcher.borrow().as_ref() {
                dispatcher.dispatch(Action::WorkerCrashed {
                    purpose,
                    message,
                    input,
                });
            }
            // The crashed worker closed itself; replace it outside its own callback,
            // and ask the new worker what the old one had not reached.
            let link = Rc::clone(self);
            Timeout::new(0, move || {
                link.spawn();
                let requests = link.tracker.borrow().to_resend();
                for request in &requests {
                    link.post(request);
                }
            })
            .forget();
            return;
        }
        let answer = self.tracker.borrow_mut().answer(&response);
        match (answer, &response) {
            (Answer::Current(Purpose::Trace), Response::Trace { json, .. }) => {
                if !json.is_empty() {
                    dom::download("tilescope-trace.json", json.as_bytes(), "application/json");
                }
            }
            (Answer::Current(purpose), _) => {
                self.deliver(Event::Response(purpose, Box::new(response)))
            }
            (Answer::Stale, _) => {}
        }
    }

    /// Sends the request `make` builds for `purpose` with a fresh id, and tells the app
    /// it went. A compile cancels work that has run for `CANCEL_AFTER_MS`, and the
    /// watchdog waits for its answer.
    pub fn send(self: &Rc<Self>, purpose: Purpose, make: impl FnOnce(RequestId) -> Request) {
        let now = clock::now_ms();
        let busy_since = self.tracker.borrow().busy_since();
        if purpose == Purpose::Compile
            && busy_since.is_some_and(|since| now - since > CANCEL_AFTER_MS)
        {
            self.cancel();
        }
        let request = self.tracker.borrow_mut().send(purpose, now, make);
        self.post(&request);
        if purpose != Purpose::Trace {
            if let Some(dispatcher) = self.dispatcher.borrow().as_ref() {
                dispatcher.dispatch(Action::Sent(purpose));
            }
        }
        if purpose == Purpose::Compile {
            self.watch(request.id());
        }
    }

    /// Abandons everything in flight (a newer compile is about to be sent): the worker
    /// is replaced, and the app forgets the grade, ablation or comparison that died
    /// with it.
    fn cancel(self: &Rc<Self>) {
        let loaded = self.connection.borrow().as_ref().is_some_and(|c| c.ready);
        if !loaded {
            // Still loading: nothing runs yet, and a new worker would only start over.
            return;
        }
        self.tracker.borrow_mut().abandon_all();
        self.spawn();
        dom::mark(WORKER_REPLACED_MARK);
        if let Some(dispatcher) = self.dispatcher.borrow().as_ref() {
            dispatcher.dispatch(Action::WorkerReplaced);
        }
    }

    /// Sends `make`'s request for `purpose` after `delay` ms; dropping the returned
    /// timeout (an edit in between) cancels it.
    pub fn send_later(
        self: &Rc<Self>,
        delay: u32,
        purpose: Purpose,
        make: impl FnOnce(RequestId) -> Request + 'static,
    ) -> Timeout {
        let link = Rc::clone(self);
        Timeout::new(delay, move || link.send(purpose, make))
    }

    /// Asks for the newest simulation's Chrome trace; the answer becomes a download.
    pub fn request_trace(self: &Rc<Self>) {
        self.send(Purpose::Trace, |id| Request::Trace { id });
    }

    fn watch(self: &Rc<Self>, id: RequestId) {
        let link = Rc::clone(self);
        Timeout::new(WORKER_TIMEOUT_MS, move || {
            // A worker that never loaded has been reported already; no restart helps.
            let loaded = link.connection.borrow().is_some();
            if loaded && link.tracker.borrow().is_waiting_compile(id) {
                link.tracker.borrow_mut().abandon_all();
                if let Some(dispatcher) = link.dispatcher.borrow().as_ref() {
                    dispatcher.dispatch(Action::WorkerRestarted(format!(
                        "no answer in {} s",
                        WORKER_TIMEOUT_MS / 1000
                    )));
                }
                link.spawn();
            }
        })
        .forget();
    }
}
