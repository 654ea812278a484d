//! Colours shared by the step graph and the timeline: one hue per pipe, and a stable,
//! well-spread colour per step (golden-angle hues) so a step looks the same everywhere.

use tilescope::types::Pipe;

/// Pipe colours, readable on light and dark backgrounds.
pub fn pipe_color(pipe: Pipe) -> &'static str {
    match pipe {
        Pipe::S => "#8b93a1",
        Pipe::MTE2 => "#3b82c4",
        Pipe::MTE1 => "#2aa198",
        Pipe::M => "#c2410c",
        Pipe::V => "#7c5cc4",
        Pipe::FIX => "#b7791f",
        Pipe::MTE3 => "#2f9e5b",
    }
}

/// A pipe's colour for its name as text: a CSS variable (playground.css) holding
/// `pipe_color` darkened or lightened until it meets WCAG AA in the theme.
pub fn pipe_text_color(pipe: Pipe) -> &'static str {
    match pipe {
        Pipe::S => "var(--pipe-s)",
        Pipe::MTE2 => "var(--pipe-mte2)",
        Pipe::MTE1 => "var(--pipe-mte1)",
        Pipe::M => "var(--pipe-m)",
        Pipe::V => "var(--pipe-v)",
        Pipe::FIX => "var(--pipe-fix)",
        Pipe::MTE3 => "var(--pipe-mte3)",
    }
}

/// The hue (degrees) of a step's colour.
pub fn step_hue(step: u32) -> u32 {
    // 137.5 degrees apart: neighbours in program order never look alike.
    (step.wrapping_mul(1375) / 10 + 205) % 360
}

/// Fill for slices of `step` (`None`: instructions outside steps, e.g. loop control).
pub fn step_fill(step: Option<u32>, dark: bool) -> String {
    match step {
        Some(s) if dark => format!("hsl({} 48% 52%)", step_hue(s)),
        Some(s) => format!("hsl({} 58% 62%)", step_hue(s)),
        None if dark => "hsl(220 8% 42%)".to_string(),
        None => "hsl(220 8% 72%)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbouring_steps_get_distinct_hues() {
        for s in 0..64u32 {
            let a = step_hue(s) as i32;
            let b = step_hue(s + 1) as i32;
            let d = (a - b).rem_euclid(360).min((b - a).rem_euclid(360));
            assert!(d >= 30, "steps {s} and {} are {d} degrees apart", s + 1);
            assert!(a < 360);
        }
        assert_ne!(step_fill(Some(1), false), step_fill(None, false));
    }
}
