//! Kernels off the examples' beaten path (ranks 1, 3 and 4, tails on rows and columns,
//! transposes in UB and into L0, chained matmuls, scatters with computed indices,
//! integers, bf16, broadcast stores, nested loop-carried values), each compiled and
//! simulated against the reference interpreter.

mod run_support;

fn check(source: &str) {
    run_support::check_against_reference(source, 11);
}

/// Runs `source` on `preset` with input `x`, clean and matching the reference; returns
/// a reader of the first `n` elements of an i32 output.
fn i32_outputs(
    source: &str,
    preset: &str,
    x: &tilescope::tensor::Tensor,
) -> impl Fn(&str, usize) -> Vec<i32> {
    let options = tilescope::compile::CompileOptions {
        preset: Some(preset.to_string()),
        ..Default::default()
    };
    let r = tilescope::run::run(source, &options, vec![("x".into(), x.clone())], 1);
    assert!(r.diagnostics.is_empty(), "{preset}: {:?}", r.diagnostics);
    assert!(
        r.sim.errors.is_empty() && r.sim.races.is_empty(),
        "{preset}"
    );
    assert!(r.reference_match, "{preset}: max abs err {}", r.max_abs_err);
    move |name: &str, n: usize| {
        let o = r.outputs.iter().find(|o| o.name == name).expect(name);
        let t = o.tensor.as_ref().expect("a simulated tensor");
        (0..n).map(|i| t.get_i32(i)).collect()
    }
}

#[test]
fn rank3_single_index() {
    check(
        r#"kernel k(x: f32[4, 8, 16], y: out f32[4, 8, 16]) {
    for i in 0..4 {
        let t = load x[i, :, :];
        store y[i, :, :] = exp(t) + 1.0;
    }
}
"#,
    );
}

#[test]
fn rank1_tail() {
    check(
        r#"kernel k(x: f32[100], y: out f32[100]) {
    for i in 0..100 step 32 {
        let t = load x[i .. i + 32];
        store y[i .. i + 32] = t * t;
    }
}
"#,
    );
}

#[test]
fn transpose_in_ub() {
    check(
        r#"kernel k(x: f32[16, 32], y: out f32[32, 16]) {
    let t = load x[:, :];
    store y[:, :] = t.T * 2.0;
}
"#,
    );
}

#[test]
fn cast_and_mean_axis0() {
    check(
        r#"kernel k(x: f32[16, 32], y: out f16[16, 32], z: out f32[1, 32]) {
    let t = load x[:, :];
    store y[:, :] = t as f16;
    store z[:, :] = mean(t, axis=0);
}
"#,
    );
}

#[test]
fn nested_loops_transposed_blocks() {
    check(
        r#"kernel k(x: f32[64, 64], y: out f32[64, 64]) {
    for i in 0..4 {
        for j in 0..4 {
            let t = load x[i * 16 .. i * 16 + 16, j * 16 .. j * 16 + 16];
            store y[j * 16 .. j * 16 + 16, i * 16 .. i * 16 + 16] = t.T;
        }
    }
}
"#,
    );
}

#[test]
fn chained_matmuls_with_transposed_operand() {
    check(
        r#"kernel k(a: f32[16, 32], b: f32[32, 16], y: out f32[16, 16]) {
    let x = load a[:, :];
    let w = load b[:, :];
    let p = relu(x) @ w;
    store y[:, :] = p @ (p.T);
}
"#,
    );
}

#[test]
fn column_tail_broadcast() {
    check(
        r#"kernel k(x: f32[8, 100], y: out f32[8, 100]) {
    for c in 0..100 step 32 {
        let t = load x[:, c .. c + 32];
        let m = amax(t, axis=1);
        store y[:, c .. c + 32] = t - m;
    }
}
"#,
    );
}

#[test]
fn rank4_elementwise() {
    check(
        r#"kernel k(x: f32[4, 4, 4, 4], y: out f32[4, 4, 4, 4]) {
    let t = load x[:, :, :, :];
    store y[:, :, :, :] = t + 1.0;
}
"#,
    );
}

