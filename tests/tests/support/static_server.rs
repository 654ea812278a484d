//! Serves a directory over HTTP on 127.0.0.1 from a background thread, so the
//! browser test needs nothing but the Trunk output. `hyper` speaks HTTP/1.1 with
//! keep-alive as a static host does, on a Tokio runtime of the server's own;
//! `mime_guess` gives `.wasm` its `application/wasm` type, which
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
//!
//! Why `hyper` and not a small threaded server such as `tiny_http` 0.12: that one's
//! thread pool loses a wake-up when two connections arrive while one of its threads
//! is idle, and the second connection's request then waits, unread, until another
//! connection closes. A browser opens several connections at once, so first loads
//! stalled with no error anywhere (in 103 of 200 trials of three kept-alive
//! connections and two new ones; `tests/tests/static_server.rs` is that trial).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use http::{header, HeaderValue, Response, StatusCode};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::sync::oneshot;
use tokio::time::Sleep;

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
    /// Books `bytes` on the link: when they will have left.
    fn book(&self, bytes: usize) -> Instant {
        let cost = Duration::from_secs_f64(bytes as f64 * 8.0 / self.link.bits_per_s);
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        // A sleep that overran leaves the link behind its schedule; catching up on a
        // little of that keeps the overruns from lowering the bandwidth.
        let start = (*next).max(Instant::now() - CATCH_UP);
        *next = start + cost;
        *next
    }
}

/// Each request as it arrived and when its response was sent, for a failed test's
/// report: a page that never loaded shows which file it was still waiting for.
#[derive(Clone)]
struct RequestLog {
    lines: Arc<Mutex<Vec<String>>>,
    started: Instant,
}

impl RequestLog {
    fn note(&self, what: &str, status: u16, url: &str) {
        let at = self.started.elapsed().as_millis();
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(format!("{at:>6} ms {what} {status} {url}"));
        }
    }
}

/// A response body, sent whole or a chunk at a time at the link's pace; it notes in the
/// log whether it was sent to the end or dropped before (the browser went away).
struct Sending {
    data: Bytes,
    at: usize,
    pacer: Option<Arc<Pacer>>,
    /// A chunk taken from `data` that leaves once `wait` is over.
    pending: Option<Bytes>,
    wait: Option<Pin<Box<Sleep>>>,
    log: RequestLog,
    status: u16,
    url: String,
}

impl Body for Sending {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        loop {
            if let Some(wait) = this.wait.as_mut() {
                ready!(wait.as_mut().poll(cx));
                this.wait = None;
            }
            if let Some(chunk) = this.pending.take() {
                return Poll::Ready(Some(Ok(Frame::data(chunk))));
            }
            let left = this.data.len() - this.at;
            if left == 0 {
                return Poll::Ready(None);
            }
            let n = match &this.pacer {
                Some(pacer) => {
                    let n = left.min(CHUNK);
                    let until = pacer.book(n);
                    this.wait = Some(Box::pin(tokio::time::sleep_until(until.into())));
                    n
                }
                None => left,
            };
            this.pending = Some(this.data.slice(this.at..this.at + n));
            this.at += n;
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_none() && self.at == self.data.len()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.len() as u64)
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        let what = if self.is_end_stream() {
            "sent"
        } else {
            "broken"
        };
        self.log.note(what, self.status, &self.url);
    }
}

/// What every connection's requests are answered from.
struct Host {
    root: Deploy,
    faults: Vec<Fault>,
    under: Option<String>,
    missed: Arc<Mutex<Vec<String>>>,
    offline: Arc<AtomicBool>,
    refused: Arc<Mutex<Vec<String>>>,
    pacer: Option<Arc<Pacer>>,
    gzipped: Gzipped,
    log: RequestLog,
}

/// The answer while offline: the connection closes without a response, which the
/// browser reports as a network error.
#[derive(Debug)]
struct Offline;

impl std::fmt::Display for Offline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("offline")
    }
}

impl std::error::Error for Offline {}

impl Host {
    async fn answer(&self, request: http::Request<Incoming>) -> Result<Response<Sending>, Offline> {
        let url = request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        if self.offline.load(Ordering::SeqCst) {
            if let Ok(mut refused) = self.refused.lock() {
                refused.push(url);
            }
            return Err(Offline);
        }
        let accepts_gzip = request
            .headers()
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .any(|v| v.to_str().is_ok_and(|v| v.contains("gzip")));
        let root = self.root.dir();
        let reply = respond(
            &root,
            &url,
            self.under.as_deref(),
            &self.faults,
            accepts_gzip,
            &self.gzipped,
        );
        let status = reply.status().as_u16();
        if status == 404 {
            if let Ok(mut missed) = self.missed.lock() {
                missed.push(url.clone());
            }
        }
        self.log.note("answering", status, &url);
        if let Some(pacer) = &self.pacer {
            // One round trip before the first byte.
            tokio::time::sleep(pacer.link.latency).await;
        }
        Ok(reply.map(|data| Sending {
            data,
            at: 0,
            pacer: self.pacer.clone(),
            pending: None,
            wait: None,
            log: self.log.clone(),
            status,
            url,
        }))
    }
}

