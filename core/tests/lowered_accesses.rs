//! The buffer accesses lower-to-pipes records on every instruction agree with the
//! instruction's operands: each operand in on-chip memory or GM has an access to a
//! buffer of that space (or to that tensor) in the right direction, inside the buffer's
//! addresses, and every recorded access belongs to some operand. insert-sync relies on it.

mod examples_support;

use tilescope::compile::{compile_with_context, CompileOptions};
use tilescope::isa::{Addr, Op, Region, VSrc};
use tilescope::lowered::{Access, Item, Lowered, Target};

/// (address, written) of every memory operand.
fn operands(op: &Op) -> Vec<(Addr, bool)> {
    let tile_src = |s: &VSrc| match s {
        VSrc::Tile(t) => Some((t.addr, false)),
        _ => None,
    };
    match op {
        Op::Dma { dst, src, .. } | Op::DmaPad { dst, src, .. } => {
            vec![(*dst, true), (*src, false)]
        }
        Op::Gather {
            dst, src, index, ..
        }
        | Op::Scatter {
            dst, src, index, ..
        } => {
            vec![(*dst, true), (*src, false), (*index, false)]
        }
        Op::Mov2d { dst, src, .. }
        | Op::Fix { dst, src, .. }
        | Op::VUnary { dst, src, .. }
        | Op::VReduce { dst, src, .. }
        | Op::VArgReduce { dst, src, .. }
        | Op::VCast { dst, src, .. }
        | Op::VCopy { dst, src, .. } => vec![(dst.addr, true), (src.addr, false)],
        Op::VBinary { dst, a, b, .. } | Op::VCmp { dst, a, b, .. } => {
            let mut v = vec![(dst.addr, true)];
            v.extend(tile_src(a));
            v.extend(tile_src(b));
            v
        }
        Op::VSel {
            dst, mask, a, b, ..
        } => {
            let mut v = vec![(dst.addr, true), (mask.addr, false)];
            v.extend(tile_src(a));
            v.extend(tile_src(b));
            v
        }
        Op::VDup { dst, .. } | Op::VIota { dst, .. } => vec![(dst.addr, true)],
        Op::Sldg { src, .. } => vec![(*src, false)],
        Op::Mmad { c, a, b, acc, .. } | Op::Mmv { c, a, b, acc, .. } => {
            let mut v = vec![(*c, true), (*a, false), (*b, false)];
            // An accumulating mmad or mmv (`acc` not the immediate 0) also reads C.
            if *acc != tilescope::isa::Val::Imm(0) {
                v.push((*c, false));
            }
            v
        }
        _ => Vec::new(),
    }
}

fn matches(l: &Lowered, acc: &Access, addr: &Addr, write: bool) -> bool {
    if acc.write != write {
        return false;
    }
    match (acc.target, addr.region) {
        (Target::Tensor(t), Region::Tensor(u)) => t == u,
        (Target::Buffer(b), Region::Buf(space)) => l.buffers.get(b.0 as usize).is_some_and(|buf| {
            let lo = buf.addrs.first().copied().unwrap_or(0) as i64;
            let hi = buf.addrs.last().copied().unwrap_or(0) as i64 + buf.bytes as i64;
            buf.space == space && (lo..hi).contains(&addr.offset)
        }),
        _ => false,
    }
}

fn check(l: &Lowered, items: &[Item], name: &str, problems: &mut Vec<String>) {
    for item in items {
        match item {
            Item::Loop(lp) => check(l, &lp.body, name, problems),
            Item::Instr(ins) => {
                let ops = operands(&ins.op);
                for (addr, write) in &ops {
                    if !ins.accesses.iter().any(|a| matches(l, a, addr, *write)) {
                        problems.push(format!(
                            "{name}: {:?} has no access for {addr:?} (write {write})",
                            ins.op
                        ));
                    }
                }
                for a in &ins.accesses {
                    if !ops.iter().any(|(addr, w)| matches(l, a, addr, *w)) {
                        problems.push(format!("{name}: {:?} records {a:?} for no operand", ins.op));
                    }
                }
            }
        }
    }
}

