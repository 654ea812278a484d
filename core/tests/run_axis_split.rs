//! Mixed-radix axis-split: loops whose variable appears under several `//` and `%` in
//! transfer indices, compiled, simulated and compared with the reference interpreter;
//! the split loop nest as a golden; and what cannot be linearised is rejected by name.

use tilescope::compile::{compile, CompileOptions};

mod run_support;

fn check(source: &str) {
    run_support::check_against_reference(source, 5);
}

/// The IR after axis-split.
fn split_ir(source: &str) -> String {
    let result = compile(source, &CompileOptions::default());
    assert!(result.diagnostics.is_empty(), "{:#?}", result.diagnostics);
    result
        .passes
        .iter()
        .find(|p| p.name == "axis-split")
        .map(|p| p.ir.clone())
        .unwrap_or_default()
}

fn error_text(source: &str) -> String {
    let result = compile(source, &CompileOptions::default());
    assert!(result.program.is_none());
    result
        .diagnostics
        .iter()
        .map(|d| d.message.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Three digits of one loop variable: `b // 8`, `(b // 2) % 4`, `b % 2` over 0..32.
/// Row block `b // 8` of 4, column pair `(b // 2) % 4` of 4, and row `b % 2` inside the
/// block: each iteration copies a 1 x 8 strip to a permuted place.
const THREE_DIGITS: &str = "kernel k(x: f32[8, 32], y: out f32[8, 32]) {
    for b in 0..32 {
        let t = load x[(b // 8) * 2 + b % 2, ((b // 2) % 4) * 8 .. ((b // 2) % 4) * 8 + 8];
        store y[(b % 2) * 4 + b // 8, (3 - (b // 2) % 4) * 8 .. (3 - (b // 2) % 4) * 8 + 8] = t * 2.0;
    }
}
";

#[test]
fn three_digits_run_against_the_reference() {
    check(THREE_DIGITS);
}

#[test]
fn three_digits_split_into_three_nested_loops() {
    let ir = split_ir(THREE_DIGITS);
    assert!(!ir.contains("//") && !ir.contains(" % "), "{ir}");
    insta::assert_snapshot!(ir);
}

#[test]
fn a_trip_count_that_is_a_multiple_of_the_product() {
    // Radices 4 and 16 on 0..64: the outermost digit runs 4 times.
    check(
        "kernel k(x: f32[64, 16], y: out f32[16, 64]) {
    for b in 0..64 {
        let t = load x[b, :];
        store y[(b // 4) % 4 * 4 + b % 4, (b // 16) * 16 .. (b // 16) * 16 + 16] = t + 1.0;
    }
}
",
    );
}

#[test]
fn a_step_dividing_the_smallest_radix() {
    // `r` steps by 2 through 0..16; `r // 4` and `(r % 4) // 2` cut at 2 and 4, which the
    // step divides.
    check(
        "kernel k(x: f32[16, 8], y: out f32[8, 16]) {
    for r in 0..16 step 2 {
        let t = load x[r .. r + 2, :];
        store y[(r // 4) * 2 .. (r // 4) * 2 + 2, (r % 4) // 2 * 8 .. (r % 4) // 2 * 8 + 8] = t - 1.0;
    }
}
",
    );
}

#[test]
fn a_non_zero_start_that_is_a_multiple_of_the_largest_radix() {
    check(
        "kernel k(x: f32[4, 32], y: out f32[32, 4]) {
    for b in 8..24 {
        let t = load x[b % 4, (b // 4) * 4 .. (b // 4) * 4 + 4];
        store y[(b // 4) * 4 .. (b // 4) * 4 + 4, b % 4] = t.T;
    }
}
",
    );
}

#[test]
fn loop_carried_values_cross_every_new_loop() {
    check(
        "kernel k(x: f32[32, 8], y: out f32[1, 8]) {
    let acc = zeros(f32[1, 8]);
    for b in 0..32 {
        acc += load x[(b % 4) * 8 + (b // 4) % 2 * 4 + b // 8, :];
    }
    store y[:, :] = acc;
}
",
    );
}

/// Radices 2 and 3 do not divide one another, so no mixed-radix numbering has both as
/// digits; and a loop starting off its largest radix does not split either.
const NO_CHAIN: &str = "(b % 2) * 3 + b // 3";
const OFF_START: &str = "(b // 4) * 4 + b % 4";

fn permuted_load(index: &str, range: &str) -> String {
    format!(
        "kernel k(x: f32[8, 8], y: out f32[8, 8]) {{
    for b in {range} {{
        let t = load x[{index}, :];
        store y[b, :] = t;
    }}
}}
"
    )
}

fn permuted_store(index: &str, range: &str) -> String {
    format!(
        "kernel k(x: f32[8, 8], y: out f32[8, 8]) {{
    for b in {range} {{
        store y[{index}, :] = load x[b, :];
    }}
}}
"
    )
}

#[test]
fn loads_that_do_not_split_are_relaid_out() {
    check(&permuted_load(NO_CHAIN, "0..6"));
    check(&permuted_load(OFF_START, "2..6"));
}

#[test]
fn stores_that_do_not_split_are_rejected_by_name() {
    let text = error_text(&permuted_store(NO_CHAIN, "0..6"));
    assert!(text.contains("`b % 2` does not split"), "{text}");
    let text = error_text(&permuted_store(OFF_START, "2..6"));
    assert!(text.contains("`b // 4` does not split"), "{text}");
}
