//! `if` / `else if` / `else`: kernels that branch on loop variables, each compiled
//! under auto and barrier sync on both presets, simulated without a race or a flag
//! error, against the reference interpreter; the sync of a branch costs nothing on the
//! path that skips it; and the forms refused, with their place.

mod run_support;

use run_support::check_on_presets as check;
use tilescope::compile::{compile, CompileOptions};

/// Sums `exp` of the row blocks `mask` keeps: a load and its read inside an `if` in
/// the block loop.
const KEPT_BLOCKS: &str = r#"kernel k(x: f32[256, 64], mask: i32[8, 1], y: out f32[32, 64]) {
    let acc = zeros(f32[32, 64]);
    for i in 0..256 step 32 {
        if load mask[i // 32, 0] != 0 {
            acc += exp(load x[i .. i + 32, :]);
        }
    }
    store y[:, :] = acc;
}
"#;

/// The first error's message and the text it points at.
fn error_of(source: &str) -> (String, String) {
    let r = compile(source, &CompileOptions::default());
    let d = r.diagnostics.first().expect("an error");
    let span = d.span.expect("a located error");
    let text = source[span.start as usize..span.end as usize].to_string();
    (d.message.clone(), text)
}

#[test]
fn branching_patterns_match_the_reference_without_a_race() {
    check(include_str!("kernels/branches.tile"));
}

#[test]
fn a_branch_that_never_runs_and_one_that_always_runs() {
    check(
        r#"kernel k(x: f32[32, 64], y: out f32[32, 64]) {
    for r in 0..32 step 8 {
        let t = load x[r .. r + 8, :];
        if r > 100 {
            store y[r .. r + 8, :] = t * 3.0;
        }
        if r >= 0 {
            store y[r .. r + 8, :] = t + 2.0;
        }
    }
}
"#,
    );
}

#[test]
fn a_branch_in_an_affine_loop_and_a_loop_in_a_branch() {
    check(
        r#"kernel k(x: f32[64, 64], y: out f32[64, 64]) {
    for i in 0..64 step 16 {
        let acc = zeros(f32[16, 16]);
        for j in 0 .. i + 16 step 16 {
            if j % 32 == 0 || j == i {
                acc += load x[i .. i + 16, j .. j + 16];
            }
        }
        if i != 16 {
            for c in 0..64 step 16 {
                store y[i .. i + 16, c .. c + 16] = acc * 2.0;
            }
        } else {
            for c in 0..64 step 16 {
                store y[i .. i + 16, c .. c + 16] = acc;
            }
        }
    }
}
"#,
    );
}

/// Causal attention that masks only the key blocks crossing the diagonal, as
/// FlashAttention-2 does: the blocks below it skip the iota, compare and select.
#[test]
fn masking_only_the_diagonal_blocks_matches_and_is_faster() {
    let masked_everywhere = include_str!("../../static/examples/causal_attention.tile");
    let keep =
        "            let keep = iota(i32[BQ, BK], axis=0) + i >= iota(i32[BQ, BK], axis=1) + j;\n";
    let select = "            let sm = where(keep, s, -inf);\n";
    let on_the_diagonal = masked_everywhere.replace(
        &format!("{keep}{select}"),
        &format!(
            "            let sm = s;\n            if j + BK > i + 1 {{\n    {keep}                sm = where(keep, s, -inf);\n            }}\n"
        ),
    );
    assert_ne!(masked_everywhere, on_the_diagonal);
    let all = check(masked_everywhere);
    let diagonal = check(&on_the_diagonal);
    for ((a, _), (d, _)) in all.iter().zip(&diagonal) {
        assert!(
            d <= a,
            "masking only the diagonal blocks: {d} cycles, everywhere {a}"
        );
    }
}

/// A pair whose producer and consumer are both inside a branch, in one run of it, runs
/// only with it: its set and wait sit between the branch's `loop` and `endloop`.
#[test]
fn the_sync_of_a_branch_stays_inside_it() {
    let source = r#"kernel k(x: f32[64, 64], y: out f32[64, 64]) {
    for i in 0..64 step 16 {
        if i % 32 == 0 {
            store y[i .. i + 16, :] = exp(load x[i .. i + 16, :]);
        }
    }
}
"#;
    let r = compile(source, &CompileOptions::default());
    assert!(r.ok(), "{:?}", r.diagnostics);
    let asm = r.asm.expect("assembly");
    let lines: Vec<&str> = asm.lines().map(str::trim).collect();
    let open = lines
        .iter()
        .rposition(|l| l.starts_with("loop "))
        .expect("the branch's loop");
    let close = lines
        .iter()
        .rposition(|l| l.starts_with("endloop"))
        .expect("endloop");
    let inside = &lines[open..close];
    for flag in ["MTE2, V", "V, MTE3"] {
        for op in ["set_flag", "wait_flag"] {
            let want = format!("{op} {flag}");
            assert!(
                inside.iter().any(|l| l.starts_with(&want)),
                "no `{want}` inside the branch:\n{asm}"
            );
        }
    }
}

