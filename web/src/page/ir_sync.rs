//! Which instruction of the final program a `set_flag` / `wait_flag` line of a pass's
//! IR is, so the Passes panel can open the same sync card as the Assembly panel.
//!
//! Insert-sync places the pairs in the lowered program, and emit only adds scalar code
//! around them, flattening loops without reordering or duplicating them: the k-th
//! sync line of insert-sync's or emit's IR is the k-th sync instruction of the program.
//! The mapping checks that claim line by line (same operation, same two pipes) and
//! stops at the first disagreement rather than open the card of another pair.

use crate::protocol::AsmLine;

/// `("set_flag" | "wait_flag", "SRC,", "DST,")` of a line, wherever the op stands in
/// it (the lowered program prints its pipe first).
fn flag_op(line: &str) -> Option<(&str, &str, &str)> {
    let mut words = line.split_whitespace();
    let op = words.find(|w| *w == "set_flag" || *w == "wait_flag")?;
    Some((op, words.next()?, words.next()?))
}

/// For each line of `ir`, the index in `asm` of the sync instruction it prints.
pub fn sync_lines(ir: &str, asm: &[AsmLine]) -> Vec<Option<u32>> {
    let mut syncs = asm
        .iter()
        .enumerate()
        .filter_map(|(i, l)| Some((i as u32, flag_op(&l.text)?)));
    let mut agree = true;
    ir.lines()
        .map(|line| {
            let op = flag_op(line)?;
            let (index, instr) = syncs.next().filter(|_| agree)?;
            agree = op == instr;
            agree.then_some(index)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::options::CompileOptions;
    use crate::worker::engine;

    /// On every gallery kernel, every sync line of insert-sync's and emit's IR maps to
    /// an instruction of the same flag, and each sync instruction is mapped once.
    #[test]
    fn every_sync_line_of_the_gallery_maps_to_its_instruction() {
        for ex in tilescope::examples::ALL {
            let out = engine::compile(ex.source, &CompileOptions::default());
            let flags = out
                .asm
                .iter()
                .filter(|l| flag_op(&l.text).is_some())
                .count();
            assert!(flags > 0, "{}: no sync instructions", ex.name);
            for pass in out
                .passes
                .iter()
                .filter(|p| p.name == "insert-sync" || p.name == "emit")
            {
                let lines = sync_lines(&pass.ir, &out.asm);
                let mapped: Vec<u32> = lines.iter().flatten().copied().collect();
                assert_eq!(mapped.len(), flags, "{} after {}", ex.name, pass.name);
                for (line, index) in pass.ir.lines().zip(&lines) {
                    if let Some(i) = index {
                        assert_eq!(
                            flag_op(line),
                            flag_op(&out.asm[*i as usize].text),
                            "{}",
                            ex.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_disagreement_stops_the_mapping() {
        let asm = |text: &str| AsmLine {
            text: text.into(),
            depth: 0,
            pipe: tilescope::types::Pipe::V,
            step: None,
            span: None,
            sync: None,
        };
        let program = [
            asm("set_flag V, MTE2, 0"),
            asm("vexp.f32 ub[0]"),
            asm("wait_flag V, MTE2, 0"),
        ];
        let ir =
            "V  set_flag V, MTE2, 0\nMTE2  wait_flag MTE3, MTE2, 0\nMTE2  wait_flag V, MTE2, 0";
        assert_eq!(sync_lines(ir, &program), [Some(0), None, None]);
    }
}
