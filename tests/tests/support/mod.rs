//! Browser-test harness: serves the Trunk output (`dist/`) on 127.0.0.1, starts
//! `chromedriver` on a free port and drives headless Chromium through it.
//!
//! A test is written against [`Page`] through [`with_page`], which always ends the
//! WebDriver session (also when the test fails), so no Chromium outlives the test.
//! Add new steps as methods on [`Page`] so every playground test shares them.
// Every browser test file compiles this module and uses only some of its steps.
#![allow(dead_code)]

mod chromedriver;
mod static_server;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

use chromedriver::Chromedriver;
use static_server::StaticServer;
#[allow(unused_imports)] // each test file uses some
pub use static_server::{Deploy, Fault, Link, Serving};

/// WebDriver's key code points, for [`Page::keys`].
pub const TAB: &str = "\u{E004}";
pub const ENTER: &str = "\u{E007}";
pub const SHIFT: &str = "\u{E008}";
pub const ESCAPE: &str = "\u{E00C}";
pub const ARROW_UP: &str = "\u{E013}";
pub const ARROW_RIGHT: &str = "\u{E014}";
pub const ARROW_DOWN: &str = "\u{E015}";

/// How long a step may wait for the page before the test fails. Generous: only a
/// failing step waits this long, and a first load on a busy 2-core CI machine has
/// taken over 20 s to mount the page (its report then shows the server's log).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(45);

/// The workspace root: this crate lives in `<root>/tests`.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// The directory Trunk built, overridable with `TILESCOPE_DIST`.
fn dist_dir() -> Result<PathBuf> {
    let dist = std::env::var_os("TILESCOPE_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("dist"));
    ensure!(
        dist.join("index.html").is_file(),
        "no playground build at {}: run `trunk build --release` first \
         (`cargo xtask test` does this)",
        dist.display()
    );
    Ok(dist)
}

/// The name of the file in `dist/` that starts with `prefix` and ends with `suffix`
/// (a hashed build output, such as the worker's module).
pub fn dist_file(prefix: &str, suffix: &str) -> Result<String> {
    let dist = dist_dir()?;
    std::fs::read_dir(&dist)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|name| name.starts_with(prefix) && name.ends_with(suffix))
        .with_context(|| format!("no {prefix}*{suffix} in {}", dist.display()))
}

/// A full URL's path, query and fragment (what [`Page::open`] takes).
pub fn path_of(url: &str) -> Result<String> {
    let rest = url.split("://").nth(1).context("not a full URL")?;
    Ok(rest[rest.find('/').context("no path")?..].to_string())
}

/// Where screenshots go (gitignored).
fn artifacts_dir() -> PathBuf {
    workspace_root().join("tests").join("artifacts")
}

/// A browser session on the served playground.
pub struct Page {
    client: Client,
    base_url: String,
}

/// Serves `dist/`, opens a browser session on it, runs `test`, then closes the
/// session whatever the outcome, and reports the first failure.
pub async fn with_page(test: impl AsyncFnOnce(&Page) -> Result<()>) -> Result<()> {
    with_page_serving(Serving::default(), test).await
}

/// [`with_page`] on a server that answers as `serving` says (faults, a slow link).
pub async fn with_page_serving(
    serving: Serving,
    test: impl AsyncFnOnce(&Page) -> Result<()>,
) -> Result<()> {
    let dist = match &serving.deploy {
        Some(deploy) => deploy.dir(),
        None => dist_dir()?,
    };
    let server = StaticServer::start_with(&dist, serving)?;
    let profile = tempfile::tempdir().context("creating a Chromium profile directory")?;
    let (_driver, client) = start_session(profile.path()).await?;
    let page = Page {
        client,
        base_url: server.url(),
    };
    let outcome = match test(&page).await {
        Ok(()) => Ok(()),
        Err(failure) => {
            let state = page.state_at_failure().await;
            let requests = server.requests();
            Err(failure.context(format!(
                "the page when the test failed:\n{state}\nrequests to the server:\n{requests}"
            )))
        }
    };
    let closed = page
        .client
        .close()
        .await
        .context("closing the WebDriver session");
    // Chromedriver, the profile directory and the server are released here.
    outcome.and(closed)
}

