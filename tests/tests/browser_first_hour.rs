//! A student's first hour in headless Chromium (the release build in `dist/`): the first
//! screen points at lesson 1, a wrong and then a right solution, a verdict that says
//! when the code changed under it, the next lesson, the student's work kept per lesson,
//! and the help against the real panels. Then what the page shows against what the code
//! does: file names, a failed compile's passes, pass effects by sign, selections across
//! examples, line numbers at the bottom of a long kernel, hover messages and the status
//! bar. Ignored by plain `cargo test`; `cargo xtask test` builds `dist/` and runs it
//! with `--include-ignored`.

mod support;

use anyhow::{ensure, Context, Result};
use serde_json::{json, Value};
use support::{with_page, Page};

async fn load_example(page: &Page, name: &str) -> Result<()> {
    page.press("e").await?;
    page.click(&format!("[data-example='{name}']")).await?;
    page.eventually(&format!("{name} in the editor"), async || {
        Ok(page
            .editor_text()
            .await?
            .contains(&format!("kernel {name}")))
    })
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn a_newcomer_walks_from_the_first_screen_through_lesson_one() -> Result<()> {
    let first = tilescope::lesson::find(1).map_err(anyhow::Error::msg)?;
    let second = tilescope::lesson::find(2).map_err(anyhow::Error::msg)?;
    let wrong = first.solution.replace("* 2.0 + 1.0", "* 2.0 + 2.0");
    ensure!(wrong != first.solution, "the wrong solution differs");
    with_page(async |page: &Page| {
        // The first screen points at lesson 1.
        page.open("/").await?;
        page.wait_for("[data-testid=start-here]").await?;
        page.wait_for("[data-testid=compile-status]").await?;
        page.screenshot("first-hour-first-screen").await?;
        page.click("[data-testid=start-here-open]").await?;
        page.wait_for_text(
            ".lesson-heading",
            &format!("Lesson {} · {}", first.number, first.title),
        )
        .await?;
        ensure!(page.count("[data-testid=start-here]").await? == 0, "the card goes");
        // The toolbar names the lesson, and its preset is the lesson's.
        page.wait_for_text(
            "[data-testid=source-label]",
            &format!("{} · {}", first.number, first.title),
        )
        .await?;
        let disabled = page
            .eval("return document.querySelector('[data-testid=preset-select]').disabled;")
            .await?;
        ensure!(disabled == json!(true), "the preset is fixed in a lesson");

        // Wrong, then right; the verdict is in view after each check.
        page.set_editor_text(&wrong).await?;
        let verdict = page.check_lesson(1).await?;
        ensure!(verdict.contains("Not yet"), "the wrong solution: {verdict}");
        ensure!(
            verdict.contains("kernel.tile") || !verdict.contains("submission"),
            "the grader names the file as Problems does: {verdict}"
        );
        let in_view = page
            .eval(
                "const r = document.querySelector('[data-testid=lesson-verdict]').getBoundingClientRect();
                 return r.top < window.innerHeight && r.bottom > 0;",
            )
            .await?;
        ensure!(in_view == json!(true), "the verdict is scrolled into view");
        page.set_editor_text(&first.solution).await?;
        let verdict = page.check_lesson(2).await?;
        ensure!(verdict.contains("Passed"), "the solution: {verdict}");
        page.wait_for("[data-testid=lesson-next]").await?;
        page.screenshot("first-hour-passed").await?;

        // An edit after the verdict: it says it judged the earlier code.
        page.set_editor_text(&format!("{}// my note\n", first.solution))
            .await?;
        page.wait_for("[data-testid=lesson-verdict-stale]").await?;
        ensure!(page.count("[data-testid=lesson-next]").await? == 0);
        page.screenshot("first-hour-verdict-stale").await?;
        page.set_editor_text(&first.solution).await?;
        page.eventually("the verdict is current again", async || {
            Ok(page.count("[data-testid=lesson-verdict-stale]").await? == 0)
        })
        .await?;

        // Next lesson, then back: lesson 1 shows the student's solution.
        page.click("[data-testid=lesson-next]").await?;
        page.wait_for_text(
            ".lesson-heading",
            &format!("Lesson {} · {}", second.number, second.title),
        )
        .await?;
        page.click("[data-testid=lessons]").await?;
        page.click(&format!("[data-lesson='{}']", first.id)).await?;
        page.eventually("lesson 1 with the student's code", async || {
            Ok(page.editor_text().await? == first.solution)
        })
        .await?;
        page.wait_for("[data-testid=lesson-verdict]").await?;

        // A reload keeps the work, and the card stays gone.
        page.open("/").await?;
        page.wait_for("[data-testid=compile-status]").await?;
        ensure!(page.count("[data-testid=start-here]").await? == 0);
        page.click("[data-testid=lessons]").await?;
        page.click(&format!("[data-lesson='{}']", first.id)).await?;
        page.eventually("lesson 1's work after a reload", async || {
            Ok(page.editor_text().await? == first.solution)
        })
        .await?;

        // The help names every panel the page has, and the keys it answers to.
        page.press("?").await?;
        let help: Value = page
            .eval("return [...document.querySelectorAll('[data-testid=help-panels] tr')].map(r => r.dataset.panel);")
            .await?;
        let tabs: Value = page
            .eval("return [...document.querySelectorAll('.tabs .tab')].map(t => t.firstChild.textContent);")
            .await?;
        ensure!(help == tabs, "help {help} against the tabs {tabs}");
        let keys = page.text_of("[data-testid=help-keys]").await?;
        for key in ["Esc", "l", "Space", "← / →", "+ / −", "Alt"] {
            ensure!(
                keys.contains(key) || page.text_of("[data-testid=help-panels]").await?.contains(key),
                "the help lists {key}: {keys}"
            );
        }
        page.screenshot("first-hour-help").await?;
        // The language reference it links to is a page, with working section links.
        let href = page
            .eval("return document.querySelector('[data-testid=help-language] a').getAttribute('href');")
            .await?;
        ensure!(href == json!("language.html"), "the help links {href}");
        page.press("Escape").await?;
        page.assert_no_console_errors().await?;
        page.open("/language.html").await?;
        page.wait_for("h2#for-numpy-users").await?;
        page.wait_for("h2#assembly-tasm").await?;
        let links: Value = page
            .eval(
                "return [...document.querySelectorAll('a[href^=\"#\"]')]
                    .filter(a => !document.getElementById(a.getAttribute('href').slice(1)))
                    .map(a => a.getAttribute('href'));",
            )
            .await?;
        ensure!(links == json!([]), "section links without a section: {links}");
        page.screenshot("first-hour-language-reference").await?;
        Ok(())
    })
    .await
}

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn what_the_page_shows_is_what_the_compiler_did() -> Result<()> {
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.wait_for("[data-testid=compile-status]").await?;

        // An error: the status bar counts it and opens Problems, which names the file as
        // the grader does; hovering its underline shows the message.
        page.set_editor_text("kernel k(x: f32[8, 8], y: out f32[8, 8]) {\n    store y[:, :] = q;\n}\n")
            .await?;
        page.click("[data-testid=status-errors]").await?;
        page.wait_for_text_containing(".problem-loc", "kernel.tile:2:").await?;
        page.wait_for("[data-testid=diag-underline]").await?;
        let title = page
            .eval(
                "const u = document.querySelector('[data-testid=diag-underline]').getBoundingClientRect();
                 const ta = document.querySelector('.editor-input');
                 ta.dispatchEvent(new MouseEvent('mousemove', { bubbles: true,
                     clientX: u.left + u.width / 2, clientY: u.top + u.height / 2 }));
                 return ta.title;",
            )
            .await?;
        ensure!(
            title.as_str().is_some_and(|t| t.contains("unknown name `q`")),
            "the hover shows the message: {title}"
        );

        // A compile that fails in plan-memory shows the passes before it, then the error.
        let overflow = include_str!("../../core/tests/kernels/layernorm_overflow.tile");
        page.set_editor_text(overflow).await?;
        page.tab("Passes").await?;
        page.wait_for_text_containing("[data-testid=pass-failed]", "UB overflows")
            .await?;
        ensure!(page.count("[data-testid=pass-item]").await? > 10, "the passes before it");
        page.screenshot("first-hour-failed-passes").await?;

        // A pick in one example does not survive loading another.
        load_example(page, "softmax").await?;
        // The toolbar stays one row on this laptop-wide window (1280 px), whatever the
        // example's name.
        let toolbar = page
            .eval("return document.querySelector('.toolbar').getBoundingClientRect().height;")
            .await?;
        ensure!(
            toolbar.as_f64().is_some_and(|h| h < 60.0),
            "the toolbar wrapped: {toolbar} px high"
        );
        page.tab("Assembly").await?;
        page.click("[data-instr='12']").await?;
        load_example(page, "flash_attention").await?;
        for panel in ["Steps", "Passes", "Timeline"] {
            page.tab(panel).await?;
            ensure!(
                page.count("[data-testid=sync-card]").await? == 0,
                "{panel} shows a card from softmax"
            );
        }

        // Each optional pass's effect is coloured by its sign and says so in words.
        page.tab("Passes").await?;
        page.eventually("the pass effects", async || {
            Ok(page.count("[data-testid=pass-effect]").await? > 0)
        })
        .await?;
        let effects: Value = page
            .eval("return [...document.querySelectorAll('[data-testid=pass-effect]')].map(e => [e.textContent, e.className]);")
            .await?;
        for pair in effects.as_array().context("effects")? {
            let (text, class) = (pair[0].as_str().unwrap_or(""), pair[1].as_str().unwrap_or(""));
            let consistent = if text.starts_with("saves") {
                class.contains("pass-effect-gain")
            } else if text.starts_with("costs") {
                class.contains("pass-effect-cost")
            } else {
                !class.contains("gain") && !class.contains("cost")
            };
            ensure!(consistent, "effect {text:?} coloured {class:?}");
        }

        // At the bottom of a long kernel the line numbers and colours stay on their lines.
        let scrolled = page
            .eval(
                "const ta = document.querySelector('.editor-input');
                 ta.scrollTop = ta.scrollHeight; ta.scrollLeft = ta.scrollWidth;
                 ta.dispatchEvent(new Event('scroll'));
                 return new Promise(done => requestAnimationFrame(() => done([ta.scrollTop,
                     document.querySelector('.editor-gutter').scrollTop,
                     document.querySelector('.editor-highlight').scrollTop,
                     ta.scrollLeft, document.querySelector('.editor-highlight').scrollLeft])));",
            )
            .await?;
        let at: Vec<f64> = scrolled
            .as_array()
            .context("scroll offsets")?
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        ensure!(
            at.len() == 5 && at[0] > 0.0 && at[1] == at[0] && at[2] == at[0] && at[4] == at[3],
            "textarea, gutter and highlight scroll together: {at:?}"
        );
        page.screenshot("first-hour-editor-bottom").await?;
        page.assert_no_console_errors().await
    })
    .await
}
