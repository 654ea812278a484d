//! The `tilescope` command line, run as a user would: exit codes, output formats,
//! diagnostics with carets, and .npy files in and out.

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn examples() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("static/examples"))
        .expect("examples directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "tile"))
        .collect();
    files.sort();
    files
}

fn tilescope() -> Command {
    Command::cargo_bin("tilescope").expect("the tilescope binary is built")
}

/// What `tilescope ARGS FILE` prints as JSON (`ARGS` holding `--json`).
fn json_of(args: &[&str], file: &Path) -> serde_json::Value {
    let out = tilescope()
        .args(args)
        .arg(file)
        .output()
        .expect("tilescope runs");
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// A scratch directory unique to one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tilescope-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write scratch file");
    path
}

#[test]
fn compile_prints_a_named_section_per_pass_for_every_example() {
    for path in examples() {
        let out = tilescope()
            .arg("compile")
            .arg(&path)
            .arg("--emit")
            .arg("passes")
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        for pass in ["parse", "canonicalize"] {
            assert!(
                text.contains(&format!("=== after {pass} ===\n")),
                "{}: no {pass} section",
                path.display()
            );
        }
    }
}

#[test]
fn compile_json_is_the_serialised_result() {
    let out = tilescope()
        .args(["compile", "--emit", "json"])
        .arg(repo().join("static/examples/softmax.tile"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["kernel"], "softmax");
    assert!(v["passes"].as_array().is_some_and(|p| p.len() >= 2));
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(0));
}

#[test]
fn run_writes_npy_outputs_for_every_example() {
    let dir = scratch("run");
    for path in examples() {
        let source = std::fs::read_to_string(&path).expect("source");
        let kernel = tilescope::front::frontend(&source, None).expect("example checks");
        let out_param = kernel
            .params
            .iter()
            .find(|p| p.is_out)
            .expect("an out parameter");
        let file = dir.join(format!("{}.npy", out_param.name));
        tilescope()
            .arg("run")
            .arg(&path)
            .arg("--output")
            .arg(format!("{}={}", out_param.name, file.display()))
            .assert()
            .success();
        let tensor = tilescope::npy::read(&std::fs::read(&file).expect("output written"))
            .expect("valid npy");
        assert_eq!(tensor.shape, out_param.ty.shape, "{}", path.display());
        assert_eq!(tensor.dtype, out_param.ty.dtype, "{}", path.display());
    }
}

#[test]
fn run_takes_inputs_from_npy_and_is_deterministic_without_them() {
    let dir = scratch("inputs");
    let kernel = write(&dir, "scale.tile", "kernel scale(x: f32[2, 3], y: out f32[2, 3]) {\n    store y[:, :] = load x[:, :] * 2.0;\n}\n");
    let x = tilescope::tensor::Tensor::from_f32(
        tilescope::types::DType::F32,
        vec![2, 3],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    );
    let x_path = dir.join("x.npy");
    std::fs::write(&x_path, tilescope::npy::write(&x)).expect("write x");
    let y_path = dir.join("y.npy");
    tilescope()
        .arg("run")
        .arg(&kernel)
        .arg("--input")
        .arg(format!("x={}", x_path.display()))
        .arg("--output")
        .arg(format!("y={}", y_path.display()))
        .assert()
        .success();
    let y = tilescope::npy::read(&std::fs::read(&y_path).expect("y")).expect("npy");
    assert_eq!(y.to_f32_vec(), vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);

    let seeded = |seed: &str, name: &str| {
        let p = dir.join(name);
        tilescope()
            .arg("run")
            .arg(&kernel)
            .args(["--seed", seed, "--output"])
            .arg(format!("y={}", p.display()))
            .assert()
            .success();
        std::fs::read(p).expect("output")
    };
    assert_eq!(seeded("7", "a.npy"), seeded("7", "b.npy"));
    assert_ne!(seeded("7", "a.npy"), seeded("8", "c.npy"));
}

