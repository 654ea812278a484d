//! Accessibility in headless Chromium (the release build in `dist/`):
//! - axe-core (from npm) finds no serious or critical violation on the main page, an
//!   open lesson and the embedded view, in both themes;
//! - the keyboard: Tab reaches every kind of control, each dense view (the step graph,
//!   the timeline, the assembly, the IR) is one tab stop whose arrow keys move through
//!   its items, the editor lets the focus go after Esc, and a dialog keeps the focus
//!   while it is open.
//!
//! Ignored by plain `cargo test`; `cargo xtask test` builds `dist/`, installs axe-core
//! and runs it with `--include-ignored`.

mod support;

use anyhow::{ensure, Result};
use support::{with_page, Page, ARROW_DOWN, ARROW_RIGHT, ENTER, ESCAPE, SHIFT, TAB};

#[tokio::test]
#[ignore = "needs `dist/`, Chromium and axe-core; run by `cargo xtask test`"]
async fn axe_finds_nothing_serious_on_the_page_a_lesson_and_an_embed() -> Result<()> {
    let lesson = tilescope::lesson::find(1).map_err(anyhow::Error::msg)?;
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        page.assert_accessible_in_both_themes("the main page")
            .await?;
        page.click("[data-testid=lessons]").await?;
        page.click(&format!("[data-lesson='{}']", lesson.id))
            .await?;
        page.wait_for_text_containing(".lesson-heading", &lesson.title)
            .await?;
        page.assert_accessible_in_both_themes("an open lesson")
            .await?;
        page.open("/?embed=timeline").await?;
        page.wait_for("[data-testid=embed] [data-testid=lane-MTE2]")
            .await?;
        page.assert_accessible_in_both_themes("the embed").await?;
        Ok(())
    })
    .await
}

/// Selects the panel `title` from the keyboard: Tab to its tab, Enter.
async fn open_panel(page: &Page, title: &str) -> Result<()> {
    page.tab_to(&format!("[role=tab][title^='{title}']"), 80)
        .await?;
    page.keys(ENTER).await?;
    page.wait_for_text_containing("[role=tab][aria-selected=true]", title)
        .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn the_keyboard_reaches_every_kind_of_item() -> Result<()> {
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        page.click("[data-testid=start-here-dismiss]").await?;
        // A kernel whose step graph has sync edges between steps.
        page.share_example("softmax", "Softmax").await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;

        // The editor: Tab indents and keeps the focus; Esc, then Tab, moves on.
        page.tab_to(".editor-input", 40).await?;
        let before = page.editor_text().await?;
        page.keys(TAB).await?;
        ensure!(
            page.focus_matches(".editor-input").await?,
            "Tab left the editor"
        );
        ensure!(page.editor_text().await? != before, "Tab did not indent");
        page.keys(ESCAPE).await?;
        page.keys(TAB).await?;
        ensure!(
            !page.focus_matches(".editor-input").await?,
            "Esc, Tab kept the focus"
        );

        // The timeline is one tab stop: its flags are not.
        ensure!(
            page.count("[data-testid=flag-arrow]:not([tabindex='-1'])")
                .await?
                == 0,
            "timeline flags are tab stops"
        );
        page.tab_to("[data-testid=timeline]", 80).await?;
        page.keys("]").await?;
        page.wait_for("[data-testid=sync-card]").await?;
        page.keys(ENTER).await?;

        open_panel(page, "Steps").await?;
        page.tab_to("[data-testid=steps-canvas]", 40).await?;
        page.keys(ARROW_DOWN).await?;
        page.wait_for(".step-selected").await?;
        ensure!(
            page.focus_matches("[data-testid=steps-canvas]").await?,
            "the step graph lost the focus"
        );
        page.keys(ARROW_RIGHT).await?;
        page.wait_for("[data-testid=edge-focus]").await?;
        page.wait_for("[data-testid=sync-card]").await?;

        open_panel(page, "Assembly").await?;
        page.tab_to("[data-testid=asm-list]", 40).await?;
        page.keys(ARROW_DOWN).await?;
        page.keys(ARROW_DOWN).await?;
        page.wait_for(".asm-selected[aria-selected=true]").await?;

        open_panel(page, "Passes").await?;
        page.tab_to("[data-testid=ir-view]", 60).await?;
        page.keys(ARROW_DOWN).await?;
        page.wait_for(".ir-focus[aria-selected=true]").await?;
        page.assert_no_console_errors().await?;
        Ok(())
    })
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn a_dialog_takes_the_focus_and_keeps_it() -> Result<()> {
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        page.tab_to("[data-testid=lessons]", 40).await?;
        page.keys(ENTER).await?;
        page.wait_for(".dialog").await?;
        ensure!(
            page.focus_matches(".dialog, .dialog *").await?,
            "the dialog did not take the focus"
        );
        for press in 0..40 {
            let keys = if press % 7 == 6 {
                format!("{SHIFT}{TAB}")
            } else {
                TAB.to_string()
            };
            page.keys(&keys).await?;
            ensure!(
                page.focus_matches(".dialog, .dialog *").await?,
                "Tab press {press} left the open dialog"
            );
        }
        page.keys(ESCAPE).await?;
        page.eventually("the dialog to close", async || {
            Ok(page.count(".dialog").await? == 0)
        })
        .await?;
        ensure!(
            page.focus_matches("[data-testid=lessons]").await?,
            "the focus did not come back to the button that opened the dialog"
        );
        Ok(())
    })
    .await
}
