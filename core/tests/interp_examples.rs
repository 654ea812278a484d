//! Every example kernel in `static/examples` runs through the front end and the
//! interpreter with seeded inputs, and several are checked against host computations.

use std::path::PathBuf;
use tilescope::front::hir::Kernel;
use tilescope::tensor::{compare, Tensor};
use tilescope::types::DType;
use tilescope::{front, inputs, interp};

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../static/examples")
}

fn source(name: &str) -> String {
    let path = examples_dir().join(format!("{name}.tile"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn checked(src: &str) -> Kernel {
    match front::frontend(src, None) {
        Ok(k) => k,
        Err(d) => panic!("front end rejected the example: {d:?}"),
    }
}

/// Seeded inputs, run, and the tensors afterwards.
fn run_example(name: &str, seed: u64) -> (Kernel, Vec<Tensor>) {
    let k = checked(&source(name));
    let mut t = inputs::prepare(&k, vec![], seed).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    interp::run(&k, &mut t).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    (k, t)
}

fn param<'a>(k: &Kernel, t: &'a [Tensor], name: &str) -> &'a Tensor {
    let i = k
        .params
        .iter()
        .position(|p| p.name == name)
        .unwrap_or_else(|| panic!("no parameter {name}"));
    &t[i]
}

fn assert_matches(expected: &Tensor, actual: &Tensor) {
    let c = compare(expected, actual);
    assert!(c.matches, "{c:?}");
}

#[test]
fn every_example_runs() {
    let mut names: Vec<String> = std::fs::read_dir(examples_dir())
        .expect("static/examples exists")
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .into_string()
                .ok()?
                .strip_suffix(".tile")
                .map(String::from)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let (k, t) = run_example(&name, 1);
        for (p, tensor) in k.params.iter().zip(&t).filter(|(p, _)| p.is_out) {
            let v = tensor.to_f32_vec();
            assert!(
                v.iter().all(|x| x.is_finite()),
                "{name}: `{}` has a non-finite value",
                p.name
            );
            assert!(
                v.iter().any(|&x| x != 0.0),
                "{name}: `{}` stayed zero",
                p.name
            );
        }
    }
}

#[test]
fn tail_reduction_sums_whole_rows() {
    let (k, t) = run_example("tail_reduction", 3);
    let x = param(&k, &t, "x");
    // The kernel sums each 32-column chunk, then accumulates the chunk sums.
    let want: Vec<f32> = (0..16)
        .map(|r| {
            (0..100)
                .step_by(32)
                .map(|c| {
                    (c..100.min(c + 32))
                        .map(|j| x.get(r * 100 + j))
                        .sum::<f32>()
                })
                .sum()
        })
        .collect();
    assert_matches(
        &Tensor::from_f32(DType::F32, vec![16, 1], &want),
        param(&k, &t, "y"),
    );
}

#[test]
fn softmax_rows_sum_to_one() {
    let (k, t) = run_example("softmax", 5);
    let out = k
        .params
        .iter()
        .position(|p| p.is_out)
        .expect("an out parameter");
    let y = &t[out];
    let cols = *y.shape.last().expect("rank >= 1") as usize;
    for row in y.to_f32_vec().chunks(cols) {
        let s: f32 = row.iter().sum();
        assert!((s - 1.0).abs() < 1e-5, "row sum {s}");
    }
}

#[test]
fn gather_reads_shifted_rows() {
    let (k, t) = run_example("gather", 7);
    let (ids, table) = (param(&k, &t, "ids"), param(&k, &t, "table"));
    let want: Vec<f32> = (0..32)
        .flat_map(|i| {
            let row = ids.get_i32(i) as usize + 2;
            (0..128).map(move |j| table.get(row * 128 + j) * 0.5)
        })
        .collect();
    assert_matches(
        &Tensor::from_f32(DType::F32, vec![32, 128], &want),
        param(&k, &t, "y"),
    );
}

#[test]
fn scatter_last_write_wins() {
    let (k, t) = run_example("scatter", 9);
    let (dst, upd) = (param(&k, &t, "dst"), param(&k, &t, "upd"));
    let mut want = vec![0.0f32; 32 * 64];
    for r in 0..16 {
        let d = dst.get_i32(r) as usize;
        for j in 0..64 {
            want[d * 64 + j] = upd.get(r * 64 + j) + 1.0;
        }
    }
    assert_matches(
        &Tensor::from_f32(DType::F32, vec![32, 64], &want),
        param(&k, &t, "y"),
    );
}

#[test]
fn block_permute_is_a_transpose() {
    let (k, t) = run_example("block_permute", 11);
    let x = param(&k, &t, "x");
    let want: Vec<f32> = (0..64 * 64)
        .map(|i| x.get((i % 64) * 64 + i / 64))
        .collect();
    assert_matches(
        &Tensor::from_f32(DType::F32, vec![64, 64], &want),
        param(&k, &t, "y"),
    );
}

#[test]
fn spills_is_two_x_plus_z() {
    let (k, t) = run_example("spills", 12);
    let (x, z) = (param(&k, &t, "x"), param(&k, &t, "z"));
    let want: Vec<f32> = (0..4 * 64 * 256)
        .map(|i| x.get(i) * 2.0 + z.get(i))
        .collect();
    assert_matches(
        &Tensor::from_f32(DType::F32, vec![4, 64, 256], &want),
        param(&k, &t, "y"),
    );
}

#[test]
fn out_of_range_gather_from_source_is_a_diagnostic() {
    // ids come from the input; 62 + 2 leaves the 64-row table.
    let k = checked(&source("gather"));
    let mut ids = Tensor::zeros(DType::I32, vec![32]);
    ids.set_i32(9, 62);
    let mut t = inputs::prepare(&k, vec![("ids".into(), ids)], 0).expect("prepare");
    let err = interp::run(&k, &mut t).expect_err("index 64 is out of range");
    assert!(
        err.message.contains("`table`") && err.message.contains("64"),
        "{}",
        err.message
    );
    let span = err.span.expect("a source span");
    let src = source("gather");
    assert_eq!(&src[span.start as usize..span.end as usize], "idx + 2");
}
