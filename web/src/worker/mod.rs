//! The compile worker (bin `tilescope-worker`): compiles, simulates, grades and
//! assembles with core, off the page's thread so typing never blocks; `engine` turns
//! core's results into `protocol`'s shapes.
//!
//! A panic in the worker (a core bug) would otherwise leave the page waiting forever:
//! the panic hook answers the request in flight with `Response::Crashed` and closes the
//! worker, and the page spawns a fresh one. The page also restarts a worker that does
//! not answer within `page::worker_link::WORKER_TIMEOUT_MS`.
//!
//! To exercise that path without a core bug, a source containing `DEBUG_PANIC_MARKER`
//! makes the worker panic on purpose. It is compiled into release builds (the browser
//! tests run those) and harmless: it only stops this worker, which the page replaces.

use std::cell::RefCell;

use gloo::worker::{HandlerId, Worker, WorkerScope};

use crate::protocol::options::CompileOptions;
use crate::protocol::{Request, RequestId, Response, SimOutput, DEBUG_PANIC_MARKER};

pub mod engine;
pub mod layout;
pub mod liveness;

pub struct CompileWorker {
    /// The newest simulation, for a `Trace` request.
    last: Option<engine::TraceSource>,
}

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

impl CompileWorker {
    /// Compiles (as a kernel, or an assembly lesson's program when `asm`) and simulates.
    /// The editor's request (`answer_compile`) gets the passes first and keeps the run
    /// for the trace download; the Compare panel's gets only the simulation, whose
    /// diagnostics say why when there is none.
    fn compile_and_run(
        &mut self,
        scope: &WorkerScope<Self>,
        handler: HandlerId,
        id: RequestId,
        (source, options, seed, asm): (&str, &CompileOptions, u64, bool),
        answer_compile: bool,
    ) {
        let compiled = engine::Compiled::for_source(source, options, asm);
        let output = compiled.output();
        let simulating = output.error_count() == 0 && !output.asm.is_empty();
        let diagnostics = if answer_compile {
            scope.respond(
                handler,
                Response::Compiled {
                    id,
                    output,
                    simulating,
                },
            );
            Vec::new()
        } else {
            output.diagnostics
        };
        let ran = if simulating {
            compiled.simulate(seed)
        } else {
            None
        };
        let sim = match ran {
            Some((sim, trace)) => {
                if answer_compile {
                    self.last = Some(trace);
                }
                sim
            }
            None if answer_compile => return,
            None => SimOutput {
                diagnostics,
                ..SimOutput::default()
            },
        };
        scope.respond(handler, Response::Simulated { id, sim });
    }
}

impl Worker for CompileWorker {
    type Message = ();
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        CompileWorker { last: None }
    }

    fn update(&mut self, _scope: &WorkerScope<Self>, _msg: ()) {}

    fn received(&mut self, scope: &WorkerScope<Self>, request: Request, handler: HandlerId) {
        let id = request.id();
        IN_FLIGHT.with(|slot| {
            if let Ok(mut s) = slot.try_borrow_mut() {
                *s = Some((scope.clone(), handler, id));
            }
        });
        match request {
            Request::Compile {
                source,
                options,
                seed,
                asm,
                ..
            } => {
                if source.contains(DEBUG_PANIC_MARKER) {
                    // Deliberate: the documented debug hook above.
                    panic!("debug panic requested by `{DEBUG_PANIC_MARKER}`");
                }
                self.compile_and_run(scope, handler, id, (&source, &options, seed, asm), true);
            }
            // The Compare panel's second run: the same path, answered by its simulation.
            Request::Compare {
                source,
                options,
                seed,
                ..
            } => self.compile_and_run(scope, handler, id, (&source, &options, seed, false), false),
            Request::Grade { lesson, source, .. } => {
                let grade = engine::grade(&lesson, &source);
                scope.respond(handler, Response::Graded { id, grade });
            }
            Request::Ablate {
                source,
                options,
                seed,
                ..
            } => {
                let ablation = engine::ablate(&source, &options, seed);
                scope.respond(handler, Response::Ablated { id, ablation });
            }
            Request::Trace { .. } => {
                let json = self
                    .last
                    .as_ref()
                    .map(engine::TraceSource::chrome_json)
                    .unwrap_or_default();
                scope.respond(handler, Response::Trace { id, json });
            }
        }
        IN_FLIGHT.with(|slot| {
            if let Ok(mut s) = slot.try_borrow_mut() {
                *s = None;
            }
        });
    }
}
