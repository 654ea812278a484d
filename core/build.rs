//! Reads the lesson track (`static/lessons/*.toml`, in file-name order) at build time,
//! so a malformed lesson file fails the build with its name and nothing that ships
//! parses TOML. `src/lesson/mod.rs` reads the result back.

use std::path::Path;
use tilescope_lesson_schema::Lesson;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../static/lessons");
    println!("cargo::rerun-if-changed={}", dir.display());
    match read_track(&dir) {
        Ok(json) => {
            let Ok(dir) = std::env::var("OUT_DIR") else {
                fail("cargo did not set OUT_DIR for the build script")
            };
            let out = Path::new(&dir).join("lessons.json");
            if let Err(e) = std::fs::write(&out, json) {
                fail(&format!("cannot write {}: {e}", out.display()));
            }
        }
        Err(e) => fail(&e),
    }
}

fn fail(message: &str) -> ! {
    println!("cargo::error=static/lessons/{message}");
    std::process::exit(1);
}

/// Every lesson file, numbered in track order, as a JSON array.
fn read_track(dir: &Path) -> Result<String, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!(": {e}"))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!(": {e}"))?.path();
        println!("cargo::rerun-if-changed={}", path.display());
        if path.extension().is_some_and(|x| x == "toml") {
            files.push(path);
        }
    }
    files.sort();
    let mut track = Vec::new();
    for path in files {
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| format!("{}: not a UTF-8 file name", path.display()))?;
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{id}.toml: {e}"))?;
        let mut lesson = Lesson::parse(id, &text)?;
        lesson.number = track.len() + 1;
        track.push(lesson);
    }
    serde_json::to_string(&track).map_err(|e| format!("cannot encode the track: {e}"))
}
