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

use std::cell::{Cell, RefCell};

use crate::protocol::options::CompileOptions;
use crate::protocol::{Request, RequestId, Response, SimOutput, DEBUG_PANIC_MARKER};

pub mod engine;
pub mod layout;
pub mod liveness;
pub mod serve;

/// The compile worker's state between requests.
#[derive(Default)]
pub struct CompileWorker {
    /// The newest simulation, for a `Trace` request.
    last: Option<engine::TraceSource>,
}

/// Where the worker's answers go: the page, through `serve`, or a test's list.
pub type Respond<'a> = &'a dyn Fn(Response);

thread_local! {
    /// The id of the request being handled, for the panic hook to answer.
    static IN_FLIGHT: Cell<Option<RequestId>> = const { Cell::new(None) };
    /// How the panic hook answers (`serve::post` in the browser).
    static ANSWER: RefCell<Option<fn(Response)>> = const { RefCell::new(None) };
}

/// Installs the panic hook that reports the crash to the page through `answer`; call
/// once at start-up.
pub fn install_panic_reporter(answer: fn(Response)) {
    ANSWER.with(|a| {
        if let Ok(mut a) = a.try_borrow_mut() {
            *a = Some(answer);
        }
    });
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        let id = IN_FLIGHT.with(Cell::take);
        let answer = ANSWER.with(|a| a.try_borrow().ok().and_then(|a| *a));
        if let (Some(id), Some(answer)) = (id, answer) {
            answer(Response::Crashed { id, message });
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
        respond: Respond,
        id: RequestId,
        (source, options, seed, asm): (&str, &CompileOptions, u64, bool),
        answer_compile: bool,
    ) {
        let compiled = engine::Compiled::for_source(source, options, asm);
        let output = compiled.output();
        let simulating = output.error_count() == 0 && !output.asm.is_empty();
        let diagnostics = if answer_compile {
            respond(Response::Compiled {
                id,
                output,
                simulating,
            });
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
        respond(Response::Simulated {
            id,
            sim: Box::new(sim),
        });
    }

    /// Answers `request` through `respond` (a compile answers twice: its passes, then
    /// its simulation).
    pub fn received(&mut self, request: Request, respond: Respond) {
        let id = request.id();
        IN_FLIGHT.with(|slot| slot.set(Some(id)));
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
                self.compile_and_run(respond, id, (&source, &options, seed, asm), true);
            }
            // The Compare panel's second run: the same path, answered by its simulation.
            Request::Compare {
                source,
                options,
                seed,
                ..
            } => self.compile_and_run(respond, id, (&source, &options, seed, false), false),
            Request::Grade { lesson, source, .. } => {
                let grade = tilescope::lesson::grade(&lesson, &source);
                respond(Response::Graded { id, grade });
            }
            Request::Ablate {
                source,
                options,
                seed,
                ..
            } => {
                let ablation = engine::ablate(&source, &options, seed);
                respond(Response::Ablated { id, ablation });
            }
            Request::Trace { .. } => {
                let json = self
                    .last
                    .as_ref()
                    .map(engine::TraceSource::chrome_json)
                    .unwrap_or_default();
                respond(Response::Trace { id, json });
            }
        }
        IN_FLIGHT.with(|slot| slot.set(None));
    }
}