#[test]
fn mixed_split_index() {
    check(
        r#"kernel k(x: f32[64, 16], y: out f32[64, 16]) {
    for b in 0..16 {
        let t = load x[(b % 4) * 4 + (b // 4) * 16 .. (b % 4) * 4 + (b // 4) * 16 + 4, :];
        store y[b * 4 .. b * 4 + 4, :] = t;
    }
}
"#,
    );
}

#[test]
fn nested_loop_carried() {
    check(
        r#"kernel k(x: f32[8, 16], y: out f32[8, 16]) {
    let acc = zeros(f32[8, 16]);
    for r in 0..4 {
        for c in 0..2 {
            acc += load x[:, :] * 0.5;
        }
    }
    store y[:, :] = acc;
}
"#,
    );
}

#[test]
fn computed_scatter() {
    check(
        r#"kernel k(ids: i32[8, 1], upd: f32[8, 32], y: out f32[40, 32]) {
    let idx = load ids[:, :];
    let u = load upd[:, :];
    store y[idx * 2 + 1, :] = u;
}
"#,
    );
}

#[test]
fn row_tail_mean_multibuffered() {
    check(
        r#"kernel k(x: f32[50, 16], y: out f32[1, 16]) {
    let acc = zeros(f32[1, 16]);
    for r in 0..50 step 16 @buffers(2) {
        let t = load x[r .. r + 16, :];
        acc += mean(t, axis=0);
    }
    store y[:, :] = acc;
}
"#,
    );
}

#[test]
fn integer_arithmetic() {
    check(
        r#"kernel k(x: i32[16, 8], y: out i32[16, 8]) {
    let t = load x[:, :];
    store y[:, :] = t * 3 + t;
}
"#,
    );
}

#[test]
fn offset_loop_bf16() {
    check(
        r#"kernel k(x: f32[16, 8], y: out bf16[16, 8]) {
    for r in 4..16 step 4 {
        let t = load x[r .. r + 4, :];
        store y[r .. r + 4, :] = (t * 3.0) as bf16;
    }
}
"#,
    );
}

#[test]
fn broadcast_store() {
    check(
        r#"kernel k(x: f32[16, 8], y: out f32[16, 8]) {
    let t = load x[:, :];
    store y[:, :] = 1.0;
}
"#,
    );
}

#[test]
fn two_carried_values() {
    check(
        r#"kernel k(x: f32[8, 8], y: out f32[8, 8]) {
    let acc = full(f32[8, 8], -inf);
    let s = zeros(f32[8, 8]);
    for i in 0..3 {
        let t = load x[:, :];
        acc = maximum(acc, t * 2.0);
        s -= t;
    }
    store y[:, :] = acc + s;
}
"#,
    );
}

#[test]
fn row_tail_reduction() {
    check(
        r#"kernel k(x: f32[100, 24], y: out f32[100, 1]) {
    for r in 0..100 step 16 {
        let t = load x[r .. r + 16, :];
        store y[r .. r + 16, :] = sum(exp(t), axis=1);
    }
}
"#,
    );
}

#[test]
fn matmul_then_matmul_transposed() {
    check(
        r#"kernel k(x: f32[64, 32], w: f32[32, 32], y: out f32[64, 32]) {
    let wt = load w[:, :];
    for r in 0..64 step 16 {
        let t = load x[r .. r + 16, :];
        let h = t @ wt;
        store y[r .. r + 16, :] = (h @ wt.T) + h;
    }
}
"#,
    );
}

/// Python's `range`: a loop whose start is not below its end runs zero times, here
/// inside a loop that runs, with ranges that would leave the tensor if it ran, and one
/// at the top level before a loop-carried sum.
#[test]
fn empty_loops_run_zero_times() {
    check(
        r#"kernel k(x: f32[16, 64], y: out f32[16, 64], s: out f32[8, 64]) {
    for r in 0..16 step 8 {
        let t = load x[r .. r + 8, :];
        for c in 64..0 step 32 {
            store y[r .. r + 8, c .. c + 32] = load x[r .. r + 8, c .. c + 32];
        }
        store y[r .. r + 8, :] = t * 2.0;
    }
    let acc = full(f32[8, 64], 0.0);
    for r in 16..16 step 8 {
        acc += load x[r .. r + 8, :];
    }
    for r in 0..16 step 8 {
        acc += load x[r .. r + 8, :];
    }
    store s[:, :] = acc;
}
"#,
    );
}

