//! The example kernels shipped with the playground, for tests that run all of them.

use std::path::{Path, PathBuf};

/// Every `static/examples/*.tile`, sorted by name.
pub fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../static/examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("static/examples exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "tile"))
        .collect();
    files.sort();
    files
}
