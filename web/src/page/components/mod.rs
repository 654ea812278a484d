//! Yew function components, one per file. They read the app state from the context
//! that `app::App` provides, or take the little they show as props (the status bar),
//! and change it only by dispatching `state::Action`s.

pub mod app;
pub mod assembly;
pub mod banner;
pub mod branches;
pub mod buffers;
pub mod compare;
pub mod dialog;
pub mod editor;
pub mod embed_view;
pub mod example_note;
pub mod gallery;
pub mod help;
pub mod lesson;
pub mod lessons;
pub mod output;
pub mod panels;
pub mod passes;
pub mod problems;
pub mod share_dialog;
pub mod stalls;
pub mod start_here;
pub mod statusbar;
pub mod steps;
pub mod sync_card;
pub mod timeline;
pub mod toolbar;

use yew::prelude::*;

use crate::page::state::AppState;

/// The app state handle every component reads and dispatches to.
pub type AppContext = UseReducerHandle<AppState>;

/// The app state from context. Every component is rendered inside `App`'s provider;
/// outside it (never the case in this crate) a default state keeps the page alive.
#[hook]
pub fn use_app() -> AppContext {
    let fallback = use_reducer(AppState::default);
    use_context::<AppContext>().unwrap_or(fallback)
}
