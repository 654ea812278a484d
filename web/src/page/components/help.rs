//! The help overlay (`?`): what each panel shows, every key, and where the language
//! reference is.

use yew::prelude::*;

use super::dialog::Dialog;
use crate::page::share::Panel;
use crate::protocol::DEBUG_PANIC_MARKER;

/// The language reference (`docs/language.md`), which the build renders next to the
/// page (`cargo xtask docs-html`); relative, so it resolves under any path the
/// playground is served from.
const LANGUAGE_REFERENCE: &str = "language.html";

/// Keys that work anywhere outside a text field (`app::handle_shortcut`), then those of
/// a focused panel or the editor. The panel keys (Alt+1 …) are listed from `Panel::ALL`.
/// Each dense view is one tab stop; its arrow keys move inside it (`page::keys`).
const SHORTCUTS: &[(&str, &str)] = &[
    ("?", "show or hide this help"),
    ("Esc", "close the open overlay, else the banner"),
    ("e", "open the example gallery"),
    ("l", "open the lesson track"),
    ("d", "Passes: toggle the diff against the previous pass"),
    ("h", "Passes: hide or show passes that changed nothing"),
    (
        "↑ / ↓, k / j",
        "Passes (list focused): previous / next pass",
    ),
    (
        "↑ / ↓, Home / End",
        "Assembly, IR, Steps (focused): previous / next instruction, line or step",
    ),
    (
        "← / →",
        "Steps (focused): previous / next sync edge, with its card",
    ),
    ("Enter", "IR (focused): the card of a set or wait line"),
    (
        "[ / ]",
        "Timeline (focused): previous / next sync flag, with its card",
    ),
    (
        "Enter",
        "Timeline (focused): pick the instruction at the cursor",
    ),
    (
        "← / →",
        "Timeline (focused): previous / next instruction start (Shift: 10 at a time)",
    ),
    (
        ", / .",
        "Timeline (focused): previous / next cycle (Shift: 10 at a time)",
    ),
    ("+ / −", "Timeline (focused): zoom in / out"),
    ("0", "Timeline (focused): show the whole run"),
    ("Space", "Timeline (focused): play / pause"),
    ("Tab / Shift+Tab", "Editor: indent / dedent"),
    (
        "Esc, then Tab",
        "Editor: move the focus on (Shift+Tab: back)",
    ),
    ("Ctrl+Enter", "Embedded view: run the kernel"),
];

#[function_component]
pub fn Help() -> Html {
    html! {
        <Dialog title="Help">
                <h3 class="dialog-sub">{"Panels"}</h3>
                <table class="shortcuts" data-testid="help-panels">
                    { for Panel::ALL.iter().enumerate().map(|(i, panel)| html! {
                        <tr data-panel={panel.title()}>
                            <td><kbd>{format!("Alt+{}", i + 1)}</kbd></td>
                            <td><strong>{panel.title()}</strong>{": "}{panel.blurb()}</td>
                        </tr>
                    }) }
                </table>
                <h3 class="dialog-sub">{"Keys"}</h3>
                <table class="shortcuts" data-testid="help-keys">
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
