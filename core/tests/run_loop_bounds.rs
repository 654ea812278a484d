//! Loops whose bounds depend on an outer loop (`for j in 0 .. i + 16 step 16`,
//! `for j in i .. N`): each kernel compiled under auto and barrier sync on both presets,
//! simulated without a race, against the reference interpreter, with inner loops that
//! run zero times on some outer iterations; and the forms refused with their place.

mod run_support;

use tilescope::compile::CompileOptions;
use tilescope::passes::sync::SyncStrategy;
use tilescope::run::run;

/// Matches the reference with no race under auto and barrier sync on both presets;
/// returns the cycles of auto sync on each preset.
fn check(source: &str) -> Vec<u64> {
    run_support::check_on_presets(source)
        .into_iter()
        .map(|(auto, _)| auto)
        .collect()
}

/// The first error's message and where it starts.
fn error_of(source: &str) -> (String, usize) {
    let r = run(source, &CompileOptions::default(), Vec::new(), 1);
    let d = r.diagnostics.first().expect("an error");
    (
        d.message.clone(),
        d.span.map_or(usize::MAX, |s| s.start as usize),
    )
}

#[test]
fn triangular_loops_below_and_above_the_diagonal() {
    check(include_str!("kernels/triangular.tile"));
}

#[test]
fn a_bound_may_read_several_loops_and_a_reversed_one() {
    check(
        r#"kernel k(x: f32[32, 64], y: out f32[32, 64]) {
    for r in rev 0..32 step 8 {
        for c in 0..2 {
            for j in 16 * c .. r + 8 + 16 * c step 8 {
                store y[r .. r + 8, j .. j + 8] = load x[r .. r + 8, j .. j + 8] * 2.0;
            }
        }
    }
}
"#,
    );
}

#[test]
fn a_triangular_matmul_accumulates_only_the_blocks_it_visits() {
    check(
        r#"kernel k(a: f16[64, 64], b: f16[64, 32], c: out f32[64, 32]) {
    for i in 0..64 step 16 {
        let acc = zeros(f32[16, 32]);
        for kk in 0 .. i + 16 step 16 {
            acc += load a[i .. i + 16, kk .. kk + 16] @ load b[kk .. kk + 16, :];
        }
        store c[i .. i + 16, :] = acc;
    }
}
"#,
    );
}

/// The gallery's causal attention stops its key loop at the diagonal: it takes fewer
/// cycles than the same kernel over the whole masked square, on both presets.
#[test]
fn causal_attention_that_stops_at_the_diagonal_beats_the_masked_square() {
    let source = include_str!("../../static/examples/causal_attention.tile");
    let header = "for j in 0 .. i + BQ step BK {";
    assert!(source.contains(header), "the example's key loop");
    let square = source.replace(header, "for j in 0..S step BK {");
    let (triangle, square) = (check(source), check(&square));
    for (t, s) in triangle.iter().zip(&square) {
        assert!(t < s, "diagonal {t} cycles, square {s}");
    }
}

/// A triangular loop is double-buffered like a constant one: its loads run ahead into
/// the other slot (slot `iteration % 2` from 0 on each entry, event ids following it),
/// and on both presets that is faster than single buffers, with the same answer.
#[test]
fn a_triangular_loop_is_double_buffered() {
    let source = r#"kernel prefix(x: f32[512, 64], y: out f32[512, 64]) {
    for i in 0..512 step 32 {
        let acc = zeros(f32[32, 64]);
        for j in 0 .. i + 32 step 32 {
            acc += exp(load x[j .. j + 32, :]);
        }
        store y[i .. i + 32, :] = acc;
    }
}
"#;
    check(source);
    run_support::assert_double_buffering_pays(
        source,
        Vec::new(),
        "for %j in 0..(%i + 32) step 32 buffers(2)",
    );
}

/// The gallery's reverse chunk cumsum (flash-linear-attention's chunked cumsum with
/// `reverse=True`) computes suffix sums over time: checked here against sums this
/// test adds up itself, not against the reference interpreter, on both presets and
/// under both syncs; small integers keep every sum exact in f32.
#[test]
fn the_reverse_chunk_cumsum_computes_suffix_sums() {
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let source = include_str!("../../static/examples/reverse_cumsum.tile");
    let (t, s) = (256, 128);
    let x: Vec<f32> = (0..t * s)
        .map(|n| ((n * 7 + n / s) % 11) as f32 - 5.0)
        .collect();
    let mut want = vec![0.0f32; t * s];
    for c in 0..s {
        let mut suffix = 0.0;
        for r in (0..t).rev() {
            suffix += x[r * s + c];
            want[r * s + c] = suffix;
        }
    }
    let input = Tensor::from_f32(DType::F32, vec![t as u64, s as u64], &x);
    for (what, z) in output_everywhere(source, input, "z") {
        assert_eq!(z, want, "{what}");
    }
}