/// Runs `source` with `x` holding its row number in every element (`rows` by `cols`)
/// and returns the outputs named, as f32 (empty when one is missing).
fn outputs_with_row_numbers(
    source: &str,
    rows: usize,
    cols: usize,
    names: &[&str],
) -> Vec<Vec<f32>> {
    use tilescope::compile::CompileOptions;
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let values: Vec<f32> = (0..rows * cols).map(|n| (n / cols) as f32).collect();
    let x = Tensor::from_f32(DType::F32, vec![rows as u64, cols as u64], &values);
    let r = tilescope::run::run(source, &CompileOptions::default(), vec![("x".into(), x)], 1);
    names
        .iter()
        .map(|name| {
            r.outputs
                .iter()
                .find(|o| o.name == *name)
                .and_then(|o| o.tensor.as_ref())
                .map(Tensor::to_f32_vec)
                .unwrap_or_default()
        })
        .collect()
}

/// `rev`: the same tiles, last first. The expected outputs are computed here, not by the
/// reference interpreter (which runs the same checked kernel): block `b` of `x` gets
/// weight `0.5^b` in `acc`, which only the reverse order gives, and the last write to
/// `y` is block 0's.
#[test]
fn a_reverse_loop_visits_the_tiles_last_first() {
    let source = r#"kernel k(x: f32[64, 32], s: out f32[8, 32], y: out f32[8, 32]) {
    let acc = full(f32[8, 32], 0.0);
    for i in rev 0..64 step 8 @buffers(2) {
        let t = load x[i .. i + 8, :];
        acc = acc * 0.5 + t;
        store y[:, :] = t;
    }
    store s[:, :] = acc;
}
"#;
    check(source);
    let [s, y] = <[Vec<f32>; 2]>::try_from(outputs_with_row_numbers(source, 64, 32, &["s", "y"]))
        .expect("two outputs");
    for row in 0..8 {
        let expected: f32 = (0..8).map(|b| 0.5f32.powi(b) * (8 * b + row) as f32).sum();
        assert_eq!(s[row as usize * 32], expected, "s row {row}");
        assert_eq!(
            y[row as usize * 32],
            row as f32,
            "y row {row}: block 0 is written last"
        );
    }
}

/// A reverse loop whose step does not divide its range starts with its partial tile:
/// rows 56..60 first, then 48..56, down to 0..8, each row stored once, and the last
/// write to `y` is block 0's.
#[test]
fn a_reverse_loop_with_a_tail_starts_with_its_partial_tile() {
    let source = r#"kernel k(x: f32[60, 8], s: out f32[60, 8], y: out f32[8, 8]) {
    for i in rev 0..60 step 8 {
        let t = load x[i .. i + 8, :];
        store s[i .. i + 8, :] = t * 2.0;
        store y[:, :] = t;
    }
}
"#;
    check(source);
    let [s, y] = <[Vec<f32>; 2]>::try_from(outputs_with_row_numbers(source, 60, 8, &["s", "y"]))
        .expect("two outputs");
    for row in 0..60 {
        assert_eq!(s[row * 8], 2.0 * row as f32, "s row {row}");
    }
    for row in 0..8 {
        assert_eq!(
            y[row * 8],
            row as f32,
            "y row {row}: block 0 is written last"
        );
    }
}

/// `rev` is a word only before a range's start: a constant may still be called `rev`.
#[test]
fn a_constant_named_rev_still_starts_a_range() {
    check(
        r#"const rev = 8;
kernel k(x: f32[16, 8], y: out f32[16, 8]) {
    for i in rev..16 step 8 {
        store y[i .. i + 8, :] = load x[i .. i + 8, :];
    }
    for i in rev 0..rev step 8 {
        store y[i .. i + 8, :] = load x[i .. i + 8, :] * 2.0;
    }
}
"#,
    );
}