#[test]
fn every_example_records_the_accesses_of_its_operands() {
    let mut problems = Vec::new();
    for path in examples_support::examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let (result, cx) = compile_with_context(&source, &CompileOptions::default());
        assert!(result.ok(), "{}: {:?}", path.display(), result.diagnostics);
        let l = cx.lowered.expect("lowered program");
        assert!(!l.buffers.is_empty());
        check(&l, &l.body, &path.display().to_string(), &mut problems);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn multi_buffered_tiles_rotate_with_their_loop() {
    let source = include_str!("../../static/examples/multibuffer.tile");
    let (_, cx) = compile_with_context(source, &CompileOptions::default());
    let l = cx.lowered.expect("lowered program");
    let rotating: Vec<_> = l.buffers.iter().filter(|b| b.addrs.len() == 3).collect();
    assert!(!rotating.is_empty(), "{:#?}", l.buffers);
    assert!(rotating.iter().all(|b| b.rotates_with.is_some()));
    let Some(Item::Loop(lp)) = l.body.iter().find(|i| matches!(i, Item::Loop(_))) else {
        panic!("no loop");
    };
    assert_eq!(lp.slots.map(|s| s.0), Some(3));
}

/// Every GM access but a gather's or scatter's records the box it touches, and where
/// lowering also knows its fixed byte range (from the transfer's descriptors, another
/// path), the box's byte hull is that range.
#[test]
fn gm_regions_agree_with_the_byte_ranges_of_the_descriptors() {
    fn visit(
        l: &Lowered,
        items: &[Item],
        name: &str,
        checked: &mut usize,
        problems: &mut Vec<String>,
    ) {
        for item in items {
            match item {
                Item::Loop(lp) => visit(l, &lp.body, name, checked, problems),
                Item::Instr(ins) => {
                    for a in &ins.accesses {
                        let Target::Tensor(t) = a.target else {
                            continue;
                        };
                        let indirect = matches!(ins.op, Op::Gather { .. } | Op::Scatter { .. });
                        let region = a.region.and_then(|r| l.regions.get(r as usize));
                        if indirect != region.is_none() {
                            problems
                                .push(format!("{name}: {:?} records region {region:?}", ins.op));
                            continue;
                        }
                        let (Some(region), Some((lo, hi))) = (region, a.range) else {
                            continue;
                        };
                        if region.axes.iter().any(|x| !x.terms.is_empty()) {
                            problems.push(format!(
                                "{name}: a fixed range with a moving box {region:?}"
                            ));
                            continue;
                        }
                        let tensor = &l.tensors[t as usize];
                        let eb = tensor.dtype.bytes() as i64;
                        let mut stride = 1i64;
                        let (mut first, mut last) = (0i64, 0i64);
                        for (x, &dim) in region.axes.iter().zip(&tensor.shape).rev() {
                            first += x.constant * stride;
                            last += (x.constant + x.len as i64 - 1) * stride;
                            stride *= dim as i64;
                        }
                        *checked += 1;
                        if (first * eb, (last + 1) * eb) != (lo as i64, hi as i64) {
                            problems.push(format!(
                                "{name}: {:?}: box {region:?} spans bytes {}..{}, the range is {lo}..{hi}",
                                ins.op,
                                first * eb,
                                (last + 1) * eb
                            ));
                        }
                    }
                }
            }
        }
    }
    let (mut checked, mut problems) = (0, Vec::new());
    for path in examples_support::examples() {
        let source = std::fs::read_to_string(&path).expect("readable example");
        let (result, cx) = compile_with_context(&source, &CompileOptions::default());
        assert!(result.ok(), "{}: {:?}", path.display(), result.diagnostics);
        let l = cx.lowered.expect("lowered program");
        visit(
            &l,
            &l.body,
            &path.display().to_string(),
            &mut checked,
            &mut problems,
        );
    }
    assert!(checked >= 20, "only {checked} fixed ranges checked");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
