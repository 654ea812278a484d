//! The ISA is described once (ARCHITECTURE.md, "Invariants"): adding an instruction
//! touches its description (`isa/describe.rs`), its semantics (`sim/exec.rs`) and its
//! price (`sim/timing.rs`), and nothing else. The first test holds the rule by reading
//! the workspace's source: the only code that names every opcode is in those three
//! files. The others check that the printer and the parser made from the description
//! round-trip every opcode.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tilescope_base::types::{CmpOp, DType, MemSpace};
use tilescope_machine::isa::asm::{self, ALU_OPS, ARG_OPS, BIN_OPS, RED_OPS, UN_OPS};
use tilescope_machine::isa::{Addr, Instr, Op, Program, Reg, Tile, VSrc, Val};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The variants of `pub enum Op`, read from its source.
fn opcodes() -> Vec<String> {
    let path = workspace().join("core/machine/src/isa/mod.rs");
    let text = std::fs::read_to_string(&path).expect("isa/mod.rs");
    let code = blank_comments_and_literals(&text);
    let start = code
        .find("pub enum Op {")
        .expect("`pub enum Op` in isa/mod.rs");
    let open = start + code[start..].find('{').expect("its body");
    let body = &code[open + 1..block_end(&code, open)];
    let mut variants = Vec::new();
    let mut depth = 0;
    let mut at_item = true;
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => at_item = true,
            '#' if depth == 0 => at_item = false,
            c if depth == 0 && at_item && c.is_ascii_uppercase() => {
                let len = ident_len(&body[i..]);
                variants.push(body[i..i + len].to_string());
                at_item = false;
                for _ in 1..len {
                    chars.next();
                }
            }
            _ => {}
        }
        // An attribute ends with its `]`; the next item may follow.
        if c == ']' && depth == 0 {
            at_item = true;
        }
    }
    variants
}

fn ident_len(s: &str) -> usize {
    s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len())
}

