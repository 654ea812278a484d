//! Structure-aware: mostly well-typed kernels (elementwise chains, reductions, matmuls,
//! attention-shaped loops of two products, loops with tails and `@buffers`, gathers,
//! loop-carried state: swaps, rotations, reads after updates, prefetch, online softmax,
//! each statement possibly inside an `if` on the loop variables, with an `else` or a
//! name both branches define)
//! generated from the fuzzer's bytes, printed to source and run end to end. When the
//! compile and the reference interpreter succeed, the simulator must match the
//! reference without errors, and under `auto` sync report no race (and, with
//! `FUZZ_SYNC_COST=1`, take no more cycles than `barrier` sync allows,
//! `run::auto_sync_limit`): a mismatch is a finding just like a panic.
#![no_main]

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use std::fmt::Write;
use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::diag::Severity;
use tilescope::sim::SimErrorKind;

const UNARY: &[&str] = &[
    "exp", "log", "exp2", "log2", "sqrt", "rsqrt", "abs", "neg", "relu", "sigmoid", "tanh", "gelu", "silu", "recip",
];
const BINARY: &[&str] = &["+", "-", "*", "/"];
const REDUCE: &[&str] = &["sum", "amax", "amin", "mean"];
const LITERALS: &[&str] = &["2.0", "0.5", "1.0", "-1.5", "3", "1e-3", "0.25"];
const WIDTHS: &[u64] = &[1, 4, 8, 16, 24, 32, 40, 64, 100];

#[derive(Debug)]
struct Case {
    source: String,
    preset: &'static str,
    sync: SyncStrategy,
    auto_multi_buffer: bool,
    seed: u64,
}

/// An elementwise expression over the tiles in `leaves` (all of one shape, except
/// broadcast rows), `depth` levels at most.
fn expr(u: &mut Unstructured, leaves: &[&str], depth: u32) -> Result<String> {
    let leaf = |u: &mut Unstructured| -> Result<String> { Ok(u.choose(leaves)?.to_string()) };
    if depth == 0 || u.ratio(1, 3)? {
        return leaf(u);
    }
    let d = depth - 1;
    Ok(match u.int_in_range(0..=8)? {
        0 | 1 => format!("{}({})", u.choose(UNARY)?, expr(u, leaves, d)?),
        // Mask logic selecting between two values.
        7 => {
            let (a, b, c) = (expr(u, leaves, d)?, expr(u, leaves, d)?, expr(u, leaves, d)?);
            let (l1, l2) = (u.choose(LITERALS)?, u.choose(LITERALS)?);
            let logic = u.choose(&["&", "|", "^"])?;
            let not = if u.arbitrary()? { "~" } else { "" };
            format!("where(({a} > {l1}) {logic} {not}({b} < {l2}), {a}, {c})")
        }
        8 => format!("(({}) ** {})", expr(u, leaves, d)?, u.choose(&["2", "3", "0", "1"])?),
        2 => format!(
            "({} {} {})",
            expr(u, leaves, d)?,
            u.choose(BINARY)?,
            expr(u, leaves, d)?
        ),
        3 => format!(
            "{}({}, {})",
            u.choose(&["maximum", "minimum"])?,
            expr(u, leaves, d)?,
            expr(u, leaves, d)?
        ),
        4 => format!(
            "({} {} {})",
            expr(u, leaves, d)?,
            u.choose(BINARY)?,
            u.choose(LITERALS)?
        ),
        // A row reduction broadcast back over the row: subtracted, or divided as in a
        // softmax (which vector-peephole may turn into a reciprocal and a multiply).
        // The divisor is kept at least 1, as a softmax's is: a reduction that cancels to
        // nearly zero would amplify the order-dependent rounding of the reduction into
        // differences no tolerance can tell from a miscompile.
        5 => {
            let (value, reduce, operand) =
                (expr(u, leaves, d)?, u.choose(REDUCE)?, expr(u, leaves, d)?);
            if u.arbitrary()? {
                format!("({value} - {reduce}({operand}, axis=1))")
            } else {
                format!("({value} / (1.0 + abs({reduce}({operand}, axis=1))))")
            }
        }
        _ => format!(
            "(({}) as {} as f32)",
            expr(u, leaves, d)?,
            u.choose(&["f16", "bf16"])?
        ),
    })
}

fn buffers(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 | 1 => String::new(),
        n => format!(" @buffers({n})"),
    })
}

fn extent(u: &mut Unstructured) -> Result<u64> {
    Ok(*u.choose(WIDTHS)?)
}

/// A tile step within `1..=n`, usually one that leaves a tail.
fn step(u: &mut Unstructured, n: u64) -> Result<u64> {
    u.int_in_range(1..=n.max(1))
}

