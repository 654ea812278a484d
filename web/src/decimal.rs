//! Fixed-precision decimals for display (`12.35`, `1.20e-5`).
//!
//! Why not `format!("{x:.2e}")`: `{:e}` links the standard library's exponential
//! float formatting, which nothing else in the module uses. `fixed` is its building
//! block and formats the other labels too, so every label rounds the same way: through
//! integers, falling back to the shortest formatting (`{}`) outside the range where
//! that is exact. Ties round away from zero, where `format!` rounds the exact binary
//! value; the page only displays these.

/// Largest scaled magnitude formatted through integers: well inside `i64` and the
/// range where every integer is an exact `f64`.
const EXACT: f64 = 1e15;

/// `x` with `digits` decimals, like `format!("{x:.digits$}")`.
pub fn fixed(x: f64, digits: u8) -> String {
    let scale = 10u64.pow(u32::from(digits.min(9)));
    let scaled = (x * scale as f64).round();
    if !scaled.is_finite() || scaled.abs() >= EXACT {
        return x.to_string();
    }
    // In range by the check above.
    let n = scaled.abs() as u64;
    let sign = if scaled < 0.0 { "-" } else { "" };
    if digits == 0 {
        format!("{sign}{n}")
    } else {
        let width = usize::from(digits.min(9));
        format!("{sign}{}.{:0width$}", n / scale, n % scale)
    }
}

/// `x` in scientific notation with `digits` decimals, like `format!("{x:.digits$e}")`.
pub fn scientific(x: f64, digits: u8) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{}e0", fixed(x, digits));
    }
    let mut exp = x.abs().log10().floor() as i32;
    let mut mantissa = x / 10f64.powi(exp);
    // Rounding can carry into a new digit (9.996 -> 10.00).
    if fixed(mantissa.abs(), digits).starts_with("10") {
        exp += 1;
        mantissa = x / 10f64.powi(exp);
    }
    format!("{}e{exp}", fixed(mantissa, digits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_matches_format_on_ordinary_values() {
        for (x, d) in [
            (0.0, 2),
            (1.0, 0),
            (12.3456, 2),
            (99.96, 1),
            (-3.25001, 1),
            (1234.5678, 4),
            (0.0049, 2),
            (250.0, 0),
        ] {
            assert_eq!(fixed(x, d), format!("{x:.*}", usize::from(d)), "{x} {d}");
        }
        assert_eq!(fixed(-0.001, 2), "0.00");
    }

    #[test]
    fn fixed_falls_back_outside_the_exact_range() {
        assert_eq!(fixed(f64::NAN, 2), "NaN");
        assert_eq!(fixed(f64::INFINITY, 1), "inf");
        assert_eq!(fixed(3e20, 2), "300000000000000000000");
    }

    #[test]
    fn scientific_matches_format() {
        for x in [1.0, 0.000123456, 98765.4, -2.5e-7, 9.996, 1e-30] {
            assert_eq!(scientific(x, 2), format!("{x:.2e}"), "{x}");
        }
        assert_eq!(scientific(0.0, 2), "0.00e0");
    }
}
