//! Tile slices `t[:, a .. b]`: numpy's basic slicing of a tile, compiled and simulated
//! against the reference interpreter under auto and barrier sync on both presets.

mod run_support;

use run_support::check_on_presets;
use tilescope::compile::{compile, CompileOptions};

/// A SwiGLU over one loaded tile cut in halves: canonicalize turns each slice of the
/// loaded tile into a load of its window, so no vector copy remains.
#[test]
fn halves_of_a_loaded_tile_become_loads_of_their_windows() {
    let source = r#"kernel swiglu(x: f32[64, 128], y: out f32[64, 64]) {
    for r in 0 .. 64 step 32 {
        let t = load x[r .. r + 32, :];
        let gate = t[:, 0 .. 64];
        let up = t[:, 64 .. 128];
        store y[r .. r + 32, :] = gate / (1.0 + exp(-gate)) * up;
    }
}
"#;
    check_on_presets(source);
    let canonical = run_support::ir_after(source, "canonicalize");
    assert!(
        canonical.contains("load %x[%r .. %r + 32, 64 .. 128]"),
        "{canonical}"
    );
    assert!(!canonical.contains("slice"), "{canonical}");
    let asm = compile(source, &CompileOptions::default())
        .asm
        .expect("assembly");
    assert!(!asm.contains("vcopy"), "{asm}");
}

/// Slices of computed tiles stay slices: one `vcopy` from the window's strided view.
/// Row windows move with the loop; a 1-D tile and a mask slice too.
#[test]
fn slices_of_computed_tiles_copy_their_window_in_ub() {
    let source = r#"kernel k(x: f32[16, 128], w: f32[128], y: out f32[32, 64], z: out f32[1, 128], v: out f32[64]) {
    let t = exp(load x[:, :]);
    store y[0 .. 16, :] = t[:, 64 .. 128] * 2.0 + t[:, 0 .. 64];
    let acc = zeros(f32[1, 128]);
    for j in 0 .. 16 step 2 {
        acc += t[j .. j + 1, :] * t[j + 1 .. j + 2, :];
    }
    store z[:, :] = acc;
    let m = t > 1.5;
    store y[16 .. 32, :] = where(m[:, 0 .. 64], t[:, 64 .. 128], 0.0);
    let u = exp(load w[:]) * 3.0;
    store v[:] = u[64 .. 128] - u[0 .. 64];
}
"#;
    check_on_presets(source);
    let asm = run_support::asm(source);
    assert!(asm.contains("vcopy"), "{asm}");
}

/// A slice of a tile with a tail keeps the tail's masked lanes masked: the valid rows
/// of `t[0 .. 16, :]` are `min(16, valid)`, computed on the S pipe. A window that
/// starts past 0 on the tail's axis could be empty, which no consumer expects: that is
/// a located error.
#[test]
fn a_slice_of_a_tail_tile_keeps_its_lanes_masked() {
    let source = r#"kernel k(x: f32[100, 128], y: out f32[100, 64], s: out f32[1, 128]) {
    let acc = zeros(f32[1, 128]);
    for i in 0 .. 100 step 32 {
        let t = exp(load x[i .. i + 32, :]);
        store y[i .. i + 32, :] = t[:, 64 .. 128] * 2.0;
        acc += amax(t[0 .. 16, :], axis=0);
    }
    store s[:, :] = acc;
}
"#;
    check_on_presets(source);
    let past = source.replace("t[0 .. 16, :]", "t[8 .. 24, :]");
    let result = compile(&past, &CompileOptions::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", &past);
    assert!(
        rendered.contains("k.tile:6:21: error: this slice starts past position 0 on axis 0"),
        "{rendered}"
    );
}

/// A slice feeds a matmul from L1 (the product reads it by a `mov2d`), whether the
/// tile was computed or loaded.
#[test]
fn a_slice_is_a_matmul_operand() {
    check_on_presets(
        r#"kernel k(x: f32[32, 128], w: f32[64, 64], y: out f32[32, 64], z: out f32[32, 64]) {
    let t = exp(load x[:, :]);
    store y[:, :] = t[:, 64 .. 128] @ load w[:, :];
    store z[:, :] = (load x[:, :])[:, 0 .. 64] @ (load w[:, :])[0 .. 64, 0 .. 64].T;
}
"#,
    );
}

/// A slice of a slot, and a slice of a slice.
#[test]
fn slices_chain_after_slots_and_slices() {
    check_on_presets(
        r#"kernel k(x: f32[128, 128], y: out f32[128, 32]) {
    let b = buffers(f32[32, 128], 2);
    for i in 0 .. 128 step 32 {
        b[i // 32 % 2] = exp(load x[i .. i + 32, :]);
        store y[i .. i + 32, :] = b[i // 32 % 2][:, 64 .. 128][:, 0 .. 32] + 1.0;
    }
}
"#,
    );
}

/// A window of a computed tile that cannot start on UB's alignment is a located
/// error naming the alignment and both ways out; the reference runs it.
#[test]
fn an_unaligned_window_of_a_computed_tile_says_why() {
    let source = r#"kernel k(x: f32[32, 64], y: out f32[32, 32]) {
    let t = exp(load x[:, :]);
    store y[:, :] = t[:, 16 .. 48];
}
"#;
    let options = CompileOptions {
        preset: Some("a3".into()),
        ..CompileOptions::default()
    };
    let result = compile(source, &options);
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", source);
    assert!(
        rendered.contains("k.tile:3:21: error:")
            && rendered.contains("256-byte alignment")
            && rendered.contains("64 f32 lanes")
            && rendered.contains("slice a loaded tile"),
        "{rendered}"
    );
    // Teach aligns UB to 32 bytes: 16 f32 lanes start on it.
    let teach = CompileOptions {
        preset: Some("teach".into()),
        ..CompileOptions::default()
    };
    let r = tilescope::run::run(source, &teach, Vec::new(), 3);
    assert!(
        r.diagnostics.is_empty() && r.reference_match,
        "{:?}",
        r.diagnostics
    );
}

/// Slices of rank-3 tiles: of a computed tile when the window's rows are one run (whole
/// axes after the first leading axis that selects more than one position), one `vcopy`;
/// of a loaded tile any window, as a load of it. A computed tile's window whose rows are
/// not one run is a located error that says what to do.
#[test]
fn rank_3_tiles_slice_as_rows_of_their_last_axis() {
    check_on_presets(
        r#"kernel r(x: f32[4, 8, 64], y: out f32[2, 8, 64], z: out f32[3, 64], w: out f32[4, 2, 64]) {
    let t = exp(load x[:, :, :] * 0.5);
    store y[:, :, :] = t[1 .. 3, :, :];
    store z[:, :] = t[2, 5 .. 8, :];
    store w[:, :, :] = load x[:, :, :][:, 3 .. 5, :] + 1.0;
}
"#,
    );
    let split = r#"kernel r(x: f32[4, 8, 64], w: out f32[4, 2, 64]) {
    let t = exp(load x[:, :, :]);
    store w[:, :, :] = t[:, 3 .. 5, :];
}
"#;
    let result = compile(split, &CompileOptions::default());
    let rendered = tilescope::diag::render(&result.diagnostics, "k.tile", split);
    assert!(
        rendered.contains("k.tile:3:24: error: this slice of a tile computed in UB picks rows that are not one run"),
        "{rendered}"
    );
}