/// Rows in tiles of `s` (optionally also columns), with `let` chains.
fn elementwise(u: &mut Unstructured, src: &mut String) -> Result<()> {
    let (m, c) = (extent(u)?, extent(u)?);
    let s = step(u, m.min(32))?;
    let tile_cols = u.arbitrary::<bool>()?;
    let sc = if tile_cols { step(u, c)? } else { c };
    let _ = writeln!(
        src,
        "kernel ew(x: f32[{m}, {c}], x2: f32[{m}, {c}], b: f32[1, {c}], y: out f32[{m}, {c}]) {{"
    );
    let cols = if tile_cols {
        let _ = writeln!(src, "  for c in 0..{c} step {sc}{} {{", buffers(u)?);
        format!("c .. c + {sc}")
    } else {
        ":".to_string()
    };
    let _ = writeln!(src, "  let bias = load b[:, {cols}];");
    let _ = writeln!(src, "  for r in 0..{m} step {s}{} {{", buffers(u)?);
    let _ = writeln!(src, "    let t = load x[r .. r + {s}, {cols}];");
    let _ = writeln!(src, "    let u = load x2[r .. r + {s}, {cols}];");
    let mut leaves = vec!["t".to_string(), "u".to_string(), "bias".to_string()];
    for i in 0..u.int_in_range(0..=3)? {
        let refs: Vec<&str> = leaves.iter().map(String::as_str).collect();
        let e = expr(u, &refs, 3)?;
        let _ = writeln!(src, "    let v{i} = t + {e};");
        leaves.push(format!("v{i}"));
    }
    let refs: Vec<&str> = leaves.iter().map(String::as_str).collect();
    let e = expr(u, &refs, 4)?;
    let _ = writeln!(src, "    store y[r .. r + {s}, {cols}] = t * {e};");
    let _ = writeln!(src, "  }}");
    if tile_cols {
        let _ = writeln!(src, "  }}");
    }
    let _ = writeln!(src, "}}");
    Ok(())
}

/// Row reductions accumulated over column tiles with a loop-carried update.
fn reduction(u: &mut Unstructured, src: &mut String) -> Result<()> {
    let (m, c) = (extent(u)?, extent(u)?);
    let s = step(u, m.min(32))?;
    let sc = step(u, c)?;
    let red = u.choose(REDUCE)?;
    let _ = writeln!(src, "kernel red(x: f32[{m}, {c}], y: out f32[{m}, 1]) {{");
    let _ = writeln!(src, "  for r in 0..{m} step {s} {{");
    let init = if *red == "amax" {
        "full(f32[S, 1], -inf)"
    } else {
        "zeros(f32[S, 1])"
    };
    let _ = writeln!(src, "    let acc = {};", init.replace('S', &s.to_string()));
    let _ = writeln!(src, "    for c in 0..{c} step {sc}{} {{", buffers(u)?);
    let _ = writeln!(src, "      let t = load x[r .. r + {s}, c .. c + {sc}];");
    let e = expr(u, &["t"], 3)?;
    if *red == "amax" {
        let _ = writeln!(src, "      acc = maximum(acc, amax({e}, axis=1));");
    } else {
        let upd = u.choose(&["+=", "-="])?;
        let _ = writeln!(src, "      acc {upd} {red}({e}, axis=1);");
    }
    let _ = writeln!(src, "    }}");
    let e = expr(u, &["acc"], 2)?;
    let _ = writeln!(src, "    store y[r .. r + {s}, :] = {e};");
    let _ = writeln!(src, "  }}\n}}");
    Ok(())
}

/// `c = epilogue(a @ w)` with a K loop, optionally tiled over M and with `w` transposed.
fn matmul(u: &mut Unstructured, src: &mut String) -> Result<()> {
    let (m, k, n) = (extent(u)?, extent(u)?, extent(u)?);
    let sk = step(u, k)?;
    let dt = u.choose(&["f32", "f16", "bf16"])?;
    let transposed = u.arbitrary::<bool>()?;
    let tile_m = u.arbitrary::<bool>()?;
    let sm = if tile_m { step(u, m.min(32))? } else { m };
    let wshape = if transposed {
        format!("{n}, {k}")
    } else {
        format!("{k}, {n}")
    };
    let _ = writeln!(
        src,
        "kernel mm(a: {dt}[{m}, {k}], w: {dt}[{wshape}], bias: f32[1, {n}], c: out f32[{m}, {n}]) {{"
    );
    let _ = writeln!(src, "  let bv = load bias[:, :];");
    let rows = if tile_m {
        let _ = writeln!(src, "  for i in 0..{m} step {sm} {{");
        format!("i .. i + {sm}")
    } else {
        ":".to_string()
    };
    let _ = writeln!(src, "  let acc = zeros(f32[{sm}, {n}]);");
    let _ = writeln!(src, "  for k in 0..{k} step {sk}{} {{", buffers(u)?);
    let _ = writeln!(src, "    let x = load a[{rows}, k .. k + {sk}];");
    if transposed {
        let _ = writeln!(src, "    let v = load w[:, k .. k + {sk}];");
        let _ = writeln!(src, "    acc += x @ v.T;");
    } else {
        let _ = writeln!(src, "    let v = load w[k .. k + {sk}, :];");
        let _ = writeln!(src, "    acc += x @ v;");
    }
    let _ = writeln!(src, "  }}");
    // A plain product is stored from L0C through FIX (fix-to-gm) where the cost model
    // allows; an epilogue goes through the vector unit.
    if u.arbitrary::<bool>()? {
        let e = expr(u, &["acc", "bv"], 2)?;
        let _ = writeln!(src, "  store c[{rows}, :] = acc + {e};");
    } else {
        let _ = writeln!(src, "  store c[{rows}, :] = acc;");
    }
    if tile_m {
        let _ = writeln!(src, "  }}");
    }
    let _ = writeln!(src, "}}");
    Ok(())
}

