//! Gathers along any one axis, `load x[:, idx]` and `load c[:, idx, :]` (numpy's
//! `x[:, idx]`): one gather per position of the axis before the indexed one, each
//! picking blocks `stride` apart. Compiled and simulated against the reference
//! interpreter under auto and barrier sync on both presets.

mod run_support;

use run_support::check_on_presets;
use tilescope::compile::{compile, CompileOptions};

/// Columns picked by an index tile (blocks of 64 f32 lanes keep each gather's
/// destination on `a3`'s 256-byte alignment), a middle axis of a rank-3 tensor, and a
/// gather whose leading axis is a single position.
#[test]
fn gathers_pick_positions_along_later_axes() {
    check_on_presets(
        r#"kernel k(x: f32[16, 40, 64], ids: i32[8], c: f32[4, 32, 24], y: out f32[16, 8, 64], z: out f32[4, 8, 24], w: out f32[8, 24]) {
    let idx = load ids[:];
    store y[:, :, :] = load x[:, idx, :] * 2.0;
    store z[:, :, :] = load c[:, idx + 3, :];
    store w[:, :] = load c[2, idx, :];
}
"#,
    );
}

/// On `teach` (32-byte alignment) single columns gather too; on `a3` a gather whose
/// rows would land off UB's alignment is a located error that says how to fix it.
#[test]
fn a_column_gather_needs_aligned_rows() {
    let source = r#"kernel k(x: f32[16, 40], ids: i32[8], y: out f32[16, 8]) {
    store y[:, :] = load x[:, load ids[:]] * 2.0;
}
"#;
    let teach = CompileOptions {
        preset: Some("teach".into()),
        ..CompileOptions::default()
    };
    let r = tilescope::run::run(source, &teach, Vec::new(), 2);
    assert!(
        r.diagnostics.is_empty() && r.reference_match,
        "{:?}",
        r.diagnostics
    );
    let result = compile(source, &CompileOptions::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", source);
    assert!(
        rendered.contains("k.tile:2:21: error: this gather along axis 1 writes each of the tile's 16 rows 32 bytes after the last, off UB's 256-byte alignment"),
        "{rendered}"
    );
}