/// Integer arithmetic on a loop variable is one scalar index expression, and a cast
/// makes it a number of the tile's dtype: `t * ((i - 40) as f32)`, `h + (i as f16)`,
/// also in a reverse loop.
#[test]
fn loop_variables_as_numbers_in_tile_expressions() {
    check(
        r#"kernel k(x: f32[32, 16], h: f16[32, 16], y: out f32[32, 16], z: out f16[32, 16], w: out i32[32, 16]) {
    for i in rev 0..32 step 8 {
        let t = load x[i .. i + 8, :];
        store y[i .. i + 8, :] = t * ((i - 40) as f32) / 8.0 + (i // 8 + 1) as f32;
        store z[i .. i + 8, :] = load h[i .. i + 8, :] + (i as f16);
        store w[i .. i + 8, :] = (t as i32) + i % 3;
    }
}
"#,
    );
}

/// Unary `-`, `abs` and `relu` of i32 tiles compute on the vector unit's i32 lanes, and
/// wrap as numpy's do: `-(-2^31)` and `abs(-2^31)` stay `-2^31`. (They were an internal
/// error: the machine took only float unary ops.)
#[test]
fn integer_unary_ops_wrap_as_numpy() {
    use tilescope::compile::CompileOptions;
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let source = r#"kernel k(x: i32[8, 16], n: out i32[8, 16], a: out i32[8, 16], r: out i32[8, 16]) {
    let t = load x[:, :];
    store n[:, :] = -t;
    store a[:, :] = abs(t);
    store r[:, :] = relu(t);
}
"#;
    let mut x = Tensor::zeros(DType::I32, vec![8, 16]);
    let lanes = [i32::MIN, i32::MIN + 1, -7, -1, 0, 1, 7, i32::MAX];
    for i in 0..128 {
        x.set_i32(i, lanes[i % lanes.len()]);
    }
    let r = tilescope::run::run(source, &CompileOptions::default(), vec![("x".into(), x)], 1);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(r.sim.errors.is_empty() && r.sim.races.is_empty());
    assert!(r.reference_match, "max abs err {}", r.max_abs_err);
    let out = |name: &str| {
        let o = r.outputs.iter().find(|o| o.name == name).expect(name);
        let t = o.tensor.as_ref().expect("a simulated tensor");
        (0..8).map(|i| t.get_i32(i)).collect::<Vec<i32>>()
    };
    assert_eq!(out("n"), [i32::MIN, i32::MAX, 7, 1, 0, -1, -7, -i32::MAX]);
    assert_eq!(out("a"), [i32::MIN, i32::MAX, 7, 1, 0, 1, 7, i32::MAX]);
    assert_eq!(out("r"), [0, 0, 0, 0, 0, 1, 7, i32::MAX]);
}

/// `sum`, `amax` and `amin` of i32 tiles, along either axis and over a column tail,
/// against values computed here: sums wrap at 32 bits as numpy's int32 arithmetic does
/// (`np.sum(a, dtype=np.int32)`). (They were `lower-to-pipes does not support an integer
/// reduction`.) An i32 `mean` stays the checker's located error.
#[test]
fn integer_reductions_wrap_and_pick_as_numpy() {
    use tilescope::compile::CompileOptions;
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let source = r#"kernel k(x: i32[8, 40], s: out i32[8, 1], hi: out i32[8, 1], lo: out i32[8, 1], c: out i32[1, 40]) {
    for j in 0..40 step 32 {
        let t = load x[:, j .. j + 32];
        if j == 0 {
            store s[:, :] = sum(t, axis=1);
            store hi[:, :] = amax(t, axis=1);
            store lo[:, :] = amin(t, axis=1);
        }
        store c[:, j .. j + 32] = sum(t, axis=0);
    }
}
"#;
    let lanes = [i32::MAX, 1, i32::MIN, -1, 7, i32::MAX, -100, 3];
    let value = |r: usize, c: usize| lanes[(r * 3 + c) % lanes.len()].wrapping_add(r as i32);
    let mut x = Tensor::zeros(DType::I32, vec![8, 40]);
    for r in 0..8 {
        for c in 0..40 {
            x.set_i32(r * 40 + c, value(r, c));
        }
    }
    for preset in ["a3", "teach"] {
        let out = i32_outputs(source, preset, &x);
        let rows = |f: &dyn Fn(std::ops::Range<usize>, usize) -> i32| -> Vec<i32> {
            (0..8).map(|r| f(0..32, r)).collect()
        };
        let sum = rows(&|cs, r| cs.fold(0i32, |a, c| a.wrapping_add(value(r, c))));
        let hi = rows(&|cs, r| cs.map(|c| value(r, c)).max().unwrap_or(i32::MIN));
        let lo = rows(&|cs, r| cs.map(|c| value(r, c)).min().unwrap_or(i32::MAX));
        let col: Vec<i32> = (0..40)
            .map(|c| (0..8).fold(0i32, |a, r| a.wrapping_add(value(r, c))))
            .collect();
        assert_eq!(out("s", 8), sum, "{preset}");
        assert_eq!(out("hi", 8), hi, "{preset}");
        assert_eq!(out("lo", 8), lo, "{preset}");
        assert_eq!(out("c", 40), col, "{preset}");
    }
    let mean = "kernel k(x: i32[8, 32], y: out i32[8, 1]) {\n    store y[:, :] = mean(load x[:, :], axis=1);\n}\n";
    let r = tilescope::compile::compile(mean, &CompileOptions::default());
    let d = r.diagnostics.first().expect("an error");
    assert!(
        d.message.starts_with("`mean` needs a float tile") && d.span.is_some(),
        "{d:?}"
    );
}