/// Row gathers through a loaded (and maybe shifted) index tile.
fn gather(u: &mut Unstructured, src: &mut String) -> Result<()> {
    let g = extent(u)?;
    let c = extent(u)?;
    let s = step(u, g.min(32))?;
    let off: u64 = u.int_in_range(0..=4)?;
    let table = 16 + off + u.int_in_range(0..=8)?;
    let idx = if off == 0 {
        "idx".to_string()
    } else {
        format!("idx + {off}")
    };
    // Also an accumulating scatter into a table-sized sum (repeated indices add).
    let add = u.arbitrary::<bool>()?;
    // And a gather along the middle axis of a batch (blocks of 64 f32 lanes: aligned),
    // and a scatter back along it.
    let axis = u.arbitrary::<bool>()?;
    let _ = writeln!(
        src,
        "kernel ga(ids: i32[{g}], table: f32[{table}, {c}], cube: f32[2, {table}, 64], y: out f32[{g}, {c}], acc: out f32[{table}, {c}], picked: out f32[2, {g}, 64], back: out f32[2, {table}, 64], elems: out f32[{g}]) {{"
    );
    if add {
        let _ = writeln!(src, "  store acc[:, :] = zeros(f32[{table}, {c}]);");
    }
    let _ = writeln!(src, "  for i in 0..{g} step {s}{} {{", buffers(u)?);
    let _ = writeln!(src, "    let idx = load ids[i .. i + {s}];");
    let _ = writeln!(src, "    let rows = load table[{idx}, :];");
    let e = expr(u, &["rows"], 3)?;
    let _ = writeln!(src, "    store y[i .. i + {s}, :] = rows + {e};");
    // Elements by index tiles on both axes (numpy's `table[i, j]`).
    if u.arbitrary()? {
        let _ = writeln!(
            src,
            "    store elems[i .. i + {s}] = load table[{idx}, idx % {c}] * 0.5;"
        );
    }
    if add {
        let _ = writeln!(src, "    store acc[{idx}, :] += {e};");
    }
    if axis {
        let _ = writeln!(
            src,
            "    store picked[:, i .. i + {s}, :] = load cube[:, {idx}, :] * 2.0;"
        );
        // Scattered back along the same axis, adding where indices repeat, or not.
        let op = u.choose(&["=", "+="])?;
        let _ = writeln!(
            src,
            "    store back[:, {idx}, :] {op} load cube[:, {idx}, :] + 1.0;"
        );
    }
    let _ = writeln!(src, "  }}\n}}");
    Ok(())
}

/// `o = f(q @ kt.T) @ v` over row blocks of `q`, with `kt` and `v` loaded once: a
/// product, vector work and a second product per iteration, the shape software-pipeline
/// unrolls and skews; sometimes `kt` is rescaled inside the loop, which canonicalize
/// hoists out of it.
fn two_products(u: &mut Unstructured, src: &mut String) -> Result<()> {
    let b = *u.choose(&[8u64, 16, 32])?;
    let trips: u64 = u.int_in_range(1..=10)?;
    let r = b * trips;
    let d = *u.choose(&[16u64, 32, 64])?;
    let n = *u.choose(&[16u64, 32, 64, 128])?;
    let e = *u.choose(&[16u64, 32, 64])?;
    let dt = u.choose(&["f16", "bf16", "f32"])?;
    let _ = writeln!(
        src,
        "kernel at(q: {dt}[{r}, {d}], kk: {dt}[{n}, {d}], v: {dt}[{n}, {e}], o: out f32[{r}, {e}]) {{"
    );
    let _ = writeln!(src, "  let kt = load kk[:, :];");
    let _ = writeln!(src, "  let vt = load v[:, :];");
    let _ = writeln!(src, "  for i in 0..{r} step {b}{} {{", buffers(u)?);
    let _ = writeln!(src, "    let qt = load q[i .. i + {b}, :];");
    let keys = if u.arbitrary::<bool>()? {
        let _ = writeln!(src, "    let kx = kt * {};", u.choose(LITERALS)?);
        "kx"
    } else {
        "kt"
    };
    let _ = writeln!(src, "    let s = qt @ {keys}.T;");
    let p = if u.arbitrary::<bool>()? {
        "exp(s - amax(s, axis=1)) / sum(exp(s - amax(s, axis=1)), axis=1)".to_string()
    } else {
        expr(u, &["s"], 2)?
    };
    let _ = writeln!(src, "    let p = {p};");
    let _ = writeln!(src, "    store o[i .. i + {b}, :] = (p as {dt}) @ vt;");
    let _ = writeln!(src, "  }}\n}}");
    Ok(())
}

