//! The worker's end of the page link: postcard-encoded `Request`s in, `Response`s out,
//! over the worker's own `postMessage`.
//!
//! Why not gloo-worker's bridge: it offers no way to terminate a worker, only a
//! `Destroy` message that a worker busy in a long simulation never reads. The page must
//! stop such a run when the student edits, and replace a worker that hangs, so it owns
//! the `web_sys::Worker` (`page::worker_link`) and this side is the matching loop.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::CompileWorker;
use crate::protocol::{codec, Response, WORKER_READY};

fn scope() -> Option<web_sys::DedicatedWorkerGlobalScope> {
    js_sys::global().dyn_into().ok()
}

/// Sends `response` to the page. A response postcard cannot write (the protocol's
/// round-trip test rules that out for every message type) is answered as a crash of
/// its request, so the page says so instead of waiting for the watchdog.
pub fn post(response: Response) {
    let id = response.id();
    let bytes = codec::to_bytes(&response).or_else(|e| {
        codec::to_bytes(&Response::Crashed {
            id,
            message: format!("the worker could not encode its answer: {e}"),
        })
    });
    if let (Ok(bytes), Some(scope)) = (bytes, scope()) {
        let _ = scope.post_message(&js_sys::Uint8Array::from(bytes.as_slice()));
    }
}

/// Answers the page's requests from now on, and tells it the worker is ready (messages
/// the page sends before that would find no listener; it holds them until then).
pub fn serve() {
    let Some(scope) = scope() else {
        return;
    };
    let worker = Rc::new(RefCell::new(CompileWorker::default()));
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let bytes = js_sys::Uint8Array::new(&event.data()).to_vec();
            match codec::from_bytes(&bytes) {
                Ok(request) => {
                    if let Ok(mut worker) = worker.try_borrow_mut() {
                        worker.received(request, &post);
                    }
                }
                // Both ends are built from this crate's types; a message that does not
                // decode is a bug, answered as a crash of request 0 so the page says so.
                Err(e) => post(Response::Crashed {
                    id: 0,
                    message: format!("the worker could not decode a request: {e}"),
                }),
            }
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The listener lives as long as the worker.
    on_message.forget();
    let _ = scope.post_message(&JsValue::from_str(WORKER_READY));
}
