//! The site as a course publishes it: `cargo xtask dist --public-url /course/tilescope/`
//! (`cargo xtask test` builds it into `TILESCOPE_COURSE_DIST`), served gzip-encoded
//! under that path with nothing at the host's root.
//!
//! - A student's visit: the page runs, a lesson opens, a share link opens the same
//!   kernel and Share's embed snippet's `src` opens the embed; axe-core finds nothing
//!   serious on the page, the lesson and the embed in either theme. Then, with the
//!   network off, the page, the lesson, the embed and the language reference still load
//!   and compile from the service worker's cache, and on a 390-px-wide phone the shared
//!   kernel reads top to bottom (the screenshot is `tests/artifacts/course-phone-390.png`).
//! - Two deploys one after the other: after the second lands, the open page keeps
//!   running the first build whole (page and compile worker), offers Reload, and after
//!   it runs the second build whole.
//!
//! Ignored by plain `cargo test`; `cargo xtask test` runs it with `--include-ignored`.

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::{ensure, Context, Result};
use serde_json::json;
use support::{path_of, with_page_serving, Deploy, Page, Serving};

const UNDER: &str = "/course/tilescope/";

/// The course build, from `TILESCOPE_COURSE_DIST` (`cargo xtask test` sets it).
fn course_dist() -> Result<PathBuf> {
    let dir = std::env::var_os("TILESCOPE_COURSE_DIST")
        .map(PathBuf::from)
        .context("TILESCOPE_COURSE_DIST is not set: `cargo xtask test` builds the course site and sets it")?;
    ensure!(
        dir.join("index.html").is_file() && dir.join("sw.js").is_file(),
        "no course build at {}",
        dir.display()
    );
    Ok(dir)
}

/// Every file of the build but the service worker, relative to its folder.
fn site_files(dir: &Path) -> Result<Vec<String>> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(root, &path, out)?;
            } else {
                let relative = path
                    .strip_prefix(root)?
                    .to_string_lossy()
                    .replace('\\', "/");
                if relative != "sw.js" {
                    out.push(relative);
                }
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    ensure!(
        files.iter().any(|f| f == "language.html")
            && files.iter().any(|f| f.starts_with("examples/")),
        "the build lacks the reference or the examples: {files:?}"
    );
    Ok(files)
}

fn serving(dir: &Path) -> Serving {
    Serving {
        under: Some(UNDER.to_string()),
        deploy: Some(Deploy::new(dir)),
        ..Serving::default()
    }
}

/// The name of the compile worker's script the page started, from its meta tag.
async fn worker_script(page: &Page) -> Result<String> {
    let name = page
        .eval("return document.querySelector('meta[name=tilescope-worker]').content;")
        .await?;
    name.as_str()
        .map(str::to_string)
        .context("the page names no worker script")
}

/// The playground compiled and simulated the kernel (the worker answered).
async fn ran(page: &Page) -> Result<()> {
    page.wait_for("[data-testid=lane-MTE2]").await?;
    Ok(())
}

#[tokio::test]
#[ignore = "needs the course build and Chromium; run by `cargo xtask test`"]
async fn a_course_site_works_under_its_path_and_offline() -> Result<()> {
    let dist = course_dist()?;
    let page_html = std::fs::read_to_string(dist.join("index.html"))?;
    ensure!(
        page_html.contains(&format!("\"{UNDER}")),
        "the course build does not link its files under {UNDER}"
    );
    let serving = serving(&dist);
    let (missed, offline, refused) = (
        serving.missed.clone(),
        serving.offline.clone(),
        serving.refused.clone(),
    );
    with_page_serving(serving, async |page: &Page| {
        page.open(UNDER).await?;
        ran(page).await?;
        page.wait_for_service_worker().await?;
        // Installing cached every file of the build, not only what the page fetched.
        let cached = page
            .eval(
                "return caches.keys().then((keys) => Promise.all(keys.map((k) => \
                 caches.open(k).then((c) => c.keys())))).then((all) => all.flat() \
                 .map((r) => new URL(r.url).pathname));",
            )
            .await?;
        let cached: Vec<String> = serde_json::from_value(cached)?;
        for file in site_files(&dist)? {
            let path = format!("{UNDER}{file}");
            ensure!(cached.contains(&path), "{path} is not cached: {cached:?}");
        }

        // A lesson, then a share link of another example.
        let lesson = tilescope::lesson::find(1).map_err(anyhow::Error::msg)?;
        page.click("[data-testid=lessons]").await?;
        page.click(&format!("[data-lesson='{}']", lesson.id))
            .await?;
        page.wait_for_text_containing(".lesson-heading", &lesson.title)
            .await?;
        page.assert_accessible_in_both_themes("an open lesson").await?;
        page.click("[data-testid=lesson-close]").await?;
        let link = page.share_example("softmax", "Softmax").await?;
        page.open(&format!("{UNDER}?from=course#{link}")).await?;
        page.wait_for_text_containing(".tb-examples", "Softmax")
            .await?;
        ran(page).await?;
        page.assert_accessible_in_both_themes("the course page").await?;

        // Share's embed snippet: its `src` opens the embed under the course path.
        page.click("[data-testid=share]").await?;
        let src = page.embed_snippet_src().await?;
        let embed = path_of(&src)?;
        ensure!(embed.starts_with(UNDER), "the embed is not under {UNDER}: {src}");
        page.open(&embed).await?;
        page.wait_for("[data-testid=embed]").await?;
        ran(page).await?;
        page.assert_accessible_in_both_themes("the embed").await?;
        page.assert_no_console_errors().await?;

        // The network off: everything comes from the service worker's cache.
        offline.store(true, Ordering::SeqCst);
        page.open(UNDER).await?;
        ran(page).await?;
        page.open(&format!("{UNDER}?offline=1#{link}")).await?;
        page.wait_for_text_containing(".tb-examples", "Softmax")
            .await?;
        ran(page).await?;
        page.click("[data-testid=lessons]").await?;
        page.click(&format!("[data-lesson='{}']", lesson.id))
            .await?;
        let verdict = page.check_lesson(1).await?;
        ensure!(
            verdict.contains("Not yet"),
            "the starter, offline: {verdict}"
        );
        page.open(&embed).await?;
        ran(page).await?;
        page.open(&format!("{UNDER}language.html")).await?;
        page.wait_for("h1").await?;

        // A phone: the shared kernel, then its panel, down the page.
        page.resize(390, 844).await?;
        page.open(&format!("{UNDER}?phone=1#{link}")).await?;
        ran(page).await?;
        let shot = page.screenshot("course-phone-390").await?;
        let width = page.eval("return document.documentElement.clientWidth;").await?;
        ensure!(
            width.as_u64().is_some_and(|w| w <= 400),
            "the window is {width} px wide"
        );
        let scrolls = page
            .eval("return document.documentElement.scrollWidth <= document.documentElement.clientWidth;")
            .await?;
        ensure!(scrolls == json!(true), "the page scrolls sideways at 390 px ({shot:?})");
        let reached = refused.lock().map(|r| r.clone()).unwrap_or_default();
        // Only the browser's check for a newer sw.js may try the network.
        ensure!(
            reached.iter().all(|url| url.ends_with("/sw.js")),
            "offline, the page still asked the network for {reached:?}"
        );
        Ok(())
    })
    .await?;
    Serving::assert_nothing_missed(&missed)
}