/// Loop-carried state, the patterns leaving SSA must get right: `n` carried tiles (of one
/// dtype) updated in the innermost body of a nest of 1 to 3 loops, where statements read
/// a carried value after its new value is defined, rotate or swap carried tiles, load
/// the next tile into a carried variable (a manual prefetch), or keep an online
/// softmax's running max and rescaled sum. Each level's state folds into the level
/// above; the outermost is stored.
fn carried(u: &mut Unstructured, src: &mut String) -> Result<()> {
    let n: usize = u.int_in_range(1..=4)?;
    let depth: usize = u.int_in_range(1..=3)?;
    let dt = *u.choose(&["f32", "f32", "f16", "bf16"])?;
    let rows = *u.choose(&[4u64, 8, 16])?;
    let cols = *u.choose(&[8u64, 16, 32])?;
    let trips: Vec<u64> = (0..depth)
        .map(|_| u.int_in_range(1..=4))
        .collect::<Result<_>>()?;
    let total: u64 = trips.iter().product::<u64>() * rows;
    let _ = writeln!(
        src,
        "kernel cr(x: {dt}[{}, {cols}], y: out {dt}[{rows}, {cols}], z: out f32[{rows}, 1]) {{",
        total + rows
    );
    let vars = ["a", "b", "c"];
    let mut row = String::from("0");
    for (d, v) in vars.iter().enumerate().take(depth) {
        row = format!("({row}) * {} + {v}", trips[d]);
    }
    for d in 0..depth {
        let ind = "  ".repeat(d + 1);
        if d + 1 == depth {
            for i in 0..n {
                let init = match u.int_in_range(0..=2)? {
                    0 => format!("zeros({dt}[{rows}, {cols}])"),
                    1 => format!("full({dt}[{rows}, {cols}], {})", u.choose(LITERALS)?),
                    _ => format!("load x[{total} .. {}, :]", total + rows),
                };
                let _ = writeln!(src, "{ind}let c{i} = {init};");
            }
            let _ = writeln!(src, "{ind}let m = full(f32[{rows}, 1], -inf);");
            let _ = writeln!(src, "{ind}let l = zeros(f32[{rows}, 1]);");
        } else {
            let _ = writeln!(src, "{ind}let s{d} = zeros({dt}[{rows}, {cols}]);");
        }
        let buf = if d + 1 == depth { buffers(u)? } else { String::new() };
        let _ = writeln!(src, "{ind}for {} in 0..{}{buf} {{", vars[d], trips[d]);
    }
    let ind = "  ".repeat(depth + 1);
    let _ = writeln!(src, "{ind}let t = load x[({row}) * {rows} .. ({row}) * {rows} + {rows}, :];");
    let pick = |u: &mut Unstructured| -> Result<String> { Ok(format!("c{}", u.int_in_range(0..=n - 1)?)) };
    let mut lets = 0;
    for _ in 0..u.int_in_range(1..=6)? {
        // Each statement may run only on some iterations: in an `if`, with an `else`
        // that updates carried state, or as a name both branches define.
        let branch = u.int_in_range(0..=5)?;
        let outer = std::mem::take(src);
        if branch <= 2 {
            let c = condition(u, &vars[..depth], 3)?;
            let _ = writeln!(src, "{ind}if {c} {{");
        }
        match u.int_in_range(0..=5)? {
            // A new value from the old ones; assigned later, after more reads.
            0 | 1 => {
                let (a, b) = (pick(u)?, pick(u)?);
                let e = match u.int_in_range(0..=3)? {
                    0 => format!("{a} * 0.5 + t"),
                    1 => format!("maximum({a}, {b} + t)"),
                    2 => format!("tanh({a} - {b}) + t * 0.25"),
                    _ => format!("({a} + {b}) * 0.5"),
                };
                let _ = writeln!(src, "{ind}let n{lets} = {e};");
                let _ = writeln!(src, "{ind}{} = {} * 0.5 + {a} * 0.25;", pick(u)?, pick(u)?);
                let _ = writeln!(src, "{ind}{} = n{lets};", pick(u)?);
                lets += 1;
            }
            // In place.
            2 => {
                let a = pick(u)?;
                let _ = writeln!(src, "{ind}{a} = {a} * 0.5 + minimum(t, {}) * 0.25;", pick(u)?);
            }
            // A rotation of the first k tiles (a swap for k = 2).
            3 if n >= 2 => {
                let k: usize = u.int_in_range(2..=n)?;
                let _ = write!(src, "{ind}let r{lets} = c0;");
                for i in 0..k - 1 {
                    let _ = write!(src, " c{i} = c{};", i + 1);
                }
                let _ = writeln!(src, " c{} = r{lets};", k - 1);
                lets += 1;
            }
            // A manual prefetch: the next tile read into a carried variable, the old one
            // read after it.
            4 => {
                let a = pick(u)?;
                let _ = writeln!(
                    src,
                    "{ind}let p{lets} = load x[({row}) * {rows} + {rows} .. ({row}) * {rows} + {}, :];",
                    2 * rows
                );
                let _ = writeln!(src, "{ind}{} = {} + {a} * 0.5;", pick(u)?, pick(u)?);
                let _ = writeln!(src, "{ind}{a} = p{lets};");
                lets += 1;
            }
            // Online softmax over the tile's columns.
            _ => {
                let _ = writeln!(src, "{ind}let tf{lets} = t as f32;");
                let _ = writeln!(src, "{ind}let mn{lets} = maximum(m, amax(tf{lets}, axis=1));");
                let _ = writeln!(
                    src,
                    "{ind}l = l * exp(m - mn{lets}) + sum(exp(tf{lets} - mn{lets}), axis=1);"
                );
                let _ = writeln!(src, "{ind}m = mn{lets};");
                lets += 1;
            }
        }
        match branch {
            0 => {
                let _ = writeln!(src, "{ind}}}");
            }
            1 => {
                let a = pick(u)?;
                let _ = writeln!(src, "{ind}}} else {{\n{ind}{a} = {a} * 0.5 + t;\n{ind}}}");
            }
            2 => {
                let (a, b) = (pick(u)?, pick(u)?);
                let _ = writeln!(src, "{ind}let j{lets} = {a} + t;\n{ind}}} else {{");
                let _ = writeln!(src, "{ind}let j{lets} = {b} * 0.5;\n{ind}}}");
                let _ = writeln!(src, "{ind}{a} = {a} * 0.5 + j{lets};");
                lets += 1;
            }
            _ => {}
        }
        let inner = std::mem::replace(src, outer);
        src.push_str(&inner);
    }
    let sum: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    for d in (0..depth).rev() {
        let ind = "  ".repeat(d + 1);
        let _ = writeln!(src, "{ind}}}");
        let folded = if d + 1 == depth { sum.join(" + ") } else { format!("s{d}") };
        if d > 0 {
            let _ = writeln!(src, "{ind}s{} = s{} + ({folded}) * 0.5;", d - 1, d - 1);
        } else {
            let _ = writeln!(src, "{ind}store y[:, :] = {folded};");
        }
    }
    if depth == 1 {
        let _ = writeln!(src, "  store z[:, :] = l + m;");
    } else {
        let _ = writeln!(src, "  store z[:, :] = zeros(f32[{rows}, 1]);");
    }
    let _ = writeln!(src, "}}");
    Ok(())
}