/// Chromedriver and a session on it. Chromedriver listens on a port picked just before
/// it starts, which a parallel test's server can take first (the session request then
/// reaches the wrong process): a failed start is retried on a new port.
async fn start_session(profile: &Path) -> Result<(Chromedriver, Client)> {
    const ATTEMPTS: usize = 3;
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let driver = Chromedriver::start()?;
        match connect(&driver.url(), profile).await {
            Ok(client) => return Ok((driver, client)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| anyhow::anyhow!("no WebDriver session")))
        .with_context(|| format!("no Chromium session after {ATTEMPTS} attempts"))
}

async fn connect(webdriver_url: &str, profile: &Path) -> Result<Client> {
    let args = [
        "--headless=new".to_string(),
        "--no-sandbox".to_string(),
        "--disable-dev-shm-usage".to_string(),
        "--disable-gpu".to_string(),
        "--disable-background-networking".to_string(),
        "--disable-component-update".to_string(),
        "--disable-sync".to_string(),
        "--no-first-run".to_string(),
        "--window-size=1280,800".to_string(),
        format!("--user-data-dir={}", profile.display()),
    ];
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": { "binary": "/usr/bin/chromium", "args": args },
        // Makes the browser console readable through the `se/log` endpoint.
        "goog:loggingPrefs": { "browser": "ALL" },
    });
    let Value::Object(caps) = caps else {
        bail!("capabilities must be a JSON object");
    };
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(webdriver_url)
        .await
        .with_context(|| format!("starting a Chromium session through {webdriver_url}"))
}

impl Page {
    /// Navigates to `path` (e.g. `/`) on the served build.
    pub async fn open(&self, path: &str) -> Result<()> {
        let url = format!("{}{}", self.base_url, path);
        self.client
            .goto(&url)
            .await
            .with_context(|| format!("opening {url}"))
    }

    /// Navigates to an empty page, off the served build (nothing loads, nothing is
    /// cached).
    pub async fn blank(&self) -> Result<()> {
        self.client
            .goto("about:blank")
            .await
            .context("opening about:blank")
    }

    /// Waits until an element matching `css` exists.
    pub async fn wait_for(&self, css: &str) -> Result<Element> {
        self.client
            .wait()
            .at_most(STEP_TIMEOUT)
            .for_element(Locator::Css(css))
            .await
            .with_context(|| format!("waiting for `{css}`"))
    }

