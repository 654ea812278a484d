//! numpy's integer index: `x[i, :]` drops the indexed axis (an `f32[32]` tile), a range
//! of one position keeps it. Loads and stores of rows, columns, a middle axis of a
//! rank-3 tensor and single elements, compiled and simulated against the reference
//! under auto and barrier sync on both presets; the reshape that only puts back a
//! dropped axis folds into the transfer.

mod run_support;

use run_support::{check_on_presets, ir_after};
use tilescope::compile::{compile, CompileOptions};

/// The types the checker gives: the tile IR prints each load's type.
#[test]
fn an_integer_index_drops_its_axis_and_a_range_keeps_it() {
    let ir = ir_after(
        r#"kernel k(x: f32[64, 32], c: f16[256, 4, 64], y: out f32[64, 32], z: out f16[32, 64], e: out f32[1]) {
    let row = load x[3, :];
    let kept = load x[3 .. 4, :];
    let col = load x[:, 5];
    store y[:, :] = load x[:, :] + row + kept + unsqueeze(col, axis=1);
    store z[:, :] = load c[32 .. 64, 2, :];
    store e[:] = load x[7, 9];
}
"#,
        "parse",
    );
    for line in [
        "%row = load %x[3, :] : f32[32]",
        "%kept = load %x[3 .. 4, :] : f32[1, 32]",
        "%col = load %x[:, 5] : f32[64]",
        "load %c[32 .. 64, 2, :] : f16[32, 64]",
        "load %x[7, 9] : f32[1]",
    ] {
        assert!(ir.contains(line), "{line} not in\n{ir}");
    }
}

/// Rows and columns by integer index in both directions, a middle axis of a
/// `[seq, groups, dim]` cache straight into a product, a lone element broadcast, and a
/// reduction stored into a column once squeezed.
#[test]
fn rows_columns_groups_and_elements_match_numpy() {
    check_on_presets(
        r#"kernel k(x: f32[64, 32], q: f16[16, 64], c: f16[128, 4, 64], y: out f32[64, 32], s: out f32[16, 128], cols: out f32[64, 4], t: out f32[32, 64]) {
    let base = load x[:, :];
    for i in 0..4 {
        let row = load x[8 * i + 1, :];
        store y[8 * i .. 8 * i + 8, :] = load x[8 * i .. 8 * i + 8, :] * row + load x[i, 3];
        store cols[:, i] = load x[:, 8 * i] * 2.0;
    }
    store s[:, :] = load q[:, :] @ (load c[:, 1, :]).T;
    for j in 0..32 {
        store t[j, :] = squeeze(sum(base, axis=1), axis=1) + load x[j, 0];
    }
}
"#,
    );
}

/// A query row read by integer index and put back as a [1, D] matrix operand: the
/// `unsqueeze` folds into the load (no vector copy in the program), and the product's
/// row goes to `o[h, :]` straight from L0C (the store drops the unit axis, and the
/// reshape the checker puts there folds too).
#[test]
fn a_reshape_that_puts_back_a_dropped_axis_costs_nothing() {
    let source = r#"kernel k(q: f16[4, 64], kc: f16[128, 64], o: out f32[4, 128]) {
    for h in 0..4 {
        store o[h, :] = unsqueeze(load q[h, :], axis=0) @ (load kc[:, :]).T;
    }
}
"#;
    check_on_presets(source);
    let canonical = ir_after(source, "canonicalize");
    assert!(!canonical.contains("reshape"), "{canonical}");
    assert!(
        canonical.contains("load %q[%h, :] : f16[1, 64]"),
        "{canonical}"
    );
    let asm = run_support::asm(source);
    assert!(!asm.contains("vcopy"), "{asm}");
}

/// Without the fold the unsqueeze would be a `vcopy`: a reshape that regroups does copy,
/// so the test above can tell the two apart.
#[test]
fn a_regrouping_reshape_still_copies() {
    let source = r#"kernel k(q: f16[4, 64], kc: f16[128, 32], o: out f32[8, 128]) {
    store o[:, :] = reshape(load q[:, :], [8, 32]) @ (load kc[:, :]).T;
}
"#;
    check_on_presets(source);
    let asm = run_support::asm(source);
    assert!(asm.contains("vcopy"), "{asm}");
}

/// A kernel written for the old rule, where `x[i, :]` kept its axis, now reads a 1-D
/// tile; the error names the shape it found, at the reduction that needed the axis.
#[test]
fn the_old_kept_axis_form_is_a_located_error() {
    let source = r#"kernel k(x: f32[8, 64], y: out f32[8, 1]) {
    for i in 0..8 {
        store y[i .. i + 1, :] = amax(load x[i, :], axis=1);
    }
}
"#;
    let result = compile(source, &CompileOptions::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", source);
    assert!(
        rendered
            .contains("k.tile:3:58: error: axis 1 is out of range for f32[64], which has 1 axes"),
        "{rendered}"
    );
    assert!(
        rendered.contains("a range of one position keeps it (`x[i .. i + 1, :]`)"),
        "{rendered}"
    );
    // Through a name too.
    let named = source.replace(
        "        store y[i .. i + 1, :] = amax(load x[i, :], axis=1);",
        "        let r = load x[i, :];\n        store y[i .. i + 1, :] = amax(r, axis=1);",
    );
    let result = compile(&named, &CompileOptions::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", &named);
    assert!(rendered.contains("x[i .. i + 1, :]"), "{rendered}");
}

/// A position on a tile axis drops it too: a row of a loaded tile becomes the load's own
/// integer index (no vector copy), a column of a computed tile is a window of one
/// column, then its axis dropped; both broadcast as numpy's 1-D rows and columns do.
#[test]
fn a_position_in_a_tile_slice_drops_its_axis() {
    let loaded = r#"kernel k(x: f32[32, 64], y: out f32[32, 64]) {
    let t = load x[:, :];
    for i in 0..4 {
        store y[8 * i .. 8 * i + 8, :] = load x[8 * i .. 8 * i + 8, :] - t[2 * i + 1, :];
    }
}
"#;
    check_on_presets(loaded);
    let canonical = ir_after(loaded, "canonicalize");
    assert!(
        canonical.contains("load %x[%i * 2 + 1, :] : f32[64]"),
        "{canonical}"
    );
    assert!(!run_support::asm(loaded).contains("vcopy"));
    check_on_presets(
        r#"kernel k(x: f32[32, 64], y: out f32[32, 64], z: out f32[64]) {
    let c = exp(load x[:, :] * 0.125);
    store y[:, :] = c / unsqueeze(c[:, 0], axis=1);
    store z[:] = c[31, :] + c[0, :];
}
"#,
    );
}