/// A condition over loop variables `vars` (each below `top`): parity, thresholds and
/// sums, combined with `&&`, `||` and `!`.
fn condition(u: &mut Unstructured, vars: &[&str], depth: u32) -> Result<String> {
    if depth == 0 || u.ratio(2, 3)? {
        let v = *u.choose(vars)?;
        let k: u32 = u.int_in_range(0..=4)?;
        return Ok(match u.int_in_range(0..=4)? {
            0 => format!("{v} % 2 == {}", k % 2),
            1 => format!("{v} < {k}"),
            2 => format!("{v} >= {k}"),
            3 => format!("{v} + {} != {k}", *u.choose(vars)?),
            _ => format!("({v} * 2 + {}) % 3 == {}", *u.choose(vars)?, k % 3),
        });
    }
    let (a, b) = (condition(u, vars, depth - 1)?, condition(u, vars, depth - 1)?);
    Ok(match u.int_in_range(0..=2)? {
        0 => format!("{a} && {b}"),
        1 => format!("({a} || {b})"),
        _ => format!("!({a})"),
    })
}

/// Loops whose bounds depend on an outer loop (below, at or above the diagonal, a
/// start that counts down, or a step that leaves a tail), in an outer loop that may run in reverse with a bound in
/// hexadecimal, carrying a decayed sum through the inner loop, then an empty loop.
fn triangular(u: &mut Unstructured, src: &mut String) -> Result<()> {
    let b = *u.choose(&[1u64, 4, 8, 16])?;
    let n = b * u.int_in_range(1..=6)?;
    let (lo, hi) = match u.int_in_range(0..=6)? {
        0 => ("0".to_string(), "i".to_string()),
        1 => ("0".to_string(), format!("i + {b}")),
        2 => ("i".to_string(), n.to_string()),
        3 => (format!("i + {b}"), n.to_string()),
        // Steps that do not divide the range: a partial last iteration, and one whose
        // window passes the tensor's extent (clamped).
        4 => ("0".to_string(), format!("i + {}", b / 2 + 1)),
        5 => (format!("i + {}", b / 2), n.to_string()),
        _ => (format!("{n} - i - {b}"), n.to_string()),
    };
    let rev = if u.arbitrary()? { "rev " } else { "" };
    let bound = if u.arbitrary()? { format!("{n:#x}") } else { n.to_string() };
    let _ = writeln!(src, "kernel tri(x: f32[{n}, {n}], y: out f32[{n}, {b}]) {{");
    let _ = writeln!(src, "  for i in {rev}0..{bound} step {b}{} {{", buffers(u)?);
    let _ = writeln!(src, "    let acc = zeros(f32[{b}, {b}]);");
    let _ = writeln!(src, "    for j in {lo} .. {hi} step {b} {{");
    let _ = writeln!(src, "      let t = load x[i .. i + {b}, j .. j + {b}];");
    let e = expr(u, &["t", "acc"], 3)?;
    if u.arbitrary()? {
        // Only some blocks: a branch on both loop variables.
        let c = condition(u, &["i", "j"], 2)?;
        let _ = writeln!(src, "      if {c} {{\n        acc = acc * 0.5 + {e};\n      }}");
    } else {
        let _ = writeln!(src, "      acc = acc * 0.5 + {e};");
    }
    let _ = writeln!(src, "    }}");
    let _ = writeln!(src, "    store y[i .. i + {b}, :] = acc;");
    let _ = writeln!(src, "  }}");
    if u.arbitrary()? {
        let _ = writeln!(src, "  for i in {n}..0 step {b} {{");
        let _ = writeln!(src, "    store y[i .. i + {b}, :] = load x[i .. i + {b}, 0 .. {b}];");
        let _ = writeln!(src, "  }}");
    }
    let _ = writeln!(src, "}}");
    Ok(())
}

