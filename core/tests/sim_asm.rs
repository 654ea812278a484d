//! The assembly text: parse errors with spans, and print -> parse round trips.
mod sim_support;

use proptest::prelude::*;
use tilescope::isa::asm::{self, ARG_OPS, BIN_OPS, RED_OPS, UN_OPS};
use tilescope::isa::*;
use tilescope::types::{CmpOp, DType, MemSpace, Pipe};

#[test]
fn every_test_program_round_trips() {
    for name in [
        "dma_round_trip",
        "matvec",
        "matmul",
        "double_buffer",
        "no_flags",
        "deadlock",
    ] {
        let p = sim_support::load(name);
        let text = asm::print(&p);
        assert_eq!(asm::parse(&text).unwrap(), p, "{name}:\n{text}");
    }
}

#[test]
fn printed_double_buffer_program() {
    insta::assert_snapshot!(asm::print(&sim_support::load("double_buffer")));
}

#[test]
fn parse_errors_point_at_the_operand() {
    let text = ".tensor x f32[8, 64]\nvexp.f32 ub[0]{8, 64, 64}, q[0]{8, 64, 64}\nmov r40, 1\nfrob r1\nset_flag MTE2, MTE2, 0\nloop r1, 2\n";
    let errs = asm::parse(text).unwrap_err();
    let at = |needle: &str| {
        errs.iter()
            .find(|d| d.message.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` in {errs:#?}"))
            .span
            .map(|s| &text[s.start as usize..s.end as usize])
    };
    assert_eq!(at("`q` is neither"), Some("q[0]{8, 64, 64}"));
    assert_eq!(at("expected a register"), Some("r40"));
    assert_eq!(at("unknown instruction `frob`"), Some("frob"));
    assert_eq!(
        at("flags connect two different"),
        Some("set_flag MTE2, MTE2, 0")
    );
    assert!(at("without a matching `endloop`").is_some());
}

#[test]
fn malformed_lines_never_panic() {
    for text in [
        "dma.f32 ub[",
        "dma.f32 ub[r1 +], ub[0], [1,1,1]",
        "vadd.f32 ub[0]{1,2}, 1, 2",
        "mov r1, 99999999999999999999999",
        "x ! step",
        ".tensor x f32[8,",
        "vcast.f32 ub[0]{1,1,1}, ub[0]{1,1,1}",
        "gather.f32 ub[0], ub[0], ub[0], rows=1",
        "mov r1, 1 !span 5..2",
        "é ub[0]",
        "pipe_barrier S",
    ] {
        assert!(asm::parse(text).is_err(), "{text}");
    }
}

fn reg() -> impl Strategy<Value = Reg> {
    (0u16..32).prop_map(Reg)
}

fn val() -> impl Strategy<Value = Val> {
    prop_oneof![
        (-5000i64..5000).prop_map(Val::Imm),
        reg().prop_map(Val::Reg)
    ]
}

fn addr_in(region: impl Strategy<Value = Region>) -> impl Strategy<Value = Addr> {
    (region, prop::option::of(reg()), -4096i64..4096).prop_map(|(region, base, offset)| Addr {
        region,
        base,
        offset,
    })
}

fn ub_tile() -> impl Strategy<Value = Tile> {
    (
        addr_in(Just(Region::Buf(MemSpace::UB))),
        val(),
        val(),
        0i64..512,
    )
        .prop_map(|(addr, rows, cols, stride)| Tile {
            addr,
            rows,
            cols,
            stride,
        })
}

fn float_dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(vec![DType::F32, DType::F16, DType::BF16])
}

fn pipe() -> impl Strategy<Value = Pipe> {
    prop::sample::select(Pipe::ALL[1..].to_vec())
}

fn vsrc() -> impl Strategy<Value = VSrc> {
    prop_oneof![
        ub_tile().prop_map(VSrc::Tile),
        (-1e6f32..1e6).prop_map(VSrc::Float),
        prop::sample::select(vec![f32::INFINITY, f32::NEG_INFINITY, 1e-5, -0.0])
            .prop_map(VSrc::Float),
        (-100i64..100).prop_map(VSrc::Int),
        reg().prop_map(VSrc::Reg),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let gm = || addr_in((0u32..2).prop_map(Region::Tensor));
    let ub = || addr_in(Just(Region::Buf(MemSpace::UB)));
    let dim = (val(), 0i64..999, 0i64..999).prop_map(|(extent, src_stride, dst_stride)| DmaDim {
        extent,
        src_stride,
        dst_stride,
    });
    prop_oneof![
        (reg(), val()).prop_map(|(dst, src)| Op::Mov { dst, src }),
        (0usize..7, reg(), reg(), val()).prop_map(|(i, dst, a, b)| {
            let op = [
                AluOp::Add,
                AluOp::Sub,
                AluOp::Mul,
                AluOp::Div,
                AluOp::Rem,
                AluOp::Min,
                AluOp::Max,
            ][i];
            Op::Alu { op, dst, a, b }
        }),
        (reg(), 0u32..64).prop_map(|(dst, slot)| Op::Sld { dst, slot }),
        (float_dtype(), ub(), gm(), prop::collection::vec(dim, 1..4)).prop_map(
            |(dtype, dst, src, dims)| Op::Dma {
                dtype,
                dst,
                src,
                dims
            }
        ),
        (
            float_dtype(),
            ub(),
            gm(),
            ub(),
            val(),
            val(),
            0i64..99,
            0i64..99
        )
            .prop_map(|(dtype, dst, src, index, rows, len, ss, ds)| {
                Op::Gather {
                    dtype,
                    dst,
                    src,
                    index,
                    rows,
                    len,
                    src_stride: ss,
                    dst_stride: ds,
                }
            }),
        (float_dtype(), val(), val(), val(), val()).prop_map(|(dtype, m, k, n, acc)| Op::Mmad {
            dtype,
            c: Addr::buf(MemSpace::L0C, 0),
            a: Addr::buf(MemSpace::L0A, 4096),
            b: Addr::buf(MemSpace::L0B, 0),
            m,
            k,
            n,
            acc
        }),
        (float_dtype(), val(), val(), val()).prop_map(|(dtype, k, n, acc)| Op::Mmv {
            dtype,
            c: Addr::buf(MemSpace::L0C, 4096),
            a: Addr::buf(MemSpace::L0A, 0),
            b: Addr::buf(MemSpace::L0B, 8192),
            k,
            n,
            acc
        }),
        (0usize..12, float_dtype(), ub_tile(), ub_tile()).prop_map(|(i, dtype, dst, src)| {
            Op::VUnary {
                op: UN_OPS[i],
                dtype,
                dst,
                src,
            }
        }),
        (0usize..6, float_dtype(), ub_tile(), vsrc(), vsrc()).prop_map(|(i, dtype, dst, a, b)| {
            Op::VBinary {
                op: BIN_OPS[i],
                dtype,
                dst,
                a,
                b,
            }
        }),
        (0usize..3, float_dtype(), 0u8..2, ub_tile(), ub_tile()).prop_map(
            |(i, dtype, axis, dst, src)| Op::VReduce {
                op: RED_OPS[i],
                dtype,
                axis,
                dst,
                src
            }
        ),
        (0usize..2, float_dtype(), 0u8..2, ub_tile(), ub_tile()).prop_map(
            |(i, dtype, axis, dst, src)| Op::VArgReduce {
                op: ARG_OPS[i],
                dtype,
                axis,
                dst,
                src
            }
        ),
        (float_dtype(), float_dtype(), ub_tile(), ub_tile())
            .prop_map(|(to, from, dst, src)| Op::VCast { to, from, dst, src }),
        (0usize..6, float_dtype(), ub_tile(), vsrc(), vsrc()).prop_map(|(i, dtype, dst, a, b)| {
            Op::VCmp {
                op: CmpOp::ALL[i],
                dtype,
                dst,
                a,
                b,
            }
        }),
        (float_dtype(), ub_tile(), ub_tile(), vsrc(), vsrc()).prop_map(
            |(dtype, dst, mask, a, b)| Op::VSel {
                dtype,
                dst,
                mask,
                a,
                b
            }
        ),
        (0u8..2, ub_tile()).prop_map(|(axis, dst)| Op::VIota {
            dtype: DType::I32,
            axis,
            dst
        }),
        (ub_tile(), ub_tile()).prop_map(|(dst, src)| Op::VCast {
            to: DType::F32,
            from: DType::Mask,
            dst,
            src
        }),
        (pipe(), pipe(), val(), any::<bool>())
            .prop_filter("distinct pipes", |(s, d, _, _)| s != d)
            .prop_map(|(src, dst, id, set)| {
                let id = match id {
                    Val::Imm(i) => Val::Imm(i.rem_euclid(16)),
                    r => r,
                };
                if set {
                    Op::SetFlag { src, dst, id }
                } else {
                    Op::WaitFlag { src, dst, id }
                }
            }),
        prop::option::of(pipe()).prop_map(|pipe| Op::Barrier { pipe }),
    ]
}

fn program() -> impl Strategy<Value = Program> {
    let prov = (
        prop::option::of((0u32..999, 0u32..99)),
        prop::option::of(0u32..50),
    )
        .prop_map(|(span, step)| Provenance {
            span: span.map(|(a, l)| tilescope::diag::Span {
                start: a,
                end: a + l,
            }),
            step,
            op: None,
        });
    prop::collection::vec((op(), prov), 0..12).prop_map(|ops| Program {
        tensors: vec![
            TensorDecl {
                name: "x".into(),
                dtype: DType::F32,
                shape: vec![64, 512],
            },
            TensorDecl {
                name: "out_1".into(),
                dtype: DType::BF16,
                shape: vec![7],
            },
        ],
        instrs: ops
            .into_iter()
            .map(|(op, prov)| Instr { op, prov })
            .collect(),
        notes: Vec::new(),
        branches: Vec::new(),
    })
}

proptest! {
    #[test]
    fn print_then_parse_is_identity(p in program()) {
        let text = asm::print(&p);
        let back = asm::parse(&text);
        let err = back.as_ref().err().cloned();
        let ok = back.ok();
        prop_assert_eq!(ok.as_ref(), Some(&p), "{}\n{:?}", text, err);
    }

    #[test]
    fn parser_never_panics(text in "[a-z0-9_.\\[\\]{}=, +!;-]{0,60}(\n[a-z0-9_.\\[\\]{}=, +-]{0,40}){0,3}") {
        let _ = asm::parse(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Arbitrary well-formed programs (wild addresses, extents, flags) end with a result,
    /// errors as values, in both modes.
    #[test]
    fn simulating_arbitrary_programs_never_panics(p in program()) {
        let m = tilescope::machine::Machine::teach();
        for functional in [false, true] {
            let inputs = if functional { sim_support::inputs(&p) } else { vec![] };
            let r = tilescope::sim::simulate(&p, &m, inputs, tilescope::sim::SimMode { functional, trace: true });
            prop_assert!(r.instructions <= p.instrs.len() as u64);
        }
    }
}