/// `text` with its comments, strings and character literals turned to spaces (line
/// breaks kept), so that braces and names inside them are not read as code.
fn blank_comments_and_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for x in &mut out[from..to] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let end = if rest.starts_with(b"//") {
            i + rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            i + 2 + find(&rest[2..], b"*/").map_or(rest.len() - 2, |e| e + 2)
        } else if rest.starts_with(b"r#\"") || rest.starts_with(b"r\"") {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let from = 2 + hashes;
            i + from + find(&rest[from..], &close).map_or(rest.len() - from, |e| e + close.len())
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            i + (j + 1).min(rest.len())
        } else if rest[0] == b'\'' && rest.get(1) == Some(&b'\\') {
            // An escape: the quote that closes it comes after the escaped character.
            i + 3
                + rest[3..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(0, |e| e + 1)
        } else if rest[0] == b'\'' && char_literal_len(&text[i..]).is_some() {
            i + char_literal_len(&text[i..]).unwrap_or(1)
        } else {
            i += 1;
            continue;
        };
        let end = end.min(b.len());
        blank(&mut out, i, end);
        i = end;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The length of the character literal `s` starts with (`'x'`), or `None` for a
/// lifetime (`'a`).
fn char_literal_len(s: &str) -> Option<usize> {
    let c = s[1..].chars().next()?;
    let close = 1 + c.len_utf8();
    (s[close..].starts_with('\'')).then_some(close + 1)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The index of the `}` (or `)`) that closes the bracket at `open`.
fn block_end(code: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return open + i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The names `X` of every `Op::X` in `code` (not `UnOp::X` and the like).
fn named_opcodes(code: &str) -> BTreeSet<&str> {
    let mut names = BTreeSet::new();
    for (i, _) in code.match_indices("Op::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + 4..];
        names.insert(&rest[..ident_len(rest)]);
    }
    names
}

/// The blocks of `code` that list cases: the arms of each `match`, and the body of each
/// macro invocation (`name! { ... }`, which is how the description lists its entries).
fn case_blocks(code: &str) -> Vec<(usize, &str)> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut blocks = Vec::new();
    for (i, _) in code.match_indices("match") {
        let word = !code[..i].chars().next_back().is_some_and(is_ident)
            && !code[i + 5..].chars().next().is_some_and(is_ident);
        if word {
            if let Some(open) = code[i..].find('{') {
                let open = i + open;
                blocks.push((i, &code[open..block_end(code, open)]));
            }
        }
    }
    for (i, _) in code.match_indices('!') {
        let invoked = code[..i].chars().next_back().is_some_and(is_ident);
        let after = code[i + 1..].trim_start();
        if invoked && (after.starts_with('{') || after.starts_with('(')) {
            let open = code.len() - after.len();
            blocks.push((i, &code[open..block_end(code, open)]));
        }
    }
    blocks
}

fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                rust_sources(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_the_description_the_semantics_and_the_price_name_every_opcode() {
    let variants = opcodes();
    assert!(
        variants.len() > 20 && variants.iter().any(|v| v == "Mmad"),
        "read the opcodes of `pub enum Op` badly: {variants:?}"
    );
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["core", "wasm", "web", "xtask", "tests"] {
        rust_sources(&root.join(dir), &mut files);
    }
    // Source code only: the tests may well list every opcode.
    files.retain(|f| {
        f.strip_prefix(&root)
            .is_ok_and(|r| r.components().any(|c| c.as_os_str() == "src"))
    });
    assert!(files.len() > 50, "found {} source files", files.len());
    let mut places = BTreeSet::new();
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a source file");
        let code = blank_comments_and_literals(&text);
        let rel = f
            .strip_prefix(&root)
            .expect("under the workspace")
            .to_string_lossy()
            .replace('\\', "/");
        for (at, block) in case_blocks(&code) {
            let named = named_opcodes(block);
            if variants.iter().all(|v| named.contains(v.as_str())) {
                let line = code[..at].lines().count() + 1;
                found.push(format!("{rel}:{line}"));
                places.insert(rel.clone());
            }
        }
    }
    let expected: BTreeSet<String> = [
        "core/machine/src/isa/describe.rs",
        "core/machine/src/sim/exec.rs",
        "core/machine/src/sim/timing.rs",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(
        places,
        expected,
        "the code that names every opcode ({} of them) is at {found:#?}: adding an \
         instruction is to touch its description, its semantics and its price only",
        variants.len()
    );
}

/// One line of each instruction (and each op of each family), as the printer writes it.
const EVERY_OPCODE: &str = "\
.tensor x f32[64, 512]
.tensor y f16[8]
.tensor m i32[4, 8]
mov r1, 5
mov r2, r1
add r3, r1, 2
sub r3, r3, r2
mul r3, r3, -4
div r3, r3, 2
rem r3, r3, 3
min r3, r3, r1
max r3, r3, 0
sld r4, 3
sst r4, 63
sldg.i32 r6, m[r3 + 4]
loop r5, r1
  dma.f32 ub[r3 + 64], x[r4], [r1, 512, 64], [64, 1, 1] !step 2
  dma.f16 y[0], ub[r3 - 8], [8, 1, 1] !span 10..20
endloop
gather.f32 ub[0], x[r2], ub[4096], rows=8, len=r1, sstride=512, dstride=64
dmapad.f32 ub[0], x[r2], rows=8, len=r1, left=r3, width=64, sstride=512, dstride=64, value=-inf
dmapad.i32 ub[0], m[4], rows=r1, len=5, left=3, width=8, sstride=8, dstride=8, value=-1
scatter.f32 x[0], ub[0], ub[4096], rows=r2, len=64, sstride=64, dstride=512
scatter.f16 y[0], ub[0], ub[4096], rows=r2, len=1, sstride=1, dstride=1, add
mov2d.f16 l0a[0]{16, 32, 32}, l1[r1]{16, 32, 32}
mov2d.bf16 l0b[64]{32, 16, 16}, l1[0]{16, 32, 32}, trans
mmad.f16 l0c[0], l0a[0], l0b[0], m=16, k=r1, n=16, acc=0
mmv.f32 l0c[64], l0a[0], l0b[0], k=32, n=r2, acc=r3
fix.f32 ub[0]{16, 16, 16}, l0c[0]{16, 16, 16}
fix.bf16 x[r1]{1, 16, 512}, l0c[0]{1, 16, 16}
vexp.f32 ub[0]{8, 64, 64}, ub[2048]{8, 64, 64}
vlog.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
vsqrt.f16 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
vrsqrt.f32 ub[0]{r1, 64, 64}, ub[0]{r1, 64, 64}
vabs.f32 ub[0]{8, r2, 64}, ub[0]{8, r2, 64}
vneg.bf16 ub[0]{8, 64, 64}, ub[0]{1, 64, 64}
vrelu.f32 ub[0]{8, 64, 64}, ub[0]{8, 1, 1}
vsigmoid.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
vtanh.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
vgelu.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
vsilu.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
vrecip.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}
vadd.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}, 1.5
vsub.f16 ub[0]{8, 64, 64}, r3, ub[2048]{8, 64, 64}
vmul.i32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}, 3
vdiv.f32 ub[0]{8, 64, 64}, inf, ub[0]{8, 64, 64}
vmax.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}, -0.0
vmin.f32 ub[0]{8, 64, 64}, ub[0]{8, 64, 64}, 1e-5
vsum.f32 ub[0]{8, 1, 1}, ub[64]{8, 64, 64}, axis=1
vrmax.f32 ub[0]{1, 64, 64}, ub[64]{8, 64, 64}, axis=0
vrmin.f16 ub[0]{8, 1, 1}, ub[64]{8, 64, 64}, axis=1
vargmax.f32 ub[0]{8, 1, 1}, ub[64]{8, 64, 64}, axis=1
vargmin.i32 ub[0]{1, 64, 64}, ub[64]{8, 64, 64}, axis=0
vcast.f16.f32 ub[0]{8, 64, 64}, ub[4096]{8, 64, 64}
vcast.f32.mask ub[0]{8, 64, 64}, ub[4096]{8, 64, 64}
vdup.f32 ub[0]{8, 64, 64}, 0.5
vdup.i32 ub[0]{8, 64, 64}, r3
vcopy.mask ub[0]{8, 64, 64}, ub[4096]{8, 64, 64}
vcopy.i32 ub[0]{8, 64, 64}, ub[4096]{1, 64, 64}
vcmp.lt.f32 ub[0]{8, 64, 64}, ub[4096]{8, 64, 64}, 0.0
vcmp.le.f16 ub[0]{8, 64, 64}, r2, ub[4096]{8, 64, 64}
vcmp.gt.i32 ub[0]{8, 64, 64}, ub[4096]{8, 64, 64}, 7
vcmp.ge.f32 ub[0]{8, 64, 64}, ub[4096]{8, 64, 64}, ub[0]{8, 64, 64}
vcmp.eq.bf16 ub[0]{8, 64, 64}, ub[4096]{8, 64, 64}, -2.25
vcmp.ne.f32 ub[0]{8, 64, 64}, ub[4096]{8, 64, 64}, NaN
vsel.f32 ub[0]{8, 64, 64}, ub[8192]{8, 64, 64}, ub[4096]{8, 64, 64}, 0.0
viota.i32 ub[0]{8, 64, 64}, axis=1
set_flag MTE2, V, 0
wait_flag MTE2, V, r3
pipe_barrier V
pipe_barrier ALL
";

