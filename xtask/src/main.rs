//! The project's two commands:
//!
//! - `cargo xtask serve`: install the tools if needed, then serve the playground on
//!   <http://127.0.0.1:8080> with `trunk serve --release`.
//! - `cargo xtask test`: install the tools if needed, then run every check CI runs,
//!   failing fast.
//!
//! And `cargo xtask dist [--public-url /path/]` builds the static site to publish.
//!
//! Only std and pulldown-cmark (for the language reference page) are used, so this
//! builds in seconds on a fresh machine.

mod cmd;
mod dist;
mod docs_html;
mod hash_worker;
mod post_build;
mod serve;
mod service_worker;
mod test;
mod tools;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// An error message for the user; xtask prints it and exits non-zero.
type Result<T> = std::result::Result<T, String>;

const USAGE: &str = "usage: cargo xtask <serve|test|dist>
  serve   serve the playground on http://127.0.0.1:8080 (release build)
  dist    build the static site into dist/ (--public-url /path/; default: any path)
  test    formatting, lints, unit, wasm and browser tests
  (post-build is Trunk's post-build hook; Trunk.toml runs it)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["serve"] => serve::run(&workspace_root()),
        ["dist", rest @ ..] => dist::run(&workspace_root(), rest),
        ["post-build"] => post_build::run(&workspace_root()),
        ["test"] => test::run(&workspace_root()),
        ["help" | "--help" | "-h"] => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(USAGE.to_string()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("\nxtask: error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// xtask lives in `<root>/xtask`.
fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}