/// `argmax` and `argmin` on the machine (`vargmax` / `vargmin`), per column block with a
/// tail and down the columns, against positions computed here: the first of equal
/// lanes, the first NaN when there is one (numpy's rule).
#[test]
fn arg_reductions_match_numpy_with_ties_nan_and_a_tail() {
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    // Each block's row positions, broadcast over the block's columns.
    let source = r#"kernel k(x: f32[16, 40], hi: out i32[16, 40], lo: out i32[16, 40], down: out i32[1, 40]) {
    for j in 0..40 step 32 {
        let t = load x[:, j .. j + 32];
        let none = zeros(i32[16, 32]);
        store hi[:, j .. j + 32] = argmax(t, axis=1) + none;
        store lo[:, j .. j + 32] = argmin(t, axis=1) + none;
        store down[:, j .. j + 32] = argmax(t, axis=0);
    }
}
"#;
    // Small integers repeat along rows (ties); row 5 holds a NaN in each block.
    let value = |r: usize, c: usize| -> f32 {
        if r == 5 && (c == 9 || c == 35) {
            f32::NAN
        } else {
            ((r * 7 + c * 3) % 11) as f32 - 5.0
        }
    };
    let mut x = Tensor::zeros(DType::F32, vec![16, 40]);
    for r in 0..16 {
        for c in 0..40 {
            x.set(r * 40 + c, value(r, c));
        }
    }
    let pick = |max: bool, lanes: Vec<f32>| -> i32 {
        if let Some(i) = lanes.iter().position(|v| v.is_nan()) {
            return i as i32;
        }
        let mut best = 0;
        for (i, v) in lanes.iter().enumerate() {
            if (max && *v > lanes[best]) || (!max && *v < lanes[best]) {
                best = i;
            }
        }
        best as i32
    };
    let per_block = |max: bool| -> Vec<i32> {
        (0..16)
            .flat_map(|r| {
                (0..40).map(move |c| {
                    let (a, b) = if c < 32 { (0, 32) } else { (32, 40) };
                    (r, a, b)
                })
            })
            .map(|(r, a, b)| pick(max, (a..b).map(|c| value(r, c)).collect()))
            .collect()
    };
    let down: Vec<i32> = (0..40)
        .map(|c| pick(true, (0..16).map(|r| value(r, c)).collect()))
        .collect();
    for preset in ["a3", "teach"] {
        let out = i32_outputs(source, preset, &x);
        assert_eq!(out("hi", 640), per_block(true), "{preset}");
        assert_eq!(out("lo", 640), per_block(false), "{preset}");
        assert_eq!(out("down", 40), down, "{preset}");
    }
}

