//! Random kernels with loop-carried state, the patterns real kernels use and that
//! leaving SSA gets wrong when a carried tile and its update share a buffer: an old
//! value read after its new value is defined (`let mn = ...; d = d + (mn - m); m = mn;`),
//! swaps and rotations of 2 to 4 carried tiles, carried state at every level of a nest of
//! up to 3 loops, carried state in multi-buffered loops, every dtype, a manual prefetch
//! into a carried tile (`cur = nxt`), and online softmax and online mean-variance
//! updates. Each is compiled through the whole pipeline (the plan verifier runs in debug
//! builds), simulated, and compared with the reference interpreter, on both presets.

use proptest::prelude::*;
use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::run::run;

const R: u64 = 8;
const C: u64 = 16;

/// One statement of a loop body over the carried tiles `c0..cN` and the loaded `t`.
#[derive(Clone, Debug)]
enum Stmt {
    /// `let nK = f(ci, cj, t);`
    Let { k: usize, f: u8, i: usize, j: usize },
    /// `ci = f(ci, cj, t);` in place.
    Update { f: u8, i: usize, j: usize },
    /// `ci = nK;` (when `nK` exists), the new value defined earlier.
    Assign { i: usize, k: usize },
    /// `let tmp = c0; c0 = c1; ...; cM = tmp;`: a rotation of the first `m` tiles.
    Rotate { m: usize },
}

/// An elementwise expression of `a`, `b` and `t` that stays bounded over iterations.
fn expr(f: u8, a: &str, b: &str, float: bool) -> String {
    if !float {
        return match f % 3 {
            0 => format!("{a} + t"),
            1 => format!("t - {a}"),
            _ => format!("{b} + t"),
        };
    }
    match f % 6 {
        0 => format!("{a} * 0.5 + t"),
        1 => format!("maximum({a}, {b} + t)"),
        2 => format!("tanh({a} - {b}) + t * 0.25"),
        3 => format!("minimum({a}, t) * 0.5 + {b} * 0.25"),
        4 => format!("({a} + {b}) * 0.5"),
        _ => format!("{b} * 0.5 - {a} * 0.25"),
    }
}

fn stmts(n: usize) -> impl Strategy<Value = Vec<Stmt>> {
    let stmt = prop_oneof![
        (0usize..3, any::<u8>(), 0..n, 0..n).prop_map(|(k, f, i, j)| Stmt::Let { k, f, i, j }),
        (any::<u8>(), 0..n, 0..n).prop_map(|(f, i, j)| Stmt::Update { f, i, j }),
        (0..n, 0usize..3).prop_map(|(i, k)| Stmt::Assign { i, k }),
        (2..=n.max(2)).prop_map(|m| Stmt::Rotate { m }),
    ];
    prop::collection::vec(stmt, 1..7)
}