/// A dependence one block's branch carries to the next block's (the next load into
/// the buffer this block's `exp` reads) is ordered by a pair inside the `if`, primed
/// and drained around the loop: a skipped block runs no set and no wait. With every
/// block skipped, the only pairs that meet are the ones around the loop; with every
/// block kept, each block adds its own. Both match the reference without a race, on
/// both presets.
#[test]
fn a_loop_carried_pair_inside_a_branch_costs_the_skipping_path_nothing() {
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let source = KEPT_BLOCKS;
    let r = compile(source, &CompileOptions::default());
    let asm = r.asm.expect("assembly");
    let lines: Vec<&str> = asm.lines().map(str::trim).collect();
    let branch = lines
        .iter()
        .position(|l| l.contains("; if "))
        .expect("the branch's loop");
    let outer = lines
        .iter()
        .position(|l| l.starts_with("loop "))
        .expect("the block loop");
    let end = lines
        .iter()
        .position(|l| l.starts_with("endloop"))
        .expect("the branch's endloop");
    let syncs = |ls: &[&str]| {
        ls.iter()
            .filter(|l| l.starts_with("set_flag") || l.starts_with("wait_flag"))
            .count()
    };
    assert_eq!(
        syncs(&lines[outer..branch]),
        0,
        "sync before the branch:
{asm}"
    );
    assert!(
        syncs(&lines[branch..end]) >= 4,
        "no pair inside the branch:
{asm}"
    );
    for preset in ["teach", "a3"] {
        let options = CompileOptions {
            preset: Some(preset.to_string()),
            ..CompileOptions::default()
        };
        let mut met = Vec::new();
        for keep in [0, 1] {
            let mut mask = Tensor::zeros(DType::I32, vec![8, 1]);
            for at in 0..8 {
                mask.set_i32(at, keep);
            }
            let r = tilescope::run::run(source, &options, vec![("mask".to_string(), mask)], 1);
            assert!(
                r.reference_match && r.sim.races.is_empty() && r.sim.errors.is_empty(),
                "{preset}, keep {keep}: {:?}",
                r.diagnostics
            );
            met.push(r.sim.syncs);
        }
        // Around the loop: the prime and drain of each pair inside it, and the final
        // store's pair; each kept block meets at least its load's and its read's.
        assert!(
            met[0] <= 4,
            "{preset}: {} pairs met with every block skipped",
            met[0]
        );
        assert!(met[1] >= met[0] + 16, "{preset}: {met:?}");
    }
}

/// A loop whose body holds an `if` is multi-buffered like any innermost loop: the
/// kept blocks' loads run ahead into the other slot (slot `iteration % 2` of the block
/// loop, whichever blocks run), faster than single buffers on both presets, with the
/// same answer, under auto and barrier sync.
#[test]
fn a_loop_around_a_branch_is_double_buffered() {
    let source = KEPT_BLOCKS;
    check(source);
    // Every block kept, so that both runs do the same work.
    let mut mask = tilescope::tensor::Tensor::zeros(tilescope::types::DType::I32, vec![8, 1]);
    for at in 0..8 {
        mask.set_i32(at, 1);
    }
    run_support::assert_double_buffering_pays(
        source,
        vec![("mask".into(), mask)],
        "for %i0 in 0..8 step 1 buffers(2)",
    );
}

#[test]
fn a_name_only_one_path_defines_is_an_error_at_its_use() {
    let (message, text) = error_of(
        r#"kernel k(x: f32[64, 8], y: out f32[64, 8]) {
    for i in 0..64 step 8 {
        let t = load x[i .. i + 8, :];
        if i < 32 {
            let s = exp(t);
        } else {
            let u = t;
        }
        store y[i .. i + 8, :] = s;
    }
}
"#,
    );
    assert_eq!(
        message,
        "`s` is not defined on every path to here: the `else` branch does not define it"
    );
    assert_eq!(text, "s");
}

#[test]
fn conditions_must_be_scalar_comparisons() {
    let (message, text) = error_of(
        r#"kernel k(x: f32[8, 8], y: out f32[8, 8]) {
    let t = load x[:, :];
    for i in 0..8 step 8 {
        if t > 0.0 {
            store y[:, :] = t;
        }
    }
}
"#,
    );
    assert!(message.starts_with("a condition is a scalar"), "{message}");
    assert_eq!(text, "t");
    let (message, text) = error_of(
        r#"kernel k(x: f32[8, 8], y: out f32[8, 8]) {
    for i in 0..8 step 8 {
        if i + 1 {
            store y[:, :] = load x[:, :];
        }
    }
}
"#,
    );
    assert_eq!(message, "the condition `i + 1` is not a comparison");
    assert_eq!(text, "i + 1");
}

#[test]
fn joined_names_keep_one_type_and_slots_stay_outside_branches() {
    let (message, _) = error_of(
        r#"kernel k(x: f32[8, 8], y: out f32[8, 8]) {
    for i in 0..16 step 8 {
        if i == 0 {
            let s = load x[:, :];
        } else {
            let s = load x[:, :] as f16;
        }
        store y[:, :] = s;
    }
}
"#,
    );
    assert!(message.contains("in the `if` branch but"), "{message}");
    let (message, text) = error_of(
        r#"kernel k(x: f32[8, 8], y: out f32[8, 8]) {
    let b = buffers(f32[8, 8], 2);
    for i in 0..2 {
        if i == 0 {
            b[i] = load x[:, :];
        }
    }
    store y[:, :] = b[0];
}
"#,
    );
    assert!(message.contains("written inside an `if`"), "{message}");
    assert_eq!(text, "b");
}