/// A gathered tile used directly as a matmul operand: the gather lands in UB (the only
/// space the gather DMA writes) and moves on to L1 and L0B. (It was an internal error:
/// scope-inference put the gather's result in L1.)
#[test]
fn a_gathered_tile_feeds_a_matmul() {
    check(
        r#"kernel k(x: f16[16, 32], table: f16[64, 32], idx: i32[16, 1], y: out f32[16, 16]) {
    let i = load idx[:, :];
    store y[:, :] = load x[:, :] @ (load table[i, :]).T;
}
"#,
    );
    check(
        r#"kernel k(x: f16[16, 32], table: f16[64, 16], idx: i32[32, 1], y: out f32[16, 16]) {
    let i = load idx[:, :];
    store y[:, :] = load x[:, :] @ load table[i, :];
}
"#,
    );
}

/// `**` with a constant exponent, against powers computed here (f64, then compared
/// within the simulator's tolerance), and `exp2` / `log2`: Python's precedence makes
/// `-t ** 2` the negated square.
#[test]
fn powers_with_constant_exponents_and_exp2_log2() {
    use tilescope::compile::CompileOptions;
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let source = r#"const HALF = 0.5;
kernel k(x: f32[8, 16], n: i32[8, 16], sq: out f32[8, 16], neg: out f32[8, 16], inv: out f32[8, 16],
         root: out f32[8, 16], p: out f32[8, 16], one: out f32[8, 16], cube: out i32[8, 16],
         e2: out f32[8, 16], l2: out f32[8, 16]) {
    let t = load x[:, :];
    let a = abs(t) + 0.25;
    store sq[:, :] = t ** 2;
    store neg[:, :] = -t ** 2;
    store inv[:, :] = a ** -1;
    store root[:, :] = a ** HALF;
    store p[:, :] = pow(a, 1.5);
    store one[:, :] = t ** 0;
    store cube[:, :] = load n[:, :] ** 3;
    store e2[:, :] = exp2(t);
    store l2[:, :] = log2(a);
}
"#;
    let xs: Vec<f32> = (0..128).map(|i| (i as f32 - 64.0) / 16.0).collect();
    let ns: Vec<f32> = (0..128).map(|i| (i % 11) as f32 - 5.0).collect();
    let x = Tensor::from_f32(DType::F32, vec![8, 16], &xs);
    let n = Tensor::from_f32(DType::I32, vec![8, 16], &ns);
    let r = tilescope::run::run(
        source,
        &CompileOptions::default(),
        vec![("x".into(), x), ("n".into(), n)],
        1,
    );
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(r.sim.errors.is_empty() && r.sim.races.is_empty());
    assert!(r.reference_match, "max abs err {}", r.max_abs_err);
    let out = |name: &str| {
        let o = r.outputs.iter().find(|o| o.name == name).expect(name);
        o.tensor.as_ref().expect("a simulated tensor").to_f32_vec()
    };
    let check = |name: &str, f: &dyn Fn(f64, f64) -> f64| {
        for (i, got) in out(name).into_iter().enumerate() {
            let want = f(xs[i] as f64, ns[i] as f64);
            let tol = 1e-5 * want.abs().max(1.0);
            assert!(
                (got as f64 - want).abs() <= tol,
                "{name}[{i}]: {got} against {want}"
            );
        }
    };
    let a = |t: f64| t.abs() + 0.25;
    check("sq", &|t, _| t * t);
    check("neg", &|t, _| -(t * t));
    check("inv", &|t, _| 1.0 / a(t));
    check("root", &|t, _| a(t).sqrt());
    check("p", &|t, _| a(t).powf(1.5));
    check("one", &|_, _| 1.0);
    check("cube", &|_, n| n * n * n);
    check("e2", &|t, _| t.exp2());
    check("l2", &|t, _| a(t).log2());
}

/// `out` marks an output only before a parameter's type: a parameter may be called
/// `out`, as PyTorch and AscendC sources call theirs.
#[test]
fn a_parameter_may_be_called_out() {
    check(
        r#"kernel k(x: f32[8, 16], out: out f32[8, 16]) {
    store out[:, :] = load x[:, :] * 2.0;
}
"#,
    );
}

