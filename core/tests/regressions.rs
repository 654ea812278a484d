//! Inputs the fuzzers found (`fuzz/`, see docs/fuzzing.md), kept as literals so the
//! normal suite guards each fix. Each test names the target that found it.

use tilescope::compile::CompileOptions;
use tilescope::run::{run, RunResult};

/// As the fuzzer ran them: no automatic multi-buffering, so each case keeps the buffer
/// layout it was found with.
fn options() -> CompileOptions {
    CompileOptions {
        clock: tilescope::compile::PassClock::NONE,
        auto_multi_buffer: false,
        ..CompileOptions::default()
    }
}

fn run_source(source: &str) -> RunResult {
    run(source, &options(), Vec::new(), 0)
}

/// Compiles, runs on the simulator and the reference, and requires they agree with no
/// error and no race.
fn assert_matches_reference(source: &str) {
    let r = run_source(source);
    assert!(r.compile.ok(), "{:?}", r.compile.diagnostics);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(r.sim.errors.is_empty(), "{:#?}", r.sim.errors);
    assert!(r.sim.races.is_empty(), "{:#?}", r.sim.races);
    assert!(r.reference_match, "max error {}", r.max_abs_err);
}

/// compile_run: in the tail iteration (1 of 3 rows valid) the gather used all 3 rows
/// of the index tile, and the stale lanes past the valid one were out of range.
#[test]
fn gather_in_a_tail_moves_only_the_valid_index_rows() {
    assert_matches_reference(
        "kernel ga(ids: i32[4], table: f32[16, 4], y: out f32[4, 4]) {\n\
           for i in 0..4 step 3 {\n\
             let idx = load ids[i .. i + 3];\n\
             let rows = load table[idx, :];\n\
             store y[i .. i + 3, :] = rows + rows;\n\
           }\n\
         }\n",
    );
    // A computed index inherits the tail, and a reduction over the gathered rows
    // ignores the rows past it.
    assert_matches_reference(
        "kernel ga(ids: i32[10], table: f32[24, 8], y: out f32[10, 1]) {\n\
           for i in 0..10 step 4 {\n\
             let idx = load ids[i .. i + 4];\n\
             let rows = load table[idx + 3, :];\n\
             store y[i .. i + 4, :] = sum(rows * 2.0, axis=1);\n\
           }\n\
         }\n",
    );
}

/// compile_run: `sqrt` of a negative input made a NaN that the simulator's `amin`
/// dropped (`f32::min`) while the reference propagated it as numpy does.
#[test]
fn nan_propagates_through_min_max_and_relu_as_in_numpy() {
    let source = "kernel red(x: f32[1, 4], y: out f32[1, 1]) {\n\
                    for r in 0..1 step 1 {\n\
                      let acc = zeros(f32[1, 1]);\n\
                      for c in 0..4 step 2 {\n\
                        let t = load x[r .. r + 1, c .. c + 2];\n\
                        acc += amin(((exp(sqrt(t))) as bf16 as f32), axis=1);\n\
                      }\n\
                      store y[r .. r + 1, :] = neg(minimum(acc, acc));\n\
                    }\n\
                  }\n";
    // Seed 3 makes x[0, 0] negative.
    let r = run(source, &options(), Vec::new(), 3);
    assert!(r.reference_match, "{:?}", r.outputs);
    let y = r.outputs[0].tensor.as_ref().expect("simulated output");
    assert!(y.get(0).is_nan());
    let elementwise = "kernel k(x: f32[8, 8], y: out f32[8, 8]) {\n\
                         let t = sqrt(load x[:, :]);\n\
                         store y[:, :] = relu(maximum(t, 0.5)) + amax(t, axis=1);\n\
                       }\n";
    assert_matches_reference(elementwise);
}

/// compile_run: a matmul over a loop tail of K (4 in steps of 3) multiplied the stale
/// lanes past the valid column; the tail's operand is now zero-filled before its load.
#[test]
fn matmul_over_a_tail_of_k_matches_the_reference() {
    for source in [
        "kernel mm(a: f32[16, 4], w: f32[4, 16], c: out f32[16, 16]) {\n\
           let acc = zeros(f32[16, 16]);\n\
           for k in 0..4 step 3 {\n\
             acc += load a[:, k .. k + 3] @ load w[k .. k + 3, :];\n\
           }\n\
           store c[:, :] = acc;\n\
         }\n",
        "kernel mm(a: f16[8, 8], w: f16[8, 8], c: out f32[8, 8]) {\n\
           let acc = zeros(f32[8, 8]);\n\
           for k in 0..8 step 6 {\n\
             acc += load a[:, k .. k + 6] @ (load w[:, k .. k + 6]).T;\n\
           }\n\
           store c[:, :] = acc;\n\
         }\n",
    ] {
        assert_matches_reference(source);
    }
    // Tails on M and N stay supported: the product's masked rows are never stored.
    assert_matches_reference(
        "kernel mm(a: f32[20, 16], w: f32[16, 16], c: out f32[20, 16]) {\n\
           for i in 0..20 step 8 {\n\
             store c[i .. i + 8, :] = load a[i .. i + 8, :] @ load w[:, :];\n\
           }\n\
         }\n",
    );
}