/// Renders a body; every carried tile is read, some after their update.
fn body(stmts: &[Stmt], n: usize, dt: &str, indent: &str) -> String {
    let float = dt != "i32";
    let mut out = String::new();
    for s in stmts {
        let line = match s {
            Stmt::Let { k, f, i, j } => {
                let e = expr(*f, &format!("c{i}"), &format!("c{j}"), float);
                // A repeated `let` of one name would shadow in one block.
                format!("let n{k}_{} = {e};", out.len())
            }
            Stmt::Update { f, i, j } => {
                format!(
                    "c{i} = {};",
                    expr(*f, &format!("c{i}"), &format!("c{j}"), float)
                )
            }
            Stmt::Assign { i, k } => match last_let(&out, *k) {
                Some(name) => format!("c{i} = {name};"),
                None => continue,
            },
            Stmt::Rotate { m } => {
                let m = (*m).min(n);
                if m < 2 {
                    continue;
                }
                let mut s = format!("let r_{} = c0;", out.len());
                let tmp = format!("r_{}", out.len());
                for i in 0..m - 1 {
                    s.push_str(&format!(" c{i} = c{};", i + 1));
                }
                s.push_str(&format!(" c{} = {tmp};", m - 1));
                s
            }
        };
        out.push_str(indent);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The name of the last `let nK_...` in `text`.
fn last_let(text: &str, k: usize) -> Option<String> {
    let key = format!("let n{k}_");
    let at = text.rfind(&key)?;
    let rest = &text[at + 4..];
    let end = rest.find(' ')?;
    Some(rest[..end].to_string())
}

/// Carried tiles at one level of a nest of `depth` loops (1 to 3), updated in the
/// innermost body; each level's result is folded into the level above, the outermost
/// stored.
fn nested() -> impl Strategy<Value = (String, &'static str)> {
    (
        1usize..=4,
        1usize..=3,
        prop_oneof![Just("f32"), Just("f16"), Just("bf16"), Just("i32")],
        any::<bool>(),
        prop_oneof![Just(""), Just(" @buffers(2)"), Just(" @buffers(3)")],
        prop_oneof![Just("a3"), Just("teach")],
    )
        .prop_flat_map(|(n, depth, dt, from_load, buf, preset)| {
            (stmts(n), Just((n, depth, dt, from_load, buf, preset)))
        })
        .prop_map(|(stmts, (n, depth, dt, from_load, buf, preset))| {
            let trips = [2u64, 2, 3];
            let total: u64 = trips[..depth].iter().product::<u64>() * R;
            let mut src = format!(
                "kernel k(x: {dt}[{total}, {C}], w: {dt}[{R}, {C}], y: out {dt}[{R}, {C}]) {{\n"
            );
            let init = |i: usize| {
                if from_load && i == 0 {
                    "load w[:, :]".to_string()
                } else {
                    format!(
                        "full({dt}[{R}, {C}], {})",
                        if dt == "i32" {
                            "1".into()
                        } else {
                            format!("{}.5", i)
                        }
                    )
                }
            };
            // Open the nest; carried tiles of the innermost loop live at its level.
            let vars = ["a", "b", "c"];
            for d in 0..depth {
                let ind = "    ".repeat(d + 1);
                if d == depth - 1 {
                    for i in 0..n {
                        src.push_str(&format!("{ind}let c{i} = {};\n", init(i)));
                    }
                } else {
                    src.push_str(&format!("{ind}let s{d} = zeros({dt}[{R}, {C}]);\n"));
                }
                let (v, t) = (vars[d], trips[d]);
                let b = if d == depth - 1 { buf } else { "" };
                src.push_str(&format!("{ind}for {v} in 0..{t}{b} {{\n"));
            }
            let ind = "    ".repeat(depth + 1);
            // Row of the innermost tile: ((a * t1 + b) * t2 + c) * R.
            let mut row = String::from("0");
            for (d, v) in vars.iter().enumerate().take(depth) {
                row = format!("({row}) * {} + {v}", trips[d]);
            }
            src.push_str(&format!(
                "{ind}let t = load x[({row}) * {R} .. ({row}) * {R} + {R}, :];\n"
            ));
            src.push_str(&body(&stmts, n, dt, &ind));
            // Close the nest, folding each level's state into the level above.
            let sum: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
            for d in (0..depth).rev() {
                let ind = "    ".repeat(d + 1);
                src.push_str(&format!("{ind}}}\n"));
                let folded = if d == depth - 1 {
                    sum.join(" + ")
                } else {
                    format!("s{d}")
                };
                if d > 0 {
                    let scale = if dt == "i32" { "" } else { " * 0.5" };
                    src.push_str(&format!(
                        "{ind}s{} = s{} + ({folded}){scale};\n",
                        d - 1,
                        d - 1
                    ));
                } else {
                    src.push_str(&format!("{ind}store y[:, :] = {folded};\n"));
                }
            }
            src.push_str("}\n");
            (src, preset)
        })
}

/// A manual prefetch: the next tile is loaded into a carried variable.
fn prefetch() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just("f32"), Just("f16"), Just("bf16")],
        2u64..6,
        prop_oneof![Just(""), Just(" @buffers(2)")],
        any::<bool>(),
    )
        .prop_map(|(dt, tiles, buf, late_read)| {
            let rows = tiles * R;
            // The old tile is read after the next one is loaded, or before.
            let (first, second) = (
                format!("let nxt = load x[r + {R} .. r + {}, :];", 2 * R),
                format!("store y[r .. r + {R}, :] = exp(cur * 0.5);"),
            );
            let (a, b) = if late_read {
                (first, second)
            } else {
                (second, first)
            };
            format!(
                "kernel k(x: {dt}[{}, {C}], y: out {dt}[{rows}, {C}]) {{
    let cur = load x[0 .. {R}, :];
    for r in 0..{rows} step {R}{buf} {{
        {a}
        {b}
        cur = nxt;
    }}
}}",
                rows + R
            )
        })
}

