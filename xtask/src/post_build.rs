//! `cargo xtask post-build`: Trunk's post-build hook (Trunk.toml). Trunk runs a stage's
//! hooks at once, and the service worker must list the files the other steps write, so
//! this one hook runs the steps in order on Trunk's staging directory:
//! 1. `hash_worker`: the compile worker's files get content-hashed names;
//! 2. `docs_html`: the language reference as `language.html`;
//! 3. `service_worker`: `sw.js`, which caches every file above for offline use.

use std::path::Path;

use crate::{docs_html, hash_worker, service_worker, Result};

pub fn run(root: &Path) -> Result<()> {
    let dir = std::env::var_os("TRUNK_STAGING_DIR")
        .ok_or("post-build runs as Trunk's post-build hook (TRUNK_STAGING_DIR is not set)")?;
    let dir = Path::new(&dir);
    hash_worker::hash_worker(dir)?;
    docs_html::write(root, dir)?;
    service_worker::write(dir)
}
