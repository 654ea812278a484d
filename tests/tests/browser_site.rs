//! The static site as a course would publish it: the default build of `cargo xtask
//! dist` (relative links) served gzip-encoded under a sub-path, `/course/tilescope/`,
//! with nothing at the host's root. The playground loads and runs, a share link opens
//! the same kernel under that path, and the language reference resolves there too;
//! no request leaves the path. Ignored by plain `cargo test`; `cargo xtask test` builds
//! `dist/` and runs it with `--include-ignored`.

mod support;

use anyhow::{ensure, Result};
use support::{with_page_serving, Page, Serving};

const UNDER: &str = "/course/tilescope/";

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn the_site_works_under_a_sub_path() -> Result<()> {
    let serving = Serving {
        under: Some(UNDER.to_string()),
        ..Serving::default()
    };
    let missed = serving.missed.clone();
    with_page_serving(serving, async |page: &Page| {
        page.open(UNDER).await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        // Another example, then its share link in a fresh load under the same path.
        let link = page.share_example("softmax", "Softmax").await?;
        let path = page.eval("return location.pathname;").await?;
        ensure!(path == UNDER, "the page moved to {path}");
        page.open(&format!("{UNDER}?again=1#{link}")).await?;
        page.wait_for_text_containing(".tb-examples", "Softmax")
            .await?;
        page.wait_for("[data-testid=lane-MTE2]").await?;
        // The help's link to the language reference is relative: it resolves here.
        let reference = page
            .eval("return new URL('language.html', document.baseURI).pathname;")
            .await?;
        ensure!(
            reference == format!("{UNDER}language.html").as_str(),
            "{reference}"
        );
        page.open(&format!("{UNDER}language.html")).await?;
        page.wait_for("h1").await?;
        page.assert_no_console_errors().await?;
        Ok(())
    })
    .await?;
    Serving::assert_nothing_missed(&missed)
}
