//! Pure timeline logic: which slices of a lane are visible (binary search, so drawing
//! costs what is on screen, not what is in the trace), what a pipe does at a cycle,
//! cursor stepping, and the zoom/pan window.

use std::ops::Range;

use crate::protocol::{FlagEvent, Lane, SimOutput, TraceSlice};

/// Indices of the slices of `lane` that intersect cycles `[from, to)`.
pub fn visible(lane: &Lane, from: u64, to: u64) -> Range<usize> {
    // `reach` is non-decreasing: the first slice that may end after `from`.
    let first = lane.reach.partition_point(|r| *r <= from);
    let last = lane.slices.partition_point(|s| s.start < to);
    first..last.max(first)
}

/// The slice executing on `lane` at `cycle` (the latest started, if several overlap).
pub fn at(lane: &Lane, cycle: u64) -> Option<&TraceSlice> {
    let range = visible(lane, cycle, cycle.saturating_add(1));
    lane.slices
        .get(range)?
        .iter()
        .rev()
        .find(|s| s.start <= cycle && cycle < s.end.max(s.start + 1))
}

/// The stall `lane` is in at `cycle`, if any: a stall is shown before (or, for
/// bandwidth, inside) the slice it delayed, so look at slices starting soon after.
pub fn stall_at(sim: &SimOutput, lane: &Lane, cycle: u64) -> Option<String> {
    sim.lanes
        .iter()
        .flat_map(|l| {
            // A stall ends at or before its slice's end; slices starting at or after
            // `cycle` within a bounded look-ahead carry the stalls covering it.
            let start = l.reach.partition_point(|r| *r <= cycle);
            l.slices.get(start..).unwrap_or_default().iter().take(64)
        })
        .filter_map(|s| s.stall.as_ref())
        .find(|st| st.pipe == lane.pipe && st.from <= cycle && cycle < st.to)
        .map(|st| st.reason.clone())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepUnit {
    /// To the next (previous) cycle where an instruction starts.
    Instruction,
    Cycle,
}

/// The cursor after `count` steps of `unit` forward (`forward`) or back, within
/// `[0, sim.cycles]`.
pub fn step_cursor(sim: &SimOutput, cursor: u64, unit: StepUnit, forward: bool, count: u64) -> u64 {
    let max = sim.cycles;
    match unit {
        StepUnit::Cycle => {
            if forward {
                cursor.saturating_add(count).min(max)
            } else {
                cursor.saturating_sub(count)
            }
        }
        StepUnit::Instruction => {
            let stops = &sim.stops;
            let n = usize::try_from(count).unwrap_or(usize::MAX).max(1);
            if forward {
                let next = stops.partition_point(|s| *s <= cursor);
                stops
                    .get(next.saturating_add(n - 1))
                    .copied()
                    .unwrap_or(max)
                    .min(max)
            } else {
                let prev = stops.partition_point(|s| *s < cursor);
                match prev.checked_sub(n) {
                    Some(i) => stops.get(i).copied().unwrap_or(0),
                    None => 0,
                }
            }
        }
    }
}

/// The visible cycle window `[start, end)`, as floats so zoom is smooth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub start: f64,
    pub end: f64,
}

/// The narrowest window: a few cycles across the whole canvas.
const MIN_SPAN: f64 = 8.0;

impl Window {
    pub fn all(cycles: u64) -> Window {
        Window {
            start: 0.0,
            end: (cycles as f64).max(MIN_SPAN),
        }
    }

    pub fn span(self) -> f64 {
        self.end - self.start
    }

    /// Zooms by `factor` (< 1 zooms in) keeping the cycle at fraction `anchor` of the
    /// width in place; clamped to `[0, cycles]`.
    pub fn zoom(self, factor: f64, anchor: f64, cycles: u64) -> Window {
        let anchor = anchor.clamp(0.0, 1.0);
        let total = (cycles as f64).max(MIN_SPAN);
        let span = (self.span() * factor).clamp(MIN_SPAN, total);
        let pivot = self.start + self.span() * anchor;
        Window {
            start: pivot - span * anchor,
            end: pivot - span * anchor + span,
        }
        .clamped(cycles)
    }

