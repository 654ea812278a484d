//! The lesson track in headless Chromium (the release build in `dist/`): open a lesson
//! from the toolbar, check the starter and a wrong solution ("Not yet" with the
//! grader's message), reveal a hint, check the reference solution and see the medal in
//! the pane and in the track, keep it across a reload, and open a lesson from a share
//! link with the student's code. Ignored by plain `cargo test`; `cargo xtask test`
//! builds `dist/` and runs it with `--include-ignored`.

mod support;

use anyhow::{ensure, Context, Result};
use support::{with_page, Page};

/// The lesson pane's heading.
fn heading(lesson: &tilescope::lesson::Lesson) -> String {
    format!("Lesson {} · {}", lesson.number, lesson.title)
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn a_lesson_is_graded_in_the_page_and_its_medal_kept() -> Result<()> {
    let lesson = tilescope::lesson::find(1).map_err(anyhow::Error::msg)?;
    // The starter stores `x` unchanged: a wrong answer the grader locates.
    let wrong = lesson.solution.replace("* 2.0 + 1.0", "* 2.0 + 2.0");
    ensure!(wrong != lesson.solution, "the wrong solution differs");
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.click("[data-testid=lessons]").await?;
        page.click(&format!("[data-lesson='{}']", lesson.id))
            .await?;
        page.wait_for_text(".lesson-heading", &heading(&lesson))
            .await?;

        let verdict = page.check_lesson(1).await?;
        ensure!(verdict.contains("Not yet"), "the starter passed: {verdict}");
        page.set_editor_text(&wrong).await?;
        let verdict = page.check_lesson(2).await?;
        ensure!(
            verdict.contains("Not yet") && verdict.contains("expected"),
            "the wrong solution: {verdict}"
        );
        page.click("[data-testid=lesson-hint-button]").await?;
        page.wait_for_text(
            "[data-testid=lesson-hint]",
            &format!("Hint 1: {}", lesson.hints[0]),
        )
        .await?;
        page.screenshot("lesson-not-yet").await?;

        page.set_editor_text(&lesson.solution).await?;
        let verdict = page.check_lesson(3).await?;
        ensure!(
            verdict.contains("gold"),
            "the reference solution: {verdict}"
        );
        page.screenshot("lesson-gold").await?;

        // The medal is in the track and survives a reload.
        page.open("/").await?;
        page.click("[data-testid=lessons]").await?;
        page.wait_for_text(
            &format!("[data-lesson='{}'] .lesson-medal", lesson.id),
            "🥇 gold",
        )
        .await?;
        page.screenshot("lesson-track").await?;
        page.assert_no_console_errors().await
    })
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn a_share_link_opens_the_lesson_with_the_students_code() -> Result<()> {
    let lesson = tilescope::lesson::find(18).map_err(anyhow::Error::msg)?;
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.click("[data-testid=lessons]").await?;
        page.click(&format!("[data-lesson='{}']", lesson.id)).await?;
        // An assembly lesson runs the hand-written program: its race is on the timeline.
        page.eventually("the starter's race is listed", async || {
            let n = page
                .execute(
                    "return document.querySelector('[data-testid=race-list]')?.dataset.count ?? '0';",
                    vec![],
                )
                .await?;
            Ok(n.as_str().and_then(|n| n.parse::<u32>().ok()).unwrap_or(0) > 0)
        })
        .await?;
        let mine = format!("; my attempt\n{}", lesson.starter);
        page.set_editor_text(&mine).await?;
        let mut link = String::new();
        page.eventually("the share link holds the edit", async || {
            let current = page
                .wait_for("[data-testid=share]")
                .await?
                .attr("data-link")
                .await?
                .context("no data-link")?;
            let decoded = lz_str::decompress_from_encoded_uri_component(
                current.trim_start_matches("v1="),
            )
            .map(|units| String::from_utf16_lossy(&units))
            .unwrap_or_default();
            let holds = decoded.contains("my attempt");
            if holds {
                link = current;
            }
            Ok(holds)
        })
        .await?;
        page.open(&format!("/#{link}")).await?;
        page.wait_for_text(".lesson-heading", &heading(&lesson)).await?;
        let text = page.editor_text().await?;
        ensure!(
            text.starts_with("; my attempt"),
            "the link's code: {text}"
        );
        page.assert_no_console_errors().await
    })
    .await
}
