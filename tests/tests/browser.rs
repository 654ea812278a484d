//! The playground in headless Chromium, against the release build in `dist/`.
//! Ignored by plain `cargo test`; `cargo xtask test` builds `dist/` and runs these
//! with `--include-ignored`.

mod support;

use anyhow::Result;
use support::{with_page, Page};

#[tokio::test]
#[ignore = "needs `dist/` and Chromium; run by `cargo xtask test`"]
async fn playground_loads_without_console_errors() -> Result<()> {
    with_page(async |page: &Page| {
        page.open("/").await?;
        page.wait_for("main").await?;
        page.wait_for_text("h1", "Tilescope").await?;
        page.screenshot("playground-home").await?;
        page.assert_no_console_errors().await
    })
    .await
}