#[test]
fn every_opcode_prints_as_it_was_read() {
    let p = asm::parse(EVERY_OPCODE).unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(asm::print(&p), EVERY_OPCODE);
    // The float NaN is the one value that is not equal to itself.
    let back = asm::parse(&asm::print(&p)).expect("parses back");
    assert_eq!(format!("{back:?}"), format!("{p:?}"));
    let seen: BTreeSet<String> = p
        .instrs
        .iter()
        .map(|i| {
            let debug = format!("{:?}", i.op);
            debug[..ident_len(&debug)].to_string()
        })
        .collect();
    let all: BTreeSet<String> = opcodes().into_iter().collect();
    assert_eq!(seen, all, "the text has a line of every opcode");
}

/// Each op of each family prints and parses back alone.
#[test]
fn every_family_member_round_trips() {
    let p = Program::default();
    let ub = |offset| Tile {
        addr: Addr::buf(MemSpace::UB, offset),
        rows: Val::Imm(8),
        cols: Val::Reg(Reg(2)),
        stride: 64,
    };
    let mut ops = Vec::new();
    for op in ALU_OPS {
        ops.push(Op::Alu {
            op,
            dst: Reg(1),
            a: Reg(31),
            b: Val::Imm(-3),
        });
    }
    for op in UN_OPS {
        let (dst, src) = (ub(0), ub(256));
        ops.push(Op::VUnary {
            op,
            dtype: DType::F16,
            dst,
            src,
        });
    }
    for op in BIN_OPS {
        let (dst, a, b) = (ub(0), VSrc::Tile(ub(256)), VSrc::Reg(Reg(4)));
        // The bit operations take i32 lanes only.
        let dtype = if op.is_integer_only() {
            DType::I32
        } else {
            DType::F32
        };
        ops.push(Op::VBinary {
            op,
            dtype,
            dst,
            a,
            b,
        });
    }
    for op in RED_OPS {
        let (dst, src) = (ub(0), ub(256));
        ops.push(Op::VReduce {
            op,
            dtype: DType::BF16,
            axis: 0,
            dst,
            src,
        });
    }
    for op in ARG_OPS {
        let (dst, src) = (ub(0), ub(256));
        ops.push(Op::VArgReduce {
            op,
            dtype: DType::F16,
            axis: 1,
            dst,
            src,
        });
    }
    for op in CmpOp::ALL {
        let (dst, a, b) = (ub(0), VSrc::Tile(ub(256)), VSrc::Reg(Reg(4)));
        ops.push(Op::VCmp {
            op,
            dtype: DType::I32,
            dst,
            a,
            b,
        });
    }
    for op in ops {
        let text = asm::op_text(&p, &op);
        let back = asm::parse(&text).unwrap_or_else(|e| panic!("{text}: {e:#?}"));
        assert_eq!(back.instrs, vec![Instr::new(op)], "{text}");
    }
}

