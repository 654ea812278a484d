//! The keyboard shortcut overlay (`?`).

use yew::prelude::*;

use super::dialog::Dialog;
use crate::protocol::DEBUG_PANIC_MARKER;

/// The language reference (`docs/language.md`), which `index.html` copies next to the
/// page; relative, so it resolves under any path the playground is served from.
const LANGUAGE_REFERENCE: &str = "language.md";

const SHORTCUTS: &[(&str, &str)] = &[
    ("?", "show or hide this help"),
    ("Esc", "close overlays"),
    ("e", "open the example gallery"),
    (
        "Alt+1 … Alt+6",
        "Passes, Steps, Timeline, Assembly, Output, Problems",
    ),
    ("↑ / ↓", "previous / next pass (pass list focused)"),
    ("d", "toggle the diff against the previous pass"),
    ("h", "hide or show passes that changed nothing"),
    ("Tab / Shift+Tab", "indent / dedent in the editor"),
];

#[function_component]
pub fn Help() -> Html {
    html! {
        <Dialog title="Keyboard shortcuts">
                <table class="shortcuts">
                    { for SHORTCUTS.iter().map(|(keys, what)| html! {
                        <tr><td><kbd>{*keys}</kbd></td><td>{*what}</td></tr>
                    }) }
                </table>
                <p class="dialog-foot">{"Hover an IR line to see its source; place the caret in the source to see its IR lines."}</p>
                <p class="dialog-foot" data-testid="help-language">
                    {"The "}<code>{".tile"}</code>{" language, its operations and its error messages: "}
                    <a href={LANGUAGE_REFERENCE} target="_blank" rel="noopener">{"language reference"}</a>
                    {"."}
                </p>
                <h3 class="dialog-sub">{"For developers"}</h3>
                <p class="dialog-foot" data-testid="help-debug-panic">
                    {"A source containing the comment "}<code>{DEBUG_PANIC_MARKER}</code>
                    {" makes the compiler worker panic on purpose, to try the crash report and restart. Delete the comment to compile again."}
                </p>
        </Dialog>
    }
}
