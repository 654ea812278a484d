//! Loop-invariant hazards are ordered outside the loop: a tile loaded once before a
//! loop and read in every iteration gets one wait before the loop, and a tile read in
//! every iteration and overwritten after the loop gets one set after it, not one per
//! iteration.

mod sync_support;

use sync_support::programs::invariant_operand;
use sync_support::*;
use tilescope::machine::Machine;
use tilescope::passes::sync::PairInfo;
use tilescope::types::Pipe;

fn pair(pairs: &[PairInfo], src: Pipe, dst: Pipe) -> &PairInfo {
    let found: Vec<_> = pairs
        .iter()
        .filter(|p| (p.src, p.dst) == (src, dst))
        .collect();
    assert_eq!(found.len(), 1, "{src} -> {dst}: {pairs:#?}");
    found[0]
}

#[test]
fn invariant_operand_is_synced_once_outside_the_loop() {
    let m = Machine::teach();
    let l = invariant_operand(4);
    let (_, report, r) = assert_sync_correct(&l, &m, true);
    let w: Vec<f32> = r.output("w").expect("w").to_f32_vec();
    let y: Vec<f32> = r.output("y").expect("y").to_f32_vec();
    assert!(y
        .chunks(512)
        .all(|c| c.iter().zip(&w).all(|(a, b)| *a == b + 1.0)));
    assert_sync_minimal(&l, &m);
    // The load before the loop -> the add in it: set and wait both at the top level
    // (item paths of length one), the wait right before the loop.
    let raw = pair(&report.pairs, Pipe::MTE2, Pipe::V);
    assert!(raw.paths.iter().all(|p| p.len() == 1), "{raw:#?}");
    assert_eq!(raw.loop_carried, None);
    // The adds in the loop -> the load after it: one set after the loop.
    let war = pair(&report.pairs, Pipe::V, Pipe::MTE2);
    assert!(war.paths.iter().all(|p| p.len() == 1), "{war:#?}");
    assert_eq!(war.loop_carried, None);
    // Only the per-iteration tile hazards (fill/add -> store, store -> next fill)
    // are ordered inside the loop.
    for p in &report.pairs {
        if p.paths.iter().any(|path| path.len() > 1) {
            assert!(
                matches!(
                    (p.src, p.dst),
                    (Pipe::V, Pipe::MTE3) | (Pipe::MTE3, Pipe::V)
                ),
                "{p:#?}"
            );
        }
    }
}