    /// Moves by `cycles_delta` (positive: later), clamped.
    pub fn pan(self, cycles_delta: f64, cycles: u64) -> Window {
        Window {
            start: self.start + cycles_delta,
            end: self.end + cycles_delta,
        }
        .clamped(cycles)
    }

    /// Shifts (never resizes, unless wider than the run) into `[0, cycles]`.
    pub fn clamped(self, cycles: u64) -> Window {
        let total = (cycles as f64).max(MIN_SPAN);
        let span = self.span().clamp(MIN_SPAN, total);
        let start = self.start.clamp(0.0, total - span);
        Window {
            start,
            end: start + span,
        }
    }

    /// Scrolls so that `cycle` is visible, keeping the zoom.
    pub fn follow(self, cycle: u64, cycles: u64) -> Window {
        let c = cycle as f64;
        if c >= self.start && c <= self.end {
            return self;
        }
        let span = self.span();
        Window {
            start: c - span * 0.1,
            end: c - span * 0.1 + span,
        }
        .clamped(cycles)
    }
}

/// The instruction a keyboard user lands on at `cycle`: the first lane's that starts
/// there, else the first lane's that runs there.
pub fn slice_at(sim: &SimOutput, cycle: u64) -> Option<u32> {
    let running = || sim.lanes.iter().find_map(|l| at(l, cycle));
    sim.lanes
        .iter()
        .filter_map(|l| at(l, cycle))
        .find(|s| s.start == cycle)
        .or_else(running)
        .map(|s| s.instr)
}

/// The flags in the order `[` and `]` go through them on the timeline: by the cycle
/// their wait was satisfied (their set, for a flag never waited on).
pub fn flags_in_order(sim: &SimOutput) -> Vec<&FlagEvent> {
    let mut flags: Vec<&FlagEvent> = sim.flags.iter().collect();
    flags.sort_by_key(|f| {
        (
            f.wait_cycle.unwrap_or(f.set_cycle),
            f.set_cycle,
            f.set_instr,
        )
    });
    flags
}

