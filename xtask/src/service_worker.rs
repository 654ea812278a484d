//! The site's service worker, `sw.js`: the last step of the post-build hook, once every
//! other file of the build is in place. It lists every file of the build and names its
//! cache after a hash of them all, so a new deploy gets a new cache and the browser
//! never mixes two builds (`service_worker.js` says how it serves them).

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

use crate::Result;

/// The worker's name in the built site; index.html registers it.
pub const TARGET: &str = "sw.js";
const TEMPLATE: &str = include_str!("service_worker.js");

/// Writes `sw.js` into `dir`, listing every other file under it.
pub fn write(dir: &Path) -> Result<()> {
    let mut files = Vec::new();
    list(dir, dir, &mut files)?;
    files.retain(|(name, _)| name != TARGET);
    files.sort();
    let build = build_id(&files);
    let script = script(&build, files.iter().map(|(name, _)| name.as_str()));
    let out = dir.join(TARGET);
    std::fs::write(&out, script).map_err(|e| format!("writing {}: {e}", out.display()))?;
    println!(
        "service-worker: {TARGET} caches {} files as build {build}",
        files.len()
    );
    Ok(())
}

/// The script for `build`, caching `files` (paths relative to the site's folder).
fn script<'a>(build: &str, files: impl Iterator<Item = &'a str>) -> String {
    // A JSON array of strings: the names are UTF-8 paths, escaped as JSON strings are.
    let list = files
        .map(|name| format!("  \"{}\"", json_escape(name)))
        .collect::<Vec<_>>()
        .join(",\n");
    TEMPLATE
        .replace("__BUILD__", build)
        .replace("__FILES__", &format!("[\n{list}\n]"))
}

/// Every file under `dir` as (its path relative to `root` with `/`, its bytes).
fn list(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for entry in entries {
        let path: PathBuf = entry
            .map_err(|e| format!("reading {}: {e}", dir.display()))?
            .path();
        if path.is_dir() {
            list(root, &path, out)?;
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .map_err(|_| format!("{} is outside {}", path.display(), root.display()))?;
        let name = relative
            .components()
            .map(|c| c.as_os_str().to_str())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("{} is not a UTF-8 path", relative.display()))?
            .join("/");
        let bytes = std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        out.push((name, bytes));
    }
    Ok(())
}

/// 16 hex digits over every name and its bytes (std's SipHash, as hash-worker's: it
/// tells builds apart and is not for security).
fn build_id(files: &[(String, Vec<u8>)]) -> String {
    let mut hasher = DefaultHasher::new();
    for (name, bytes) in files {
        hasher.write_usize(name.len());
        hasher.write(name.as_bytes());
        hasher.write_usize(bytes.len());
        hasher.write(bytes);
    }
    format!("{:016x}", hasher.finish())
}

fn json_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_lists_the_files_and_the_build() {
        let script = script("0123", ["index.html", "examples/a \"b\".tile"].into_iter());
        assert!(script.contains("const BUILD = \"0123\";"));
        assert!(script
            .contains("const FILES = [\n  \"index.html\",\n  \"examples/a \\\"b\\\".tile\"\n];"));
        assert!(!script.contains("__"));
    }

    #[test]
    fn the_build_changes_with_any_name_or_byte() {
        let files = |name: &str, bytes: &[u8]| vec![(name.to_string(), bytes.to_vec())];
        let a = build_id(&files("a.js", b"1"));
        assert_ne!(a, build_id(&files("a.js", b"2")));
        assert_ne!(a, build_id(&files("b.js", b"1")));
        assert_eq!(a, build_id(&files("a.js", b"1")));
    }
}
