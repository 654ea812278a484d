//! The embedded view in headless Chromium (the release build in `dist/`): Share's
//! snippet and its options, the embed its `src` opens (one panel, Run, "Open in
//! Tilescope", read-only), a lesson graded in an embed whose medal is kept while the
//! full page's session is not touched, the height notice to a host page, and hostile
//! options falling back with a message. Ignored by plain `cargo test`; `cargo xtask
//! test` builds `dist/` and runs it with `--include-ignored`.

mod support;

use anyhow::{ensure, Result};
use serde_json::json;
use support::{path_of, with_page, Page};

async fn local(page: &Page, key: &str) -> Result<serde_json::Value> {
    page.execute(
        "return localStorage.getItem(arguments[0]);",
        vec![json!(key)],
    )
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn an_embed_shows_one_panel_runs_on_run_and_keeps_its_own_state() -> Result<()> {
    with_page(async |page: &Page| {
        page.open("/").await?;
        let link = page.share_example("softmax", "Softmax").await?;
        // Local storage holds JSON: the link as a JSON string.
        let saved = json!(serde_json::to_string(&link)?);
        // The full page's session, which the embed must not touch: saved once the
        // page has been quiet a moment, as the share link's encoding.
        page.eventually("the session to be saved", async || {
            Ok(local(page, "tilescope.session").await? == saved)
        })
        .await?;
        page.click("[data-testid=share]").await?;
        let src = page.embed_snippet_src().await?;
        ensure!(
            src.contains("?embed=timeline#v1="),
            "the default snippet: {src}"
        );
        page.click("[data-testid=embed-readonly]").await?;
        let read_only = page.embed_snippet_src().await?;
        ensure!(
            read_only.contains("?embed=timeline&readonly=1#v1="),
            "{read_only}"
        );

        // The editable embed: one panel, no toolbar, Run after an edit.
        page.open(&path_of(&src)?).await?;
        page.wait_for("[data-testid=embed] [data-testid=lane-MTE2]")
            .await?;
        ensure!(
            page.count(".toolbar, .tabs").await? == 0,
            "the embed shows the toolbar"
        );
        ensure!(
            page.count("[data-testid=embed-panel][data-panel=timeline]")
                .await?
                == 1
        );
        let open = page.attr("[data-testid=embed-open]", "href").await?;
        ensure!(
            open.contains("#v1=") && !open.contains("embed"),
            "open in Tilescope: {open}"
        );
        let edited = page.editor_text().await?.replace("exp(", "exp(0.5 * ");
        page.set_editor_text(&edited).await?;
        page.wait_for("[data-testid=embed-edited]").await?;
        ensure!(
            page.count("[data-testid=lane-MTE2]").await? == 1,
            "typing dropped the run on screen"
        );
        page.click("[data-testid=embed-run]").await?;
        page.eventually("Run to take the edit", async || {
            Ok(page.count("[data-testid=embed-edited]").await? == 0)
        })
        .await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        let open_now = page.attr("[data-testid=embed-open]", "href").await?;
        ensure!(open_now != open, "the link does not carry the edit");

        // Read-only: the kernel runs, the text does not change.
        page.open(&path_of(&read_only)?).await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        ensure!(
            page.eval("return document.querySelector('.editor-input').readOnly;")
                .await?
                == json!(true),
            "the read-only embed's editor takes edits"
        );
        ensure!(
            local(page, "tilescope.session").await? == saved,
            "an embed overwrote the full page's session"
        );
        page.assert_no_console_errors().await?;
        Ok(())
    })
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn an_embedded_lesson_grades_and_keeps_its_medal() -> Result<()> {
    let lesson = tilescope::lesson::find(1).map_err(anyhow::Error::msg)?;
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.click("[data-testid=lessons]").await?;
        page.click(&format!("[data-lesson='{}']", lesson.id))
            .await?;
        page.wait_for_text_containing(".lesson-heading", &lesson.title)
            .await?;
        page.click("[data-testid=share]").await?;
        let src = page.embed_snippet_src().await?;
        page.open(&path_of(&src)?).await?;
        page.wait_for("[data-testid=embed] [data-testid=lesson-pane]")
            .await?;
        page.set_editor_text(&lesson.solution).await?;
        let verdict = page.check_lesson(1).await?;
        ensure!(
            verdict.contains("gold"),
            "the reference solution: {verdict}"
        );
        let progress = local(page, "tilescope.lessons").await?;
        ensure!(
            progress.as_str().is_some_and(|p| p.contains(&lesson.id)),
            "the medal was not kept: {progress}"
        );
        // The full page shows it.
        page.open("/").await?;
        page.wait_for_text_containing("[data-testid=lessons]", "1/")
            .await?;
        Ok(())
    })
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn an_embed_tells_its_host_its_height_and_reads_nothing_from_it() -> Result<()> {
    with_page(async |page: &Page| {
        // A host page: the language reference, with an embed added to it.
        page.open("/language.html").await?;
        page.execute(
            "window.heights = [];
             window.addEventListener('message', (e) => {
               if (e.data && e.data.type === 'tilescope:height') window.heights.push(e.data.height);
             });
             const frame = document.createElement('iframe');
             frame.src = '/?embed=output';
             frame.style.height = '300px';
             document.body.prepend(frame);",
            vec![],
        )
        .await?;
        page.eventually("a height notice", async || {
            Ok(page
                .eval("return window.heights.length > 0 && window.heights[window.heights.length - 1] > 300;")
                .await?
                == json!(true))
        })
        .await?;
        Ok(())
    })
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn hostile_embed_options_fall_back_with_a_message() -> Result<()> {
    with_page(async |page: &Page| {
        page.open("/?embed=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&readonly=maybe&x=1")
            .await?;
        page.wait_for("[data-testid=embed] [data-testid=lane-MTE2]")
            .await?;
        page.wait_for_text_containing(".banner", "is not a panel an embed shows")
            .await?;
        let banner = page.text_of(".banner").await?;
        ensure!(
            banner.contains("<img src=x") && banner.contains("`readonly=maybe`"),
            "{banner}"
        );
        ensure!(
            page.count(".banner img").await? == 0,
            "user text became markup"
        );
        ensure!(
            page.count("[data-testid=embed-panel][data-panel=timeline]")
                .await?
                == 1,
            "the default panel"
        );
        Ok(())
    })
    .await
}
