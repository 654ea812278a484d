//! Every vector op against a direct computation on the same inputs.
mod sim_support;

use sim_support::*;

const FRAME_HEAD: &str = "\
.tensor x f32[8, 64]
.tensor z f32[8, 64]
.tensor y f32[8, 64]
dma.f32 ub[0], x[0], [512, 1, 1]
dma.f32 ub[2048], z[0], [512, 1, 1]
set_flag MTE2, V, 0
wait_flag MTE2, V, 0
";
const FRAME_TAIL: &str = "\
set_flag V, MTE3, 0
wait_flag V, MTE3, 0
dma.f32 y[0], ub[4096], [512, 1, 1]
";

const A: &str = "ub[0]{8, 64, 64}";
const B: &str = "ub[2048]{8, 64, 64}";
const D: &str = "ub[4096]{8, 64, 64}";

/// Runs `body` between loading x, z into ub[0], ub[2048] and storing ub[4096] to y.
fn run_body(body: &str) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let p = parse(&format!("{FRAME_HEAD}{body}\n{FRAME_TAIL}"));
    let r = run(&p);
    assert!(r.errors.is_empty(), "{body}: {:#?}", r.errors);
    assert!(r.races.is_empty(), "{body}: {:#?}", r.races);
    let get = |n: &str| r.output(n).unwrap().to_f32_vec();
    (get("x"), get("z"), get("y"))
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[test]
fn unary_ops_match_direct_computation() {
    type Unary = (&'static str, fn(f32) -> f32);
    let cases: [Unary; 12] = [
        ("vexp", f32::exp),
        ("vlog", f32::ln),
        ("vsqrt", f32::sqrt),
        ("vrsqrt", |x| 1.0 / x.sqrt()),
        ("vabs", f32::abs),
        ("vneg", |x| -x),
        ("vrelu", |x| x.max(0.0)),
        ("vsigmoid", sigmoid),
        ("vtanh", f32::tanh),
        ("vgelu", |x| {
            0.5 * x
                * (1.0
                    + ((2.0f32 / std::f32::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
        }),
        ("vsilu", |x| x * sigmoid(x)),
        ("vrecip", |x| 1.0 / x),
    ];
    for (name, f) in cases {
        let (x, _, y) = run_body(&format!("{name}.f32 {D}, {A}"));
        let want: Vec<f32> = x.iter().map(|v| f(*v)).collect();
        assert_close(&y, &want, 1e-6);
    }
}

#[test]
fn binary_ops_with_tiles_scalars_and_broadcast() {
    type Binary = (&'static str, fn(f32, f32) -> f32);
    let cases: [Binary; 6] = [
        ("vadd", |a, b| a + b),
        ("vsub", |a, b| a - b),
        ("vmul", |a, b| a * b),
        ("vdiv", |a, b| a / b),
        ("vmax", f32::max),
        ("vmin", f32::min),
    ];
    for (name, f) in cases {
        let (x, z, y) = run_body(&format!("{name}.f32 {D}, {A}, {B}"));
        let want: Vec<f32> = x.iter().zip(&z).map(|(a, b)| f(*a, *b)).collect();
        assert_close(&y, &want, 1e-6);
        // Scalar on either side.
        let (x, _, y) = run_body(&format!("{name}.f32 {D}, {A}, 1.5"));
        assert_close(&y, &x.iter().map(|a| f(*a, 1.5)).collect::<Vec<_>>(), 1e-6);
        let (x, _, y) = run_body(&format!("mov r7, 3\n{name}.f32 {D}, r7, {A}"));
        assert_close(&y, &x.iter().map(|a| f(3.0, *a)).collect::<Vec<_>>(), 1e-6);
        // [8, 1] column of z broadcast across columns; [1, 64] first row across rows.
        let (x, z, y) = run_body(&format!("{name}.f32 {D}, {A}, ub[2048]{{8, 1, 64}}"));
        let want: Vec<f32> = (0..512).map(|i| f(x[i], z[(i / 64) * 64])).collect();
        assert_close(&y, &want, 1e-6);
        let (x, z, y) = run_body(&format!("{name}.f32 {D}, ub[2048]{{1, 64, 64}}, {A}"));
        let want: Vec<f32> = (0..512).map(|i| f(z[i % 64], x[i])).collect();
        assert_close(&y, &want, 1e-6);
    }
}

#[test]
fn reductions_along_both_axes_with_register_masks() {
    type Red = (&'static str, f32, fn(f32, f32) -> f32);
    let cases: [Red; 3] = [
        ("vsum", 0.0, |a, b| a + b),
        ("vrmax", f32::NEG_INFINITY, f32::max),
        ("vrmin", f32::INFINITY, f32::min),
    ];
    for (name, init, f) in cases {
        // Rows: 6 valid rows of 40 valid columns (registers), result [6, 1].
        let (x, _, y) = run_body(&format!(
            "mov r5, 6\nmov r6, 40\n{name}.f32 ub[4096]{{r5, 1, 1}}, ub[0]{{r5, r6, 64}}, axis=1"
        ));
        for r in 0..6 {
            let want = x[r * 64..r * 64 + 40].iter().fold(init, |a, b| f(a, *b));
            assert_close(&y[r..r + 1], &[want], 1e-6);
        }
        assert_eq!(y[6], 0.0, "masked rows are not written");
        // Columns: [1, 64].
        let (x, _, y) = run_body(&format!("{name}.f32 ub[4096]{{1, 64, 64}}, {A}, axis=0"));
        for c in 0..64 {
            let want = (0..8).map(|r| x[r * 64 + c]).fold(init, f);
            assert_close(&y[c..c + 1], &[want], 1e-6);
        }
    }
}

#[test]
fn dup_copy_and_cast_round_to_f16() {
    let (_, _, y) = run_body(&format!("vdup.f32 {D}, -2.5"));
    assert!(y.iter().all(|v| *v == -2.5));
    let (x, _, y) = run_body(&format!("vcopy.f32 {D}, {A}"));
    assert_eq!(x, y);
    let (x, _, y) = run_body(&format!(
        "vcast.f16.f32 ub[6144]{{8, 64, 64}}, {A}\nvcast.f32.f16 {D}, ub[6144]{{8, 64, 64}}"
    ));
    let want: Vec<f32> = x.iter().map(|v| half::f16::from_f32(*v).to_f32()).collect();
    assert_eq!(y, want);
    let (x, _, y) = run_body(&format!(
        "vcast.bf16.f32 ub[6144]{{8, 64, 64}}, {A}\nvcast.f32.bf16 {D}, ub[6144]{{8, 64, 64}}"
    ));
    let want: Vec<f32> = x
        .iter()
        .map(|v| half::bf16::from_f32(*v).to_f32())
        .collect();
    assert_eq!(y, want);
}

#[test]
fn i32_index_arithmetic_is_exact() {
    let p = parse(
        "\
.tensor idx i32[64]
.tensor y i32[64]
dma.i32 ub[0], idx[0], [64, 1, 1]
set_flag MTE2, V, 0
wait_flag MTE2, V, 0
vmul.i32 ub[256]{1, 64, 64}, ub[0]{1, 64, 64}, 3
vadd.i32 ub[256]{1, 64, 64}, ub[256]{1, 64, 64}, 16777217
vsub.i32 ub[256]{1, 64, 64}, ub[256]{1, 64, 64}, ub[0]{1, 64, 64}
set_flag V, MTE3, 0
wait_flag V, MTE3, 0
dma.i32 y[0], ub[256], [64, 1, 1]
",
    );
    let r = run(&p);
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    let y = r.output("y").unwrap();
    for k in 0..64 {
        assert_eq!(y.get_i32(k), 2 * k as i32 + 16777217);
    }
}

#[test]
fn vector_cost_follows_the_teach_formula() {
    // vexp on 512 f32: ceil(512 / 16 * 4) + 8 = 136 cycles; vadd: 512 / 16 + 8 = 40.
    let p = parse(&format!("{FRAME_HEAD}vexp.f32 {D}, {A}\nvadd.f32 {D}, {A}, {B}\nvsum.f32 ub[4096]{{8, 1, 1}}, {A}, axis=1\n{FRAME_TAIL}"));
    let r = run(&p);
    let v: Vec<u64> = r
        .trace
        .iter()
        .filter(|e| e.pipe == tilescope::types::Pipe::V)
        .map(|e| e.end - e.start)
        .collect();
    // wait_flag 1, vexp 136, vadd 40, vsum 512/16 + 8 + 2 * 8 rows = 56, set_flag 1.
    assert_eq!(v, vec![1, 136, 40, 56, 1]);
}
