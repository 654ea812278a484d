//! Lowering hand-built checked kernels and printing the tile IR.

mod ir_support;

use std::collections::HashSet;
use tilescope::ir::{self, lower::lower};

fn lowered(k: &tilescope::front::hir::Kernel) -> ir::Kernel {
    let ir = lower(k).expect("lowering a checked kernel succeeds");
    ir::verify(&ir).expect("lowered IR verifies");
    ir
}

#[test]
fn softmax_lowers_to_one_op_per_operation() {
    insta::assert_snapshot!(ir::print(&lowered(&ir_support::softmax())).text);
}

#[test]
fn matmul_accumulator_is_loop_carried() {
    insta::assert_snapshot!(ir::print(&lowered(&ir_support::matmul())).text);
}

#[test]
fn tail_loop_keeps_clamped_ranges_and_masked_update() {
    insta::assert_snapshot!(ir::print(&lowered(&ir_support::colsum_tail())).text);
}

#[test]
fn gather_prints_indirect_index() {
    insta::assert_snapshot!(ir::print(&lowered(&ir_support::gather())).text);
}

#[test]
fn redundant_kernel_lowers_verbatim() {
    insta::assert_snapshot!(ir::print(&lowered(&ir_support::redundant())).text);
}

#[test]
fn every_line_has_a_span_entry_and_ops_map_to_their_source() {
    let hir = ir_support::softmax();
    let printed = ir::print(&lowered(&hir));
    let lines: Vec<&str> = printed.text.lines().collect();
    assert_eq!(lines.len(), printed.spans.len());
    let load_line = lines
        .iter()
        .position(|l| l.contains("= load"))
        .expect("a load line");
    let tilescope::front::hir::StmtKind::For { body, .. } = &hir.body[0].kind else {
        panic!("loop")
    };
    let tilescope::front::hir::StmtKind::Let { value, .. } = &body[0].kind else {
        panic!("let")
    };
    assert_eq!(printed.spans[load_line], Some(value.span));
    assert_eq!(printed.spans[0], Some(hir.span));
    assert_eq!(
        *printed.spans.last().expect("lines"),
        None,
        "closing brace has no op"
    );
}

#[test]
fn printing_is_stable_and_names_are_unique() {
    for hir in [
        ir_support::softmax(),
        ir_support::matmul(),
        ir_support::colsum_tail(),
        ir_support::redundant(),
    ] {
        let k = lowered(&hir);
        let a = ir::print(&k);
        assert_eq!(a, ir::print(&k.clone()));
        let mut defined = HashSet::new();
        for line in a.text.lines() {
            let Some((lhs, _)) = line.trim().split_once(" = ") else {
                continue;
            };
            if lhs.starts_with("for") {
                continue;
            }
            for name in lhs.split(", ") {
                assert!(
                    defined.insert(name.to_string()),
                    "{name} defined twice in\n{}",
                    a.text
                );
            }
        }
    }
}

#[test]
fn shadowed_names_get_suffixes() {
    let text = ir::print(&lowered(&ir_support::matmul())).text;
    for name in ["%acc ", "%acc.1:", "%acc.2 ", "%acc.3 "] {
        assert!(text.contains(name), "missing {name} in\n{text}");
    }
}

#[test]
fn spaces_and_attributes_print_once_set() {
    let mut k = lowered(&ir_support::softmax());
    let (v, _) = k
        .values
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some("t"))
        .expect("%t");
    k.values[v].space = Some(tilescope::types::MemSpace::UB);
    k.values[v].attrs.slots = Some(2);
    k.values[v].attrs.addresses = vec![0, 0x4000];
    let text = ir::print(&k).text;
    assert!(
        text.contains("%t = load %x[%r .. %r + 8, :] : ub f32[8, 512] slots(2) at [0x0, 0x4000]"),
        "{text}"
    );
}
