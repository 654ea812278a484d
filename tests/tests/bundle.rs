//! A loose guard against accidents in what the playground downloads, not a target: the
//! page's module (the Yew UI, the editor and its highlighter) at most 360 KB gzip, and
//! everything a first visit fetches at most 1 MB gzip. What a student feels is time on
//! a real link, which `browser_budgets.rs` measures; these catch a dependency pulled in
//! by mistake. (The page's module is 325 KB: of its code, Yew 21%, the page's own views,
//! reducer, links and message decoding 22%, the lesson files' TOML parser 7%; the
//! lesson and example texts are most of its data. docs/performance.md has more.)
//!
//! The page must also hold none of the compiler, the simulator, the reference
//! interpreter or the grader: those are the worker's, and a page that linked them would
//! wait for code it never runs.
//!
//! `#[ignore]`d for plain `cargo test`: it needs `dist/` from `trunk build --release`,
//! which `cargo xtask test` runs first. Sizes are gzip at the highest level, as
//! `gzip -9` and static servers' precompression give.

use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;
use std::path::{Path, PathBuf};

const PAGE_MODULE_BYTES: u64 = 360_000;
const DOWNLOAD_BYTES: u64 = 1_000_000;

fn dist() -> PathBuf {
    std::env::var_os("TILESCOPE_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dist"))
}

fn gzipped_len(bytes: &[u8]) -> u64 {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(bytes).expect("gzip into memory");
    encoder.finish().expect("gzip into memory").len() as u64
}

/// Every file of `dir` (recursively) with its gzip size.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>, u64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            let bytes = std::fs::read(&path).expect("a readable file");
            let size = gzipped_len(&bytes);
            out.push((path, bytes, size));
        }
    }
    out
}

fn named<'a>(all: &'a [(PathBuf, Vec<u8>, u64)], prefix: &str) -> &'a (PathBuf, Vec<u8>, u64) {
    let found: Vec<_> = all
        .iter()
        .filter(|(p, _, _)| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with("_bg.wasm"))
        })
        .collect();
    assert_eq!(found.len(), 1, "one {prefix}*_bg.wasm in dist/: {found:?}");
    found[0]
}

#[test]
#[ignore = "needs dist/ from trunk build --release"]
fn two_modules_within_their_guards_and_the_page_holds_no_compiler() {
    let dir = dist();
    let all = files(&dir);
    let wasm: Vec<_> = all
        .iter()
        .filter(|(p, _, _)| p.extension().is_some_and(|x| x == "wasm"))
        .collect();
    assert_eq!(
        wasm.len(),
        2,
        "dist/ holds the page's and the worker's module"
    );
    let page = named(&all, "tilescope-page-");
    let worker = named(&all, "tilescope-worker-");
    // What a first visit fetches: the page and everything it loads before the first
    // result (the examples and the language reference load only on request).
    let download: u64 = all
        .iter()
        .filter(|(p, _, _)| {
            let reference = p.file_name().is_some_and(|n| n == "language.html");
            !reference
                && p.extension()
                    .is_some_and(|x| x == "wasm" || x == "js" || x == "css" || x == "html")
        })
        .map(|(_, _, size)| size)
        .sum();
    println!(
        "page module {} bytes, worker module {} bytes, first download {download} bytes (gzip -9)",
        page.2, worker.2
    );
    assert!(
        page.2 <= PAGE_MODULE_BYTES,
        "the page's module is {} bytes",
        page.2
    );
    assert!(
        download <= DOWNLOAD_BYTES,
        "a first visit downloads {download} bytes"
    );

    // Strings only the compiler, simulator, interpreter and grader print: the worker
    // has each, the page none.
    let markers = [
        // plan-memory's description (the compiler)
        "address every on-chip tile, reusing the space of dead tiles",
        // a check of the simulator
        "negative DMA extent or stride",
        // the reference interpreter
        "internal error in the reference interpreter",
        // the grader's checks
        "outputs, hidden inputs",
    ];
    let contains = |bytes: &[u8], s: &str| bytes.windows(s.len()).any(|w| w == s.as_bytes());
    for marker in markers {
        assert!(contains(&worker.1, marker), "the worker lacks {marker:?}");
        assert!(
            !contains(&page.1, marker),
            "the page's module holds {marker:?}"
        );
    }
    // The page holds the lesson track and sends a lesson with each grade request: the
    // worker has no lesson's texts.
    let lessons = tilescope::lesson::all().expect("the lesson track");
    for lesson in &lessons {
        // A run of the text that JSON (the track's form in the module) keeps verbatim.
        let probe: String = lesson
            .idea
            .chars()
            .take_while(|c| !matches!(c, '\n' | '"' | '\\'))
            .take(40)
            .collect();
        assert!(probe.len() >= 20, "lesson {}: {probe:?}", lesson.id);
        assert!(
            contains(&page.1, &probe),
            "the page lacks lesson {}",
            lesson.id
        );
        assert!(
            !contains(&worker.1, &probe),
            "the worker's module holds lesson {}'s texts",
            lesson.id
        );
    }
}