/// An integer expression over i32 tiles: bit operations, shifts, `~`, `**`, and `//`
/// and `%` (by tiles that may hold 0, which gives 0).
fn int_expr(u: &mut Unstructured, leaves: &[&str], depth: u32) -> Result<String> {
    if depth == 0 || u.ratio(1, 3)? {
        return Ok(u.choose(leaves)?.to_string());
    }
    let d = depth - 1;
    Ok(match u.int_in_range(0..=6)? {
        0 => format!("~{}", int_expr(u, leaves, d)?),
        // Through 8 bits and back: integer conversions wrap.
        6 => format!(
            "(({}) as {} as i32)",
            int_expr(u, leaves, d)?,
            u.choose(&["i8", "u8"])?
        ),
        1 => format!("({} ** 2)", int_expr(u, leaves, d)?),
        2 => format!(
            "({} {} {})",
            int_expr(u, leaves, d)?,
            u.choose(&["<<", ">>"])?,
            u.choose(&["0", "1", "4", "31"])?
        ),
        3 => format!(
            "{}({}, {})",
            u.choose(&["maximum", "minimum"])?,
            int_expr(u, leaves, d)?,
            int_expr(u, leaves, d)?
        ),
        _ => format!(
            "({} {} {})",
            int_expr(u, leaves, d)?,
            u.choose(&["&", "|", "^", "<<", ">>", "+", "-", "*", "//", "%"])?,
            int_expr(u, leaves, d)?
        ),
    })
}

/// i32 tiles in row tiles with a tail: bit operations (int4 unpacking's kind), round
/// trips through `i8` and `u8`, shifts
/// by tiles (the inputs hold 0 .. 15) and by constants, integer reductions, `argmax`
/// and `argmin`.
fn bits(u: &mut Unstructured, src: &mut String) -> Result<()> {
    let (m, c) = (extent(u)?, extent(u)?);
    let s = step(u, m.min(32))?;
    let _ = writeln!(src, "kernel bi(q: i32[{m}, {c}], p: i32[{m}, {c}], y: out i32[{m}, {c}]) {{");
    let _ = writeln!(src, "  for r in 0..{m} step {s}{} {{", buffers(u)?);
    let _ = writeln!(src, "    let a = load q[r .. r + {s}, :];");
    let _ = writeln!(src, "    let b = load p[r .. r + {s}, :];");
    let mut e = int_expr(u, &["a", "b", "0xF", "3"], 4)?;
    // An integer reduction or position along either axis, broadcast back (its sum
    // wraps).
    if u.ratio(1, 3)? {
        let red = u.choose(&["sum", "amax", "amin", "argmax", "argmin"])?;
        e = format!("{red}({e}, axis={})", u.int_in_range(0..=1)?);
    }
    let _ = writeln!(src, "    store y[r .. r + {s}, :] = a + {e};");
    let _ = writeln!(src, "  }}");
    let _ = writeln!(src, "}}");
    Ok(())
}

/// Tile slices in a row loop with a tail: windows of the loaded tile at any column
/// (canonicalize makes them loads), of a computed tile at UB-aligned columns (vector
/// copies), windows of the tensor that leave it filled by `pad`, strided column planes (`p .. W
/// step S`), rows and columns by integer index (their axis dropped), and row windows moving
/// with an inner loop into a carried accumulator.
fn slices(u: &mut Unstructured, src: &mut String) -> Result<()> {
    let m = extent(u)?;
    let s = step(u, m.min(32))?;
    let w = *u.choose(&[64u64, 128, 192])?;
    let _ = writeln!(
        src,
        "kernel sl(x: f32[{m}, {w}], y: out f32[{m}, 64], z: out f32[1, 64]) {{"
    );
    let _ = writeln!(src, "  let acc = zeros(f32[1, 64]);");
    let _ = writeln!(src, "  for r in 0..{m} step {s}{} {{", buffers(u)?);
    let _ = writeln!(src, "    let t = load x[r .. r + {s}, :];");
    let c = expr(u, &["t"], 2)?;
    let _ = writeln!(src, "    let c = t + {c};");
    let loaded = u.int_in_range(0..=w - 64)?;
    let computed = 64 * u.int_in_range(0..=w / 64 - 1)?;
    // A window of x that may leave it on either side, filled by `pad`.
    let shift = u.int_in_range(-80i64..=w as i64 + 16)?;
    let fill = u.choose(&["0.0", "-1.5", "3.0"])?;
    let leaves = [
        format!("t[:, {loaded} .. {}]", loaded + 64),
        format!("c[:, {computed} .. {}]", computed + 64),
        // The same window through shapes: a reshape round trip (whole tiles only: a
        // tail tile may not regroup), or a squeeze of an added unit axis.
        if m % s == 0 {
            format!(
                "reshape(reshape(c, [{w}, {s}]), [{s}, {w}])[:, {computed} .. {}]",
                computed + 64
            )
        } else {
            format!(
                "squeeze(unsqueeze(c[:, {computed} .. {}], axis=0), axis=0)",
                computed + 64
            )
        },
        format!("load x[r .. r + {s}, {shift} .. {}] pad {fill}", shift + 64),
        // Every `w / 64`-th column from a plane `p`: 64 positions for any `p` below it.
        format!(
            "load x[r .. r + {s}, {} .. {w} step {}]",
            u.int_in_range(0..=w / 64 - 1)?,
            w / 64
        ),
        // Integer indices drop their axis (numpy): a row of x broadcast over the tile,
        // put back as [1, 64] or not, and a column (with the loop's tail) as [s, 1].
        format!(
            "load x[{}, {loaded} .. {}]",
            u.int_in_range(0..=m - 1)?,
            loaded + 64
        ),
        format!("unsqueeze(load x[{}, {computed} .. {}], axis=0)", m - 1, computed + 64),
        format!(
            "unsqueeze(load x[r .. r + {s}, {}], axis=1)",
            u.int_in_range(0..=w - 1)?
        ),
        // A column of the loaded tile by position: the load's own integer index.
        format!("unsqueeze(t[:, {}], axis=1)", u.int_in_range(0..=w - 1)?),
        // Every other column of the loaded tile from `p`: the load takes the step.
        if w >= 128 {
            let p = u.int_in_range(0..=w - 128)?;
            format!("t[:, {p} .. {} step 2]", p + 128)
        } else {
            format!("t[:, {loaded} .. {}]", loaded + 64)
        },
        // Rows shifted up or down, leaving the tensor: the rows outside hold the fill.
        {
            let down = u.int_in_range(-(s as i64)..=s as i64)?;
            format!(
                "load x[r + {down} .. r + {down} + {s}, {computed} .. {}] pad {fill}",
                computed + 64
            )
        },
    ];
    let refs: Vec<&str> = leaves.iter().map(String::as_str).collect();
    let e = expr(u, &refs, 3)?;
    let _ = writeln!(src, "    store y[r .. r + {s}, :] = {e};");
    // Row windows past 0 of a tail tile could be empty (a located error): they come
    // when the step divides the rows.
    if m % s == 0 && u.arbitrary()? {
        let j = u.int_in_range(0..=s - 1)?;
        let _ = writeln!(src, "    for j in 0..{} {{", s - j);
        let _ = writeln!(
            src,
            "      acc += c[j + {j} .. j + {}, {computed} .. {}];",
            j + 1,
            computed + 64
        );
        let _ = writeln!(src, "    }}");
    }
    let _ = writeln!(src, "  }}");
    // By integer index the region is [64], and the [1, 64] value drops its leading axis.
    let z = if u.arbitrary()? { "0, :" } else { ":, :" };
    let _ = writeln!(src, "  store z[{z}] = acc;");
    let _ = writeln!(src, "}}");
    Ok(())
}

