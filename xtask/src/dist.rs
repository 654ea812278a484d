//! `cargo xtask dist [--public-url URL]`: the static site in `dist/`, ready for any
//! static host. By default its files link each other by relative URLs (`./`), so the
//! same build works at the root of a host and under any path (`/org/tilescope/`);
//! `--public-url /path/` makes them absolute under that path instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tools::Tools;
use crate::{cmd, tools, Result};

/// Where the files link each other when no `--public-url` is given.
pub const RELATIVE: &str = "./";

pub fn run(root: &Path, args: &[&str]) -> Result<()> {
    let public_url = match args {
        [] => RELATIVE.to_string(),
        ["--public-url", url] => public_url(url)?,
        _ => return Err("usage: cargo xtask dist [--public-url /path/]".into()),
    };
    let tools = tools::ensure_build_tools(root)?;
    let mut command = build(&tools, root, &public_url);
    cmd::header(&cmd::describe(&command));
    cmd::run(&mut command)?;
    let dist = dist_dir(root);
    println!(
        "\nxtask: the site is in {} (public URL `{public_url}`): copy the folder's files \
         to the host as they are",
        dist.display()
    );
    Ok(())
}

/// `trunk build --release` with the site's public URL, into `dist/`.
pub fn build(tools: &Tools, root: &Path, public_url: &str) -> Command {
    build_into(tools, root, public_url, &dist_dir(root))
}

/// `trunk build --release` with the site's public URL, into `dir`.
pub fn build_into(tools: &Tools, root: &Path, public_url: &str, dir: &Path) -> Command {
    let mut command = tools.command("trunk");
    command
        .current_dir(root)
        .args(["build", "--release", "--public-url", public_url, "--dist"])
        .arg(dir);
    command
}

pub fn dist_dir(root: &Path) -> PathBuf {
    root.join("dist")
}

/// A public URL as Trunk takes it: `./`, or an absolute path ending in `/`. Anything
/// else (a full URL, a bare name Trunk would take as relative to the page) is refused
/// here rather than building a site that loads nothing.
fn public_url(url: &str) -> Result<String> {
    let ok = url == RELATIVE
        || (url.starts_with('/')
            && !url.contains("//")
            && url
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/-_.~".contains(&b)));
    if !ok {
        return Err(format!(
            "`{url}` is not a public URL: give `./` (the default: any path) or a path \
             such as `/org/tilescope/`"
        ));
    }
    Ok(if url.ends_with('/') {
        url.to_string()
    } else {
        format!("{url}/")
    })
}

#[cfg(test)]
mod tests {
    use super::public_url;

    #[test]
    fn public_urls_are_paths_ending_in_a_slash() {
        assert_eq!(public_url("./").as_deref(), Ok("./"));
        assert_eq!(
            public_url("/course/tilescope").as_deref(),
            Ok("/course/tilescope/")
        );
        assert_eq!(public_url("/").as_deref(), Ok("/"));
        for bad in ["https://x.org/", "course/", "/a//b/", "/a b/", "/<x>/"] {
            assert!(public_url(bad).is_err(), "{bad}");
        }
    }
}