/// Output `name` of `source` run on `x` on both presets under auto and barrier sync,
/// each run checked free of errors and races, with what it was run under.
fn output_everywhere(
    source: &str,
    x: tilescope::tensor::Tensor,
    name: &str,
) -> Vec<(String, Vec<f32>)> {
    let mut outputs = Vec::new();
    for preset in ["teach", "a3"] {
        for sync in [SyncStrategy::Auto, SyncStrategy::Barrier] {
            let options = CompileOptions {
                preset: Some(preset.to_string()),
                sync,
                ..CompileOptions::default()
            };
            let r = run(source, &options, vec![("x".into(), x.clone())], 1);
            let what = format!("{preset}, {sync:?}");
            assert!(r.diagnostics.is_empty(), "{what}: {:?}", r.diagnostics);
            assert!(r.sim.races.is_empty(), "{what}: races");
            let values = r
                .outputs
                .iter()
                .find(|o| o.name == name)
                .and_then(|o| o.tensor.as_ref())
                .map(tilescope::tensor::Tensor::to_f32_vec)
                .expect("the output");
            outputs.push((what, values));
        }
    }
    outputs
}

#[test]
fn a_bound_with_floor_division_is_not_affine() {
    let source = "kernel k(x: f32[64, 8], y: out f32[64, 8]) {\n    for i in 0..64 step 16 {\n        for j in 0 .. i // 2 step 8 {\n            store y[j .. j + 8, :] = load x[j .. j + 8, :];\n        }\n    }\n}\n";
    let (message, at) = error_of(source);
    assert!(message.contains("is not affine"), "{message}");
    assert_eq!(&source[at..at + 6], "i // 2");
}

/// A step that does not divide a variable range leaves a partial last iteration on the
/// entries where it does not: the loop runs `ceil((end - start) / step)` times, and a
/// window past the tensor's extent is clamped. Checked against sums this test adds up
/// itself (a window past the diagonal but inside the tensor counts whole, as Python's
/// `range` and slicing would), on both presets and under both syncs, for a counted
/// loop (`i + 4 .. 100`) and one with a constant start (`0 .. i + 8`).
#[test]
fn a_variable_range_has_a_tail_where_its_step_does_not_divide_it() {
    use tilescope::tensor::Tensor;
    use tilescope::types::DType;
    let n = 100usize;
    let x: Vec<f32> = (0..n * n).map(|k| ((k * 7 + k / n) % 13) as f32).collect();
    let cases = [
        (
            "0 .. i + 8 step 32",
            (|i: usize| (0..i + 8).step_by(32).collect::<Vec<_>>()) as fn(usize) -> Vec<usize>,
        ),
        ("i + 4 .. 100 step 16", |i: usize| {
            (i + 4..100).step_by(16).collect()
        }),
    ];
    for (range, blocks) in cases {
        let source = format!(
            "kernel k(x: f32[100, 100], y: out f32[100, 1]) {{\n    for i in rev 0..100 step 8 {{\n        let acc = zeros(f32[8, 1]);\n        for j in {range} {{\n            acc += sum(load x[i .. i + 8, j .. j + 32], axis=1);\n        }}\n        store y[i .. i + 8, :] = acc;\n    }}\n}}\n"
        );
        let mut want = vec![0.0f32; n];
        for i in (0..n).step_by(8) {
            for r in i..(i + 8).min(n) {
                for j in blocks(i) {
                    want[r] += (j..(j + 32).min(n)).map(|c| x[r * n + c]).sum::<f32>();
                }
            }
        }
        let input = Tensor::from_f32(DType::F32, vec![n as u64, n as u64], &x);
        for (what, y) in output_everywhere(&source, input, "y") {
            assert_eq!(y, want, "{range}, {what}");
        }
    }
}

#[test]
fn a_range_past_the_extent_on_the_widest_iteration_is_refused() {
    let source = "kernel k(x: f32[64, 64], y: out f32[64, 64]) {\n    for i in 0..64 step 16 {\n        for j in 0 .. i + 32 step 16 {\n            store y[i .. i + 16, j .. j + 16] = load x[i .. i + 16, j .. j + 16];\n        }\n    }\n}\n";
    let (message, _) = error_of(source);
    assert!(
        message.contains("reaches 80, outside the extent 64"),
        "{message}"
    );
}

#[test]
fn rev_and_buffers_need_constant_bounds_for_now() {
    let rev = "kernel k(x: f32[64, 8], y: out f32[64, 8]) {\n    for i in 0..64 step 16 {\n        for j in rev 0 .. i step 8 {\n            store y[j .. j + 8, :] = load x[j .. j + 8, :];\n        }\n    }\n}\n";
    let (message, at) = error_of(rev);
    assert!(message.contains("`rev` needs constant bounds"), "{message}");
    assert_eq!(&rev[at..at + 3], "rev");
    let buffers = "kernel k(x: f32[64, 8], y: out f32[64, 8]) {\n    for i in 0..64 step 16 {\n        for j in 0 .. i step 8 @buffers(2) {\n            store y[j .. j + 8, :] = load x[j .. j + 8, :];\n        }\n    }\n}\n";
    let (message, at) = error_of(buffers);
    assert!(
        message.contains("`@buffers` needs constant bounds"),
        "{message}"
    );
    assert_eq!(&buffers[at..at + 11], "@buffers(2)");
}
