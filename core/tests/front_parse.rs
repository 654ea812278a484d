//! The parser: every construct of `docs/language.md`, precedence and associativity.

mod common;

use common::parse_expr;
use tilescope::front::ast::{AssignOp, IndexKind, StmtKind};
use tilescope::front::{self, kernel_names};
use tilescope::types::DType;

#[test]
fn precedence_follows_spec_order() {
    // Tightest first: `.T`, unary `-`, `as`, `@`, `* / // %`, `+ -`.
    assert_eq!(parse_expr("a + b * c"), "(+ a (* b c))");
    assert_eq!(parse_expr("a * b @ c"), "(* a (@ b c))");
    assert_eq!(parse_expr("a @ b as f16"), "(@ a (as b f16))");
    assert_eq!(parse_expr("-a as f16"), "(as (neg a) f16)");
    assert_eq!(parse_expr("-a.T"), "(neg (T a))");
    assert_eq!(parse_expr("a.T.T"), "(T (T a))");
    assert_eq!(parse_expr("a - b // c % d"), "(- a (% (// b c) d))");
    assert_eq!(parse_expr("(a + b) * c"), "(* (+ a b) c)");
    assert_eq!(parse_expr("x as f32 as i32"), "(as (as x f32) i32)");
    assert_eq!(parse_expr("- - a"), "(neg (neg a))");
}

/// Python's and Rust's order for the bit operators and `**`: `* / // %`, then `+ -`,
/// then `<< >>`, `&`, `^`, `|`, then comparisons; `**` above a unary minus on its left,
/// right-associative.
#[test]
fn bit_operators_and_powers_take_python_precedence() {
    assert_eq!(
        parse_expr("a | b ^ c & d << e + f"),
        "(| a (^ b (& c (<< d (+ e f)))))"
    );
    assert_eq!(parse_expr("a & b | c"), "(| (& a b) c)");
    assert_eq!(parse_expr("a >> 4 & 15"), "(& (>> a 4) 15)");
    assert_eq!(parse_expr("a & b == c"), "(== (& a b) c)");
    assert_eq!(parse_expr("~a & b"), "(& (not a) b)");
    assert_eq!(parse_expr("~a.T"), "(not (T a))");
    assert_eq!(parse_expr("-a ** 2"), "(neg (** a 2))");
    assert_eq!(parse_expr("a ** -1"), "(** a (neg 1))");
    assert_eq!(parse_expr("a ** b ** c"), "(** a (** b c))");
    assert_eq!(parse_expr("2 * a ** 2"), "(* 2 (** a 2))");
    assert_eq!(parse_expr("a.T ** 2 as f16"), "(as (** (T a) 2) f16)");
}

/// Brackets after a name hold a slot (one plain index) or a slice (`:` or ranges); after
/// any other primary, and after a slot or slice, they slice. They bind as tightly as `.T`.
#[test]
fn brackets_after_a_tile_read_a_slot_or_slice() {
    assert_eq!(parse_expr("b[i % 2]"), "(slot b (% i 2))");
    assert_eq!(parse_expr("t[:, 0 .. 64]"), "(slice t [: (.. 0 64)])");
    assert_eq!(parse_expr("t[0 .. 8]"), "(slice t [(.. 0 8)])");
    assert_eq!(
        parse_expr("b[s][:, 0 .. 32].T"),
        "(T (slice (slot b s) [: (.. 0 32)]))"
    );
    assert_eq!(
        parse_expr("(a + b)[0 .. 1, :]"),
        "(slice (+ a b) [(.. 0 1) :])"
    );
    assert_eq!(
        parse_expr("-t[:, 0 .. 4] * 2"),
        "(* (neg (slice t [: (.. 0 4)])) 2)"
    );
    assert_eq!(
        parse_expr("load x[:, :][0 .. 4, :]"),
        "(slice (load x [: :]) [(.. 0 4) :])"
    );
}

/// `a .. b step s` in brackets: a strided range.
#[test]
fn a_range_takes_a_step() {
    assert_eq!(
        parse_expr("load x[:, 1 .. K step 2]"),
        "(load x [: (.. 1 K step 2)])"
    );
    assert_eq!(
        parse_expr("load x[i .. i + 8 step s + 1, :]"),
        "(load x [(.. i (+ i 8) step (+ s 1)) :])"
    );
}

/// `pad` after a load's brackets takes one unary operand and binds tighter than any
/// binary operator; elsewhere `pad` is a name.
#[test]
fn pad_binds_to_its_load() {
    assert_eq!(
        parse_expr("load x[:, t - 3 .. t + 29] pad 0.0 * w"),
        "(* (load x [: (.. (- t 3) (+ t 29))] pad 0.0) w)"
    );
    assert_eq!(
        parse_expr("load x[i .. i + 8] pad -inf"),
        "(load x [(.. i (+ i 8))] pad (neg inf))"
    );
    assert_eq!(parse_expr("pad + 1"), "(+ pad 1)");
}

#[test]
fn binary_operators_are_left_associative() {
    assert_eq!(parse_expr("a - b - c"), "(- (- a b) c)");
    assert_eq!(parse_expr("a / b * c"), "(* (/ a b) c)");
    assert_eq!(parse_expr("a @ b @ c"), "(@ (@ a b) c)");
    assert_eq!(parse_expr("a // b // c"), "(// (// a b) c)");
}

