//! The playground's download stays within its budget: the release build's wasm and
//! JavaScript, each gzipped at the highest level (as `gzip -9` and static servers do),
//! at most 550 KB (550,000 bytes) in total. `#[ignore]`d for plain `cargo test`: it
//! needs `dist/` from `trunk build --release`, which `cargo xtask test` runs first.
//!
//! The budget was 500 KB until the language gained masks and explicit multi-buffers and
//! the back end relayout and spills: the playground compiles the same language as the
//! command line, so those cannot be left out of its build, and together they cost
//! 27.4 KB (docs/performance.md, "The bundle: where the bytes are"). It was 530 KB until
//! L1-resident pieces and blocks in subtile-matmul and event-id recycling in insert-sync
//! added 14.8 KB more, and 540 KB until blocks of an accumulator carried across a loop
//! (with its column strips) and the reasons a product stays whole added 6.3 KB. 550 KB
//! holds them with a little room; what would take bytes off is listed there.

use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;
use std::path::PathBuf;

const BUDGET_BYTES: u64 = 550_000;

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

#[test]
#[ignore = "needs dist/ from trunk build --release"]
fn the_release_bundle_is_within_its_gzip_budget() {
    let dir = dist();
    let mut total = 0;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|x| x == "wasm" || x == "js") {
            let size = gzipped_len(&std::fs::read(&path).expect("a readable file"));
            files.push(format!("{}: {size} bytes", path.display()));
            total += size;
        }
    }
    assert!(
        files.iter().any(|f| f.contains(".wasm")),
        "no wasm module in {}",
        dir.display()
    );
    println!("bundle, gzip -9: {total} bytes\n{}", files.join("\n"));
    assert!(
        total <= BUDGET_BYTES,
        "the bundle is {total} bytes gzipped, over the {BUDGET_BYTES}-byte budget:\n{}",
        files.join("\n")
    );
}
