//! Makes sure the build and test tools are installed at the versions the project
//! pins, installing only what is missing or wrong. Everything comes from the
//! package registries (crates.io, npm, Debian): Trunk itself never downloads.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd;
use crate::Result;

pub const WASM_TARGET: &str = "wasm32-unknown-unknown";
const TRUNK_VERSION: &str = "0.21.14";
/// binaryen's npm package ships a working `wasm-opt`; Debian's is too old to read
/// current Rust wasm output (reference types).
const BINARYEN_VERSION: &str = "132.0.0";
/// axe-core, the accessibility checker the browser tests run in the page.
const AXE_VERSION: &str = "4.14.1";
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Where the tools live; child processes get these first on `PATH`.
pub struct Tools {
    cargo_bin: PathBuf,
    binaryen_bin: PathBuf,
}

impl Tools {
    /// `PATH` for child processes: installed tools first.
    pub fn path(&self) -> OsString {
        cmd::path_with(&[&self.binaryen_bin, &self.cargo_bin])
    }

    /// A command for `program` that sees the installed tools first on `PATH`.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.resolve(program));
        command.env("PATH", self.path());
        command
    }

    /// The full path of `program` as found on [`Tools::path`], so the process we
    /// start is the one whose version was checked.
    fn resolve(&self, program: &str) -> PathBuf {
        std::env::split_paths(&self.path())
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
            .unwrap_or_else(|| PathBuf::from(program))
    }

    /// Whether `program --version` mentions `version` as a whole word.
    fn has_version(&self, program: &str, version: &str) -> bool {
        cmd::probe(self.command(program).arg("--version")).is_some_and(|out| {
            out.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
                .any(|word| word == version || word.strip_prefix('v') == Some(version))
        })
    }
}

/// Ensures the wasm target, wasm-bindgen-cli, Trunk and wasm-opt, and that
/// Trunk.toml pins the same versions.
pub fn ensure_build_tools(root: &Path) -> Result<Tools> {
    cmd::header("tools: wasm target, wasm-bindgen-cli, trunk, wasm-opt");
    let tools = Tools {
        cargo_bin: cargo_home().join("bin"),
        binaryen_bin: binaryen_dir().join("node_modules").join(".bin"),
    };
    let wasm_bindgen = wasm_bindgen_in_lock(root)?;
    check_trunk_toml(root, &wasm_bindgen)?;
    ensure_wasm_target(&tools)?;
    ensure_cargo_tool(
        &tools,
        "wasm-bindgen",
        "wasm-bindgen-cli",
        &wasm_bindgen,
        false,
    )?;
    ensure_cargo_tool(&tools, "trunk", "trunk", TRUNK_VERSION, true)?;
    ensure_wasm_opt(&tools)?;
    Ok(tools)
}

