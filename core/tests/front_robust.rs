//! No input makes the front end panic, hang or blow up: random edits of real kernels,
//! arbitrary strings, and adversarial shapes of input.

mod common;

use proptest::prelude::*;
use std::time::{Duration, Instant};
use tilescope::front;
use tilescope::front::ast::{Expr, ExprKind};

/// The shipped examples (if present) plus the kernels of these tests.
fn seeds() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../static/examples");
    let mut sources: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tile"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    sources.push(common::SOFTMAX.to_string());
    sources.extend(common::EXTRA_KERNELS.iter().map(|s| s.to_string()));
    sources
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes worth inserting: the language's own punctuation and keywords' letters, digits,
/// and a few outsiders (non-ASCII, NUL).
const ALPHABET: &[u8] = b"()[]{}.:,;=+-*/%@ \n\t0123456789aeinrstxyzTfkl_\x00\xce\xbb#";

#[test]
fn random_edits_of_every_kernel_never_panic() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut runs = 0;
    for seed in seeds() {
        // The unedited kernel is valid.
        assert!(front::frontend(&seed, None).is_ok(), "{seed}");
        for _ in 0..2000 {
            let mut bytes = seed.clone().into_bytes();
            for _ in 0..=rng.below(3) {
                let at = rng.below(bytes.len() + 1);
                match rng.below(3) {
                    0 => bytes.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
                    1 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ if at < bytes.len() => bytes[at] = ALPHABET[rng.below(ALPHABET.len())],
                    _ => {}
                }
            }
            let source = String::from_utf8_lossy(&bytes);
            let result = front::frontend(&source, None);
            if let Err(diags) = result {
                assert!(!diags.is_empty());
                // Rendering any diagnostic of any input is also safe.
                let _ = tilescope::diag::render(&diags, "fuzz.tile", &source);
            }
            runs += 1;
        }
    }
    assert!(runs >= 8000);
}

/// Tokens of the language, for inputs that get past the lexer.
const WORDS: &[&str] = &[
    "kernel", "const", "let", "for", "in", "step", "load", "store", "out", "as", "f32", "i32", "x",
    "t", "0", "8", "1.5", "inf", "(", ")", "[", "]", "{", "}", ",", ";", ":", "..", ".T", "=",
    "+=", "+", "-", "*", "/", "//", "%", "@", "sum", "axis",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_strings_never_panic(source in "\\PC{0,200}") {
        if let Err(diags) = front::frontend(&source, None) {
            prop_assert!(!diags.is_empty());
            let _ = tilescope::diag::render(&diags, "p.tile", &source);
        }
    }

    #[test]
    fn token_soup_never_panics(words in proptest::collection::vec(proptest::sample::select(WORDS), 0..60)) {
        let source = words.join(" ");
        let _ = front::frontend(&source, None);
    }
}

/// Runs the front end on `source` and checks it answers within a generous time.
fn answers_quickly(
    source: &str,
) -> Result<tilescope::front::hir::Kernel, tilescope::diag::Diagnostics> {
    let started = Instant::now();
    let result = front::frontend(source, None);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    result
}

#[test]
fn deeply_nested_parentheses_are_an_error_not_a_stack_overflow() {
    let n = 100_000;
    let source = format!(
        "kernel k(x: f32[4]) {{ let t = {}1{}; }}",
        "(".repeat(n),
        ")".repeat(n)
    );
    let diags = answers_quickly(&source).expect_err("too deep");
    assert!(
        diags[0].message.contains("nested too deeply"),
        "{:?}",
        diags[0]
    );
    let minus = format!("const A = {}1;\nkernel k(x: f32[4]) {{ }}", "-".repeat(n));
    assert!(answers_quickly(&minus).is_err());
    let blocks = format!("kernel k(x: f32[4]) {}{}", "{".repeat(n), "}".repeat(n));
    assert!(answers_quickly(&blocks).is_err());
}

#[test]
fn ten_thousand_kernels_parse_and_the_first_checks() {
    let source: String = (0..10_000)
        .map(|i| format!("kernel k{i}(x: f32[4], y: out f32[4]) {{ store y[:] = load x[:]; }}\n"))
        .collect();
    let k = answers_quickly(&source).expect("valid");
    assert_eq!(k.name, "k0");
    let (file, _) = front::parse(&source);
    assert_eq!(front::kernel_names(&file).len(), 10_000);
}

#[test]
fn a_megabyte_identifier_is_handled() {
    let name = "a".repeat(1 << 20);
    let source = format!("kernel k(x: f32[4]) {{ let t = {name}; }}");
    let diags = answers_quickly(&source).expect_err("unknown name");
    assert!(
        diags[0].message.len() < 200,
        "the message quotes a shortened name"
    );
    let as_kernel = format!("kernel {name}(x: f32[4]) {{ }}");
    assert!(answers_quickly(&as_kernel).is_ok());
}

#[test]
fn huge_numbers_and_extents_are_errors() {
    let cases = [
        "kernel k(x: f32[9223372036854775807, 9223372036854775807]) { }",
        "const A = 9223372036854775807 * 2;\nkernel k(x: f32[4]) { }",
        "const A = -9223372036854775807 - 1;\nconst B = A // -1;\nkernel k(x: f32[4]) { }",
        "kernel k(x: f32[4]) { for i in 0..9223372036854775807 { } }",
        "kernel k(x: f32[4]) { for i in -9223372036854775807..9223372036854775807 { } }",
        "kernel k(x: f32[4]) { for i in 0..4 { let t = load x[i * 9223372036854775807 .. i * 9223372036854775807 + 1]; } }",
        "kernel k(x: f32[1048576, 1], y: f32[1, 1048576]) { let t = load x[:, :] @ load y[:, :]; }",
    ];
    for source in cases {
        assert!(answers_quickly(source).is_err(), "{source}");
    }
}

/// Wraps `e` in 5000 levels of `kind`: deeper than the parser allows, yet shallow
/// enough for the test's own drop glue.
fn wrap(e: &mut Expr, kind: impl Fn(Expr) -> ExprKind) {
    for _ in 0..5_000 {
        let span = e.span;
        let inner = std::mem::replace(
            e,
            Expr {
                kind: ExprKind::Int(0),
                span,
            },
        );
        *e = Expr {
            kind: kind(inner),
            span,
        };
    }
}

#[test]
fn check_bounds_recursion_on_trees_built_by_hand() {
    use tilescope::front::ast::StmtKind;
    let source =
        "kernel k(x: f32[4, 4], y: out f32[4, 4]) { let t = load x[:, :]; store y[0, :] = t; }";
    let (mut file, diags) = front::parse(source);
    assert!(diags.is_empty());
    let body = &mut file.kernels[0].body.stmts;
    let StmtKind::Let { value, .. } = &mut body[0].kind else {
        panic!("let")
    };
    wrap(value, |e| ExprKind::Transpose(Box::new(e)));
    let StmtKind::Store { indices, .. } = &mut body[1].kind else {
        panic!("store")
    };
    let tilescope::front::ast::IndexKind::Point(point) = &mut indices[0].kind else {
        panic!("point")
    };
    wrap(point, |e| ExprKind::Neg(Box::new(e)));
    let diags = front::check(&file, None).expect_err("too deep");
    assert!(
        diags
            .iter()
            .all(|d| d.message.contains("nested too deeply")),
        "{diags:?}"
    );
    assert_eq!(diags.len(), 2);
}
