//! `cargo xtask serve`: the playground on http://127.0.0.1:8080, rebuilt on change.

use std::path::Path;

use crate::{cmd, tools, Result};

pub fn run(root: &Path) -> Result<()> {
    let tools = tools::ensure_build_tools(root)?;
    // Address and port come from Trunk.toml's [serve] section.
    let mut command = tools.command("trunk");
    command.current_dir(root).args(["serve", "--release"]);
    cmd::header(&format!(
        "{}: http://127.0.0.1:8080 (Ctrl-C stops)",
        cmd::describe(&command)
    ));
    cmd::run(&mut command)
}
