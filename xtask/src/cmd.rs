//! Running external commands with a visible header and a clear failure message.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Result;

/// Prints a step header that stands out in a long CI log.
pub fn header(title: &str) {
    println!("\n==> {title}");
}

/// A command line that can be shown to the user exactly as it runs.
pub fn describe(command: &Command) -> String {
    let mut parts = vec![command.get_program().to_string_lossy().into_owned()];
    parts.extend(
        command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned()),
    );
    parts.join(" ")
}

/// Runs `command` with inherited output; fails when it cannot start or exits non-zero.
pub fn run(command: &mut Command) -> Result<()> {
    let line = describe(command);
    let status = command
        .status()
        .map_err(|err| format!("could not start `{line}`: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{line}` failed ({status})"))
    }
}

/// Runs `command` and returns its stdout and stderr together, or `None` when it
/// cannot start or fails: used to probe tool versions.
pub fn probe(command: &mut Command) -> Option<String> {
    let output = command.stdin(Stdio::null()).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Some(text)
}

/// `PATH` with `dirs` in front, so the tools xtask installed win over any others.
pub fn path_with(dirs: &[&Path]) -> OsString {
    let existing = std::env::var_os("PATH").unwrap_or_default();
    let all = dirs
        .iter()
        .map(|dir| dir.to_path_buf())
        .chain(std::env::split_paths(&existing));
    std::env::join_paths(all).unwrap_or(existing)
}

/// Formats a duration as `1m 05s` or `4.2s`.
pub fn format_duration(elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    if secs >= 60.0 {
        let whole = elapsed.as_secs();
        format!("{}m {:02}s", whole / 60, whole % 60)
    } else {
        format!("{secs:.1}s")
    }
}

/// Measures how long `f` takes.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}
