//! The first step of the post-build hook (`post_build.rs`): the compile worker's files
//! get content-hashed names, as Trunk gives the page's.
//!
//! Trunk names a `data-type="worker"` build after its binary alone
//! (`tilescope-worker.js`, `tilescope-worker_bg.wasm`) because a worker is spawned by
//! name at run time. Behind a cache, two deploys could then mix one build's page with
//! another's worker, whose messages no longer match. This renames both files to
//! `tilescope-worker-HASH.js` / `tilescope-worker-HASH_bg.wasm` (one hash of both, so
//! the pair always changes together; the page derives the module's name from the
//! script's) and points index.html at them: its `<meta name="tilescope-worker">`, which
//! index.html starts the worker from.

use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

use crate::Result;

const STEM: &str = "tilescope-worker";
const META: &str = r#"<meta name="tilescope-worker" content="tilescope-worker.js">"#;

/// Renames the worker's files in `dir` (Trunk's staging directory).
pub fn hash_worker(dir: &Path) -> Result<()> {
    let js = dir.join(format!("{STEM}.js"));
    let wasm = dir.join(format!("{STEM}_bg.wasm"));
    let html = dir.join("index.html");
    let (js_bytes, wasm_bytes) = (read(&js)?, read(&wasm)?);
    let name = format!("{STEM}-{}", content_hash(&[&js_bytes, &wasm_bytes]));
    let page =
        String::from_utf8(read(&html)?).map_err(|_| format!("{} is not UTF-8", html.display()))?;
    if page.matches(META).count() != 1 {
        return Err(format!(
            "{} must hold `{META}` exactly once for the worker's hashed name",
            html.display()
        ));
    }
    // Quoted, so only whole attribute values are renamed.
    let page = page
        .replace(&format!("\"{STEM}.js\""), &format!("\"{name}.js\""))
        .replace(
            &format!("\"{STEM}_bg.wasm\""),
            &format!("\"{name}_bg.wasm\""),
        );
    rename(&js, &dir.join(format!("{name}.js")))?;
    rename(&wasm, &dir.join(format!("{name}_bg.wasm")))?;
    std::fs::write(&html, page).map_err(|err| format!("writing {}: {err}", html.display()))?;
    println!("hash-worker: {STEM}.js and {STEM}_bg.wasm are now {name}.*");
    Ok(())
}

/// 16 hex digits over `parts`. std's SipHash, like Trunk's 64-bit hash of the page's
/// files, is for telling builds apart, not for security; a new Rust release may hash
/// differently, which only renames the files once more.
fn content_hash(parts: &[&[u8]]) -> String {
    let mut hasher = DefaultHasher::new();
    for part in parts {
        hasher.write_usize(part.len());
        hasher.write(part);
    }
    format!("{:016x}", hasher.finish())
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|err| format!("reading {}: {err}", path.display()))
}

fn rename(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to)
        .map_err(|err| format!("renaming {} to {}: {err}", from.display(), to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staged(html: &str) -> tempdir::Dir {
        let dir = tempdir::Dir::new();
        std::fs::write(dir.path().join("tilescope-worker.js"), "glue").expect("scratch file");
        std::fs::write(dir.path().join("tilescope-worker_bg.wasm"), "module")
            .expect("scratch file");
        std::fs::write(dir.path().join("index.html"), html).expect("scratch file");
        dir
    }

    /// A scratch directory removed on drop (xtask uses std only).
    mod tempdir {
        use std::path::{Path, PathBuf};

        pub struct Dir(PathBuf);

        impl Dir {
            pub fn new() -> Dir {
                static NEXT: std::sync::atomic::AtomicUsize =
                    std::sync::atomic::AtomicUsize::new(0);
                let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let dir = std::env::temp_dir()
                    .join(format!("xtask-hash-worker-{}-{n}", std::process::id()));
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).expect("scratch directory");
                Dir(dir)
            }

            pub fn path(&self) -> &Path {
                &self.0
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn renames_both_files_and_points_the_page_at_the_script() {
        let preload = r#"<link rel="preload" href="tilescope-worker_bg.wasm" as="fetch">"#;
        let dir = staged(&format!("<head>{META}{preload}</head>"));
        assert_eq!(hash_worker(dir.path()), Ok(()));
        let page = std::fs::read_to_string(dir.path().join("index.html")).expect("scratch file");
        let hash = content_hash(&[b"glue", b"module"]);
        assert_eq!(
            page,
            format!(
                r#"<head><meta name="tilescope-worker" content="tilescope-worker-{hash}.js"><link rel="preload" href="tilescope-worker-{hash}_bg.wasm" as="fetch"></head>"#
            )
        );
        assert!(dir
            .path()
            .join(format!("tilescope-worker-{hash}.js"))
            .is_file());
        assert!(dir
            .path()
            .join(format!("tilescope-worker-{hash}_bg.wasm"))
            .is_file());
        assert!(!dir.path().join("tilescope-worker.js").exists());
    }

    #[test]
    fn a_page_without_the_tag_is_an_error_and_nothing_is_renamed() {
        let dir = staged("<head></head>");
        assert!(hash_worker(dir.path()).is_err_and(|e| e.contains("exactly once")));
        assert!(dir.path().join("tilescope-worker.js").is_file());
    }

    #[test]
    fn the_hash_changes_with_either_file() {
        let a = content_hash(&[b"glue", b"module"]);
        assert_ne!(a, content_hash(&[b"glue", b"module2"]));
        assert_ne!(a, content_hash(&[b"glue2", b"module"]));
        // Lengths are hashed: moving a byte from one file to the other changes it too.
        assert_ne!(content_hash(&[b"ab", b"c"]), content_hash(&[b"a", b"bc"]));
        assert_eq!(a.len(), 16);
    }
}