/// compile_run: a literal meeting an f16 tile takes the tile's dtype in the reference
/// (as numpy's Python scalars do), but the compiled vector op multiplied by the f32
/// literal. `* 1e-3` then differed by an f16 ulp in places, which a near-cancelling
/// product and `recip` amplified to 465 in the output.
#[test]
fn a_literal_takes_the_dtype_of_the_tile_it_meets() {
    // The scalar operand the vector op carries is the literal rounded to the tile's
    // dtype: 0.1 is 0.099975586 in f16 and 0.100097656 in bf16.
    for (dtype, operand) in [
        ("f16", "0.099975586"),
        ("bf16", "0.100097656"),
        ("f32", "0.1"),
    ] {
        let source = format!(
            "kernel k(x: {dtype}[16, 16], y: out {dtype}[16, 16]) {{\n    store y[:, :] = load x[:, :] * 0.1;\n}}\n"
        );
        let r = run_source(&source);
        let asm = r.compile.asm.clone().unwrap_or_default();
        assert!(
            asm.lines()
                .any(|l| l.starts_with("vmul") && l.contains(&format!(", {operand} "))),
            "{asm}"
        );
        assert!(r.reference_match, "{dtype}: max error {}", r.max_abs_err);
    }
    let found = "kernel at(q: f16[8, 32], kk: f16[32, 32], v: f16[32, 32], o: out f32[8, 32]) {\n\
                   let kt = load kk[:, :];\n\
                   let vt = load v[:, :];\n\
                   for i in 0..8 step 8 @buffers(2) {\n\
                     let qt = load q[i .. i + 8, :];\n\
                     let kx = kt * 1e-3;\n\
                     let s = qt @ kx.T;\n\
                     let p = (recip(s) - gelu(s));\n\
                     store o[i .. i + 8, :] = (p as f16) @ vt;\n\
                   }\n\
                 }\n";
    let r = run(found, &CompileOptions::default(), Vec::new(), 3);
    assert!(r.reference_match, "max error {}", r.max_abs_err);
}

/// compile_run (a timeout): six `if`s that each rewrite the carried `c0`, in an
/// `@buffers(3)` loop inside two more loops. insert-sync kept what holds per branch run
/// for every run walked and copied it at each branch, work that grew with the square of
/// the runs; it now keeps the most recent runs only (`sync/paths.rs`, `MAX_TAGS`).
/// Here: it compiles and matches the reference under auto sync.
#[test]
fn six_branches_in_a_buffered_nest_compile_and_match() {
    let source = r#"kernel cr(x: f32[1040, 32], y: out f32[16, 32], z: out f32[16, 1]) {
  let s0 = zeros(f32[16, 32]);
  for a in 0..4 {
    let s1 = zeros(f32[16, 32]);
    for b in 0..4 {
      let c0 = load x[1024 .. 1040, :];
      let m = full(f32[16, 1], -inf);
      let l = zeros(f32[16, 1]);
      for c in 0..4 @buffers(3) {
        let t = load x[((((0) * 4 + a) * 4 + b) * 4 + c) * 16 .. ((((0) * 4 + a) * 4 + b) * 4 + c) * 16 + 16, :];
        if b % 2 == 0 {
        let n0 = c0 * 0.5 + t;
        c0 = c0 * 0.5 + c0 * 0.25;
        c0 = n0;
        }
        if a % 2 == 0 {
        let n1 = c0 * 0.5 + t;
        c0 = c0 * 0.5 + c0 * 0.25;
        c0 = n1;
        }
        if a % 2 == 0 {
        let n2 = c0 * 0.5 + t;
        c0 = c0 * 0.5 + c0 * 0.25;
        c0 = n2;
        }
        if a % 2 == 0 {
        let n3 = c0 * 0.5 + t;
        c0 = c0 * 0.5 + c0 * 0.25;
        c0 = n3;
        }
        if a % 2 == 0 {
        let n4 = c0 * 0.5 + t;
        c0 = c0 * 0.5 + c0 * 0.25;
        c0 = n4;
        }
        if a % 2 == 0 {
        let n5 = c0 * 0.5 + t;
        c0 = c0 * 0.5 + c0 * 0.25;
        c0 = n5;
        }
      }
      s1 = s1 + (c0) * 0.5;
    }
    s0 = s0 + (s1) * 0.5;
  }
  store y[:, :] = s0;
  store z[:, :] = zeros(f32[16, 1]);
}
"#;
    assert_matches_reference(source);
}

/// compile_run: a padded window of one row that starts above the tensor. The rows'
/// axis was taken to be the first of more than one position, so this window's row kept
/// its negative offset and the `dmapad` read before `x` (a simulation error). The
/// leaving range is now whichever leading range may leave, of any extent.
#[test]
fn a_padded_window_of_one_row_above_the_tensor_is_filled() {
    assert_matches_reference(
        "kernel sl(x: f32[1, 64], y: out f32[1, 64], z: out f32[1, 64]) {
  let acc = zeros(f32[1, 64]);
  for r in 0..1 step 1 {
    let t = load x[r .. r + 1, :];
    let c = t + t;
    store y[r .. r + 1, :] = load x[r + -1 .. r + -1 + 1, 0 .. 64] pad 0.0;
    for j in 0..1 {
      acc += c[j + 0 .. j + 1, 0 .. 64];
    }
  }
  store z[:, :] = acc;
}",
    );
}