pub struct StaticServer {
    log: RequestLog,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    port: u16,
}

impl StaticServer {
    pub fn start(root: &Path) -> Result<Self> {
        Self::start_with(root, Serving::default())
    }

    pub fn start_with(root: &Path, serving: Serving) -> Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .context("starting the static file server")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("static-server")
            .enable_all()
            .build()
            .context("starting the static file server's runtime")?;
        let log = RequestLog {
            lines: Arc::new(Mutex::new(Vec::new())),
            started: Instant::now(),
        };
        let host = Arc::new(Host {
            root: serving.deploy.unwrap_or_else(|| Deploy::new(root)),
            faults: serving.faults,
            under: serving.under,
            missed: serving.missed,
            offline: serving.offline,
            refused: serving.refused,
            pacer: serving.link.map(|link| {
                Arc::new(Pacer {
                    link,
                    next: Mutex::new(Instant::now()),
                })
            }),
            gzipped: Mutex::new(HashMap::new()),
            log: log.clone(),
        });
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::spawn(move || runtime.block_on(serve(listener, host, stopped)));
        Ok(Self {
            log,
            stop: Some(stop),
            thread: Some(thread),
            port,
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests so far, one line each (see `RequestLog`).
    pub fn requests(&self) -> String {
        self.log
            .lines
            .lock()
            .map(|log| log.join("\n"))
            .unwrap_or_else(|_| "(the request log is poisoned)".to_string())
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Accepts connections until `stopped`, each served on a task of its own; the open
/// connections end with the runtime.
async fn serve(
    listener: std::net::TcpListener,
    host: Arc<Host>,
    mut stopped: oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(err) => {
            host.log.note(&format!("could not listen: {err}"), 0, "");
            return;
        }
    };
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        // As static hosts do (nginx's `tcp_nodelay`): a response's last small write
        // never waits for the browser's delayed acknowledgement.
        let _ = stream.set_nodelay(true);
        let host = Arc::clone(&host);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let host = Arc::clone(&host);
                async move { host.answer(request).await }
            });
            // A browser that goes away, or a request refused while offline, ends the
            // connection; neither is the test's concern.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

type Gzipped = Mutex<HashMap<PathBuf, Bytes>>;

/// The response to `url`, its body whole.
fn respond(
    root: &Path,
    url: &str,
    under: Option<&str>,
    faults: &[Fault],
    accepts_gzip: bool,
    gzipped: &Gzipped,
) -> Response<Bytes> {
    let served = match under {
        Some(prefix) => url.strip_prefix(prefix.trim_end_matches('/')),
        None => Some(url),
    };
    let Some(served) = served.filter(|u| u.is_empty() || u.starts_with(['/', '?', '#'])) else {
        return plain(StatusCode::NOT_FOUND, "not found");
    };
    let Some(path) = resolve(root, served) else {
        return plain(StatusCode::FORBIDDEN, "forbidden");
    };
    for fault in faults {
        match fault {
            Fault::NotFound(part) if url.contains(part.as_str()) => {
                return plain(StatusCode::NOT_FOUND, "not found");
            }
            Fault::Corrupt(part) if url.contains(part.as_str()) => {
                return with_type(Response::new(Bytes::from_static(b"\0asm corrupt")), &path);
            }
            _ => {}
        }
    }
    let Ok(body) = std::fs::read(&path) else {
        return plain(StatusCode::NOT_FOUND, "not found");
    };
    let mut response = if accepts_gzip {
        let mut response = Response::new(gzip(&path, &body, gzipped));
        response
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        response
    } else {
        Response::new(Bytes::from(body))
    };
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control(&path)),
    );
    with_type(response, &path)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from_static(text.as_bytes()));
    *response.status_mut() = status;
    response
}

fn with_type(mut response: Response<Bytes>, path: &Path) -> Response<Bytes> {
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    // A MIME type is always a valid header value.
    if let Ok(value) = HeaderValue::from_str(mime.essence_str()) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

/// The gzip encoding of `path` (level 6, a static host's default), compressed once
/// (two first requests may both compress it; the lock is not held meanwhile).
fn gzip(path: &Path, body: &[u8], cache: &Gzipped) -> Bytes {
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
    let encoded = Bytes::from(encoder.finish().expect("gzip into memory"));
    cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(path.to_path_buf(), encoded.clone());
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
