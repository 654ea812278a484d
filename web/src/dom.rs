//! Browser glue the components share: URL fragment, local storage, clipboard, file
//! downloads, colour-scheme. Every call tolerates a missing API (returns nothing or
//! does nothing) so a locked-down browser degrades instead of failing.

use gloo::storage::{LocalStorage, Storage};
use wasm_bindgen::JsCast;

use crate::lessons::Progress;
use crate::state::Theme;

const SESSION_KEY: &str = "tilescope.session";
const THEME_KEY: &str = "tilescope.theme";
#[cfg(feature = "lessons")]
const PROGRESS_KEY: &str = "tilescope.lessons";

pub fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

pub fn document() -> Option<web_sys::Document> {
    window()?.document()
}

/// The URL fragment without `#` (empty when there is none).
pub fn fragment() -> String {
    let hash = window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    hash.strip_prefix('#').unwrap_or(&hash).to_string()
}

/// Replaces the fragment without adding a history entry.
pub fn set_fragment(fragment: &str) {
    if let Some(history) = window().and_then(|w| w.history().ok()) {
        let url = if fragment.is_empty() {
            " ".to_string()
        } else {
            format!("#{fragment}")
        };
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(url.trim()));
    }
}

/// The full page URL (for the Share button's clipboard copy).
pub fn href() -> String {
    window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default()
}

pub fn load_session() -> Option<String> {
    LocalStorage::get::<String>(SESSION_KEY).ok()
}

pub fn save_session(fragment: &str) {
    let _ = LocalStorage::set(SESSION_KEY, fragment);
}

/// The lesson medals saved on this browser; a damaged entry counts as none.
#[cfg(feature = "lessons")]
pub fn load_progress() -> Progress {
    LocalStorage::get(PROGRESS_KEY).unwrap_or_default()
}

#[cfg(feature = "lessons")]
pub fn save_progress(progress: &Progress) {
    let _ = LocalStorage::set(PROGRESS_KEY, progress);
}

/// Without the lesson track there are no medals to keep.
#[cfg(not(feature = "lessons"))]
pub fn save_progress(_: &Progress) {}

pub fn load_theme() -> Theme {
    LocalStorage::get::<String>(THEME_KEY)
        .map(|t| Theme::from_name(&t))
        .unwrap_or_default()
}

/// Sets `data-theme` on the root element (CSS falls back to `prefers-color-scheme`
/// when absent) and remembers the choice.
pub fn apply_theme(theme: Theme) {
    if let Some(root) = document().and_then(|d| d.document_element()) {
        let _ = match theme {
            Theme::System => root.remove_attribute("data-theme"),
            t => root.set_attribute("data-theme", t.name()),
        };
    }
    let _ = LocalStorage::set(THEME_KEY, theme.name());
}

pub fn prefers_dark() -> bool {
    window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

pub fn copy_to_clipboard(text: &str) {
    if let Some(w) = window() {
        // The promise is not awaited: a refusal leaves the link in the address bar.
        let _ = w.navigator().clipboard().write_text(text);
    }
}

/// Offers `bytes` as a file download.
pub fn download(filename: &str, bytes: &[u8], mime: &str) {
    let Some(doc) = document() else { return };
    let array = js_sys::Array::new();
    array.push(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&array, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    if let Some(a) = doc
        .create_element("a")
        .ok()
        .and_then(|e| e.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        a.set_href(&url);
        a.set_download(filename);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Whether a key event comes from a text field (where single-key shortcuts must not fire).
pub fn in_text_field(event: &web_sys::KeyboardEvent) -> bool {
    event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| matches!(e.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT"))
}

/// The `src` of the `<script id=...>` element, or empty when there is none.
pub fn script_src(id: &str) -> String {
    document()
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| e.get_attribute("src"))
        .unwrap_or_default()
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `performance.now()` of whichever global scope runs this, page or worker.
    #[wasm_bindgen(catch, js_namespace = performance, js_name = now)]
    fn global_performance_now() -> Result<f64, wasm_bindgen::JsValue>;
}

/// Milliseconds since the page (or worker) started, or 0 without a clock. Bound to the
/// global `performance` rather than `window.performance` because the compile worker
/// has no `window`, and `now` must be called on `performance` itself (with any other
/// receiver it throws, which once left every pass time at 0).
pub fn now_ms() -> f64 {
    global_performance_now().unwrap_or(0.0)
}

/// A User Timing mark (`performance.mark`), which the browser budget tests read back
/// with `performance.getEntriesByName(name)`; see `tests/tests/browser_budgets.rs`.
pub fn mark(name: &str) {
    if let Some(performance) = window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}