/// Each bad-input class gives a located error and exit code 1, never a panic (101).
#[test]
fn bad_kernels_give_located_errors_and_exit_1() {
    let dir = scratch("bad");
    let cases = [
        ("syntax.tile", "kernel k(x: f32[4]) {\n    let = 3;\n}\n", "syntax.tile:2:9: error:"),
        ("unknown.tile", "kernel k(x: f32[4], y: out f32[4]) {\n    store y[:] = load q[:];\n}\n", "unknown"),
        ("shape.tile", "kernel k(x: f32[4, 8], y: out f32[4, 4]) {\n    store y[:, :] = load x[:, :];\n}\n", "shape"),
        ("store_input.tile", "kernel k(x: f32[4]) {\n    store x[:] = zeros(f32[4]);\n}\n", "out"),
        ("extent.tile", "kernel k(x: f32[64], y: out f32[64]) {\n    for i in 0..8 {\n        store y[i .. 2 * i + 1] = load x[i .. 2 * i + 1];\n    }\n}\n", "constant"),
        ("limit.tile", "kernel k(x: f32[100000, 100000]) {\n}\n", "limit"),
        ("slot.tile", "kernel k(x: f32[8, 4], y: out f32[8, 4]) {\n    let b = buffers(f32[8, 4], 2);\n    b[0] = load x[:, :];\n    store y[:, :] = b[1];\n}\n", "slot.tile:4:21: error: slot 1 of `b` is read before any statement writes it"),
        ("slots.tile", "kernel k(x: f32[8, 4]) {\n    let b = buffers(f32[8, 4], 17);\n}\n", "2 to 16"),
    ];
    for (name, text, expected) in cases {
        let path = write(&dir, name, text);
        let out = tilescope()
            .arg("compile")
            .arg(&path)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(err.contains(expected), "{name}: {err}");
        assert!(err.contains('^'), "{name}: no caret in {err}");
        assert!(
            err.contains(&format!("{name}:")),
            "{name}: no file:line:col in {err}"
        );
    }
}

#[test]
fn wrong_npy_inputs_name_the_parameter() {
    let dir = scratch("npy");
    let kernel = write(
        &dir,
        "k.tile",
        "kernel k(x: f32[2, 3], y: out f32[2, 3]) {\n    store y[:, :] = load x[:, :];\n}\n",
    );
    let wrong_shape = tilescope::tensor::Tensor::zeros(tilescope::types::DType::F32, vec![3, 2]);
    let wrong_dtype = tilescope::tensor::Tensor::zeros(tilescope::types::DType::I32, vec![2, 3]);
    for (file, tensor) in [("shape.npy", wrong_shape), ("dtype.npy", wrong_dtype)] {
        let p = dir.join(file);
        std::fs::write(&p, tilescope::npy::write(&tensor)).expect("write");
        tilescope()
            .arg("run")
            .arg(&kernel)
            .arg("--input")
            .arg(format!("x={}", p.display()))
            .assert()
            .code(1)
            .stderr(predicate::str::contains("`x`"));
    }
    let garbage = write(&dir, "garbage.npy", "not a numpy file");
    tilescope()
        .arg("run")
        .arg(&kernel)
        .arg("--input")
        .arg(format!("x={}", garbage.display()))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("x="));
    tilescope()
        .arg("compile")
        .arg(dir.join("missing.tile"))
        .assert()
        .code(1);
}