/// The parser's errors name the mnemonic or the operand at fault, as they did when each
/// instruction had its own hand-written reader.
#[test]
fn parse_errors_keep_their_words_and_places() {
    for (line, message, at) in [
        ("frob r1", "unknown instruction `frob`", "frob"),
        (
            "vexp ub[0]{1, 1, 1}, ub[0]{1, 1, 1}",
            "this instruction needs a dtype suffix like `.f32`",
            "vexp",
        ),
        (
            "vexp.f64 ub[0]{1, 1, 1}, ub[0]{1, 1, 1}",
            "unknown dtype `f64` (f32 f16 bf16 i32 mask)",
            "vexp.f64",
        ),
        (
            "vcmp.f32 ub[0]{1, 1, 1}, 1, 2",
            "unknown comparison `f32` (lt le gt ge eq ne)",
            "vcmp.f32",
        ),
        ("mov.f32 r1, 2", "unexpected suffix in `mov.f32`", "mov.f32"),
        (
            "vcast.f32.f16.i32 ub[0]{1, 1, 1}, ub[0]{1, 1, 1}",
            "unexpected suffix in `vcast.f32.f16.i32`",
            "vcast.f32.f16.i32",
        ),
        ("mov r1, 2, 3", "too many operands for `mov`", "3"),
        (
            "add r1, r2",
            "`add` needs an integer or register as operand 3",
            "add",
        ),
        ("sld r1, r2", "expected an integer", "r2"),
        (
            "mmad.f32 l0c[0], l0a[0], l0b[0], m=1, n=1, k=1, acc=0",
            "expected `k=...`",
            "n=1",
        ),
        (
            "vsum.f32 ub[0]{1, 1, 1}, ub[0]{1, 1, 1}, axis=r1",
            "`axis=` takes an integer",
            "axis=r1",
        ),
        (
            "dma.f32 ub[0], ub[0], 4",
            "expected a dimension `[extent, src_stride, dst_stride]`",
            "4",
        ),
        (
            "set_flag MTE2, W, 0",
            "unknown pipe `W` (S MTE2 MTE1 M V FIX MTE3)",
            "W",
        ),
        (
            "vadd.f32 ub[0]{1, 1, 1}, ub[0], 1",
            "expected a tile, a number or a register",
            "ub[0]",
        ),
    ] {
        let errs = asm::parse(line).expect_err(line);
        let e = &errs[0];
        assert_eq!(e.message, message, "{line}");
        let span = e.span.expect("located");
        assert_eq!(&line[span.start as usize..span.end as usize], at, "{line}");
    }
}
