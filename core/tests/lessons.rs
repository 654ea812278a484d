//! The lesson track: every lesson file parses, every reference solution earns gold,
//! every starter fails (unless the lesson is read-and-run), and a wrong solution per
//! lesson fails with a message that says what is wrong.

use tilescope::lesson::{self, grade, Grade, Lesson, LessonKind, Medal};

fn lessons() -> Vec<Lesson> {
    match lesson::all() {
        Ok(l) => l,
        Err(e) => panic!("a lesson file is malformed: {e}"),
    }
}

fn lesson(number: usize) -> Lesson {
    match lesson::find(number) {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    }
}

/// Every check's name and message, for assertion messages.
fn report(g: &Grade) -> String {
    g.checks
        .iter()
        .map(|c| {
            let mark = if c.passed { "ok" } else { "FAIL" };
            format!("[{mark}] {}: {}", c.name, c.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The messages of the failed checks, joined.
fn failures(g: &Grade) -> String {
    g.checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_lesson_file_parses_and_there_are_at_least_sixteen() {
    let all = lessons();
    assert!(all.len() >= 16, "only {} lessons", all.len());
    for (i, l) in all.iter().enumerate() {
        assert_eq!(l.number, i + 1);
        let prefix = format!("{:02}-", i + 1);
        assert!(l.id.starts_with(&prefix), "{} is out of order", l.id);
        assert!(!l.hints.is_empty(), "{} has no hints", l.id);
        assert!(l.budgets.gold <= l.budgets.silver, "{}", l.id);
    }
    let asm = all.iter().filter(|l| l.kind == LessonKind::Asm).count();
    assert!(asm >= 3, "only {asm} assembly lessons");
}

#[test]
fn malformed_lesson_files_are_errors_naming_the_file() {
    let err = |text: &str| Lesson::parse("99-bad", text).err().unwrap_or_default();
    assert!(err("title = ").contains("99-bad.toml"));
    let minimal = r#"
title = "t"
idea = "i"
task = "k"
kind = "kernel"
starter = "s"
solution = "s"
budgets = { silver = 10, gold = 20 }
"#;
    assert!(err(minimal).contains("gold is 20 and silver 10"));
    let unknown = minimal.replace("gold = 20", "gold = 5 }\nbudget = { a = 1");
    assert!(err(&unknown).contains("unknown field"), "{}", err(&unknown));
    let preset = minimal.replace("gold = 20", "gold = 5") + "preset = \"nope\"\n";
    let preset = Lesson::parse("99-bad", &preset).unwrap_or_else(|e| panic!("{e}"));
    let preset = lesson::check_preset(&preset).err().unwrap_or_default();
    assert!(
        preset.contains("99-bad.toml: unknown preset `nope`"),
        "{preset}"
    );
    let kind = minimal
        .replace("gold = 20", "gold = 5")
        .replace("\"kernel\"", "\"python\"");
    assert!(err(&kind).contains("99-bad.toml"));
    let named = minimal.replace("gold = 20", "gold = 5") + "id = \"01-mine\"\n";
    assert!(
        err(&named).contains("come from the file's name"),
        "{}",
        err(&named)
    );
    let ok = Lesson::parse("99-ok", &minimal.replace("gold = 20", "gold = 5"));
    let ok = ok.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.preset, "teach");
    assert!(ok.auto_buffers && !ok.read_and_run);
}

#[test]
fn every_reference_solution_earns_gold_on_every_input_set() {
    for l in lessons() {
        let g = grade(&l, &l.solution);
        assert!(
            g.passed && g.medal == Some(Medal::Gold),
            "lesson {} ({}): {:?}\n{}",
            l.number,
            l.id,
            g.medal,
            report(&g)
        );
        let sets = g
            .checks
            .iter()
            .filter(|c| c.name.starts_with("outputs"))
            .count();
        assert_eq!(sets, 4, "lesson {}: {}", l.number, report(&g));
        assert!(g.checks.iter().all(|c| c.passed), "{}", report(&g));
    }
}

#[test]
fn every_starter_fails_unless_the_lesson_is_read_and_run() {
    for l in lessons() {
        let g = grade(&l, &l.starter);
        if l.read_and_run {
            assert!(g.passed, "lesson {}: {}", l.number, report(&g));
            assert_ne!(
                g.medal,
                Some(Medal::Gold),
                "lesson {}: nothing to improve",
                l.number
            );
        } else {
            assert!(!g.passed, "lesson {}'s starter passes", l.number);
            assert!(g.medal.is_none());
            assert!(!failures(&g).is_empty(), "lesson {}: no message", l.number);
        }
    }
}

/// One wrong solution per lesson and a fragment of the message it must produce.
fn wrong_solutions() -> Vec<(usize, String, &'static str)> {
    let edit = |n: usize, from: &str, to: &str| {
        let l = lesson(n);
        assert!(
            l.solution.contains(from),
            "lesson {n}: the solution has no `{from}`"
        );
        l.solution.replacen(from, to, 1)
    };
    vec![
        (
            1,
            edit(1, "+ 1.0", "- 1.0"),
            "`y` differs from the reference at [",
        ),
        (
            2,
            edit(
                2,
                "t * load s[:, :] + load b[:, :]",
                "t * load b[:, :] + load s[:, :]",
            ),
            "`y` differs from the reference at [",
        ),
        // The rows of the tail stay zero; the first that differs is a positive input.
        (
            3,
            edit(3, "0..200", "0..192"),
            "`y` differs from the reference at [192, ",
        ),
        (4, edit(4, "2000.0", "2048.0"), "`avg` differs"),
        (5, edit(5, "silu(t)", "t * sigmoid(-t)"), "`y` differs"),
        (
            6,
            edit(6, "sum(e, axis=1)", "amax(e, axis=1)"),
            "`y` differs",
        ),
        (7, edit(7, " + b;", ";"), "`y` differs"),
        (8, edit(8, "exp(t)", "exp(t) * 2.0"), "`y` differs"),
        (
            9,
            edit(9, "const R = 2;", "const R = 4;"),
            "UB overflows: the plan needs 131104 bytes but teach has 131072 bytes",
        ),
        (10, edit(10, "wt.T", "wt"), "`y` differs"),
        (11, edit(11, "0..512", "0..448"), "`c` differs"),
        (12, edit(12, "0.125", "0.25"), "`o` differs"),
        (13, edit(13, "exp(m - mn)", "exp(mn - m)"), "`lse` differs"),
        (14, edit(14, "acc / l", "acc"), "`o` differs"),
        (15, edit(15, "idx * 2 + 1", "idx * 2"), "`y` differs"),
        // dst[k] = 0 sends a row to 32, past the end of y: the scatter fails at run time.
        (
            16,
            edit(16, "idx * -1 + 31", "idx * -1 + 32"),
            "is out of range",
        ),
        (
            17,
            edit(
                17,
                "(3 - b // 4) * B .. (3 - b // 4) * B + B",
                "((15 - b) // 4) * B .. ((15 - b) // 4) * B + B",
            ),
            "does not split into loop axes",
        ),
        // The pair moved between the loads orders only the first one.
        (
            18,
            {
                let l = lesson(18);
                let lines: Vec<&str> = l.solution.lines().collect();
                let mut out: Vec<&str> = Vec::new();
                for line in &lines {
                    if line.starts_with("set_flag MTE2, V") || line.starts_with("wait_flag MTE2, V")
                    {
                        continue;
                    }
                    out.push(line);
                    if line.starts_with("dma.f32 ub[0]") {
                        out.push("set_flag MTE2, V, 0");
                        out.push("wait_flag MTE2, V, 0");
                    }
                }
                out.join("\n")
            },
            "#3 `dma.f32 ub[2048], b[0], [512, 1, 1]` (MTE2, at line 8)",
        ),
        (
            19,
            edit(
                19,
                "wait_flag MTE3, MTE2, 0                         ; drain",
                "; drain",
            ),
            "is still set at the end",
        ),
        (
            20,
            edit(20, "set_flag MTE3, MTE2, 1", "set_flag MTE3, MTE2, 0"),
            "no wait_flag has consumed",
        ),
        (
            21,
            edit(21, "where(keep, s, -inf)", "s"),
            "`o` differs from the reference at [",
        ),
        (
            22,
            edit(22, " || (j // BK) % 4 == 0", ""),
            "`o` differs from the reference at [",
        ),
    ]
}

#[test]
fn a_wrong_solution_per_lesson_fails_with_a_specific_message() {
    let wrong = wrong_solutions();
    for l in lessons() {
        assert!(
            wrong.iter().any(|(n, _, _)| *n == l.number),
            "lesson {} has no wrong solution in this test",
            l.number
        );
    }
    for (n, source, fragment) in wrong {
        let g = grade(&lesson(n), &source);
        assert!(!g.passed, "lesson {n}: the wrong solution passes\n{source}");
        assert!(g.medal.is_none());
        assert!(
            failures(&g).contains(fragment),
            "lesson {n}: no `{fragment}` in\n{}",
            report(&g)
        );
    }
}

#[test]
fn a_race_names_both_instructions_and_their_lines() {
    let l = lesson(18);
    let g = grade(&l, &l.starter);
    let races = g.checks.iter().find(|c| c.name == "no races");
    let races = races.map(|c| c.message.clone()).unwrap_or_default();
    assert!(
        races.contains("V reads ub[0x0..0x800) at #2 written by MTE2 at #0"),
        "{races}"
    );
    assert!(races.contains("#0 `dma.f32 ub[0], x[0], [512, 1, 1]` (MTE2, at line 5)"));
    assert!(races.contains("(V, at line 7)"), "{races}");
}

#[test]
fn a_submission_that_does_not_compile_is_not_passed_and_says_why() {
    let l = lesson(1);
    let g = grade(&l, "kernel scale(x: f32[16, 64], y: out f32[16, 64]) {\n    store y[:, :] = load q[:, :];\n}\n");
    assert!(!g.passed);
    assert_eq!(g.checks.len(), 1, "{}", report(&g));
    assert!(
        failures(&g).contains("kernel.tile:2:") && failures(&g).contains("unknown name `q`"),
        "{}",
        report(&g)
    );
    let asm = lesson(18);
    let g = grade(&asm, ".tensor x f32[8, 64]\nvfrob.f32 ub[0]{1, 1, 1}\n");
    assert!(!g.passed);
    assert!(failures(&g).contains("kernel.tasm:2:"), "{}", report(&g));
}

#[test]
fn a_submission_that_deadlocks_is_not_passed_and_names_the_waits() {
    let l = lesson(19);
    let g = grade(&l, &l.starter);
    assert!(!g.passed);
    assert_eq!(g.cycles, None);
    let msg = failures(&g);
    assert!(msg.contains("deadlock"), "{}", report(&g));
    assert!(
        msg.contains("`wait_flag MTE3, MTE2, 0` (MTE2, at line 6)"),
        "{}",
        report(&g)
    );
}

#[test]
fn slower_correct_solutions_get_lower_medals_with_the_distance_to_the_next() {
    // Lesson 20 with one "free" flag for both slots: correct, but one tile at a time.
    let l = lesson(20);
    let serial = l
        .solution
        .replace(", r2 ", ", 0 ")
        .replace("set_flag MTE3, MTE2, 1\n", "")
        .replace("wait_flag MTE3, MTE2, 1\n", "");
    let g = grade(&l, &serial);
    assert!(g.passed, "{}", report(&g));
    assert!(g.medal < Some(Medal::Gold), "{}", report(&g));
    let cycles = g
        .checks
        .iter()
        .find(|c| c.name == lesson::grade::CYCLES_CHECK);
    let cycles = cycles.map(|c| c.message.clone()).unwrap_or_default();
    assert!(cycles.contains("needs <= "), "{cycles}");
    assert!(cycles.contains(" over"), "{cycles}");
    // Lesson 9: a bigger tile that fits but cannot be double-buffered.
    let l = lesson(9);
    let big = l
        .solution
        .replace("const R = 2;", "const R = 4;")
        .replace(" @buffers(2)", "");
    let g = grade(&l, &big);
    assert!(g.passed, "{}", report(&g));
    assert!(g.medal < Some(Medal::Gold), "{}", report(&g));
    // Lesson 5: the formula written out is correct and costs an instruction per operator.
    let l = lesson(5);
    let g = grade(&l, &l.solution.replace("silu(t)", "t / (1.0 + exp(-t))"));
    assert!(g.passed, "{}", report(&g));
    assert!(g.medal < Some(Medal::Gold), "{}", report(&g));
}

#[test]
fn different_parameters_are_named() {
    let l = lesson(2);
    let renamed = l
        .solution
        .replace("b: f32[1, 64]", "bias: f32[1, 64]")
        .replace("load b[", "load bias[");
    let g = grade(&l, &renamed);
    assert!(!g.passed);
    assert!(
        failures(&g)
            .contains("parameter 3 is `bias: f32[1, 64]` but the lesson expects `b: f32[1, 64]`"),
        "{}",
        report(&g)
    );
    let g = grade(
        &l,
        &l.solution.replace(
            ", y: out f32[32, 64]",
            ", y: out f32[32, 64], z: out f32[1, 1]",
        ),
    );
    assert!(
        failures(&g).contains("parameter `z: out f32[1, 1]` is not in the lesson"),
        "{}",
        report(&g)
    );
    let l = lesson(18);
    let g = grade(
        &l,
        &l.solution
            .replace(".tensor b f32[8, 64]", ".tensor b f16[8, 64]"),
    );
    assert!(
        failures(&g).contains("tensor 2 is `b: f16[8, 64]` but the lesson expects `b: f32[8, 64]`"),
        "{}",
        report(&g)
    );
}

#[test]
fn hostile_submissions_are_graded_without_panicking_or_hanging() {
    let huge_loop = "loop r1, 1000000000\n  add r2, r2, 1\nendloop\n".to_string();
    let many_iterations = "kernel k(x: f32[16, 64], y: out f32[16, 64]) {\n    for i in 0..2000000 {\n        store y[:, :] = load x[:, :];\n    }\n}\n";
    let inputs = [
        String::new(),
        "\u{0}\u{1}garbage ; ]]] {{{".into(),
        huge_loop,
        many_iterations.into(),
        "kernel".repeat(1000),
    ];
    for l in lessons() {
        for text in &inputs {
            let g = grade(&l, text);
            assert!(!g.passed, "lesson {}: {text:?} passes", l.number);
            assert!(!failures(&g).is_empty(), "lesson {}: {text:?}", l.number);
        }
    }
    // The same tensors with a runaway loop: stopped by the grader's instruction limit.
    let l = lesson(18);
    let runaway = l.solution.clone()
        + "loop r1, 100000\n  loop r2, 100000\n    add r3, r3, 1\n  endloop\nendloop\n";
    let g = grade(&l, &runaway);
    assert!(!g.passed);
    assert!(failures(&g).contains("limit"), "{}", report(&g));
}

/// Prints each reference solution's cycles and the budgets they imply (gold +5%,
/// silver +40%, rounded up): how the lesson files' budgets were set.
/// `cargo test -p tilescope --test lessons -- --ignored --nocapture`
#[test]
#[ignore]
fn print_reference_cycles_and_budgets() {
    for l in lessons() {
        let g = grade(&l, &l.solution);
        let c = g.cycles.unwrap_or(0);
        println!(
            "{:2} {:24} {:6} cycles: gold = {}, silver = {} (file: gold = {}, silver = {})",
            l.number,
            l.id,
            c,
            (c * 105).div_ceil(100),
            (c * 140).div_ceil(100),
            l.budgets.gold,
            l.budgets.silver
        );
    }
}

/// The track the build script encoded reads back as the files themselves read.
#[test]
fn the_built_in_track_is_every_lesson_file_in_name_order() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../static/lessons");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let built = lessons();
    assert_eq!(built.len(), files.len());
    for (i, (path, built)) in files.iter().zip(&built).enumerate() {
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{id}: {e}"));
        let mut read = Lesson::parse(id, &text).unwrap_or_else(|e| panic!("{e}"));
        read.number = i + 1;
        assert_eq!(&read, built, "{id}");
    }
}