#[test]
fn literals() {
    assert_eq!(parse_expr("42"), "42");
    assert_eq!(parse_expr("1.0"), "1.0");
    assert_eq!(parse_expr("1e-5"), "1e-5");
    assert_eq!(parse_expr("2.5e3"), "2500.0");
    assert_eq!(parse_expr("inf"), "inf");
    assert_eq!(parse_expr("-inf"), "(neg inf)");
}

#[test]
fn calls_constructors_and_loads() {
    assert_eq!(parse_expr("exp(t - m)"), "(call exp (- t m))");
    assert_eq!(parse_expr("sum(e, axis=1)"), "(call sum e axis=1)");
    assert_eq!(parse_expr("amax(t, axis=-1)"), "(call amax t axis=(neg 1))");
    assert_eq!(parse_expr("maximum(a, b)"), "(call maximum a b)");
    assert_eq!(parse_expr("zeros(f32[64, 64])"), "(call zeros f32[64 64])");
    assert_eq!(
        parse_expr("full(f32[8, 1], -inf)"),
        "(call full f32[8 1] (neg inf))"
    );
    assert_eq!(
        parse_expr("load x[r .. r + R, :, i, idx + 2]"),
        "(load x [(.. r (+ r R)) : i (+ idx 2)])"
    );
    assert_eq!(
        parse_expr("load x[i // 4, i % 4]"),
        "(load x [(// i 4) (% i 4)])"
    );
}

#[test]
fn comments_and_floor_division_share_slashes() {
    let (file, diags) =
        front::parse("// a comment\nconst A = 7 // 2; // trailing\nconst B = (A) // 2;\n");
    assert!(diags.is_empty(), "{diags:?}");
    let values: Vec<String> = file
        .consts
        .iter()
        .map(|c| common::sexpr(&c.value))
        .collect();
    assert_eq!(values, ["(// 7 2)", "(// A 2)"]);
}

#[test]
fn ranges_lex_as_int_dotdot_int() {
    let (file, diags) = front::parse("kernel k(x: f32[4]) { for i in 0..4 { } }");
    assert!(diags.is_empty(), "{diags:?}");
    let StmtKind::For {
        start, end, step, ..
    } = &file.kernels[0].body.stmts[0].kind
    else {
        panic!("expected a for loop");
    };
    assert_eq!(
        (common::sexpr(start), common::sexpr(end)),
        ("0".into(), "4".into())
    );
    assert!(step.is_none());
}

#[test]
fn every_statement_form() {
    let source = "const R = 8;
kernel k(x: f32[64, 512], y: out f32[64, 512],) {
    let acc = zeros(f32[8, 512]);
    for r in 0..64 step R @buffers(2) @other {
        acc += load x[r .. r + R, :];
        acc -= 1.0;
        acc *= 2.0;
        acc = acc;
    }
    store y[0 .. 8, :] = acc;
}";
    let (file, diags) = front::parse(source);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.consts.len(), 1);
    let k = &file.kernels[0];
    assert_eq!(k.params.len(), 2);
    assert!(!k.params[0].is_out && k.params[1].is_out);
    assert_eq!(k.params[1].ty.dtype, DType::F32);
    assert_eq!(k.params[1].ty.shape.len(), 2);
    let stmts = &k.body.stmts;
    assert!(matches!(&stmts[0].kind, StmtKind::Let { name, .. } if name.name == "acc"));
    let StmtKind::For {
        var,
        step,
        attrs,
        body,
        ..
    } = &stmts[1].kind
    else {
        panic!("expected a for loop");
    };
    assert_eq!(var.name, "r");
    assert_eq!(step.as_ref().map(common::sexpr).as_deref(), Some("R"));
    let attr_names: Vec<&str> = attrs.iter().map(|a| a.name.name.as_str()).collect();
    assert_eq!(attr_names, ["buffers", "other"]);
    assert_eq!(attrs[0].args.len(), 1);
    let ops: Vec<AssignOp> = body
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { op, .. } => Some(*op),
            _ => None,
        })
        .collect();
    assert_eq!(
        ops,
        [AssignOp::Add, AssignOp::Sub, AssignOp::Mul, AssignOp::Set]
    );
    let StmtKind::Store {
        tensor, indices, ..
    } = &stmts[2].kind
    else {
        panic!("expected a store");
    };
    assert_eq!(tensor.name, "y");
    assert!(matches!(indices[0].kind, IndexKind::Range(..)));
    assert!(matches!(indices[1].kind, IndexKind::Full));
}

#[test]
fn spans_cover_the_source_text() {
    let source = "const X = (a + b) * exp(c);";
    let (file, _) = front::parse(source);
    let e = &file.consts[0].value;
    assert_eq!(
        &source[e.span.start as usize..e.span.end as usize],
        "(a + b) * exp(c)"
    );
}

#[test]
fn several_kernels_and_consts_in_any_order() {
    let source = "kernel a(x: f32[4]) { }\nconst N = 4;\nkernel b(x: f32[N]) { }\nconst M = N;";
    let (file, diags) = front::parse(source);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(kernel_names(&file), ["a", "b"]);
    assert_eq!(file.consts.len(), 2);
}
