//! Helpers shared by the simulator tests: load a `.tasm` program, make inputs, run.
#![allow(dead_code)]

use tilescope::isa::{asm, Program};
use tilescope::machine::Machine;
use tilescope::sim::{simulate, SimMode, SimResult};
use tilescope::tensor::Tensor;
use tilescope::types::DType;

pub fn load(name: &str) -> Program {
    let path = format!("{}/tests/asm/{name}.tasm", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse(&text)
}

pub fn parse(text: &str) -> Program {
    match asm::parse(text) {
        Ok(p) => p,
        Err(d) => panic!("parse errors: {d:#?}"),
    }
}

/// Deterministic, varied values in [-2, 2).
pub fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            (((i as u32).wrapping_mul(2654435761).wrapping_add(seed * 97) >> 8) % 4000) as f32
                / 1000.0
                - 2.0
        })
        .collect()
}

/// Inputs for every declared tensor: seeded values (zeros for tensors named `y*`).
pub fn inputs(p: &Program) -> Vec<Tensor> {
    p.tensors
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let n = d.shape.iter().product::<u64>() as usize;
            if d.name.starts_with('y') {
                Tensor::zeros(d.dtype, d.shape.clone())
            } else if d.dtype == DType::I32 {
                let mut t = Tensor::zeros(DType::I32, d.shape.clone());
                (0..n).for_each(|k| t.set_i32(k, k as i32));
                t
            } else {
                Tensor::from_f32(d.dtype, d.shape.clone(), &values(n, i as u32))
            }
        })
        .collect()
}

pub fn run(p: &Program) -> SimResult {
    run_on(p, &Machine::teach())
}

pub fn run_on(p: &Program, m: &Machine) -> SimResult {
    simulate(p, m, inputs(p), SimMode::FULL)
}

pub fn assert_close(got: &[f32], want: &[f32], rel: f32) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = rel * w.abs().max(1.0);
        assert!(
            (g - w).abs() <= tol || (g.is_nan() && w.is_nan()),
            "element {i}: got {g}, want {w}"
        );
    }
}
