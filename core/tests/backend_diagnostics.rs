//! Diagnostics of the middle end, rendered as the CLI prints them: an index axis-split
//! cannot make affine, and tiles that do not fit the target's memory.

use tilescope::compile::{compile, CompileOptions};
use tilescope::diag::render;

fn diagnostics(source: &str, preset: &str) -> String {
    let options = CompileOptions {
        preset: Some(preset.into()),
        ..CompileOptions::default()
    };
    let result = compile(source, &options);
    assert!(!result.ok(), "expected a compile error");
    assert!(result.program.is_none());
    render(&result.diagnostics, "k.tile", source)
}

#[test]
fn a_non_splittable_floor_division_is_rejected_by_name() {
    // `b // 3` with 16 iterations: 16 is not a multiple of 3, so no mixed-radix split,
    // and relayout copies loads only. The caret is on `b // 3`.
    let source = "kernel k(x: f32[64, 16], y: out f32[64, 16]) {
    for b in 0..16 {
        let t = load x[b * 4 .. b * 4 + 4, :];
        store y[(b // 3) * 4 .. (b // 3) * 4 + 4, :] = t;
    }
}
";
    let text = diagnostics(source, "a3");
    assert!(
        text.contains("`(b // 3) * 4` affine: `b // 3` does not split"),
        "{text}"
    );
    assert!(
        text.contains("k.tile:4:18"),
        "the caret is on `b // 3`: {text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn a_relayout_names_what_it_cannot_copy() {
    // The load needs a relayout, but the kernel also stores to `x`.
    let source = "kernel k(x: out f32[64, 16], y: out f32[64, 16]) {
    for b in 0..16 {
        let t = load x[((b + b // 4) % 4) * 4 .. ((b + b // 4) % 4) * 4 + 4, :];
        store y[b * 4 .. b * 4 + 4, :] = t;
        store x[b * 4 .. b * 4 + 4, :] = t;
    }
}
";
    let text = diagnostics(source, "a3");
    assert!(text.contains("`(b + b // 4) % 4` does not split"), "{text}");
    assert!(text.contains("the kernel stores to it"), "{text}");
    // Too many copies: 256 iterations, more than relayout's limit.
    let source = "kernel k(x: f32[1024, 16], y: out f32[1024, 16]) {
    for b in 0..256 {
        let t = load x[((b + b // 4) % 4) * 4 .. ((b + b // 4) % 4) * 4 + 4, :];
        store y[b * 4 .. b * 4 + 4, :] = t;
    }
}
";
    let text = diagnostics(source, "a3");
    assert!(
        text.contains("relayout would copy 256 tiles, more than its limit of 64"),
        "{text}"
    );
}

#[test]
fn tiles_over_capacity_name_the_space_bytes_and_live_tiles() {
    // 64 x 512 f32 is 128 KiB; two of them live at once do not fit teach's 128 KiB UB.
    let source = "kernel k(x: f32[256, 512], y: out f32[256, 512]) {
    for r in 0..256 step 64 {
        let t = load x[r .. r + 64, :];
        store y[r .. r + 64, :] = exp(t);
    }
}
";
    let text = diagnostics(source, "teach");
    assert!(text.contains("UB overflows"), "{text}");
    assert!(text.contains("131072 bytes"), "{text}");
    assert!(text.contains("%t"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn an_unknown_preset_is_an_error_not_a_panic() {
    let options = CompileOptions {
        preset: Some("nope".into()),
        ..CompileOptions::default()
    };
    let result = compile("kernel k(x: f32[4]) { }", &options);
    assert!(result.diagnostics[0]
        .message
        .contains("unknown machine preset `nope`"));
}

/// The terms of the capacity error's "holds N buffers" note and of its "busiest point"
/// note, summed: each must equal the figure it explains.
fn capacity_sums(text: &str) -> (u64, u64, u64, u64) {
    let number = |s: &str| -> u64 {
        s.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{s:?} in {text}"))
    };
    let needed = number(
        text.split("the plan needs ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .expect("a total"),
    );
    let holds = text
        .lines()
        .find(|l| l.contains(" holds "))
        .expect("the buffer list");
    let list = holds
        .rsplit(" buffer: ")
        .next()
        .filter(|_| holds.contains(" buffer: "))
        .or_else(|| holds.split("one after another: ").nth(1))
        .expect("terms");
    let list = list
        .split(" = ")
        .next()
        .expect("terms")
        .trim_end_matches(" bytes");
    let term = |t: &str| -> u64 {
        let size = t.split(" [").next().expect("a size");
        match size.split_once(" slots x ") {
            Some((slots, bytes)) => number(slots) * number(bytes),
            None => number(size),
        }
    };
    let listed: u64 = list.split(" + ").map(term).sum();
    let busiest = text
        .lines()
        .find(|l| l.contains("at the busiest point"))
        .expect("the busiest point");
    let peak = number(
        busiest
            .split("at the busiest point ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .expect("a peak"),
    );
    let live: u64 = busiest
        .split("live: ")
        .nth(1)
        .expect("live tiles")
        .split("), ")
        .map(|t| {
            let size = t.rsplit('(').next().expect("a size").trim_end_matches(')');
            match size.split_once(" slots x ") {
                Some((slots, bytes)) => number(slots) * number(bytes),
                None => number(size),
            }
        })
        .sum();
    (needed, listed, peak, live)
}

#[test]
fn a_capacity_error_lists_buffers_that_add_up_to_what_it_needs() {
    // A layer norm too big for a3's UB; lesson 9's starter, two slots of each tile on
    // teach.
    let cases = [
        (include_str!("kernels/layernorm_overflow.tile"), "a3"),
        (
            "kernel k(x: f32[32, 2048], y: out f32[32, 2048]) {
    for r in 0..32 step 8 @buffers(2) {
        let t = load x[r .. r + 8, :];
        store y[r .. r + 8, :] = t - mean(t, axis=1);
    }
}
",
            "teach",
        ),
    ];
    for (source, preset) in cases {
        let text = diagnostics(source, preset);
        assert!(text.contains("overflows"), "{text}");
        let (needed, listed, peak, live) = capacity_sums(&text);
        assert_eq!(needed, listed, "the buffers add up to the total: {text}");
        assert_eq!(peak, live, "the live tiles add up to the peak: {text}");
        assert!(peak <= needed, "{text}");
        if peak < needed {
            assert!(
                text.contains(&format!("the other {} bytes", needed - peak)),
                "{text}"
            );
        }
    }
}