/// Online softmax over column blocks (running max, rescaled sum) and online
/// mean-variance over row blocks.
fn online() -> impl Strategy<Value = String> {
    (
        2u64..5,
        prop_oneof![Just(""), Just(" @buffers(2)")],
        any::<bool>(),
    )
        .prop_map(|(tiles, buf, softmax)| {
            let cols = tiles * C;
            if softmax {
                format!(
                    "kernel k(x: f32[{R}, {cols}], y: out f32[{R}, 1], z: out f32[{R}, 1]) {{
    let m = full(f32[{R}, 1], -inf);
    let l = zeros(f32[{R}, 1]);
    for c in 0..{cols} step {C}{buf} {{
        let t = load x[:, c .. c + {C}];
        let mn = maximum(m, amax(t, axis=1));
        l = l * exp(m - mn) + sum(exp(t - mn), axis=1);
        m = mn;
    }}
    store y[:, :] = m;
    store z[:, :] = l;
}}"
                )
            } else {
                format!(
                    "kernel k(x: f32[{cols}, {C}], y: out f32[{R}, {C}], z: out f32[{R}, {C}]) {{
    let mean = zeros(f32[{R}, {C}]);
    let var = zeros(f32[{R}, {C}]);
    for r in 0..{cols} step {R}{buf} {{
        let t = load x[r .. r + {R}, :];
        let d = t - mean;
        mean = mean + d * 0.25;
        var = var + d * (t - mean);
    }}
    store y[:, :] = mean;
    store z[:, :] = var;
}}"
                )
            }
        })
}

fn check(source: &str, preset: &str) -> Result<(), TestCaseError> {
    for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
        let options = CompileOptions {
            preset: Some(preset.into()),
            sync,
            ..CompileOptions::default()
        };
        let r = run(source, &options, Vec::new(), 5);
        let diags: Vec<&String> = r.diagnostics.iter().map(|d| &d.message).collect();
        prop_assert!(diags.is_empty(), "{source}\n{diags:?}");
        let errors: Vec<&String> = r.sim.errors.iter().map(|e| &e.message).collect();
        prop_assert!(errors.is_empty(), "{source}\n{errors:?}");
        prop_assert!(
            r.sim.races.is_empty(),
            "{source}\n{} races",
            r.sim.races.len()
        );
        prop_assert!(
            r.reference_match,
            "{source}\n{preset} {sync:?}: max abs err {}",
            r.max_abs_err
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_carried_state_matches((src, preset) in nested()) {
        check(&src, preset)?;
    }

    #[test]
    fn random_prefetches_match(src in prefetch(), teach in any::<bool>()) {
        check(&src, if teach { "teach" } else { "a3" })?;
    }

    #[test]
    fn random_online_updates_match(src in online(), teach in any::<bool>()) {
        check(&src, if teach { "teach" } else { "a3" })?;
    }
}
