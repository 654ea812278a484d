//! Error recovery: one run reports several independent errors.

mod common;

use tilescope::front;

#[test]
fn three_syntax_errors_in_one_file_are_all_reported() {
    let source = "const A = ;
kernel k(x: f32[4], y: out f32[4]) {
    let t = load x[:] +;
    store y[:] = t;
    let u = (t;
}
";
    let (file, diags) = front::parse(source);
    let lines: Vec<String> = diags.iter().map(|d| common::line_of(source, d)).collect();
    assert_eq!(lines, ["1", "3", "5"], "{diags:?}");
    // The statement between the errors still parsed.
    assert_eq!(file.kernels.len(), 1);
    assert_eq!(file.kernels[0].body.stmts.len(), 1);
}

#[test]
fn recovery_continues_at_the_next_item() {
    let source =
        "kernel a(x: f32[4] { }\nkernel b(x: f32[4]) { }\nconst = 1;\nkernel c(x: f32[4]) { }";
    let (file, diags) = front::parse(source);
    assert_eq!(diags.len(), 2, "{diags:?}");
    assert_eq!(front::kernel_names(&file), ["b", "c"]);
}

#[test]
fn three_semantic_errors_are_all_reported() {
    let source = "kernel k(x: f32[4, 4], y: f32[4, 4]) {
    let t = load x[:, :] + q;
    let u = exq(load x[:, :]);
    store y[:, :] = load x[:, :];
    let v = t + u;
}
";
    let diags = front::frontend(source, None).expect_err("errors");
    let lines: Vec<String> = diags.iter().map(|d| common::line_of(source, d)).collect();
    // `t` and `u` are poisoned by their errors, so line 5 reports nothing more.
    assert_eq!(lines, ["2", "3", "4"], "{diags:?}");
}

#[test]
fn garbage_produces_a_bounded_number_of_errors() {
    let source = "let ; ".repeat(10_000);
    let (_, diags) = front::parse(&source);
    assert!(
        diags.len() <= tilescope::limits::MAX_DIAGNOSTICS,
        "{}",
        diags.len()
    );
    assert!(!diags.is_empty());
}

/// A loop attribute written above its loop, as a Python decorator: one error, and the
/// loop and its body still parse (no cascade of unknown names after it).
#[test]
fn an_attribute_above_its_loop_is_one_error() {
    let source = "kernel k(x: f32[64, 8], y: out f32[64, 8]) {
    @buffers(2)
    for r in 0..64 step 8 {
        let t = load x[r .. r + 8, :];
        store y[r .. r + 8, :] = t;
    }
}
";
    let (file, diags) = front::parse(source);
    let lines: Vec<String> = diags.iter().map(|d| common::line_of(source, d)).collect();
    assert_eq!(lines, ["2"], "{diags:?}");
    assert_eq!(file.kernels[0].body.stmts.len(), 1);
    // The checker finds nothing more: the loop kept its variable and its `let`.
    let all = front::frontend(source, None).expect_err("the attribute's error");
    assert_eq!(all.len(), 1, "{all:?}");
}