/// Ensures Debian's Chromium and its matching chromedriver.
pub fn ensure_browser() -> Result<()> {
    cmd::header("tools: chromium, chromedriver");
    if Path::new(CHROMIUM).is_file() && Path::new(CHROMEDRIVER).is_file() {
        println!("chromium and chromedriver present");
        return Ok(());
    }
    cmd::run(Command::new("apt-get").arg("update"))?;
    cmd::run(
        Command::new("apt-get")
            .args(["install", "-y", "chromium", "chromium-driver"])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
    .map_err(|err| format!("{err}; Chromium is installed with apt-get (run as root)"))
}

/// axe-core from npm, for the browser tests' accessibility checks: the path of its
/// `axe.min.js` (the tests read it from `TILESCOPE_AXE`).
pub fn ensure_axe() -> Result<PathBuf> {
    cmd::header(&format!("tools: axe-core@{AXE_VERSION}"));
    let dir = home().join(".local/share/tilescope/tools/axe");
    let package = dir.join("node_modules").join("axe-core");
    let script = package.join("axe.min.js");
    let installed = std::fs::read_to_string(package.join("package.json"))
        .is_ok_and(|json| json.contains(&format!("\"version\": \"{AXE_VERSION}\"")));
    if installed && script.is_file() {
        println!("axe-core {AXE_VERSION}: present");
        return Ok(script);
    }
    std::fs::create_dir_all(&dir).map_err(|err| format!("creating {}: {err}", dir.display()))?;
    cmd::run(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(format!("axe-core@{AXE_VERSION}")),
    )?;
    if script.is_file() {
        Ok(script)
    } else {
        Err(format!(
            "installed axe-core@{AXE_VERSION}, but {} is missing",
            script.display()
        ))
    }
}

fn ensure_wasm_target(tools: &Tools) -> Result<()> {
    let installed = cmd::probe(
        tools
            .command("rustup")
            .args(["target", "list", "--installed"]),
    )
    .is_some_and(|out| out.lines().any(|line| line.trim() == WASM_TARGET));
    if installed {
        println!("{WASM_TARGET}: present");
        return Ok(());
    }
    cmd::run(tools.command("rustup").args(["target", "add", WASM_TARGET]))
}

/// `cargo install`s `krate` unless `binary --version` already reports `version`.
fn ensure_cargo_tool(
    tools: &Tools,
    binary: &str,
    krate: &str,
    version: &str,
    locked: bool,
) -> Result<()> {
    if tools.has_version(binary, version) {
        println!("{binary} {version}: present");
        return Ok(());
    }
    println!("{binary} {version}: installing {krate} (takes minutes)");
    let mut install = tools.command("cargo");
    install.args(["install", krate, "--version", version]);
    // `--force` replaces a binary of another version or one cargo did not install.
    install.arg("--force");
    if locked {
        install.arg("--locked");
    }
    cmd::run(&mut install)?;
    if tools.has_version(binary, version) {
        Ok(())
    } else {
        Err(format!(
            "installed {krate} {version}, but `{binary} --version` disagrees"
        ))
    }
}

fn ensure_wasm_opt(tools: &Tools) -> Result<()> {
    let version = wasm_opt_version();
    if tools.has_version("wasm-opt", &version) {
        println!("wasm-opt {version}: present");
        return Ok(());
    }
    println!("wasm-opt {version}: installing binaryen@{BINARYEN_VERSION} from npm");
    let dir = binaryen_dir();
    std::fs::create_dir_all(&dir).map_err(|err| format!("creating {}: {err}", dir.display()))?;
    cmd::run(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(format!("binaryen@{BINARYEN_VERSION}")),
    )?;
    if tools.has_version("wasm-opt", &version) {
        Ok(())
    } else {
        Err(format!(
            "installed binaryen@{BINARYEN_VERSION}, but wasm-opt does not report {version}"
        ))
    }
}

/// How wasm-opt (and Trunk.toml) name the binaryen release: `version_132`.
fn wasm_opt_version() -> String {
    let major = BINARYEN_VERSION
        .split('.')
        .next()
        .unwrap_or(BINARYEN_VERSION);
    format!("version_{major}")
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cargo"))
}

fn binaryen_dir() -> PathBuf {
    home().join(".local/share/tilescope/tools/binaryen")
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
}

/// The `wasm-bindgen` version Cargo.lock resolved; the CLI must match it exactly.
fn wasm_bindgen_in_lock(root: &Path) -> Result<String> {
    let lock = read(&root.join("Cargo.lock"))?;
    // Cargo.lock lists `name = "..."` then `version = "..."` for each package; a TOML
    // parser would be a dependency for two lines of lookup.
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == r#"name = "wasm-bindgen""# {
            if let Some(version) = lines.next().and_then(|next| quoted_value(next, "version")) {
                return Ok(version);
            }
        }
    }
    Err("Cargo.lock has no wasm-bindgen package".to_string())
}

/// Fails when Trunk.toml's pinned tool versions drift from what xtask installs.
fn check_trunk_toml(root: &Path, wasm_bindgen: &str) -> Result<()> {
    let path = root.join("Trunk.toml");
    let trunk_toml = read(&path)?;
    let pinned = |key: &str| trunk_toml.lines().find_map(|line| quoted_value(line, key));
    let expected = [
        ("wasm_bindgen", wasm_bindgen.to_string()),
        ("wasm_opt", wasm_opt_version()),
    ];
    for (key, want) in expected {
        match pinned(key) {
            Some(found) if found == want => {}
            Some(found) => {
                return Err(format!(
                    "{}: [tools] {key} = \"{found}\" but the project uses \"{want}\" \
                     (wasm_bindgen must equal the wasm-bindgen version in Cargo.lock); \
                     update Trunk.toml",
                    path.display()
                ))
            }
            None => return Err(format!("{}: [tools] {key} is missing", path.display())),
        }
    }
    Ok(())
}

/// The string value of `key = "value"` on `line`, if that is what the line holds.
fn quoted_value(line: &str, key: &str) -> Option<String> {
    let (name, value) = line.split_once('=')?;
    if name.trim() != key {
        return None;
    }
    let value = value.split('#').next()?.trim();
    Some(value.strip_prefix('"')?.strip_suffix('"')?.to_string())
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|err| format!("reading {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_value_reads_only_the_named_key() {
        assert_eq!(
            quoted_value(r#"wasm_bindgen = "0.2.130"  # pinned"#, "wasm_bindgen").as_deref(),
            Some("0.2.130")
        );
        assert_eq!(
            quoted_value(r#"wasm_opt = "version_132""#, "wasm_bindgen"),
            None
        );
        assert_eq!(quoted_value("offline = true", "offline"), None);
    }

    #[test]
    fn lock_and_trunk_toml_agree() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap_or(Path::new(".."));
        let version = wasm_bindgen_in_lock(root).unwrap_or_default();
        assert!(
            version.starts_with("0.2."),
            "wasm-bindgen in Cargo.lock: {version:?}"
        );
        assert_eq!(check_trunk_toml(root, &version), Ok(()));
        assert!(check_trunk_toml(root, "0.0.1").is_err_and(|err| err.contains("wasm_bindgen")));
    }

    #[test]
    fn wasm_opt_version_is_named_like_binaryen_releases() {
        assert_eq!(wasm_opt_version(), "version_132");
    }
}
