//! Entry point of the compile worker (Trunk builds it as a `data-type="worker"` bin).

use gloo::worker::Registrable;
use tilescope_web::worker::{install_panic_reporter, CompileWorker};

fn main() {
    install_panic_reporter();
    CompileWorker::registrar().register();
}
