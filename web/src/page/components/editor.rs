//! The source editor: a transparent textarea over a highlighted `<pre>`, scroll-synced,
//! with a line-number gutter, Tab/Shift-Tab indentation, wavy underlines for
//! diagnostics and a highlight for the span linked from an IR line.
//!
//! Tab indents, so it cannot also move the focus on: Esc, then Tab (or Shift+Tab)
//! leaves the editor, as in VS Code and CodeMirror (the help says so). A read-only
//! editor (a read-only embed) leaves Tab to the browser.

use std::ops::Range;

use tilescope::diag::LineCol;
use tilescope::diag::Severity;
use wasm_bindgen::JsCast;
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

use super::use_app;
use crate::page::editing;
use crate::page::highlight::{self, MARK_ERROR, MARK_LINKED, MARK_WARNING};
use crate::page::state::Action;
use crate::page::text;

/// Sources longer than this are shown without syntax colours and per-line gutter marks:
/// re-rendering tens of thousands of spans on every keystroke would make typing lag.
const MAX_DECORATED_BYTES: usize = 128 * 1024;

/// Pixel height of one editor line; must match `--editor-line` in playground.css.
const LINE_HEIGHT_PX: i32 = 20;

#[function_component]
pub fn Editor() -> Html {
    let app = use_app();
    let textarea = use_node_ref();
    let pre = use_node_ref();
    let gutter = use_node_ref();
    let source = &app.view.source;

    let marks: Vec<(Range<usize>, u8)> = {
        let mut marks: Vec<(Range<usize>, u8)> = app
            .results
            .compile
            .iter()
            .flat_map(|c| c.diagnostics.iter())
            .filter_map(|d| {
                let span = d.span?;
                let mark = if d.severity == Severity::Error {
                    MARK_ERROR
                } else {
                    MARK_WARNING
                };
                Some((span.start as usize..span.end as usize, mark))
            })
            .collect();
        if let Some(span) = app.ui.linked_span {
            marks.push((span.start as usize..span.end as usize, MARK_LINKED));
        }
        marks
    };
    let lines_with = |mark: u8| -> Vec<usize> {
        marks
            .iter()
            .filter(|(_, m)| m & mark != 0)
            .map(|(r, _)| LineCol::at(source, r.start).line)
            .collect()
    };
    let (error_lines, warning_lines) = (lines_with(MARK_ERROR), lines_with(MARK_WARNING));
    let caret_line = LineCol::at(source, app.ui.caret).line;

    let decorated = source.len() <= MAX_DECORATED_BYTES;
    // Undecorated, the textarea shows its own text and the layer under it stays empty:
    // laying out a second copy of a megabyte of text doubled the cost of a keystroke.
    let highlighted: Html = if !decorated {
        Html::default()
    } else {
        decorated_source(source, app.is_asm(), &marks)
    };
    let gutter_lines: Html = if !decorated {
        let numbers: Vec<String> = (1..=text::line_count(source))
            .map(|n| n.to_string())
            .collect();
        html! { <div class="ln ln-plain">{numbers.join("\n")}</div> }
    } else {
        (1..=text::line_count(source))
            .map(|n| {
                let class = classes!(
                    "ln",
                    error_lines.contains(&n).then_some("ln-error"),
                    (!error_lines.contains(&n) && warning_lines.contains(&n))
                        .then_some("ln-warning"),
                    (n == caret_line).then_some("ln-caret")
                );
                html! { <div {class}>{n}</div> }
            })
            .collect()
    };
    let sync_scroll = {
        let (textarea, pre, gutter) = (textarea.clone(), pre.clone(), gutter.clone());
        Callback::from(move |_: Event| {
            let Some(ta) = textarea.cast::<HtmlTextAreaElement>() else {
                return;
            };
            if let Some(p) = pre.cast::<web_sys::Element>() {
                p.set_scroll_top(ta.scroll_top());
                p.set_scroll_left(ta.scroll_left());
            }
            if let Some(g) = gutter.cast::<web_sys::Element>() {
                g.set_scroll_top(ta.scroll_top());
            }
        })
    };

    let report_caret = {
        let app = app.clone();
        move |ta: &HtmlTextAreaElement| {
            let at = ta.selection_start().ok().flatten().unwrap_or(0);
            let value = ta.value();
            app.dispatch(Action::Caret(text::utf16_to_byte(&value, at)));
        }
    };

    let oninput = {
        let app = app.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(ta) = e.target_dyn_into::<HtmlTextAreaElement>() {
                // One read of the value: each crosses the wasm boundary as a full copy.
                let value = ta.value();
                let at = ta.selection_start().ok().flatten().unwrap_or(0);
                let caret = text::utf16_to_byte(&value, at);
                app.dispatch(Action::SetSource(value));
                app.dispatch(Action::Caret(caret));
            }
        })
    };

    // Esc was the last key: the next Tab moves the focus instead of indenting.
    let tab_leaves = use_mut_ref(|| false);
    let read_only = app.read_only();
    let onkeydown = {
        let app = app.clone();
        Callback::from(move |e: KeyboardEvent| {
            let escaped = std::mem::replace(&mut *tab_leaves.borrow_mut(), e.key() == "Escape");
            if e.key() != "Tab" || e.ctrl_key() || e.alt_key() || e.meta_key() {
                return;
            }
            if escaped || read_only {
                return;
            }
            let Some(ta) = e.target_dyn_into::<HtmlTextAreaElement>() else {
                return;
            };
            e.prevent_default();
            let value = ta.value();
            let start =
                text::utf16_to_byte(&value, ta.selection_start().ok().flatten().unwrap_or(0));
            let end = text::utf16_to_byte(&value, ta.selection_end().ok().flatten().unwrap_or(0));
            let edit = if e.shift_key() {
                editing::dedent(&value, start, end)
            } else {
                editing::indent(&value, start, end)
            };
            ta.set_value(&edit.text);
            let _ = ta.set_selection_range(
                text::byte_to_utf16(&edit.text, edit.sel_start),
                text::byte_to_utf16(&edit.text, edit.sel_end),
            );
            app.dispatch(Action::SetSource(edit.text));
            app.dispatch(Action::Caret(edit.sel_start));
        })
    };

    let on_caret_event = {
        let report_caret = report_caret.clone();
        Callback::from(move |e: Event| {
            if let Some(ta) = e.target_dyn_into::<HtmlTextAreaElement>() {
                report_caret(&ta);
            }
        })
    };
    let onkeyup = {
        let on_caret_event = on_caret_event.clone();
        Callback::from(move |e: KeyboardEvent| on_caret_event.emit(e.into()))
    };
    let onclick = {
        let on_caret_event = on_caret_event.clone();
        Callback::from(move |e: MouseEvent| on_caret_event.emit(e.into()))
    };

    // Hovering a wavy underline shows its message. The underlines are in the layer
    // under the textarea, which takes the pointer: the marks' boxes say which one is
    // under it, and their `data-at` which diagnostics cover it.
    let onmousemove = {
        let (pre, app) = (pre.clone(), app.clone());
        Callback::from(move |e: MouseEvent| {
            let Some(ta) = e.target_dyn_into::<HtmlTextAreaElement>() else {
                return;
            };
            let at = pre
                .cast::<web_sys::Element>()
                .and_then(|p| mark_at(&p, e.client_x() as f64, e.client_y() as f64));
            let messages: Vec<String> = match (at, app.results.compile.as_ref()) {
                (Some(at), Some(c)) => c
                    .diagnostics
                    .iter()
                    .filter(|d| {
                        d.span
                            .is_some_and(|s| (s.start as usize..=s.end as usize).contains(&at))
                    })
                    .map(|d| {
                        let severity = if d.severity == Severity::Error {
                            "error"
                        } else {
                            "warning"
                        };
                        format!("{severity}: {}", d.message)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let title = messages.join("\n");
            if ta.title() != title {
                ta.set_title(&title);
            }
        })
    };

    // Jumps from the Problems panel: move the caret and scroll its line into view.
    {
        let textarea = textarea.clone();
        let source = source.clone();
        use_effect_with(app.ui.jump, move |jump| {
            if let (Some(jump), Some(ta)) = (jump, textarea.cast::<HtmlTextAreaElement>()) {
                let at = text::byte_to_utf16(&source, jump.at);
                let _ = ta.focus();
                let _ = ta.set_selection_range(at, at);
                let line = LineCol::at(&source, jump.at).line as i32 - 1;
                let target = line * LINE_HEIGHT_PX - ta.client_height() / 3;
                ta.set_scroll_top(target.max(0));
            }
        });
    }

    html! {
        <div class="editor">
            <div class="editor-gutter" ref={gutter} aria-hidden="true">{gutter_lines}</div>
            <div class="editor-code">
                <pre class="editor-highlight" ref={pre} aria-hidden="true">{highlighted}{"\n "}</pre>
                <textarea
                    class={classes!("editor-input", (!decorated).then_some("editor-input-plain"))}
                    ref={textarea}
                    value={source.clone()}
                    spellcheck="false"
                    readonly={read_only}
                    aria-readonly={read_only.then_some("true")}
                    aria-description="Tab indents; press Esc, then Tab, to move on"
                    autocomplete="off"
                    autocapitalize="off"
                    wrap="off"
                    aria-label="Kernel source"
                    {oninput}
                    {onkeydown}
                    {onkeyup}
                    {onclick}
                    {onmousemove}
                    onscroll={sync_scroll}
                />
            </div>
        </div>
    }
}

/// The byte offset (`data-at`) of the diagnostic mark in `layer` under the point, if any.
fn mark_at(layer: &web_sys::Element, x: f64, y: f64) -> Option<usize> {
    let marks = layer
        .query_selector_all(".mark-error, .mark-warning")
        .ok()?;
    (0..marks.length())
        .filter_map(|i| marks.item(i)?.dyn_into::<web_sys::Element>().ok())
        .find(|m| {
            let r = m.get_bounding_client_rect();
            r.left() <= x && x <= r.right() && r.top() <= y && y <= r.bottom()
        })
        .and_then(|m| m.get_attribute("data-at")?.parse().ok())
}

/// The source as coloured tokens, with diagnostic and linked-span marks.
fn decorated_source(source: &str, asm: bool, marks: &[(Range<usize>, u8)]) -> Html {
    let tokens = if asm {
        highlight::tokenize_asm(source)
    } else {
        highlight::tokenize(source)
    };
    highlight::segments(source, &tokens, marks)
        .into_iter()
        .map(|seg| {
            let mut class = classes!(seg.kind.class());
            let error = seg.marks & MARK_ERROR != 0;
            if error {
                class.push("mark-error");
            }
            if seg.marks & MARK_WARNING != 0 {
                class.push("mark-warning");
            }
            if seg.marks & MARK_LINKED != 0 {
                class.push("mark-linked");
            }
            let at = seg.range.start.to_string();
            let piece = source.get(seg.range).unwrap_or_default().to_string();
            if class.is_empty() {
                html! { {piece} }
            } else if error {
                html! { <span {class} data-testid="diag-underline" data-at={at}>{piece}</span> }
            } else {
                html! { <span {class} data-at={at}>{piece}</span> }
            }
        })
        .collect()
}
