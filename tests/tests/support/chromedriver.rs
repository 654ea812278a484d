//! A `chromedriver` child process on a free local port, killed on drop.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fantoccini::wd::WebDriverCompatibleCommand;

const BINARY: &str = "chromedriver";
const STARTUP_TIMEOUT: Duration = Duration::from_secs(15);

pub struct Chromedriver {
    child: Child,
    port: u16,
}

impl Chromedriver {
    pub fn start() -> Result<Self> {
        let port = free_port()?;
        let child = Command::new(BINARY)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| {
                format!(
                    "starting `{BINARY}` (install Debian's chromium and chromium-driver; \
                     `cargo xtask test` does this)"
                )
            })?;
        let mut driver = Self { child, port };
        driver.wait_until_listening()?;
        Ok(driver)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn wait_until_listening(&mut self) -> Result<()> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let started = Instant::now();
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Some(status) = self.child.try_wait().context("polling chromedriver")? {
                bail!("`{BINARY}` exited at startup with {status}");
            }
            if started.elapsed() > STARTUP_TIMEOUT {
                bail!(
                    "`{BINARY}` did not listen on port {} within {STARTUP_TIMEOUT:?}",
                    self.port
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        // Errors here mean the process is already gone, which is the goal.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Asks the OS for an unused port. Another process could take it before
/// chromedriver binds it; on this single-user test machine that race is negligible.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

/// Chromedriver's (non-W3C) command that drains the browser console log; it needs
/// the `goog:loggingPrefs` capability. Fantoccini has no built-in for it.
#[derive(Debug)]
pub struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        let session = session_id.unwrap_or_default();
        base_url.join(&format!("session/{session}/se/log"))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(r#"{"type":"browser"}"#.to_string()),
        )
    }
}
