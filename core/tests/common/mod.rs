//! Helpers shared by the front-end tests.
#![allow(dead_code)]

use tilescope::diag::render;
use tilescope::front;

/// The SPEC 1 softmax example, verbatim.
pub const SOFTMAX: &str = "// softmax over the rows of a 64 x 512 matrix, 8 rows per tile
const R = 8;
kernel softmax(x: f32[64, 512], y: out f32[64, 512]) {
    for r in 0..64 step R @buffers(2) {
        let t = load x[r .. r + R, :];
        let m = amax(t, axis=1);          // f32[8, 1]
        let e = exp(t - m);               // broadcasting, numpy rules
        let s = sum(e, axis=1);
        store y[r .. r + R, :] = e / s;
    }
}
";

/// Kernels of our own covering matmul, casts, gathers, tails and updates.
pub const EXTRA_KERNELS: [&str; 3] = [
    "const N = 100;
const B = 32;
kernel scale_tail(x: f32[100, 16], y: out f32[100, 16]) {
    for i in 0..N step B {
        let t = load x[i .. i + B, :];
        store y[i .. i + B, :] = relu(t) * 2.0 + 1;
    }
}
",
    "kernel mm(a: f16[64, 32], b: f16[64, 32], c: out f32[64, 64]) {
    let acc = zeros(f32[64, 64]);
    for k in 0..32 step 16 {
        let x = load a[:, k .. k + 16];
        let w = load b[:, k .. k + 16];
        acc += x @ w.T;
    }
    store c[:, :] = acc;
}
",
    "kernel gather(idx: i32[8], x: bf16[1000, 4], y: out f32[8, 4]) {
    let i = load idx[:];
    let rows = load x[i + 2, :];
    let m = full(f32[8, 1], -inf);
    store y[:, :] = maximum(rows as f32, m) - mean(rows as f32, axis=-1);
    for j in 0..4 {
        store y[j * 2 % 8, j // 1] = gelu(load x[j, j .. j + 1] as f32);
    }
}
",
];

/// Runs the front end and renders its diagnostics (empty when it succeeds).
pub fn diagnose(source: &str) -> String {
    match front::frontend(source, None) {
        Ok(_) => String::new(),
        Err(d) => render(&d, "test.tile", source),
    }
}
