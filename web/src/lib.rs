//! The Tilescope playground: a Yew page (`components`) over a compile worker
//! (`worker`). Everything that is not DOM glue is pure and tested natively:
//! `state` (the reducer), `share` (links), `highlight`, `editing`, `diff`, `text`.

pub mod codec;
pub mod components;
pub mod diff;
pub mod dom;
pub mod editing;
pub mod engine;
pub mod examples;
pub mod highlight;
pub mod ir_sync;
pub mod lanes;
pub mod layout;
pub mod lessons;
pub mod liveness;
pub mod options;
pub mod order;
pub mod palette;
pub mod protocol;
pub mod share;
pub mod state;
pub mod text;
pub mod worker;