#[test]
fn machine_json_round_trips_through_a_preset_file() {
    let dir = scratch("machine");
    let out = tilescope()
        .args(["machine", "--preset", "teach", "--json"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let machine = tilescope::machine::Machine::from_json(&text).expect("valid machine JSON");
    assert_eq!(machine.name, "teach");
    let file = write(&dir, "mine.json", &text);
    let again = tilescope()
        .args(["machine", "--json", "--preset"])
        .arg(&file)
        .output()
        .expect("runs");
    assert_eq!(String::from_utf8_lossy(&again.stdout), text);
    tilescope()
        .args(["machine", "--preset", "nonexistent"])
        .assert()
        .code(1);
}

#[test]
fn sim_runs_assembly_reports_races_and_writes_a_trace() {
    let dir = scratch("sim");
    let asm = repo().join("core/tests/asm");
    let trace = dir.join("trace.json");
    let out = tilescope()
        .args(["sim", "--preset", "teach", "--json", "--trace"])
        .arg(&trace)
        .arg(asm.join("double_buffer.tasm"))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(v["cycles"].as_u64().is_some_and(|c| c > 0));
    assert_eq!(v["races"].as_array().map(Vec::len), Some(0));
    // Its loads overlap its stores, which share GM bandwidth.
    assert!(v["pipes"]["MTE2"]["shared_bandwidth"]
        .as_u64()
        .is_some_and(|c| c > 0));
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).expect("trace")).expect("trace JSON");
    assert!(t["traceEvents"].as_array().is_some_and(|e| !e.is_empty()));

    tilescope()
        .args(["sim", "--preset", "teach"])
        .arg(asm.join("double_buffer.tasm"))
        .assert()
        .success()
        .stdout(predicate::str::contains("stretched by shared GM bandwidth"));
    tilescope()
        .args(["sim", "--preset", "teach"])
        .arg(asm.join("no_flags.tasm"))
        .assert()
        .success()
        .stdout(predicate::str::contains("race: V reads"));
    tilescope()
        .args(["sim", "--preset", "teach"])
        .arg(asm.join("deadlock.tasm"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("deadlock"));
}

#[test]
fn run_with_verify_checks_the_address_plan_of_online_softmax() {
    // The verifiers run after every pass: a plan that shared a carried tile's bytes with
    // its update would fail here with an internal error instead of a wrong answer.
    let file = repo().join("static/examples/flash_attention.tile");
    tilescope()
        .args(["run", "--verify", "--preset", "teach"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("matches the reference"))
        .stdout(predicate::str::contains("DIFFERS").not());
    tilescope()
        .args(["compile", "--verify", "--emit", "passes"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("=== after out-of-ssa ==="))
        .stdout(predicate::str::contains(
            "// copy: %m.1 is read after %mn is defined",
        ));
}

#[test]
fn race_lines_name_the_source_line_of_both_accesses() {
    let file = repo().join("static/examples/softmax.tile");
    tilescope()
        .args(["run", "--sync", "none"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "race: V reads `t` (ub[0x0..0x4000))",
        ))
        .stdout(predicate::str::contains("  MTE2 #5: "))
        .stdout(predicate::str::contains(
            "softmax.tile:8:17: let t = load x[r .. r + R, :];",
        ))
        .stdout(predicate::str::contains("softmax.tile:9:17: let m = amax"));
}

/// `run` says which way each `if` went, under its source line, and `--json` carries the
/// counts; they agree.
#[test]
fn run_counts_the_decisions_of_each_branch() {
    let file = repo().join("static/examples/block_sparse_attention.tile");
    let json = json_of(&["run", "--json"], &file);
    let branches = json["branches"].as_array().expect("branches");
    assert_eq!(branches.len(), 1, "{branches:?}");
    let (taken, runs) = (&branches[0]["taken"], &branches[0]["runs"]);
    // Four query blocks, eight key blocks each; block 0 always kept, some not.
    assert_eq!(runs, 32);
    let taken = taken.as_u64().expect("a count");
    assert!((4..32).contains(&taken), "{taken}");
    tilescope()
        .arg("run")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "` taken {taken} of 32 times\n"
        )))
        .stdout(predicate::str::contains(
            "block_sparse_attention.tile:23:13: if on >= 8 || j == 0 {",
        ));
}

