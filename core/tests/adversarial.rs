//! Hostile inputs end to end: every case finishes quickly with a result or an error that
//! names the limit it hit, never a stack overflow, a hang or an allocation failure. The
//! cases run on threads with a small stack: 2 MiB (a native default), and 1 MiB (about a
//! browser's wasm stack) for the deepest ones.

use std::time::{Duration, Instant};
use tilescope::compile::{compile, CompileOptions, CompileResult};
use tilescope::machine::Machine;
use tilescope::sim::{simulate, SimErrorKind, SimMode};

const MIB: usize = 1 << 20;

/// Generous bound for one case in a debug build on a busy machine; a hang or a
/// quadratic blow-up takes far longer.
const CASE_BUDGET: Duration = Duration::from_secs(60);

/// Runs `f` on a fresh thread with `stack` bytes of stack and checks its time.
fn on_stack<T: Send + 'static>(stack: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    let start = Instant::now();
    let out = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(f)
        .expect("spawn a test thread")
        .join()
        .expect("the case must not panic or overflow its stack");
    let took = start.elapsed();
    assert!(took < CASE_BUDGET, "took {took:?}");
    out
}

fn options() -> CompileOptions {
    CompileOptions {
        clock: tilescope::compile::PassClock::NONE,
        ..CompileOptions::default()
    }
}

fn compile_on(stack: usize, source: String) -> CompileResult {
    on_stack(stack, move || compile(&source, &options()))
}

/// Compiles with `--sync none` (no sync analysis) on a 2 MiB stack.
fn compile_without_sync(source: String) -> CompileResult {
    let options = CompileOptions {
        sync: tilescope::compile::SyncStrategy::None,
        ..options()
    };
    on_stack(2 * MIB, move || compile(&source, &options))
}

