//! Serves a directory over HTTP on 127.0.0.1 from a background thread, so the
//! browser test needs nothing but the Trunk output. `tiny_http` keeps it to a few
//! lines; `mime_guess` gives `.wasm` its `application/wasm` type, which
//! `WebAssembly.instantiateStreaming` requires.
//!
//! It answers as a static host does: gzip-encoded when the browser accepts it, and
//! with a long `max-age` for the files whose names carry a content hash (everything
//! else must be revalidated). A test may break a file on purpose (`Fault`), and may
//! make the server a slow link (`Link`): each response waits one round trip, and all
//! responses share the link's bandwidth.
//!
//! Why the server and not Chrome's network emulation: DevTools'
//! `Network.emulateNetworkConditions`, sent through chromedriver, applies to the page's
//! target only. A dedicated worker is a target of its own, and its module arrived at
//! about 5 Mbit/s under an emulated 1.6 Mbit/s link; chromedriver's command endpoint
//! cannot reach the worker's target.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use flate2::write::GzEncoder;
use flate2::Compression;
use tiny_http::{Header, Request, Response, ResponseBox, Server};

/// A file the server answers wrongly, to test how the page copes.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Requests whose path contains this answer 404.
    NotFound(String),
    /// Requests whose path contains this answer with bytes that are not what was asked
    /// for (a truncated or corrupt download).
    Corrupt(String),
}

/// A link the server emulates for every response.
#[derive(Clone, Copy, Debug)]
pub struct Link {
    /// Downstream bandwidth, shared by all responses.
    pub bits_per_s: f64,
    /// Added before each response's first byte (one round trip).
    pub latency: Duration,
}

/// How the server answers.
#[derive(Clone, Debug, Default)]
pub struct Serving {
    pub faults: Vec<Fault>,
    pub link: Option<Link>,
    /// Serve the directory under this path (`/course/tilescope/`) as a host serving a
    /// course site does; anything outside it answers 404.
    pub under: Option<String>,
    /// Every request that answered 404, for tests that expect none.
    pub missed: Arc<Mutex<Vec<String>>>,
    /// The directory served, which a test may switch to another build (a new deploy);
    /// `None` serves `dist/`.
    pub deploy: Option<Deploy>,
    /// While set, every request fails as with the network off: the answer is not
    /// HTTP, which the browser reports as a network error.
    pub offline: Arc<AtomicBool>,
    /// Every request answered while `offline` was set.
    pub refused: Arc<Mutex<Vec<String>>>,
}

impl Serving {
    /// Fails listing every request that answered 404.
    pub fn assert_nothing_missed(missed: &Mutex<Vec<String>>) -> anyhow::Result<()> {
        let missed = missed.lock().map(|m| m.clone()).unwrap_or_default();
        anyhow::ensure!(missed.is_empty(), "requests that found nothing: {missed:?}");
        Ok(())
    }
}

/// The directory a server answers from, shared with the test that switches it.
#[derive(Clone, Debug)]
pub struct Deploy(Arc<Mutex<PathBuf>>);

impl Deploy {
    pub fn new(dir: &Path) -> Deploy {
        Deploy(Arc::new(Mutex::new(dir.to_path_buf())))
    }

    /// Serves `dir` from the next request on, as a host does once a deploy lands.
    pub fn switch(&self, dir: &Path) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = dir.to_path_buf();
    }

    pub fn dir(&self) -> PathBuf {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// What the link sends at once, and how far behind its schedule it may catch up.
const CHUNK: usize = 16 * 1024;
const CATCH_UP: Duration = Duration::from_millis(20);

/// The link's shared bandwidth: when its next byte may leave.
struct Pacer {
    link: Link,
    next: Mutex<Instant>,
}

impl Pacer {
    /// Waits until `bytes` more may be sent.
    fn take(&self, bytes: usize) {
        let cost = Duration::from_secs_f64(bytes as f64 * 8.0 / self.link.bits_per_s);
        let until = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            // A sleep that overran leaves the link behind its schedule; catching up on a
            // little of that keeps the overruns from lowering the bandwidth.
            let start = (*next).max(Instant::now() - CATCH_UP);
            *next = start + cost;
            *next
        };
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
    }
}