/// A condition on data reads one element of an input with `sldg` on the scalar pipe;
/// the `let` that named it is not loaded as a tile when nothing else reads it.
#[test]
fn a_branch_on_an_element_reads_it_on_the_scalar_pipe() {
    let source = r#"kernel k(x: f32[64, 32], keep: i32[4, 2], y: out f32[64, 32]) {
    for i in 0..64 step 16 {
        for c in 0..32 step 16 {
            let on = load keep[i // 16, c // 16];
            if on >= 8 && !(load keep[0, 0] == on) {
                store y[i .. i + 16, c .. c + 16] = exp(load x[i .. i + 16, c .. c + 16]);
            } else {
                store y[i .. i + 16, c .. c + 16] = zeros(f32[16, 16]);
            }
        }
    }
}
"#;
    check(source);
    let r = compile(source, &CompileOptions::default());
    let asm = r.asm.expect("assembly");
    assert!(asm.contains("sldg.i32"), "{asm}");
    assert!(
        !asm.contains("dma.i32"),
        "the element was loaded as a tile:\n{asm}"
    );
}

#[test]
fn a_condition_reads_one_element_of_an_i32_input() {
    let kernel = |cond: &str| {
        format!(
            "kernel k(x: f32[8, 8], m: i32[2, 2], y: out f32[8, 8], z: out i32[2, 2]) {{
    for i in 0..2 {{
        if {cond} {{
            store y[:, :] = load x[:, :];
        }}
    }}
    store z[:, :] = load m[:, :];
}}
"
        )
    };
    let cases = [
        ("load z[i, 0] != 0", "a condition reads `z`, which the kernel stores: conditions read input tensors only", "z"),
        ("load x[i, 0] > 0.0", "a condition compares integers, but `x` is f32: conditions read i32 tensors", "x"),
        ("load m[i, :] != 0", "a condition reads one element: give every axis one position (`load mask[i // B, j // B]`)", ":"),
    ];
    for (cond, message, at) in cases {
        let (m, text) = error_of(&kernel(cond));
        assert_eq!(m, message, "{cond}");
        assert_eq!(text, at, "{cond}");
    }
}

/// The simulator counts each `if`'s decisions, and they are the ones the kernel's
/// conditions take on its inputs: a parity test and a test of a mask the test chose.
#[test]
fn the_simulator_counts_which_way_each_branch_went() {
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let source = r#"kernel k(x: f32[64, 32], keep: i32[4], y: out f32[64, 32]) {
    for i in 0..64 step 16 {
        if i % 32 == 0 {
            store y[i .. i + 16, :] = exp(load x[i .. i + 16, :]);
        } else if load keep[i // 16] > 5 {
            store y[i .. i + 16, :] = load x[i .. i + 16, :] * 2.0;
        } else {
            store y[i .. i + 16, :] = zeros(f32[16, 32]);
        }
    }
}
"#;
    // Blocks 0..4: parity takes 0 and 2; of 1 and 3 the mask keeps 3 only.
    let mut keep = Tensor::zeros(DType::I32, vec![4]);
    for (at, v) in [9, 1, 7, 8].into_iter().enumerate() {
        keep.set_i32(at, v);
    }
    let r = tilescope::run::run(
        source,
        &CompileOptions::default(),
        vec![("keep".to_string(), keep)],
        1,
    );
    assert!(
        r.reference_match && r.sim.races.is_empty(),
        "{:?}",
        r.diagnostics
    );
    let program = r.compile.program.as_ref().expect("a program");
    let counts: Vec<(String, u64, u64)> = r
        .sim
        .branches
        .iter()
        .map(|b| {
            let cond = program.branch_at(b.instr).expect("a branch").cond.clone();
            (cond, b.taken, b.runs)
        })
        .collect();
    let owned = |v: &[(&str, u64, u64)]| -> Vec<(String, u64, u64)> {
        v.iter().map(|(c, t, n)| (c.to_string(), *t, *n)).collect()
    };
    assert_eq!(
        counts,
        // As written, though axis-split computes `i` as `i0 * 32 + i1 * 16 + i2`; an
        // `else` is a region on the negation, and `else if` nests in it.
        owned(&[
            ("i % 32 == 0", 2, 4),
            ("!(i % 32 == 0)", 2, 4),
            ("load keep[i // 16] > 5", 1, 2),
            ("!(load keep[i // 16] > 5)", 1, 2),
        ])
    );
    // One decision per run, in order, each at the cycle the S pipe reached it.
    assert_eq!(r.sim.branch_runs.len(), 12);
    assert!(r
        .sim
        .branch_runs
        .windows(2)
        .all(|w| w[0].cycle <= w[1].cycle));
}