impl<'a> Arbitrary<'a> for Case {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut source = String::new();
        match u.int_in_range(0..=8)? {
            0 => elementwise(u, &mut source)?,
            7 => slices(u, &mut source)?,
            1 => reduction(u, &mut source)?,
            2 => matmul(u, &mut source)?,
            3 => two_products(u, &mut source)?,
            4 => carried(u, &mut source)?,
            5 => triangular(u, &mut source)?,
            6 => bits(u, &mut source)?,
            _ => gather(u, &mut source)?,
        }
        Ok(Case {
            source,
            preset: u.choose(&["a3", "a3", "teach"])?,
            sync: *u.choose(&[
                SyncStrategy::Auto,
                SyncStrategy::Auto,
                SyncStrategy::Barrier,
            ])?,
            auto_multi_buffer: u.arbitrary()?,
            seed: u.int_in_range(0..=3)?,
        })
    }
}

fuzz_target!(|case: Case| {
    let options = CompileOptions {
        preset: Some(case.preset.to_string()),
        sync: case.sync,
        auto_multi_buffer: case.auto_multi_buffer,
        clock: tilescope::compile::PassClock::NONE,
        ..CompileOptions::default()
    };
    let r = tilescope::run::run(&case.source, &options, Vec::new(), case.seed);
    let errors = r.diagnostics.iter().any(|d| d.severity == Severity::Error);
    if std::env::var_os("FUZZ_SHOW").is_some() {
        // For checking what the generator makes: `FUZZ_SHOW=1 compile_run -runs=100`.
        let first = r.compile.diagnostics.first().map(|d| d.message.as_str());
        eprintln!(
            "{}ok={} {first:?}\n",
            case.source,
            r.compile.ok() && !errors
        );
    }
    if !r.compile.ok() || errors || r.compile.program.is_none() {
        return;
    }
    let limit =
        |k: SimErrorKind| matches!(k, SimErrorKind::InstructionLimit | SimErrorKind::CycleLimit);
    if r.sim.errors.iter().any(|e| limit(e.kind)) {
        return;
    }
    assert!(
        r.sim.errors.is_empty(),
        "simulation errors {:#?}\n{case:#?}\n{}",
        r.sim.errors,
        case.source
    );
    if case.sync == SyncStrategy::Auto {
        assert!(r.sim.races.is_empty(), "races {:#?}\n{}", r.sim.races, case.source);
    }
    assert!(
        r.bound <= r.sim.cycles,
        "bound {} above the simulated {} cycles\n{case:#?}",
        r.bound,
        r.sim.cycles
    );
    assert!(
        r.reference_match || within_conditioning(&case, &options, &r),
        "simulator differs from the reference (max err {})\n{case:#?}\n{}",
        r.max_abs_err,
        case.source
    );
    // Last, so that a slow schedule never hides a wrong answer: auto sync never gives
    // away what barriers get (`run::auto_sync_limit`). Asked for with `FUZZ_SYNC_COST=1`:
    // its findings are slow code, not wrong code, and a run that stopped at the first
    // one would stop looking for wrong answers (docs/fuzzing.md).
    if case.sync == SyncStrategy::Auto && std::env::var_os("FUZZ_SYNC_COST").is_some() {
        let barrier_options = CompileOptions {
            sync: SyncStrategy::Barrier,
            ..options.clone()
        };
        let b = tilescope::run::run(&case.source, &barrier_options, Vec::new(), case.seed);
        if b.diagnostics.is_empty() && b.sim.errors.is_empty() {
            let most = tilescope::run::auto_sync_limit(&r.sim, &b.sim);
            assert!(
                r.sim.cycles as f64 <= most,
                "auto sync {} cycles against barriers' {}\n{case:#?}\n{}",
                r.sim.cycles,
                b.sim.cycles,
                case.source
            );
        }
    }
});