/// A body sent through the pacer, a few kilobytes at a time, after one round trip.
struct Paced {
    body: std::io::Cursor<Vec<u8>>,
    pacer: Arc<Pacer>,
    started: bool,
}

impl Read for Paced {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.started {
            self.started = true;
            std::thread::sleep(self.pacer.link.latency);
        }
        let chunk = buf.len().min(CHUNK);
        let n = self.body.read(&mut buf[..chunk])?;
        self.pacer.take(n);
        Ok(n)
    }
}

pub struct StaticServer {
    server: Arc<Server>,
    /// Each request as it arrived and when its response was sent, for a failed test's
    /// report: a page that never loaded shows which file it was still waiting for.
    log: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
    port: u16,
}

impl StaticServer {
    pub fn start(root: &Path) -> Result<Self> {
        Self::start_with(root, Serving::default())
    }

    pub fn start_with(root: &Path, serving: Serving) -> Result<Self> {
        let server = Server::http("127.0.0.1:0")
            .map_err(|err| anyhow!("starting the static file server: {err}"))?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|addr| addr.port())
            .ok_or_else(|| anyhow!("static file server has no IP address"))?;
        let server = Arc::new(server);
        let log = Arc::new(Mutex::new(Vec::new()));
        let root = serving.deploy.unwrap_or_else(|| Deploy::new(root));
        let (offline, refused) = (serving.offline, serving.refused);
        let thread = {
            let server = Arc::clone(&server);
            let gzipped = Arc::new(Mutex::new(HashMap::new()));
            let pacer = serving.link.map(|link| {
                Arc::new(Pacer {
                    link,
                    next: Mutex::new(Instant::now()),
                })
            });
            let faults = Arc::new(serving.faults);
            let under = serving.under;
            let missed = serving.missed;
            let log = Arc::clone(&log);
            let started = Instant::now();
            std::thread::spawn(move || {
                for request in server.incoming_requests() {
                    if offline.load(Ordering::SeqCst) {
                        if let Ok(mut refused) = refused.lock() {
                            refused.push(request.url().to_string());
                        }
                        // Bytes that are not an HTTP response: a network error.
                        let mut writer = request.into_writer();
                        let _ = writer.write_all(b"offline\r\n\r\n");
                        let _ = writer.flush();
                        continue;
                    }
                    let (root, faults) = (root.dir(), Arc::clone(&faults));
                    let (under, missed) = (under.clone(), Arc::clone(&missed));
                    let log = Arc::clone(&log);
                    let (gzipped, pacer) = (Arc::clone(&gzipped), pacer.clone());
                    // A thread per response, so paced downloads share the link at once.
                    std::thread::spawn(move || {
                        let response =
                            respond(&root, &request, under.as_deref(), &faults, &gzipped);
                        if response.status_code().0 == 404 {
                            if let Ok(mut missed) = missed.lock() {
                                missed.push(request.url().to_string());
                            }
                        }
                        let response = match pacer {
                            Some(pacer) => paced(response, pacer),
                            None => response.boxed(),
                        };
                        let (url, status) = (request.url().to_string(), response.status_code().0);
                        let note = |what: &str| {
                            let at = started.elapsed().as_millis();
                            if let Ok(mut log) = log.lock() {
                                log.push(format!("{at:>6} ms {what} {status} {url}"));
                            }
                        };
                        note("answering");
                        // A client that went away is not the test's concern.
                        let sent = request.respond(response);
                        note(if sent.is_ok() { "sent" } else { "broken" });
                    });
                }
            })
        };
        Ok(Self {
            server,
            log,
            thread: Some(thread),
            port,
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests so far, one line each (see `log`).
    pub fn requests(&self) -> String {
        self.log
            .lock()
            .map(|log| log.join("\n"))
            .unwrap_or_else(|_| "(the request log is poisoned)".to_string())
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

type Gzipped = Mutex<HashMap<PathBuf, Arc<Vec<u8>>>>;

/// `response` with its body sent at the link's pace.
fn paced(response: Response<std::io::Cursor<Vec<u8>>>, pacer: Arc<Pacer>) -> ResponseBox {
    let status = response.status_code();
    let headers = response.headers().to_vec();
    let len = response.data_length();
    let mut body = Vec::new();
    response
        .into_reader()
        .read_to_end(&mut body)
        .expect("an in-memory body");
    let reader = Paced {
        body: std::io::Cursor::new(body),
        pacer,
        started: false,
    };
    Response::new(status, headers, reader, len, None).boxed()
}

fn respond(
    root: &Path,
    request: &Request,
    under: Option<&str>,
    faults: &[Fault],
    gzipped: &Gzipped,
) -> Response<std::io::Cursor<Vec<u8>>> {
    let url = request.url();
    let served = match under {
        Some(prefix) => url.strip_prefix(prefix.trim_end_matches('/')),
        None => Some(url),
    };
    let Some(served) = served.filter(|u| u.is_empty() || u.starts_with(['/', '?', '#'])) else {
        return Response::from_string("not found").with_status_code(404);
    };
    let Some(path) = resolve(root, served) else {
        return Response::from_string("forbidden").with_status_code(403);
    };
    for fault in faults {
        match fault {
            Fault::NotFound(part) if url.contains(part.as_str()) => {
                return Response::from_string("not found").with_status_code(404);
            }
            Fault::Corrupt(part) if url.contains(part.as_str()) => {
                return with_type(Response::from_data(b"\0asm corrupt".to_vec()), &path);
            }
            _ => {}
        }
    }
    let Ok(body) = std::fs::read(&path) else {
        return Response::from_string("not found").with_status_code(404);
    };
    let accepts_gzip = request
        .headers()
        .iter()
        .any(|h| h.field.equiv("Accept-Encoding") && h.value.as_str().contains("gzip"));
    let mut response = if accepts_gzip {
        let body = gzip(&path, &body, gzipped);
        Response::from_data(body.to_vec()).with_header(header("Content-Encoding", "gzip"))
    } else {
        Response::from_data(body)
    };
    response = response.with_header(header("Cache-Control", cache_control(&path)));
    with_type(response, &path)
}

fn with_type(
    response: Response<std::io::Cursor<Vec<u8>>>,
    path: &Path,
) -> Response<std::io::Cursor<Vec<u8>>> {
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    response.with_header(header("Content-Type", mime.essence_str()))
}

fn header(name: &str, value: &str) -> Header {
    // Both are ASCII constants or MIME types, which always make a header.
    Header::from_bytes(name, value).unwrap_or_else(|()| panic!("header {name}: {value}"))
}

/// The gzip encoding of `path` (level 6, a static host's default), compressed once
/// (two first requests may both compress it; the lock is not held meanwhile).
fn gzip(path: &Path, body: &[u8], cache: &Gzipped) -> Arc<Vec<u8>> {
    let cached = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(path)
        .cloned();
    if let Some(encoded) = cached {
        return encoded;
    }
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(body).expect("gzip into memory");
    let encoded = Arc::new(encoder.finish().expect("gzip into memory"));
    cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(path.to_path_buf(), Arc::clone(&encoded));
    encoded
}

/// A year for a file named with a content hash (`name-0123456789abcdef.ext`, as Trunk
/// and the post-build hook name them), else revalidate every time. Trunk prints its
/// 64-bit hash without leading zeros, so a hash may be shorter than 16 digits.
fn cache_control(path: &Path) -> &'static str {
    let stem = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let stem = stem.split('.').next().unwrap_or_default();
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    let hashed = stem.rsplit_once('-').is_some_and(|(_, hash)| {
        (8..=16).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit())
    });
    if hashed {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    }
}

/// Maps a request path onto `root`, refusing anything that would leave it.
fn resolve(root: &Path, url: &str) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    let relative = Path::new(path.trim_start_matches('/'));
    if relative
        .components()
        .any(|part| !matches!(part, Component::Normal(_)))
    {
        return None;
    }
    let full = root.join(relative);
    Some(if full.is_dir() {
        full.join("index.html")
    } else {
        full
    })
}
