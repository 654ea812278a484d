//! The browser tests' file server (`support/static_server.rs`) against what a browser
//! does on a first visit: several connections at once while others stay open. A
//! connection the server accepts but never reads stalls a page load with no error
//! anywhere, which is how the server's previous HTTP crate failed now and then.

// This file uses the server alone, not the browser harness around it.
#[allow(dead_code)]
#[path = "support/static_server.rs"]
mod static_server;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{ensure, Context, Result};

use static_server::StaticServer;

/// Sends one keep-alive GET for `path` and reads its response's status line and
/// headers, failing after `wait`.
fn get(stream: &mut TcpStream, path: &str, wait: Duration) -> Result<String> {
    stream.set_read_timeout(Some(wait))?;
    // One write, as a browser sends a request.
    stream.write_all(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream
            .read(&mut byte)
            .with_context(|| format!("no response to GET {path} within {wait:?}"))?;
        ensure!(n == 1, "the connection closed before answering GET {path}");
        head.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

#[test]
fn every_connection_is_answered_while_others_stay_open() -> Result<()> {
    let root = tempfile::tempdir()?;
    std::fs::write(root.path().join("index.html"), "<!doctype html>")?;
    let wait = Duration::from_secs(5);
    for round in 0..20 {
        let server = StaticServer::start(root.path())?;
        let addr = server.url().trim_start_matches("http://").to_string();
        // Kept-alive connections the browser holds, as after a page's first requests.
        let mut held = Vec::new();
        for _ in 0..3 {
            let mut stream = TcpStream::connect(&addr)?;
            get(&mut stream, "/", wait)?;
            held.push(stream);
        }
        // Then two new connections at once, each with a request.
        let mut first = TcpStream::connect(&addr)?;
        let mut second = TcpStream::connect(&addr)?;
        for (name, stream) in [("first", &mut first), ("second", &mut second)] {
            let head = get(stream, "/index.html", wait)
                .with_context(|| format!("round {round}, the {name} new connection"))?;
            ensure!(head.starts_with("HTTP/1.1 200"), "round {round}: {head}");
        }
        // And the held ones still serve their next request.
        for stream in &mut held {
            get(stream, "/", wait).with_context(|| format!("round {round}, a held connection"))?;
        }
    }
    Ok(())
}