/// `dir` copied to a new build in `to`, as a rebuild with changed worker code deploys
/// it: the worker's files under a new hash (the old names gone), index.html and sw.js
/// naming them, and sw.js with a new build id.
fn next_build(dir: &Path, to: &Path) -> Result<String> {
    copy_dir(dir, to)?;
    let html = std::fs::read_to_string(to.join("index.html"))?;
    let old = html
        .split("content=\"")
        .find_map(|rest| {
            let name = rest.split('"').next()?;
            name.rsplit('/')
                .next()?
                .strip_suffix(".js")?
                .strip_prefix("tilescope-worker-")
                .map(str::to_string)
        })
        .context("index.html names no hashed worker")?;
    let new = old.chars().rev().collect::<String>();
    ensure!(new != old, "a palindromic hash");
    for suffix in [".js", "_bg.wasm"] {
        std::fs::rename(
            to.join(format!("tilescope-worker-{old}{suffix}")),
            to.join(format!("tilescope-worker-{new}{suffix}")),
        )?;
    }
    for file in ["index.html", "sw.js"] {
        let text = std::fs::read_to_string(to.join(file))?.replace(&old, &new);
        std::fs::write(to.join(file), text)?;
    }
    let sw = std::fs::read_to_string(to.join("sw.js"))?;
    let build = sw
        .split("const BUILD = \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .context("sw.js has no BUILD")?
        .to_string();
    std::fs::write(
        to.join("sw.js"),
        sw.replace(&build, &format!("{build}-next")),
    )?;
    Ok(format!("tilescope-worker-{new}.js"))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

#[tokio::test]
#[ignore = "needs the course build and Chromium; run by `cargo xtask test`"]
async fn a_new_deploy_replaces_the_old_one_whole() -> Result<()> {
    let first = course_dist()?;
    let scratch = tempfile::tempdir()?;
    let second = scratch.path().join("second");
    let second_worker = next_build(&first, &second)?;
    let serving = serving(&first);
    let deploy = serving.deploy.clone().context("a deploy")?;
    let missed = serving.missed.clone();
    with_page_serving(serving, async |page: &Page| {
        page.open(UNDER).await?;
        ran(page).await?;
        page.wait_for_service_worker().await?;
        let first_worker = worker_script(page).await?;

        // The second build lands; the first build's files are gone from the host.
        deploy.switch(&second);
        page.open(UNDER).await?;
        ran(page).await?;
        ensure!(
            worker_script(page).await? == first_worker,
            "the page mixed two builds before Reload"
        );
        page.click("#tilescope-update button").await?;
        page.eventually("the second build to load", async || {
            Ok(worker_script(page).await?.ends_with(&second_worker))
        })
        .await?;
        ran(page).await?;
        // A compile after the switch: the new page talks to the new worker.
        page.share_example("softmax", "Softmax").await?;
        ran(page).await?;
        page.assert_no_console_errors().await?;
        Ok(())
    })
    .await?;
    Serving::assert_nothing_missed(&missed)
}
