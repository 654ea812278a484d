//! Masks through the whole pipeline: comparisons, `where` and `iota`, each kernel
//! compiled and simulated against the reference interpreter (NaN and -inf included:
//! a fully masked softmax row is NaN, as in numpy).

mod run_support;

fn check(source: &str) {
    run_support::check_against_reference(source, 5);
}

#[test]
fn every_comparison_against_tiles_and_scalars() {
    check(
        r#"kernel k(x: f32[16, 32], z: f32[16, 32], y: out f32[16, 32]) {
    let a = load x[:, :];
    let b = load z[:, :];
    let lt = (a < b) as f32;
    let le = (a <= 0.0) as f32;
    let gt = (0.25 > a) as f32;
    let ge = (a >= b) as f32;
    let eq = (a == a) as f32;
    let ne = (a != b) as f32;
    store y[:, :] = lt + 2.0 * le + 4.0 * gt + 8.0 * ge + 16.0 * eq + 32.0 * ne;
}
"#,
    );
}

#[test]
fn nan_compares_unequal_to_everything() {
    // log of a negative input is NaN: only `!=` holds for it.
    check(
        r#"kernel k(x: f32[16, 32], y: out f32[16, 32], z: out f32[16, 32]) {
    let u = log(load x[:, :]);
    store y[:, :] = where(u == u, u, 0.0) + where(u < 0.0, 1.0, 0.0);
    store z[:, :] = (u != u) as f32;
}
"#,
    );
}

#[test]
fn where_broadcasts_all_three_operands() {
    check(
        r#"kernel k(x: f32[16, 32], c: f32[16, 1], r: f32[1, 32], y: out f32[16, 32]) {
    let col = load c[:, :];
    let row = load r[:, :];
    store y[:, :] = where(col > 0.0, row, load x[:, :]) + where(row < col, 1.0, -1.0);
}
"#,
    );
}

#[test]
fn integer_masks_compare_exactly() {
    check(
        r#"kernel k(n: i32[16, 32], y: out i32[16, 32]) {
    let t = load n[:, :];
    store y[:, :] = where(t * 1000000 > 7000000, t, t * -1) + where(t == 3, 100, 0);
}
"#,
    );
}

#[test]
fn iota_along_each_axis_with_loop_variables() {
    check(
        r#"kernel k(y: out i32[64, 32], v: out i32[32]) {
    for i in 0..64 step 16 {
        store y[i .. i + 16, :] = iota(i32[16, 32], axis=0) + i - iota(i32[16, 32], axis=-1) * 2;
    }
    store v[:] = iota(i32[32], axis=0) * 3;
}
"#,
    );
}

#[test]
fn masks_in_a_tail_iteration() {
    check(
        r#"kernel k(x: f32[16, 100], y: out f32[16, 100], m: out f32[16, 1]) {
    let best = full(f32[16, 1], -inf);
    for c in 0..100 step 32 {
        let t = load x[:, c .. c + 32];
        let keep = iota(i32[16, 32], axis=1) + c < 90;
        let s = where(keep, t, -inf);
        store y[:, c .. c + 32] = s;
        best = maximum(best, amax(s, axis=1));
    }
    store m[:, :] = best;
}
"#,
    );
}

#[test]
fn fully_masked_softmax_rows_follow_numpy() {
    // Rows 0..4 are all -inf: their max is -inf and exp(-inf - -inf) is NaN, as in numpy.
    check(
        r#"kernel k(x: f32[8, 16], y: out f32[8, 16]) {
    let t = load x[:, :];
    let s = where(iota(i32[8, 16], axis=0) >= 4, t, -inf);
    let e = exp(s - amax(s, axis=1));
    store y[:, :] = e / sum(e, axis=1);
}
"#,
    );
}

#[test]
fn a_mask_is_loop_carried_by_replacement() {
    check(
        r#"kernel k(x: f32[64, 32], y: out f32[64, 32]) {
    let keep = load x[0 .. 16, :] > 0.0;
    for r in 0..64 step 16 {
        let t = load x[r .. r + 16, :];
        store y[r .. r + 16, :] = where(keep, t, 0.5);
        keep = t > 0.0;
    }
}
"#,
    );
}

#[test]
fn a_mask_transposes_and_feeds_a_product() {
    check(
        r#"kernel k(x: f32[16, 32], y: out f32[32, 16], z: out f32[16, 16]) {
    let t = load x[:, :];
    store y[:, :] = where((t > 0.0).T, 1.0, 0.0);
    store z[:, :] = where(t > 0.0, t, 0.0) @ where(t < 0.5, t, -1.0).T;
}
"#,
    );
}