/// Relative size of the input perturbations that measure an output's conditioning:
/// 16 f32 ulps, so the response stands well above rounding noise in the inputs.
const PERTURBATION: f32 = 1.0 / (1u32 << 19) as f32;
/// How many times the perturbed reference's movement a difference may reach.
const CONDITIONING_SLACK: f32 = 4.0;

/// Whether every out-of-tolerance element is within the noise that the f32 reference
/// itself cannot pin down. Two sources, both legitimate differences of evaluation order
/// (the simulator's reduction and accumulation order, a reciprocal-multiply for a
/// division):
/// - ill-conditioned outputs: `sum((t - mean(t)) / mean(t))` is exactly zero in real
///   arithmetic, so both sides print rounding noise amplified by `1 / mean`. An
///   element's noise scale is how far the reference moves when the f32 inputs are
///   perturbed by a few ulps (two sign patterns).
/// - a narrowing cast inside the kernel (`p as f16` before a product): an intermediate
///   one f32 ulp apart rounds to the neighbouring f16 value, an error of one f16 ulp of
///   the intermediate carried into the output. Such kernels may differ by a few f16
///   (bf16) ulps of the output's largest magnitude.
/// - non-finite outputs (noise divided by an exact zero): on both sides, or where the
///   perturbed references do not reproduce the reference's, any value is as right as
///   the reference's.
/// A real miscompile (a stale tile, a wrong offset) moves elements by their own size,
/// far beyond any of these allowances.
fn within_conditioning(
    case: &Case,
    options: &CompileOptions,
    r: &tilescope::run::RunResult,
) -> bool {
    let (_, cx) = tilescope::compile::compile_with_context(&case.source, options);
    let Some(hir) = cx.hir.as_ref() else {
        return false;
    };
    let Ok(inputs) = tilescope::inputs::prepare(hir, Vec::new(), case.seed) else {
        return false;
    };
    let perturbed_reference = |flip: usize| {
        let mut tensors = inputs.clone();
        for (p, t) in hir.params.iter().zip(tensors.iter_mut()) {
            if p.is_out || t.dtype != tilescope::types::DType::F32 {
                continue;
            }
            for i in 0..t.len() {
                let sign = if (i * 7 + flip).count_ones() % 2 == 0 {
                    1.0
                } else {
                    -1.0
                };
                t.set(i, t.get(i) * (1.0 + sign * PERTURBATION));
            }
        }
        tilescope::interp::run(hir, &mut tensors)
            .ok()
            .map(|()| tensors)
    };
    let (Some(a), Some(b)) = (perturbed_reference(0), perturbed_reference(1)) else {
        return false;
    };
    // 8 ulps of the narrow type, relative to the output's largest magnitude.
    let narrowing = if case.source.contains("bf16") {
        8.0 / 256.0
    } else if case.source.contains("f16") {
        8.0 / 2048.0
    } else {
        0.0
    };
    hir.params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_out)
        .all(|(i, p)| {
            let Some(out) = r.outputs.iter().find(|o| o.name == p.name) else {
                return false;
            };
            let (Some(sim), Some(reference)) = (&out.tensor, &out.reference) else {
                return false;
            };
            if reference.dtype == tilescope::types::DType::I32 {
                return out.matches;
            }
            let largest = (0..reference.len())
                .map(|j| reference.get(j).abs())
                .filter(|v| v.is_finite())
                .fold(0.0f32, f32::max);
            (0..reference.len()).all(|j| {
                let (e, s) = (reference.get(j), sim.get(j));
                let (pa, pb) = (a[i].get(j), b[i].get(j));
                let moved = (pa - e).abs().max((pb - e).abs());
                match (e.is_finite(), s.is_finite()) {
                    (true, true) => {}
                    // Both divided by an exact zero (or overflowed): what is left is the sign
                    // of a numerator that may be evaluation-order noise, as in
                    // `acc / (acc - mean(acc, axis=1))` over one column.
                    (false, false) => return true,
                    // Unless the perturbed references reproduce the reference's non-finite
                    // value, it is itself noise over an exact zero.
                    (false, true) => {
                        let same = |x: f32| x == e || (x.is_nan() && e.is_nan());
                        return !(same(pa) && same(pb));
                    }
                    // The simulator divided by an exact zero where the reference divided by
                    // noise: only when the reference is mostly noise.
                    (true, false) => return !moved.is_finite() || moved >= 0.5 * e.abs(),
                }
                let tolerance = (1e-5 * e.abs()).max(1e-6);
                (s - e).abs() <= tolerance + CONDITIONING_SLACK * moved + narrowing * largest
            })
        })
}