/// Bit operations on i32 tiles and logic on masks, against values computed here: int4
/// unpacking (`(w >> 4) & 0xF`), `~`, `^`, `|`, shifts by a tile whose amounts leave
/// `0 .. 32` (0 for `<<`, the sign for `>>`, as numpy), and `& | ^ ~` of comparisons,
/// on both presets and under both syncs.
#[test]
fn bit_operations_and_mask_logic() {
    use tilescope::compile::CompileOptions;
    use tilescope::passes::sync::SyncStrategy;
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let source = r#"const NIBBLE = 0xF;
kernel k(w: i32[8, 16], s: i32[8, 16], x: f32[8, 16],
         lo: out i32[8, 16], hi: out i32[8, 16], mix: out i32[8, 16],
         shl: out i32[8, 16], shr: out i32[8, 16], sel: out f32[8, 16]) {
    let q = load w[:, :];
    let amount = load s[:, :];
    let t = load x[:, :];
    store lo[:, :] = q & NIBBLE;
    store hi[:, :] = (q >> 4) & NIBBLE;
    store mix[:, :] = ~q ^ (q << 3) | 1 << 2;
    store shl[:, :] = q << amount;
    store shr[:, :] = q >> amount;
    let keep = (t > 0.25) & ~(t > 0.75) | (t < -0.75) ^ (t == 0.0);
    store sel[:, :] = where(keep, t, -1.0);
}
"#;
    // Both signs, large and small (the cast keeps the low 32 bits).
    let ws: Vec<i32> = (0..128i64)
        .map(|i| (i * 2_654_435_761 % 100_003 - 50_000 + (i % 7) * 1_000_000_000) as i32)
        .collect();
    let ss: Vec<i32> = (0..128).map(|i| (i % 43) - 4).collect();
    let xs: Vec<f32> = (0..128).map(|i| (i as f32 - 64.0) / 40.0).collect();
    let tensor = |dtype, v: Vec<f32>| Tensor::from_f32(dtype, vec![8, 16], &v);
    let mut w = Tensor::zeros(DType::I32, vec![8, 16]);
    let mut s = Tensor::zeros(DType::I32, vec![8, 16]);
    for i in 0..128 {
        w.set_i32(i, ws[i]);
        s.set_i32(i, ss[i]);
    }
    let x = tensor(DType::F32, xs.clone());
    let shift_l = |a: i32, b: i32| {
        if (0..32).contains(&b) {
            a.wrapping_shl(b as u32)
        } else {
            0
        }
    };
    let shift_r = |a: i32, b: i32| {
        if (0..32).contains(&b) {
            a >> b
        } else {
            a >> 31
        }
    };
    for preset in ["teach", "a3"] {
        for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
            let options = CompileOptions {
                preset: Some(preset.to_string()),
                sync,
                ..CompileOptions::default()
            };
            let inputs = vec![
                ("w".into(), w.clone()),
                ("s".into(), s.clone()),
                ("x".into(), x.clone()),
            ];
            let r = tilescope::run::run(source, &options, inputs, 1);
            let what = format!("{preset}, {sync:?}");
            assert!(r.diagnostics.is_empty(), "{what}: {:?}", r.diagnostics);
            assert!(r.sim.errors.is_empty() && r.sim.races.is_empty(), "{what}");
            assert!(r.reference_match, "{what}: max abs err {}", r.max_abs_err);
            let out = |name: &str| {
                let o = r.outputs.iter().find(|o| o.name == name).expect(name);
                o.tensor.as_ref().expect("a simulated tensor").clone()
            };
            let ints = |name: &str| {
                let t = out(name);
                (0..128).map(|i| t.get_i32(i)).collect::<Vec<i32>>()
            };
            let want = |f: &dyn Fn(usize) -> i32| (0..128).map(f).collect::<Vec<i32>>();
            assert_eq!(ints("lo"), want(&|i| ws[i] & 0xF), "{what}");
            assert_eq!(ints("hi"), want(&|i| (ws[i] >> 4) & 0xF), "{what}");
            assert_eq!(
                ints("mix"),
                want(&|i| (!ws[i] ^ (ws[i] << 3)) | 4),
                "{what}"
            );
            assert_eq!(ints("shl"), want(&|i| shift_l(ws[i], ss[i])), "{what}");
            assert_eq!(ints("shr"), want(&|i| shift_r(ws[i], ss[i])), "{what}");
            let sel = out("sel").to_f32_vec();
            for (i, &t) in xs.iter().enumerate() {
                let keep = ((t > 0.25) && t <= 0.75) | ((t < -0.75) ^ (t == 0.0));
                assert_eq!(sel[i], if keep { t } else { -1.0 }, "{what}: sel[{i}]");
            }
        }
    }
}

