//! Structure-aware: mostly well-typed kernels (elementwise chains, reductions, matmuls,
//! attention-shaped loops of two products, loops with tails and `@buffers`, gathers)
//! generated from the fuzzer's bytes, printed to source and run end to end. When the
//! compile and the reference interpreter succeed, the simulator must match the
//! reference without errors, and under `auto` sync report no race: a mismatch is a
//! finding just like a panic.
#![no_main]

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use std::fmt::Write;
use tilescope::compile::{CompileOptions, SyncStrategy};
use tilescope::diag::Severity;
use tilescope::sim::SimErrorKind;

const UNARY: &[&str] = &[
    "exp", "log", "sqrt", "rsqrt", "abs", "neg", "relu", "sigmoid", "tanh", "gelu", "silu", "recip",
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
    Ok(match u.int_in_range(0..=6)? {
        0 | 1 => format!("{}({})", u.choose(UNARY)?, expr(u, leaves, d)?),
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
        // A row reduction broadcast back over the row (subtracted, or divided as in a
        // softmax, which vector-peephole may turn into a reciprocal and a multiply).
        5 => format!(
            "({} {} {}({}, axis=1))",
            expr(u, leaves, d)?,
            u.choose(&["-", "/"])?,
            u.choose(REDUCE)?,
            expr(u, leaves, d)?
        ),
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
    let _ = writeln!(
        src,
        "kernel ga(ids: i32[{g}], table: f32[{table}, {c}], y: out f32[{g}, {c}]) {{"
    );
    let _ = writeln!(src, "  for i in 0..{g} step {s}{} {{", buffers(u)?);
    let _ = writeln!(src, "    let idx = load ids[i .. i + {s}];");
    let _ = writeln!(src, "    let rows = load table[{idx}, :];");
    let e = expr(u, &["rows"], 3)?;
    let _ = writeln!(src, "    store y[i .. i + {s}, :] = rows + {e};");
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

impl<'a> Arbitrary<'a> for Case {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut source = String::new();
        match u.int_in_range(0..=4)? {
            0 => elementwise(u, &mut source)?,
            1 => reduction(u, &mut source)?,
            2 => matmul(u, &mut source)?,
            3 => two_products(u, &mut source)?,
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
        clock: None,
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
    if r.errors.iter().any(|e| limit(e.kind)) {
        return;
    }
    assert!(
        r.errors.is_empty(),
        "simulation errors {:#?}\n{case:#?}\n{}",
        r.errors,
        case.source
    );
    if case.sync == SyncStrategy::Auto {
        assert!(r.races.is_empty(), "races {:#?}\n{}", r.races, case.source);
    }
    assert!(
        r.reference_match,
        "simulator differs from the reference (max err {})\n{case:#?}\n{}",
        r.max_abs_err, case.source
    );
});
