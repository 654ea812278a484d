//! The page: Yew components over the reducer in `state`, the editor's highlighting and
//! editing, share links and the browser glue. It talks to the worker only through
//! `crate::protocol`.

pub mod components;
pub mod diff;
pub mod dom;
pub mod editing;
pub mod embed;
pub mod highlight;
pub mod keys;
pub mod lanes;
pub mod lessons;
pub mod palette;
pub mod share;
pub mod state;
pub mod text;
pub mod timeline_draw;
pub mod tracker;
pub mod worker_link;
