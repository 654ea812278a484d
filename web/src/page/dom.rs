//! Browser glue the components share: URL fragment, local storage, clipboard, file
//! downloads, colour-scheme. Every call tolerates a missing API (returns nothing or
//! does nothing) so a locked-down browser degrades instead of failing.

use std::collections::BTreeMap;

use gloo::storage::{LocalStorage, Storage};
use wasm_bindgen::JsCast;

use crate::page::lessons::Progress;
use crate::page::state::{LessonWork, Theme};

const SESSION_KEY: &str = "tilescope.session";
/// The session's kernel text alone, for index.html's editor (it cannot decode a session).
const SOURCE_KEY: &str = "tilescope.source";
/// index.html's stand-in editor and its container.
const BOOT_ID: &str = "tilescope-boot";
const BOOT_EDITOR_ID: &str = "tilescope-boot-editor";
const THEME_KEY: &str = "tilescope.theme";
const PROGRESS_KEY: &str = "tilescope.lessons";
/// Every lesson's work (`state::LessonWork`), by lesson id.
const WORK_KEY: &str = "tilescope.lessons.work";
/// Set once the "Start here" card was dismissed or a lesson opened.
const START_HERE_KEY: &str = "tilescope.start-here";

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

/// The page URL's query (`?embed=...`), or "".
pub fn query() -> String {
    window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

/// The page's URL without query or fragment: what share links and embeds append to.
pub fn page_url() -> String {
    window()
        .and_then(|w| {
            let location = w.location();
            Some(format!(
                "{}{}",
                location.origin().ok()?,
                location.pathname().ok()?
            ))
        })
        .unwrap_or_default()
}

/// Tells the window around an embed the height its content needs (docs/publishing.md:
/// the one message an embed sends). Nothing when the page is not in a frame.
pub fn post_height(height: i32) {
    let Some(w) = window() else {
        return;
    };
    let Ok(Some(parent)) = w.parent() else {
        return;
    };
    if js_sys::Object::is(&parent, &w) {
        return;
    }
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &"type".into(), &"tilescope:height".into());
    let _ = js_sys::Reflect::set(&message, &"height".into(), &height.into());
    // The height is all it says, so any page may read it.
    let _ = parent.post_message(&message, "*");
}

/// The height the document's content takes, in CSS pixels.
pub fn content_height() -> i32 {
    document()
        .and_then(|d| d.document_element())
        .map_or(0, |e| e.scroll_height())
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

/// Saves the session (`fragment`, a share link's encoding) and its kernel's text, which
/// index.html's editor shows before the page's module has arrived.
pub fn save_session(fragment: &str, source: &str) {
    let _ = LocalStorage::set(SESSION_KEY, fragment);
    let _ = LocalStorage::set(SOURCE_KEY, source);
}

/// Removes index.html's editor, which stands in until the app mounts, and returns
/// what was typed into it (nothing when it was not edited).
pub fn take_boot_editor() -> Option<String> {
    let boot = document()?.get_element_by_id(BOOT_ID)?;
    let typed = document()?
        .get_element_by_id(BOOT_EDITOR_ID)
        .and_then(|e| e.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
        .filter(|e| e.get_attribute("data-edited").is_some())
        .map(|e| e.value());
    boot.remove();
    typed
}

/// The lesson medals saved on this browser; a damaged entry counts as none.
pub fn load_progress() -> Progress {
    LocalStorage::get(PROGRESS_KEY).unwrap_or_default()
}

pub fn save_progress(progress: &Progress) {
    let _ = LocalStorage::set(PROGRESS_KEY, progress);
}

/// Saves `progress` joined with what is saved already: an embed's medals never erase
/// one the full page earned meanwhile.
pub fn merge_progress(progress: &Progress) {
    let mut saved = load_progress();
    saved.merge(progress);
    save_progress(&saved);
}

pub fn load_lesson_work() -> BTreeMap<String, LessonWork> {
    LocalStorage::get(WORK_KEY).unwrap_or_default()
}

pub fn save_lesson_work(work: &BTreeMap<String, LessonWork>) {
    let _ = LocalStorage::set(WORK_KEY, work);
}

/// The "Start here" card was dismissed (or a lesson opened) on an earlier visit.
pub fn start_here_done() -> bool {
    LocalStorage::get::<bool>(START_HERE_KEY).unwrap_or(false)
}

pub fn set_start_here_done() {
    let _ = LocalStorage::set(START_HERE_KEY, true);
}

pub fn load_theme() -> Theme {
    LocalStorage::get::<String>(THEME_KEY)
        .map(|t| Theme::from_name(&t))
        .unwrap_or_default()
}

/// Sets `data-theme` on the root element (CSS falls back to `prefers-color-scheme`
/// when absent) and remembers the choice.
/// Shows `theme`, and remembers it unless `remember` is off (an embed's theme is its
/// course page's choice, not the reader's).
pub fn apply_theme(theme: Theme, remember: bool) {
    if let Some(root) = document().and_then(|d| d.document_element()) {
        let _ = match theme {
            Theme::System => root.remove_attribute("data-theme"),
            t => root.set_attribute("data-theme", t.name()),
        };
    }
    if remember {
        let _ = LocalStorage::set(THEME_KEY, theme.name());
    }
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

/// Takes the page's global `name` (index.html's script set it): its value, and the
/// global is cleared so it is taken once.
pub fn take_global(name: &str) -> Option<wasm_bindgen::JsValue> {
    let window = window()?;
    let value = js_sys::Reflect::get(&window, &name.into()).ok()?;
    if value.is_undefined() || value.is_null() {
        return None;
    }
    let _ = js_sys::Reflect::set(&window, &name.into(), &wasm_bindgen::JsValue::NULL);
    Some(value)
}

/// Calls the page's global function `name` (index.html's script defines it) with no
/// arguments.
pub fn call_global(name: &str) -> Option<wasm_bindgen::JsValue> {
    let window = window()?;
    let function = js_sys::Reflect::get(&window, &name.into())
        .ok()?
        .dyn_into::<js_sys::Function>()
        .ok()?;
    function.call0(&window).ok()
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `performance.mark(name, options)`, which web-sys offers only as an unstable API.
    #[wasm_bindgen(catch, js_namespace = performance, js_name = mark)]
    fn performance_mark(
        name: &str,
        options: &wasm_bindgen::JsValue,
    ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>;
}

/// A User Timing mark carrying `detail` (read back as the entry's `detail`).
pub fn mark_with_detail(name: &str, detail: &wasm_bindgen::JsValue) {
    let options = js_sys::Object::new();
    if js_sys::Reflect::set(&options, &"detail".into(), detail).is_ok() {
        let _ = performance_mark(name, &options);
    }
}

/// A User Timing mark (`performance.mark`), which the browser budget tests read back
/// with `performance.getEntriesByName(name)`; see `tests/tests/browser_budgets.rs`.
pub fn mark(name: &str) {
    if let Some(performance) = window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}
