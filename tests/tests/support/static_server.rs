//! Serves a directory over HTTP on 127.0.0.1 from a background thread, so the
//! browser test needs nothing but the Trunk output. `tiny_http` keeps it to a few
//! lines; `mime_guess` gives `.wasm` its `application/wasm` type, which
//! `WebAssembly.instantiateStreaming` requires.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{anyhow, Result};
use tiny_http::{Header, Response, Server};

pub struct StaticServer {
    server: Arc<Server>,
    thread: Option<JoinHandle<()>>,
    port: u16,
}

impl StaticServer {
    pub fn start(root: &Path) -> Result<Self> {
        let server = Server::http("127.0.0.1:0")
            .map_err(|err| anyhow!("starting the static file server: {err}"))?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|addr| addr.port())
            .ok_or_else(|| anyhow!("static file server has no IP address"))?;
        let server = Arc::new(server);
        let root = root.to_path_buf();
        let thread = {
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                for request in server.incoming_requests() {
                    let response = respond(&root, request.url());
                    // A client that went away is not the test's concern.
                    let _ = request.respond(response);
                }
            })
        };
        Ok(Self {
            server,
            thread: Some(thread),
            port,
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
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

fn respond(root: &Path, url: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    let Some(path) = resolve(root, url) else {
        return Response::from_string("forbidden").with_status_code(403);
    };
    match std::fs::read(&path) {
        Ok(body) => {
            let mime = mime_guess::from_path(&path).first_or_octet_stream();
            let mut response = Response::from_data(body);
            if let Ok(header) = Header::from_bytes("Content-Type", mime.essence_str()) {
                response = response.with_header(header);
            }
            response
        }
        Err(_) => Response::from_string("not found").with_status_code(404),
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