#[test]
fn emit_sync_explains_every_pair_and_the_json_carries_it() {
    let file = repo().join("static/examples/multibuffer.tile");
    tilescope()
        .args(["compile", "--emit", "sync"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("4 set/wait pairs"))
        .stdout(predicate::str::contains("MTE2 -> V"))
        .stdout(predicate::str::contains("RAW"))
        .stdout(predicate::str::contains("(back edge)"));
    let v = json_of(&["run", "--json"], &file);
    let pairs = v["sync"]["pairs"].as_array().expect("sync.pairs");
    assert_eq!(pairs.len(), 4);
    for key in [
        "src",
        "dst",
        "event",
        "dynamic",
        "kind",
        "buffer",
        "producer",
        "consumer",
        "back_edge",
        "set_index",
        "wait_index",
    ] {
        assert!(pairs[0].get(key).is_some(), "no {key} in {}", pairs[0]);
    }
    assert!(pairs[0]["producer"]["line"].as_u64().is_some());
    assert!(v["sync"]["notes"].is_array() && v["sync"]["removed"].is_array());
    // Explicit slots: the pair on `b` takes b's slot phase, not a's.
    let file = repo().join("static/examples/slot_phases.tile");
    tilescope()
        .args(["compile", "--emit", "sync"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("(slot i+0 -> i+0)"));
    let v = json_of(&["compile", "--emit", "json"], &file);
    let pairs = v["sync"]["pairs"].as_array().expect("sync.pairs");
    let on_b: Vec<_> = pairs.iter().filter(|p| p["buffer"] == "b").collect();
    assert!(!on_b.is_empty());
    for p in on_b {
        assert_eq!(p["slot_offsets"], serde_json::json!([0, 0]), "{p}");
    }
}

#[test]
fn lesson_list_shows_the_track_and_show_prints_a_starter() {
    let out = tilescope()
        .args(["lesson", "list"])
        .output()
        .expect("tilescope runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 16, "{text}");
    assert!(lines[0].contains(" 1  kernel  "), "{text}");
    assert!(text.contains("  asm     "), "{text}");
    tilescope()
        .args(["lesson", "show", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Idea: "))
        .stdout(predicate::str::contains("Budgets on teach: gold <= "))
        .stdout(predicate::str::contains("kernel scale("));
    tilescope()
        .args(["lesson", "show", "999"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("there is no lesson 999"));
}

#[test]
fn lesson_check_passes_the_reference_solution_and_fails_a_wrong_one() {
    let lesson = tilescope::lesson::find(1).expect("lesson 1");
    let dir = scratch("lesson-check");
    let good = write(&dir, "solution.tile", &lesson.solution);
    tilescope()
        .args(["lesson", "check", "1"])
        .arg(&good)
        .assert()
        .success()
        .stdout(predicate::str::contains("passed: gold"));
    let out = tilescope()
        .args(["lesson", "check", "1", "--json"])
        .arg(&good)
        .output()
        .expect("tilescope runs");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["lesson"], 1);
    assert_eq!(v["passed"], true);
    assert_eq!(v["medal"], "gold");
    assert!(v["cycles"].as_u64().is_some_and(|c| c > 0));
    let checks = v["checks"].as_array().expect("checks");
    assert!(checks.iter().all(|c| c["passed"] == true), "{v}");
    assert!(checks
        .iter()
        .all(|c| c["name"].is_string() && c["message"].is_string()));
    let wrong = write(
        &dir,
        "wrong.tile",
        &lesson.solution.replace("+ 1.0", "- 1.0"),
    );
    tilescope()
        .args(["lesson", "check", "1"])
        .arg(&wrong)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "`y` differs from the reference at [",
        ))
        .stdout(predicate::str::contains("not passed"));
    let out = tilescope()
        .args(["lesson", "check", "1", "--json"])
        .arg(&wrong)
        .output()
        .expect("tilescope runs");
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["passed"], false);
    assert!(v["medal"].is_null());
}

#[test]
fn disable_pass_and_ablate_show_what_each_pass_buys() {
    let file = repo().join("static/examples/softmax.tile");
    tilescope()
        .args(["compile", "--disable-pass", "insert-sync"])
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is needed for a correct program"))
        .stderr(predicate::str::contains("vector-peephole"));
    tilescope()
        .args(["compile", "--disable-pass", "vector-peephole"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("=== after vector-peephole ===").not());
    let v = json_of(&["run", "--json", "--ablate"], &file);
    let rows = v["ablation"].as_array().expect("ablation");
    assert_eq!(rows.len(), tilescope::passes::OPTIONAL_PASSES.len());
    let peephole = rows
        .iter()
        .find(|r| r["pass"] == "vector-peephole")
        .expect("a vector-peephole row");
    assert!(peephole["cycles"].as_u64() > v["cycles"].as_u64());
    for key in ["syncs", "peak_bytes", "matches_reference"] {
        assert!(peephole.get(key).is_some(), "no {key}");
    }
}

#[test]
fn assembly_and_trace_give_source_positions_as_line_and_column() {
    let file = repo().join("static/examples/softmax.tile");
    let out = tilescope()
        .args(["compile", "--emit", "asm"])
        .arg(&file)
        .output()
        .expect("tilescope runs");
    let asm = String::from_utf8(out.stdout).expect("text");
    assert!(asm.contains("!at 8:17"), "{asm}");
    assert!(!asm.contains("!span"), "{asm}");
    // The text reads back: `sim` runs it to the same cycle count as `run`.
    let dir = scratch("asm-at");
    let tasm = write(&dir, "softmax.tasm", &asm);
    tilescope()
        .args(["sim"])
        .arg(&tasm)
        .assert()
        .success()
        .stdout(predicate::str::contains("cycles: "));
    let trace = dir.join("trace.json");
    tilescope()
        .args(["run", "--trace"])
        .arg(&trace)
        .arg(&file)
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).expect("trace")).expect("JSON");
    let events = v["traceEvents"].as_array().expect("events");
    assert!(events
        .iter()
        .any(|e| e["args"]["line"] == 8 && e["args"]["col"] == 17));
}

#[test]
fn alias_coarse_costs_the_read_modify_write_its_overlap() {
    let file = repo().join("static/examples/rmw.tile");
    let run = |alias: &str| -> serde_json::Value {
        let out = tilescope()
            .args(["run", "--json", "--preset", "a3", "--alias", alias])
            .arg(&file)
            .output()
            .expect("tilescope runs");
        assert!(out.status.success(), "{alias}: {out:?}");
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    let (precise, coarse) = (run("precise"), run("coarse"));
    for v in [&precise, &coarse] {
        assert_eq!(v["reference_match"], true);
        assert_eq!(v["races"].as_array().map(Vec::len), Some(0));
    }
    let cycles = |v: &serde_json::Value| v["cycles"].as_u64().expect("cycles");
    assert!(
        cycles(&coarse) > cycles(&precise),
        "coarse {} <= precise {}",
        cycles(&coarse),
        cycles(&precise)
    );
    tilescope()
        .args(["run", "--alias", "fuzzy"])
        .arg(&file)
        .assert()
        .failure()
        .stderr(predicate::str::contains("precise"));
}

#[test]
fn a_race_without_sync_names_the_pair_auto_places_for_it() {
    let file = repo().join("static/examples/elementwise.tile");
    tilescope()
        .args(["run", "--sync", "none"])
        .arg(&file)
        .assert()
        .stdout(predicate::str::contains(
            "auto orders it with a MTE2 -> V pair (RAW on t)",
        ));
    let v = json_of(&["run", "--sync", "none", "--json"], &file);
    let races = v["races"].as_array().expect("races");
    let fixes = v["race_fixes"].as_array().expect("race_fixes");
    assert!(!races.is_empty());
    assert_eq!(races.len(), fixes.len());
    // Each pair named runs from the pipe of the race's first access to its second's.
    let mut named = 0;
    for (race, fix) in races.iter().zip(fixes) {
        if fix.is_null() {
            continue;
        }
        named += 1;
        assert_eq!(fix["src"], race["first"]["instr"]["pipe"]);
        assert_eq!(fix["dst"], race["second"]["instr"]["pipe"]);
    }
    assert!(named > 0, "no race names its pair: {fixes:?}");
    // With sync there is nothing to fix.
    let v = json_of(&["run", "--json"], &file);
    assert!(v.get("race_fixes").is_none());
}

#[test]
fn a_compile_that_overflows_memory_still_prints_every_pass_before_the_error() {
    // plan-memory fails: the passes up to it are what the student needs to see why.
    let file = repo().join("core/tests/kernels/layernorm_overflow.tile");
    tilescope()
        .args(["compile", "--emit", "passes"])
        .arg(&file)
        .assert()
        .failure()
        .stdout(predicate::str::contains("=== after parse ==="))
        .stdout(predicate::str::contains("=== after out-of-ssa ==="))
        .stdout(predicate::str::contains("=== after plan-memory ===").not())
        .stderr(predicate::str::contains(
            "layernorm_overflow.tile:11:35: error: UB overflows: the plan needs 199424 bytes",
        ));
}

/// The sections of `compile --emit passes` output: (pass name, the section's text from
/// its header to the blank line after it).
fn sections(dump: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in dump.split_inclusive('\n') {
        if let Some(name) = line
            .strip_prefix("=== after ")
            .and_then(|l| l.strip_suffix(" ===\n"))
        {
            out.push((name.to_string(), String::new()));
        }
        if let Some((_, text)) = out.last_mut() {
            text.push_str(line);
        }
    }
    out
}

#[test]
fn opt_runs_a_pass_on_a_pasted_section_and_prints_the_next_one() {
    let file = repo().join("static/examples/flash_attention.tile");
    let out = tilescope()
        .args(["compile", "--emit", "passes", "--preset", "teach"])
        .arg(&file)
        .output()
        .expect("runs");
    let dump = String::from_utf8(out.stdout).expect("utf-8");
    let options = dump.lines().next().expect("an options line");
    assert!(options.starts_with("; options: preset=teach"), "{options}");
    let all = sections(&dump);
    let at = |name: &str| all.iter().position(|(n, _)| n == name).expect(name);
    let before = &all[at("decompose-transfer")].1;
    let after = &all[at("multi-buffer")].1;
    let dir = scratch("opt");
    let tir = write(&dir, "before.tir", &format!("{options}\n{before}"));
    tilescope()
        .args(["opt", "--pass", "multi-buffer", "--source"])
        .arg(&file)
        .arg(&tir)
        .assert()
        .success()
        .stdout(after.clone());
    // A wrong name in the text is an error at its line and column in the .tir file.
    let broken = before.replacen("%qt =", "%nope =", 1);
    let tir = write(&dir, "broken.tir", &broken);
    tilescope()
        .args(["opt", "--pass", "multi-buffer"])
        .arg(&tir)
        .assert()
        .failure()
        .stderr(predicate::str::contains("broken.tir:"))
        .stderr(predicate::str::contains("is not defined before this use"))
        .stderr(predicate::str::contains("^"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `run` says where each pipe's idle cycles went and how far the kernel is from the
/// machine and from its path bound; `--json` carries them (`stalls`, every pipe adding
/// up to the run, `roofline` and `path_bound`), with the same figures as core.
#[test]
fn run_shows_where_the_cycles_go_and_the_roofline() {
    let file = repo().join("static/examples/softmax.tile");
    let v = json_of(&["run", "--json"], &file);
    let cycles = v["cycles"].as_u64().expect("cycles");
    let stalls = v["stalls"].as_array().expect("stalls");
    assert_eq!(stalls.len(), 7);
    for s in stalls {
        let parts = [
            "busy",
            "shared_bandwidth",
            "flag_wait",
            "barrier",
            "queue_full",
            "not_issued",
        ];
        let sum: u64 = parts.iter().map(|p| s[p].as_u64().expect(p)).sum();
        assert_eq!(sum, cycles, "{s}");
    }
    let source = std::fs::read_to_string(&file).expect("readable");
    let core = tilescope::run::run(&source, &Default::default(), Vec::new(), 0);
    let roofline = &v["roofline"];
    assert_eq!(roofline["cycles"].as_u64(), Some(core.roofline.cycles));
    assert!(core.roofline.cycles > 0 && core.roofline.cycles <= core.bound);
    let text = tilescope().arg("run").arg(&file).output().expect("runs");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("idle ") && text.contains("waiting on flags"),
        "{text}"
    );
    assert!(
        text.contains("longest: #") && text.contains("softmax.tile:"),
        "the longest flag wait is named with its source line: {text}"
    );
    assert!(
        text.contains(&format!("roofline: {} cycles", core.roofline.cycles)),
        "{text}"
    );
    // The path bound, core's figure, in both forms.
    let path = core.path_bound.expect("a whole trace");
    assert_eq!(v["path_bound"].as_u64(), Some(path));
    assert!(
        text.contains(&format!("path bound: {path} cycles")),
        "{text}"
    );
}