    /// Waits until an element matching `css` shows exactly `expected` as its text.
    pub async fn wait_for_text(&self, css: &str, expected: &str) -> Result<()> {
        let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
        let mut last = String::new();
        loop {
            if let Ok(element) = self.client.find(Locator::Css(css)).await {
                last = element.text().await.unwrap_or_default();
                if last.trim() == expected {
                    return Ok(());
                }
            }
            if tokio::time::Instant::now() >= deadline {
                bail!("`{css}` did not show {expected:?} within {STEP_TIMEOUT:?} (last: {last:?})");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A key press on the page (the shortcuts listen on the document).
    pub async fn press(&self, key: &str) -> Result<()> {
        self.execute(
            "document.body.dispatchEvent(new KeyboardEvent('keydown', { key: arguments[0], bubbles: true }));",
            vec![serde_json::json!(key)],
        )
        .await?;
        Ok(())
    }

    /// How many elements match `css` now.
    pub async fn count(&self, css: &str) -> Result<u64> {
        self.execute(
            "return document.querySelectorAll(arguments[0]).length;",
            vec![serde_json::json!(css)],
        )
        .await?
        .as_u64()
        .context("a count")
    }

    /// Clicks the open lesson's Check for the `n`th time and waits for that check's
    /// verdict; its text.
    pub async fn check_lesson(&self, n: u32) -> Result<String> {
        self.click("[data-testid=lesson-check]").await?;
        let verdict = self
            .wait_for(&format!("[data-testid=lesson-verdict][data-check='{n}']"))
            .await?;
        Ok(verdict.text().await?)
    }

    /// Waits until an element matching `css` shows a text containing `part`.
    pub async fn wait_for_text_containing(&self, css: &str, part: &str) -> Result<()> {
        let mut last = String::new();
        self.eventually(&format!("`{css}` to show {part:?}"), async || {
            last = self.text_of(css).await?;
            Ok(last.contains(part))
        })
        .await
        .with_context(|| format!("last: {last:?}"))
    }

    /// Clicks the element matching `css` once it exists, as a pointer would: brought to
    /// the middle of its scrolling box first, where no sticky header covers it.
    pub async fn click(&self, css: &str) -> Result<()> {
        let element = self.wait_for(css).await?;
        self.execute(
            "document.querySelector(arguments[0]).scrollIntoView({ block: 'center', inline: 'nearest' });",
            vec![serde_json::json!(css)],
        )
        .await?;
        element
            .click()
            .await
            .with_context(|| format!("clicking `{css}`"))
    }

    /// The text of the element matching `css` once it exists.
    pub async fn text_of(&self, css: &str) -> Result<String> {
        self.wait_for(css)
            .await?
            .text()
            .await
            .with_context(|| format!("reading the text of `{css}`"))
    }

    /// The editor's current text (its `value`, which WebDriver's text does not report).
    pub async fn editor_text(&self) -> Result<String> {
        let value = self
            .execute(
                "return document.querySelector('.editor-input').value;",
                vec![],
            )
            .await?;
        Ok(value.as_str().unwrap_or_default().to_string())
    }

    /// Replaces the editor's text as typing would (one `input` event).
    pub async fn set_editor_text(&self, text: &str) -> Result<()> {
        self.execute(
            "const ta = document.querySelector('.editor-input');
             ta.value = arguments[0];
             ta.dispatchEvent(new InputEvent('input', { bubbles: true }));",
            vec![Value::String(text.to_string())],
        )
        .await?;
        Ok(())
    }

    /// Runs `script` in the page (a function body: `arguments[i]` are `args`) and
    /// returns what it returns.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Result<Value> {
        self.client
            .execute(script, args)
            .await
            .with_context(|| format!("running script `{script}`"))
    }

    /// Polls until `check` holds (the page renders asynchronously, the worker answers
    /// later); a failing check counts as not yet.
    pub async fn eventually(
        &self,
        what: &str,
        mut check: impl AsyncFnMut() -> Result<bool>,
    ) -> Result<()> {
        let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
        loop {
            if check().await.unwrap_or(false) {
                return Ok(());
            }
            ensure!(tokio::time::Instant::now() < deadline, "timed out: {what}");
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// Clicks the panel tab whose title starts with `title`.
    pub async fn tab(&self, title: &str) -> Result<()> {
        let tabs = self.wait_for(".tabs").await?;
        for t in tabs.find_all(Locator::Css(".tab")).await? {
            if t.text().await?.starts_with(title) {
                t.click().await?;
                return Ok(());
            }
        }
        bail!("no tab {title}")
    }

    /// Runs `script` (a function body; `return` gives the result) in the page.
    pub async fn eval(&self, script: &str) -> Result<Value> {
        self.client
            .execute(script, Vec::new())
            .await
            .context("running a script in the page")
    }

    /// Attribute `name` of the element matching `css` once it exists ("" when absent).
    pub async fn attr(&self, css: &str, name: &str) -> Result<String> {
        let element = self.wait_for(css).await?;
        Ok(element
            .attr(name)
            .await
            .with_context(|| format!("reading {name} of `{css}`"))?
            .unwrap_or_default())
    }

    /// Loads the gallery example `id` (its title contains `title`) and returns the
    /// Share button's link to it (`v1=...`).
    pub async fn share_example(&self, id: &str, title: &str) -> Result<String> {
        self.click(".tb-examples").await?;
        self.click(&format!("[data-example={id}]")).await?;
        self.wait_for_text_containing(".tb-examples", title).await?;
        let link = self.attr("[data-testid=share]", "data-link").await?;
        ensure!(link.starts_with("v1="), "share link {link:?}");
        Ok(link)
    }

    /// axe-core's serious and critical violations on the page as it is now, one line
    /// each (rule, what it asks, up to five elements). axe-core comes from npm
    /// (`TILESCOPE_AXE`, which `cargo xtask test` sets to its `axe.min.js`).
    pub async fn accessibility_violations(&self) -> Result<Vec<String>> {
        let path = std::env::var_os("TILESCOPE_AXE")
            .map(PathBuf::from)
            .context(
                "TILESCOPE_AXE is not set: `cargo xtask test` installs axe-core and sets it",
            )?;
        let axe = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        if self.eval("return typeof window.axe;").await? != json!("object") {
            self.execute(&axe, vec![])
                .await
                .context("loading axe-core")?;
        }
        let found = self
            .eval(
                "return axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations
                   .filter((v) => v.impact === 'serious' || v.impact === 'critical')
                   .map((v) => v.impact + ' ' + v.id + ': ' + v.help + ' (' + v.nodes.length + ' elements: '
                     + v.nodes.slice(0, 5).map((n) => n.target.join(' ')
                       + (n.any[0] && n.any[0].message ? ' [' + n.any[0].message + ']' : '')).join('; ') + ')'));",
            )
            .await
            .context("running axe-core")?;
        Ok(serde_json::from_value(found)?)
    }

    /// Fails listing axe-core's serious and critical violations on the page now.
    pub async fn assert_accessible(&self, view: &str) -> Result<()> {
        let violations = self.accessibility_violations().await?;
        ensure!(
            violations.is_empty(),
            "axe-core on {view}: {} serious or critical violation(s):\n  {}",
            violations.len(),
            violations.join("\n  ")
        );
        Ok(())
    }

    /// Real key presses (WebDriver's, with the browser's default actions: Tab moves the
    /// focus) to the focused element. WebDriver names keys by code points: `TAB`,
    /// `ESCAPE`, `ENTER`, `ARROW_DOWN`, `ARROW_RIGHT`.
    pub async fn keys(&self, keys: &str) -> Result<()> {
        let focused = self
            .client
            .active_element()
            .await
            .context("the focused element")?;
        focused.send_keys(keys).await.context("sending keys")
    }

    /// Whether the focused element matches `css`.
    pub async fn focus_matches(&self, css: &str) -> Result<bool> {
        Ok(self
            .execute(
                "return !!document.activeElement && document.activeElement.matches(arguments[0]);",
                vec![json!(css)],
            )
            .await?
            == json!(true))
    }

    /// Presses Tab until the focused element matches `css`, as a keyboard user would:
    /// in the editor, where Tab indents, Esc first. Fails after `max` presses.
    pub async fn tab_to(&self, css: &str, max: usize) -> Result<()> {
        for _ in 0..max {
            if self.focus_matches(css).await? {
                return Ok(());
            }
            if self.focus_matches(".editor-input").await? {
                self.keys(ESCAPE).await?;
            }
            self.keys(TAB).await?;
        }
        ensure!(
            self.focus_matches(css).await?,
            "{max} presses of Tab did not reach `{css}`"
        );
        Ok(())
    }

    /// [`Page::assert_accessible`] in the light theme, then in the dark one.
    pub async fn assert_accessible_in_both_themes(&self, view: &str) -> Result<()> {
        for theme in ["light", "dark"] {
            self.set_theme(theme).await?;
            self.assert_accessible(&format!("{view} ({theme})")).await?;
        }
        Ok(())
    }

    /// Forces the light or the dark theme, as the theme button does.
    pub async fn set_theme(&self, theme: &str) -> Result<()> {
        self.execute(
            "document.documentElement.dataset.theme = arguments[0];",
            vec![json!(theme)],
        )
        .await?;
        Ok(())
    }

    /// The `src` of the embed snippet the open Share dialog shows.
    pub async fn embed_snippet_src(&self) -> Result<String> {
        let snippet = self
            .wait_for("[data-testid=embed-snippet]")
            .await?
            .prop("value")
            .await?
            .unwrap_or_default();
        let src = snippet
            .split("src=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .context("the snippet has no src")?
            .replace("&amp;", "&");
        Ok(src)
    }

    /// Sets the browser window's outer size (a phone's width, say).
    pub async fn resize(&self, width: u32, height: u32) -> Result<()> {
        self.client
            .set_window_size(width, height)
            .await
            .with_context(|| format!("resizing the window to {width} x {height}"))
    }

    /// Waits until the page is controlled by the site's service worker (index.html
    /// registers it; it takes control once it has cached the build).
    pub async fn wait_for_service_worker(&self) -> Result<()> {
        self.eventually("the service worker to control the page", async || {
            Ok(self
                .eval("return !!(navigator.serviceWorker && navigator.serviceWorker.controller);")
                .await?
                == serde_json::json!(true))
        })
        .await
    }

    /// Saves a PNG of the viewport as `tests/artifacts/<name>.png`.
    pub async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        let png = self
            .client
            .screenshot()
            .await
            .context("taking a screenshot")?;
        let dir = artifacts_dir();
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }

    /// What a failed test's report needs to tell a page that never loaded from one that
    /// showed something else: the address, the document's state, the start of its text
    /// and the console. Each part that cannot be read says why instead.
    async fn state_at_failure(&self) -> String {
        let url = match self.client.current_url().await {
            Ok(url) => url.to_string(),
            Err(e) => format!("(unreadable: {e})"),
        };
        let document = match self
            .eval(
                "return document.readyState + ' | ' + document.title + ' | ' \
                 + (document.body ? document.body.innerText.slice(0, 400) : '(no body)');",
            )
            .await
        {
            Ok(Value::String(text)) => text,
            Ok(other) => other.to_string(),
            Err(e) => format!("(unreadable: {e:#})"),
        };
        let console = match self.console().await {
            Ok(entries) if entries.is_empty() => "(empty)".to_string(),
            Ok(entries) => entries
                .iter()
                .map(|entry| format!("  {} {}", entry.level, entry.message))
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => format!("(unreadable: {e:#})"),
        };
        format!("url: {url}\ndocument: {document}\nconsole:\n{console}")
    }

    /// The browser console entries logged since the last call (the log is drained).
    pub async fn console(&self) -> Result<Vec<ConsoleEntry>> {
        let raw = self
            .client
            .issue_cmd(chromedriver::BrowserLog)
            .await
            .context("reading the browser console")?;
        let entries = raw.as_array().context("browser log is not a list")?;
        Ok(entries
            .iter()
            .map(|entry| ConsoleEntry {
                level: entry["level"].as_str().unwrap_or_default().to_string(),
                message: entry["message"].as_str().unwrap_or_default().to_string(),
            })
            .collect())
    }

    /// Fails listing every SEVERE console entry (uncaught errors, failed loads).
    pub async fn assert_no_console_errors(&self) -> Result<()> {
        let severe: Vec<String> = self
            .console()
            .await?
            .into_iter()
            .filter(|entry| entry.level == "SEVERE")
            .map(|entry| entry.message)
            .collect();
        ensure!(
            severe.is_empty(),
            "browser console has {} error(s):\n  {}",
            severe.len(),
            severe.join("\n  ")
        );
        Ok(())
    }
}

/// One line of the browser console.
#[derive(Debug)]
pub struct ConsoleEntry {
    /// WebDriver log level: `SEVERE`, `WARNING`, `INFO`, `DEBUG`.
    pub level: String,
    pub message: String,
}