/// All diagnostic messages (with notes), for matching a limit's name.
fn messages(r: &CompileResult) -> String {
    r.diagnostics
        .iter()
        .map(|d| format!("{} {}", d.message, d.notes.join(" ")))
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_error_mentions(r: &CompileResult, needle: &str) {
    assert!(!r.ok(), "expected an error mentioning `{needle}`");
    let text = messages(r);
    assert!(text.contains(needle), "`{needle}` not in:\n{text}");
}

/// A kernel around `body`, with a 64 x 64 input and output.
fn kernel(body: &str) -> String {
    format!("kernel k(x: f32[64, 64], y: out f32[64, 64]) {{\n{body}\n}}\n")
}

/// `depth` nested one-iteration loops around a store.
fn nested_loops(depth: usize) -> String {
    let mut body = String::new();
    for i in 0..depth {
        body.push_str(&format!("for i{i} in 0..1 {{\n"));
    }
    body.push_str("store y[0 .. 8, :] = load x[0 .. 8, :] * 2.0;\n");
    body.push_str(&"}\n".repeat(depth));
    kernel(&body)
}

#[test]
fn deeply_nested_loops_hit_the_nesting_limit() {
    let r = compile_on(MIB, nested_loops(40));
    assert_error_mentions(&r, "loops nest too deeply");
    // Far deeper than the loop limit: the parser's own nesting bound stops it first.
    let r = compile_on(MIB, nested_loops(100_000));
    assert_error_mentions(&r, "nested too deeply");
    let blocks = kernel(&format!("{}{}", "{".repeat(100_000), "}".repeat(100_000)));
    assert!(!compile_on(MIB, blocks).ok());
}

#[test]
fn loops_at_the_nesting_limit_compile() {
    let r = compile_on(MIB, nested_loops(tilescope::limits::MAX_LOOP_NESTING));
    assert!(r.ok(), "{}", messages(&r));
}

#[test]
fn a_hundred_thousand_parentheses_hit_the_nesting_limit() {
    let n = 100_000;
    let expr = format!("{}load x[0 .. 8, :]{}", "(".repeat(n), ")".repeat(n));
    let r = compile_on(MIB, kernel(&format!("store y[0 .. 8, :] = {expr};")));
    assert_error_mentions(&r, "nested too deeply");
}

#[test]
fn long_prefix_and_postfix_chains_are_bounded() {
    let n = 100_000;
    for expr in [
        format!("{}t", "-".repeat(n)),
        format!("t{}", ".T".repeat(n)),
        format!("t{}", " as f32".repeat(n)),
        format!("{}t{}", "exp(".repeat(n), ")".repeat(n)),
    ] {
        let body = format!("let t = load x[0 .. 8, 0 .. 8];\nstore y[0 .. 8, 0 .. 8] = {expr};");
        let r = compile_on(MIB, kernel(&body));
        assert!(!r.ok(), "a {n}-deep chain must be rejected");
    }
}

#[test]
fn ten_thousand_term_expression() {
    let terms = vec!["t"; 10_000].join(" + ");
    let body = format!("let t = load x[0 .. 8, :];\nstore y[0 .. 8, :] = {terms};");
    // Left-associative: as deep a tree as it is long, so each operator counts as a level.
    let r = compile_on(MIB, kernel(&body));
    assert_error_mentions(&r, "nested too deeply");
    // A chain within the limit compiles and runs.
    let terms = vec!["t"; 40].join(" + ");
    let source = kernel(&format!(
        "let t = load x[0 .. 8, :];\nstore y[0 .. 8, :] = {terms};"
    ));
    let r = on_stack(MIB, move || {
        tilescope::run::run(&source, &options(), Vec::new(), 1)
    });
    assert!(r.reference_match, "{:?} {:?}", r.diagnostics, r.sim.errors);
}

#[test]
fn thousands_of_kernels_in_one_file() {
    let mut source = String::new();
    for i in 0..5000 {
        source.push_str(&format!(
            "kernel k{i}(x: f32[8, 8], y: out f32[8, 8]) {{ store y[:, :] = load x[:, :] + {i}.0; }}\n"
        ));
    }
    let last = "k4999".to_string();
    let r = on_stack(2 * MIB, move || {
        let opts = CompileOptions {
            kernel: Some(last),
            ..options()
        };
        compile(&source, &opts)
    });
    assert!(r.ok(), "{}", messages(&r));
    assert_eq!(r.kernels.len(), 5000);
    assert_eq!(r.kernel.as_deref(), Some("k4999"));
}

/// A single loop of `n` iterations over the rows of an `[n, 1]` tensor.
fn row_loop(n: u64) -> String {
    format!(
        "kernel k(x: f32[{n}, 8], y: out f32[{n}, 8]) {{\n\
         for i in 0..{n} {{ store y[i .. i + 1, :] = load x[i .. i + 1, :] + 1.0; }}\n}}\n"
    )
}

#[test]
fn a_million_iterations_exactly_compiles() {
    let limit = tilescope::limits::MAX_LOOP_ITERATIONS;
    let r = compile_on(2 * MIB, row_loop(limit));
    assert!(r.ok(), "{}", messages(&r));
}

#[test]
fn one_iteration_over_the_limit_is_an_error() {
    let limit = tilescope::limits::MAX_LOOP_ITERATIONS;
    let r = compile_on(2 * MIB, row_loop(limit + 1));
    assert_error_mentions(&r, &format!("the limit is {limit}"));
    // Nested loops count the product: 1000 x 1001 inner iterations.
    let body = "for i in 0..1000 { for j in 0..1001 { store y[0 .. 8, :] = load x[0 .. 8, :]; } }";
    let r = compile_on(2 * MIB, kernel(body));
    assert_error_mentions(&r, "loop iterations");
}

#[test]
fn tiles_at_and_over_the_size_limit() {
    // 2^20 elements: within the tile limit; too big for the a3 unified buffer.
    let at = "kernel k(x: f32[1024, 1024], y: out f32[1024, 1024]) {\n\
              store y[:, :] = load x[:, :] * 2.0;\n}\n";
    let r = compile_on(2 * MIB, at.to_string());
    assert!(!messages(&r).contains("elements"), "{}", messages(&r));
    assert!(!r.ok(), "4 MiB does not fit the unified buffer");
    let over = "kernel k(x: f32[1025, 1024], y: out f32[1025, 1024]) {\n\
                store y[:, :] = load x[:, :] * 2.0;\n}\n";
    let r = compile_on(2 * MIB, over.to_string());
    assert_error_mentions(&r, "2^20");
    let zeros = kernel("let z = zeros(f32[2048, 1024]);\nstore y[:, :] = z[0 .. 64, :];");
    let r = compile_on(2 * MIB, zeros);
    assert!(!r.ok());
}

#[test]
fn tensors_at_and_over_the_size_limit() {
    let at = "kernel k(x: f32[4096, 4096], y: out f32[4096, 4096]) {\n\
              for r in 0..4096 step 8 { store y[r .. r + 8, :] = load x[r .. r + 8, :]; }\n}\n";
    let r = compile_on(2 * MIB, at.to_string());
    assert!(r.ok(), "{}", messages(&r));
    let over = at.replace("4096, 4096]", "4097, 4096]");
    let r = compile_on(2 * MIB, over);
    assert_error_mentions(&r, "2^24");
    let huge = kernel("").replace("[64, 64]", "[4294967296, 4294967296]");
    let r = compile_on(2 * MIB, huge);
    assert_error_mentions(&r, "2^24");
}

#[test]
fn matmul_with_a_huge_k() {
    let source = "kernel mm(a: f32[16, 65536], w: f32[65536, 16], c: out f32[16, 16]) {\n\
                  store c[:, :] = load a[:, :] @ load w[:, :];\n}\n";
    let r = compile_on(2 * MIB, source.to_string());
    assert!(!r.ok(), "a 16 x 65536 operand cannot fit on chip");
    // The same K in a loop of 16-wide slices compiles and stays a short program.
    let looped = "kernel mm(a: f32[16, 65536], w: f32[65536, 16], b: f32[16, 16], c: out f32[16, 16]) {\n\
                  let acc = zeros(f32[16, 16]);\n\
                  for k in 0..65536 step 16 { acc += load a[:, k .. k + 16] @ load w[k .. k + 16, :]; }\n\
                  let w2 = load b[:, :];\n\
                  store c[:, :] = acc @ w2 @ w2 @ w2;\n}\n";
    let r = compile_on(2 * MIB, looped.to_string());
    assert!(r.ok(), "{}", messages(&r));
    let instrs = r.program.map_or(0, |p| p.instrs.len());
    assert!(instrs < 1000, "{instrs} instructions");
}

#[test]
fn a_billion_iteration_asm_loop_stops_at_the_instruction_limit() {
    let text = ".tensor x f32[8]\nloop r1, 1000000000\n  add r2, r2, 1\nendloop\n";
    let program = tilescope::isa::asm::parse(text).expect("valid assembly");
    let result = on_stack(2 * MIB, move || {
        simulate(&program, &Machine::teach(), Vec::new(), SimMode::TIMING)
    });
    let err = result.errors.first().expect("an error");
    assert_eq!(err.kind, SimErrorKind::InstructionLimit, "{}", err.message);
    assert!(
        err.message.contains("limits.max_instructions"),
        "{}",
        err.message
    );
    // A loop counted by a register is stopped while it runs.
    let text = ".tensor x f32[8]\nmov r3, 1000000000\nloop r1, r3\n  add r2, r2, 1\nendloop\n";
    let program = tilescope::isa::asm::parse(text).expect("valid assembly");
    let result = on_stack(2 * MIB, move || {
        let mut m = Machine::teach();
        m.limits.max_instructions = 100_000;
        simulate(&program, &m, Vec::new(), SimMode::TIMING)
    });
    let err = result.errors.first().expect("an error");
    assert_eq!(err.kind, SimErrorKind::InstructionLimit, "{}", err.message);
}

/// A kernel of `n` stores of one loaded tile.
fn many_stores(n: usize) -> String {
    let mut body = String::from("let t = load x[0 .. 8, :];\n");
    for i in 0..n {
        body.push_str(&format!("store y[0 .. 8, :] = t + {i}.0;\n"));
    }
    kernel(&body)
}

#[test]
fn ten_thousand_chained_lets_hit_the_ir_size_limit() {
    let mut body = String::from("let v0 = load x[0 .. 8, :];\n");
    for i in 1..10_000 {
        body.push_str(&format!("let v{i} = v{} * 1.0001 + 0.5;\n", i - 1));
    }
    body.push_str("store y[0 .. 8, :] = v9999;");
    let r = compile_on(MIB, kernel(&body));
    assert_error_mentions(&r, "MAX_IR_OPS");
}

#[test]
fn ten_thousand_statements_hit_the_ir_size_limit() {
    let r = compile_on(2 * MIB, many_stores(10_000));
    assert_error_mentions(&r, "MAX_IR_OPS");
}

#[test]
fn a_thousand_loops_compile_in_linear_time() {
    // Automatic multi-buffering and axis-split once cost time quadratic in the number
    // of loops (seconds per few hundred loops unoptimised).
    let mut body = String::new();
    for i in 0..1000 {
        body.push_str(&format!(
            "for i in 0..2 {{ store y[i .. i + 1, :] = load x[i .. i + 1, :] + {i}.0; }}\n"
        ));
    }
    let source = kernel(&body);
    let r = compile_without_sync(source);
    assert!(r.ok(), "{}", messages(&r));
}

#[test]
fn a_thousand_statements_stop_at_the_sync_budget() {
    // Under the instruction cap, but ordering it takes cubic work.
    let source = many_stores(1000);
    let r = compile_on(2 * MIB, source.clone());
    assert_error_mentions(&r, "SYNC_ANALYSIS_BUDGET");
    // Without sync analysis it compiles.
    let r = compile_without_sync(source);
    assert!(r.ok(), "{}", messages(&r));
}

#[test]
fn assembly_over_the_instruction_cap_is_rejected() {
    let n = tilescope::limits::MAX_PROGRAM_INSTRUCTIONS + 1;
    let text = format!(".tensor x f32[8]\n{}", "add r1, r1, 1\n".repeat(n));
    let errs = tilescope::isa::asm::parse(&text).expect_err("too many instructions");
    assert!(
        errs[0].message.contains("MAX_PROGRAM_INSTRUCTIONS"),
        "{}",
        errs[0].message
    );
}

#[test]
fn huge_pass_dumps_are_truncated_with_a_marker() {
    use tilescope::limits::MAX_PASS_DUMP_BYTES;
    // Under the instruction cap, yet its printed IR is far over the dump cap.
    let source = many_stores(2500);
    let r = compile_without_sync(source);
    assert!(r.ok(), "{}", messages(&r));
    for pass in &r.passes {
        assert!(
            pass.ir.len() < MAX_PASS_DUMP_BYTES + 200,
            "{}",
            pass.ir.len()
        );
        assert_eq!(pass.lines.len(), pass.ir.lines().count());
    }
    // The final program's listing is the longest: it is cut, with the marker last.
    let emit = r.passes.last().expect("every pass ran");
    let last = emit.ir.lines().last().unwrap_or_default();
    assert!(last.contains("MAX_PASS_DUMP_BYTES"), "{last}");
}

#[test]
fn huge_machine_json_is_rejected_unread() {
    let text = format!(
        "{{\"name\": \"{}\"}}",
        "x".repeat(tilescope::limits::MAX_JSON_BYTES)
    );
    let err = Machine::from_json(&text).expect_err("too large");
    assert!(err.contains("MAX_JSON_BYTES"), "{err}");
}

#[test]
fn the_deepest_accepted_expression_runs_on_a_one_mib_stack() {
    // Just under the nesting limit, through every stage: check, IR lowering, the
    // passes, the reference interpreter and the simulator.
    let depth = tilescope::limits::MAX_NESTING_DEPTH - 8;
    let expr = format!("{}t{}", "abs(-".repeat(depth / 2), ")".repeat(depth / 2));
    let source = kernel(&format!(
        "let t = load x[0 .. 8, :];\nstore y[0 .. 8, :] = {expr};"
    ));
    let r = on_stack(MIB, move || {
        tilescope::run::run(&source, &options(), Vec::new(), 1)
    });
    assert!(r.compile.ok(), "{}", messages(&r.compile));
    assert!(r.reference_match, "{:?} {:?}", r.diagnostics, r.sim.errors);
}

#[test]
fn absurd_buffer_counts_are_errors() {
    for n in ["0", "1000000", "4294967296", "99999999999999999999"] {
        let body = format!(
            "for r in 0..64 step 8 @buffers({n}) {{ store y[r .. r + 8, :] = load x[r .. r + 8, :]; }}"
        );
        let r = compile_on(2 * MIB, kernel(&body));
        assert!(!r.ok(), "@buffers({n}) must be rejected");
    }
}
