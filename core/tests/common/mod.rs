//! Helpers shared by the front-end tests.
#![allow(dead_code)]

use tilescope::diag::render;
use tilescope::front;

/// The first example of `docs/language.md` (softmax), verbatim.
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

/// An expression as an s-expression, to state precedence and associativity plainly.
pub fn sexpr(e: &tilescope::front::ast::Expr) -> String {
    use tilescope::front::ast::{ExprKind, IndexKind};
    let index = |i: &tilescope::front::ast::Index| match &i.kind {
        IndexKind::Full => ":".to_string(),
        IndexKind::Range(a, b) => format!("(.. {} {})", sexpr(a), sexpr(b)),
        IndexKind::Strided(a, b, s) => format!("(.. {} {} step {})", sexpr(a), sexpr(b), sexpr(s)),
        IndexKind::Point(p) => sexpr(p),
    };
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Neg(a) => format!("(neg {})", sexpr(a)),
        ExprKind::Not(a) => format!("(not {})", sexpr(a)),
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", op.symbol(), sexpr(lhs), sexpr(rhs))
        }
        ExprKind::Transpose(a) => format!("(T {})", sexpr(a)),
        ExprKind::Cast { value, dtype, .. } => format!("(as {} {dtype})", sexpr(value)),
        ExprKind::Load {
            tensor,
            indices,
            pad,
        } => {
            let parts: Vec<String> = indices.iter().map(index).collect();
            match pad {
                Some(v) => format!(
                    "(load {} [{}] pad {})",
                    tensor.name,
                    parts.join(" "),
                    sexpr(v)
                ),
                None => format!("(load {} [{}])", tensor.name, parts.join(" ")),
            }
        }
        ExprKind::SlotRead { name, slot } => format!("(slot {} {})", name.name, sexpr(slot)),
        ExprKind::List(items) => {
            let parts: Vec<String> = items.iter().map(sexpr).collect();
            format!("[{}]", parts.join(" "))
        }
        ExprKind::Slice { arg, indices } => {
            let parts: Vec<String> = indices.iter().map(index).collect();
            format!("(slice {} [{}])", sexpr(arg), parts.join(" "))
        }
        ExprKind::Call {
            func,
            ty,
            args,
            axis,
        } => {
            let mut parts = vec![func.name.clone()];
            if let Some(t) = ty {
                let dims: Vec<String> = t.shape.iter().map(sexpr).collect();
                parts.push(format!("{}[{}]", t.dtype, dims.join(" ")));
            }
            parts.extend(args.iter().map(sexpr));
            if let Some(a) = axis {
                parts.push(format!("axis={}", sexpr(a)));
            }
            format!("(call {})", parts.join(" "))
        }
    }
}

/// Parses `source` as the value of a `const` item and prints it.
pub fn parse_expr(source: &str) -> String {
    let (file, diags) = front::parse(&format!("const X = {source};"));
    assert!(diags.is_empty(), "{source}: {diags:?}");
    sexpr(&file.consts[0].value)
}

/// The 1-based line of a diagnostic's span, or `-` without one.
pub fn line_of(source: &str, d: &tilescope::diag::Diagnostic) -> String {
    match d.span {
        Some(s) => (source[..s.start as usize].matches('\n').count() + 1).to_string(),
        None => "-".to_string(),
    }
}
