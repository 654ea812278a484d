//! The Tilescope playground, as two wasm modules that share only `protocol` and
//! `catalog`:
//!
//! - `page` (bin `tilescope-page`): the Yew UI, the editor and its highlighter. It
//!   holds no compiler, simulator, interpreter or grader, so it arrives and paints
//!   first.
//! - `worker` (bin `tilescope-worker`): compiles, simulates, grades and assembles off
//!   the page's thread, and answers with the shapes in `protocol`.
//! - `protocol`: the messages between them (postcard through gloo's worker link), the
//!   compile options, and the result shapes the panels render.
//! - `catalog`: the gallery's examples and the lesson track, which both sides read.
//!
//! Everything that is not DOM glue is pure and tested natively.

pub mod catalog;
pub mod clock;
pub mod page;
pub mod protocol;
pub mod worker;