/// `//` and `%` of i32 tiles as numpy computes them: floor division, a remainder with
/// the divisor's sign, 0 for a zero divisor, and `-2^31 // -1` wrapping to `-2^31`;
/// against values computed here.
#[test]
fn integer_floor_division_and_remainder() {
    use tilescope::compile::CompileOptions;
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let source = r#"kernel k(a: i32[8, 16], b: i32[8, 16], q: out i32[8, 16], r: out i32[8, 16], h: out i32[8, 16]) {
    let x = load a[:, :];
    let y = load b[:, :];
    store q[:, :] = x // y;
    store r[:, :] = x % y;
    store h[:, :] = x // 4 + x % -3;
}
"#;
    let xs: Vec<i32> = (0..128).map(|i| (i * 37 % 101) - 50).collect();
    let mut ys: Vec<i32> = (0..128).map(|i| (i % 13) - 6).collect();
    let mut xs = xs;
    xs[0] = i32::MIN;
    ys[0] = -1;
    let mut a = Tensor::zeros(DType::I32, vec![8, 16]);
    let mut b = Tensor::zeros(DType::I32, vec![8, 16]);
    for i in 0..128 {
        a.set_i32(i, xs[i]);
        b.set_i32(i, ys[i]);
    }
    let r = tilescope::run::run(
        source,
        &CompileOptions::default(),
        vec![("a".into(), a), ("b".into(), b)],
        1,
    );
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert!(r.sim.errors.is_empty() && r.sim.races.is_empty());
    assert!(r.reference_match, "max abs err {}", r.max_abs_err);
    let ints = |name: &str| {
        let t = r
            .outputs
            .iter()
            .find(|o| o.name == name)
            .and_then(|o| o.tensor.clone());
        let t = t.expect(name);
        (0..128).map(|i| t.get_i32(i)).collect::<Vec<i32>>()
    };
    // Python's floor semantics, in i64 so -2^31 // -1 is computed, then wrapped to i32.
    let fdiv = |a: i32, b: i32| -> i32 {
        if b == 0 {
            return 0;
        }
        (i64::from(a).div_euclid(i64::from(b))
            - i64::from(b < 0 && i64::from(a).rem_euclid(i64::from(b)) != 0)) as i32
    };
    let fmod = |a: i32, b: i32| -> i32 {
        if b == 0 {
            return 0;
        }
        (i64::from(a) - i64::from(fdiv(a, b)) * i64::from(b)) as i32
    };
    let want = |f: &dyn Fn(usize) -> i32| (0..128).map(f).collect::<Vec<i32>>();
    assert_eq!(ints("q"), want(&|i| fdiv(xs[i], ys[i])));
    assert_eq!(ints("r"), want(&|i| fmod(xs[i], ys[i])));
    assert_eq!(
        ints("h"),
        want(&|i| fdiv(xs[i], 4).wrapping_add(fmod(xs[i], -3)))
    );
}

/// A tail load whose window starts a row later than the store's: in the last iteration
/// the load holds one valid row and the store's region two. The masked row is not
/// stored, as in the reference; the store's DMA used to write it from stale lanes
/// (found by the `padded` property strategy once rows shifted). With and without `pad`
/// (the rows inside the tensor, so the tail rule applies to both).
#[test]
fn a_store_skips_the_masked_rows_of_a_tail_that_starts_later() {
    for load in [
        "load x[r + 1 .. r + 9, c .. c + 64]",
        "load x[r + 1 .. r + 9, c .. c + 64] pad 0.0",
    ] {
        run_support::check_on_presets(&format!(
            "kernel k(x: f32[10, 65], y: out f32[10, 65]) {{
    for r in 0..10 step 8 {{
        for c in 0..65 step 64 {{
            store y[r .. r + 8, c .. c + 64] = {load};
        }}
    }}
}}
"
        ));
    }
}
