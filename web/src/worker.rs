//! The compile worker: runs `engine` off the page's thread so typing never blocks.
//!
//! A panic in the worker (a core bug) would otherwise leave the page waiting forever:
//! the panic hook answers the request in flight with `Response::Crashed` and closes the
//! worker, and the page spawns a fresh one. The page also restarts a worker that does
//! not answer within `components::app::WORKER_TIMEOUT_MS`.

use std::cell::RefCell;

use gloo::worker::{HandlerId, Worker, WorkerScope};

use crate::engine;
use crate::protocol::{Request, RequestId, Response};

pub struct CompileWorker;

thread_local! {
    /// The request being handled, for the panic hook to answer.
    static IN_FLIGHT: RefCell<Option<(WorkerScope<CompileWorker>, HandlerId, RequestId)>> =
        const { RefCell::new(None) };
}

/// Installs the panic hook that reports the crash to the page; call once at start-up.
pub fn install_panic_reporter() {
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        let in_flight =
            IN_FLIGHT.with(|slot| slot.try_borrow_mut().ok().and_then(|mut s| s.take()));
        if let Some((scope, handler, id)) = in_flight {
            scope.respond(handler, Response::Crashed { id, message });
        }
        close_self();
    }));
}

#[cfg(target_arch = "wasm32")]
fn close_self() {
    use wasm_bindgen::JsCast;
    if let Ok(scope) = js_sys::global().dyn_into::<web_sys::DedicatedWorkerGlobalScope>() {
        scope.close();
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn close_self() {}

impl Worker for CompileWorker {
    type Message = ();
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        CompileWorker
    }

    fn update(&mut self, _scope: &WorkerScope<Self>, _msg: ()) {}

    fn received(&mut self, scope: &WorkerScope<Self>, request: Request, handler: HandlerId) {
        let id = request.id();
        IN_FLIGHT.with(|slot| {
            if let Ok(mut s) = slot.try_borrow_mut() {
                *s = Some((scope.clone(), handler, id));
            }
        });
        let response = match request {
            Request::Compile {
                source, options, ..
            } => Response::Compiled {
                id,
                output: engine::compile(&source, &options),
            },
            Request::Simulate {
                source, options, ..
            } => {
                // The simulator is not in core yet: the compile result alone.
                Response::Simulated {
                    id,
                    compile: engine::compile(&source, &options),
                    sim: None,
                }
            }
        };
        IN_FLIGHT.with(|slot| {
            if let Ok(mut s) = slot.try_borrow_mut() {
                *s = None;
            }
        });
        scope.respond(handler, response);
    }
}