/// A round tick interval (1, 2 or 5 times a power of ten cycles) that puts ticks about
/// `min_px` pixels apart at `px_per_cycle`.
pub fn tick_step(px_per_cycle: f64, min_px: f64) -> u64 {
    if px_per_cycle.is_nan() || px_per_cycle <= 0.0 {
        return 1;
    }
    let raw = (min_px / px_per_cycle).max(1.0);
    let mut base = 1u64;
    loop {
        for m in [1u64, 2, 5] {
            let step = base.saturating_mul(m);
            if step as f64 >= raw || step == u64::MAX {
                return step;
            }
        }
        base = base.saturating_mul(10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Stall;
    use tilescope::types::Pipe;

    fn lane(spans: &[(u64, u64)]) -> Lane {
        let slices: Vec<TraceSlice> = spans
            .iter()
            .enumerate()
            .map(|(i, (s, e))| TraceSlice {
                instr: i as u32,
                start: *s,
                end: *e,
                step: None,
                stall: None,
            })
            .collect();
        let reach = slices
            .iter()
            .scan(0, |m: &mut u64, s| {
                *m = (*m).max(s.end);
                Some(*m)
            })
            .collect();
        Lane {
            pipe: Pipe::V,
            slices,
            reach,
            busy: 0,
            instructions: spans.len() as u64,
            shared_bandwidth: 0,
        }
    }

    /// The binary search agrees with a linear scan on a large lane with overlaps.
    #[test]
    fn visible_matches_a_linear_scan() {
        let spans: Vec<(u64, u64)> = (0..100_000u64)
            .map(|i| (i * 10, i * 10 + if i % 7 == 0 { 45 } else { 8 }))
            .collect();
        let l = lane(&spans);
        for (from, to) in [
            (0, 5),
            (95, 96),
            (12_345, 13_000),
            (999_990, 2_000_000),
            (5, 5),
        ] {
            let r = visible(&l, from, to);
            let expected: Vec<usize> = (0..spans.len())
                .filter(|&i| spans[i].1 > from && spans[i].0 < to)
                .collect();
            let got: Vec<usize> = r
                .clone()
                .filter(|&i| spans[i].1 > from && spans[i].0 < to)
                .collect();
            assert_eq!(got, expected, "{from}..{to}");
            // The range holds few slices that are not visible.
            assert!(r.len() <= expected.len() + 6, "{from}..{to}: {r:?}");
        }
    }

    #[test]
    fn at_finds_the_running_slice() {
        let l = lane(&[(0, 10), (10, 20), (30, 31)]);
        assert_eq!(at(&l, 0).map(|s| s.instr), Some(0));
        assert_eq!(at(&l, 10).map(|s| s.instr), Some(1));
        assert_eq!(at(&l, 25), None);
        assert_eq!(at(&l, 30).map(|s| s.instr), Some(2));
        assert_eq!(at(&l, 99), None);
    }

    #[test]
    fn stalls_are_found_at_the_cursor() {
        let mut l = lane(&[(0, 10), (50, 60)]);
        if let Some(s) = l.slices.get_mut(1) {
            s.stall = Some(Stall {
                pipe: Pipe::V,
                from: 20,
                to: 50,
                reason: "wait_flag MTE2→V #0".into(),
            });
        }
        let sim = SimOutput {
            lanes: vec![l.clone()],
            ..SimOutput::default()
        };
        assert_eq!(
            stall_at(&sim, &l, 30).as_deref(),
            Some("wait_flag MTE2→V #0")
        );
        assert_eq!(stall_at(&sim, &l, 15), None);
    }

    #[test]
    fn cursor_steps_by_instruction_and_cycle() {
        let sim = SimOutput {
            cycles: 100,
            stops: vec![0, 5, 20, 40],
            ..SimOutput::default()
        };
        let step = |c, u, f, n| step_cursor(&sim, c, u, f, n);
        use StepUnit::*;
        assert_eq!(step(0, Instruction, true, 1), 5);
        assert_eq!(step(6, Instruction, true, 1), 20);
        assert_eq!(step(6, Instruction, true, 2), 40);
        assert_eq!(
            step(40, Instruction, true, 1),
            100,
            "past the last start: the end"
        );
        assert_eq!(step(20, Instruction, false, 1), 5);
        assert_eq!(step(21, Instruction, false, 1), 20);
        assert_eq!(step(5, Instruction, false, 10), 0);
        assert_eq!(step(50, Cycle, true, 10), 60);
        assert_eq!(step(95, Cycle, true, 10), 100);
        assert_eq!(step(3, Cycle, false, 10), 0);
    }

    #[test]
    fn ticks_are_round_and_far_enough_apart() {
        assert_eq!(tick_step(1.0, 80.0), 100);
        assert_eq!(tick_step(0.01, 80.0), 10_000);
        assert_eq!(tick_step(100.0, 80.0), 1);
        assert_eq!(tick_step(3.0, 80.0), 50);
        assert_eq!(tick_step(0.0, 80.0), 1);
        assert_eq!(tick_step(f64::NAN, 80.0), 1);
    }

    #[test]
    fn window_zooms_around_the_anchor_and_stays_in_range() {
        let w = Window::all(1000);
        let z = w.zoom(0.5, 0.5, 1000);
        assert_eq!((z.start, z.end), (250.0, 750.0));
        let z = z.zoom(0.5, 0.0, 1000);
        assert_eq!(z.start, 250.0);
        let out = Window::all(1000).zoom(4.0, 0.5, 1000);
        assert_eq!((out.start, out.end), (0.0, 1000.0));
        let tiny = w.zoom(1e-9, 0.5, 1000);
        assert!(tiny.span() >= MIN_SPAN);
        let p = z.pan(-10_000.0, 1000);
        assert_eq!(p.start, 0.0);
        assert!((p.span() - z.span()).abs() < 1e-9);
        let f = Window {
            start: 0.0,
            end: 100.0,
        }
        .follow(500, 1000);
        assert!(f.start <= 500.0 && 500.0 <= f.end);
    }
}
