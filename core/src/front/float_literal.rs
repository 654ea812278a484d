//! Float literals to the nearest `f64`, ties to even, by exact big-integer division.
//!
//! Why not `str::parse::<f64>`: its Eisel-Lemire fast path links a 10 KB table of 128-bit
//! powers of five that does not compress, about 2% of the playground's gzipped wasm, for
//! the handful of literals a kernel has. No crate offers correct parsing without such
//! tables, so this file does the slow, exact computation, whose speed does not matter
//! here. The tests check it against `str::parse` bit for bit.

/// Significant digits kept. A decimal needs at most 767 significant digits to fall
/// exactly between two `f64`s; digits past this many only matter through `sticky`.
const MAX_DIGITS: usize = 800;

/// The value of `text`, which must match the lexer's float syntax: digits, an optional
/// `.digits`, an optional exponent `e`/`E` with an optional sign. Anything else is NaN.
pub fn parse(text: &str) -> f64 {
    let Some(decimal) = Decimal::read(text) else {
        return f64::NAN;
    };
    decimal.nearest_f64()
}

/// `digits × 10^exponent`, plus `sticky` when nonzero digits were dropped past
/// [`MAX_DIGITS`] (the value is then a little more than the digits say).
struct Decimal {
    digits: Vec<u8>,
    exponent: i64,
    sticky: bool,
}

impl Decimal {
    fn read(text: &str) -> Option<Decimal> {
        let (mantissa, exp_text) = match text.find(['e', 'E']) {
            Some(at) => (&text[..at], Some(&text[at + 1..])),
            None => (text, None),
        };
        let (int_part, frac_part) = match mantissa.split_once('.') {
            Some((_, "")) => return None,
            Some((i, f)) => (i, f),
            None => (mantissa, ""),
        };
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int_part.is_empty() || !all_digits(int_part) || !all_digits(frac_part) {
            return None;
        }
        let mut exponent = match exp_text {
            Some(e) => read_exponent(e)?,
            None => 0,
        };
        exponent -= frac_part.len() as i64;
        let mut digits = Vec::new();
        let mut sticky = false;
        for b in int_part.bytes().chain(frac_part.bytes()) {
            let d = b - b'0';
            if digits.is_empty() && d == 0 {
                continue;
            }
            if digits.len() < MAX_DIGITS {
                digits.push(d);
            } else {
                exponent += 1;
                sticky |= d != 0;
            }
        }
        Some(Decimal {
            digits,
            exponent,
            sticky,
        })
    }

    fn nearest_f64(&self) -> f64 {
        if self.digits.is_empty() {
            return 0.0;
        }
        // The value is below 10^magnitude and at least 10^(magnitude - 1).
        let magnitude = self.digits.len() as i64 + self.exponent;
        if magnitude > 310 {
            return f64::INFINITY;
        }
        if magnitude < -324 {
            // Below 10^-325, under half the smallest subnormal (4.9e-324).
            return 0.0;
        }
        let mut num = Big::from_digits(&self.digits);
        let mut den = Big::one();
        if self.exponent >= 0 {
            num.mul_pow10(self.exponent as u32);
        } else {
            den.mul_pow10(self.exponent.unsigned_abs() as u32);
        }
        // Scale so that the quotient has 64 or 65 bits: enough for 53 and a rounding bit.
        let shift = 64 - (num.bits() as i64 - den.bits() as i64);
        if shift > 0 {
            num.shl(shift as u32);
        } else {
            den.shl(shift.unsigned_abs() as u32);
        }
        let (quotient, exact) = num.div_small_quotient(&den);
        round_to_f64(quotient, shift, !exact || self.sticky)
    }
}

/// The exponent after `e`: an optional sign and digits, saturated far beyond any value
/// that still changes the result.
fn read_exponent(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: i64 = 0;
    for b in digits.bytes() {
        value = (value * 10 + i64::from(b - b'0')).min(1 << 40);
    }
    Some(if negative { -value } else { value })
}

/// `quotient × 2^-shift`, a little more when `inexact`, rounded to the nearest `f64`.
fn round_to_f64(quotient: u128, shift: i64, inexact: bool) -> f64 {
    let bits = 128 - i64::from(quotient.leading_zeros());
    // The value lies in [2^top, 2^(top + 1)).
    let top = bits - 1 - shift;
    if top > 1023 {
        return f64::INFINITY;
    }
    // Significant bits the result can hold: 53 when normal, fewer when subnormal.
    let keep = if top >= -1022 { 53 } else { top + 1075 };
    if keep < 0 {
        return 0.0;
    }
    let drop = (bits - keep) as u32;
    let mut mantissa = quotient >> drop;
    let rest = quotient & ((1u128 << drop) - 1);
    let half = 1u128 << (drop - 1);
    if rest > half || (rest == half && (inexact || mantissa & 1 == 1)) {
        mantissa += 1;
    }
    let mantissa = mantissa as u64;
    if keep < 53 {
        // A subnormal's bits are its mantissa; rounding up to 2^52 gives 2^-1022 exactly.
        return f64::from_bits(mantissa);
    }
    let (mantissa, top) = if mantissa == 1 << 53 {
        (mantissa >> 1, top + 1)
    } else {
        (mantissa, top)
    };
    if top > 1023 {
        return f64::INFINITY;
    }
    f64::from_bits(((top + 1023) as u64) << 52 | (mantissa & ((1 << 52) - 1)))
}

/// An unsigned integer in little-endian 32-bit limbs, with just the operations above.
struct Big(Vec<u32>);

impl Big {
    fn one() -> Big {
        Big(vec![1])
    }

    fn from_digits(digits: &[u8]) -> Big {
        let mut big = Big(vec![0]);
        for chunk in digits.chunks(9) {
            let mut value = 0u32;
            for &d in chunk {
                value = value * 10 + u32::from(d);
            }
            big.mul_add(10u32.pow(chunk.len() as u32), value);
        }
        big
    }

    fn mul_add(&mut self, factor: u32, addend: u32) {
        let mut carry = u64::from(addend);
        for limb in &mut self.0 {
            let product = u64::from(*limb) * u64::from(factor) + carry;
            *limb = product as u32;
            carry = product >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow10(&mut self, mut power: u32) {
        while power > 0 {
            let step = power.min(9);
            self.mul_add(10u32.pow(step), 0);
            power -= step;
        }
    }

    fn bits(&self) -> u32 {
        let top = self.0.iter().rposition(|&l| l != 0).unwrap_or(0);
        top as u32 * 32 + (32 - self.0[top].leading_zeros())
    }

    fn shl(&mut self, amount: u32) {
        let (limbs, bits) = ((amount / 32) as usize, amount % 32);
        if bits > 0 {
            let mut carry = 0;
            for limb in &mut self.0 {
                let next = *limb >> (32 - bits);
                *limb = (*limb << bits) | carry;
                carry = next;
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
    }

    /// `self / den` when the quotient is below 2^66, by binary long division, and
    /// whether the division was exact. Consumes `self` as the remainder.
    fn div_small_quotient(mut self, den: &Big) -> (u128, bool) {
        let mut quotient = 0u128;
        for bit in (0..66).rev() {
            let mut shifted = Big(den.0.clone());
            shifted.shl(bit);
            if self.sub_if_at_least(&shifted) {
                quotient |= 1 << bit;
            }
        }
        (quotient, self.0.iter().all(|&l| l == 0))
    }

    /// Subtracts `other` when `self >= other`; says whether it did.
    fn sub_if_at_least(&mut self, other: &Big) -> bool {
        let len = self.0.len().max(other.0.len());
        let limb = |v: &[u32], i: usize| v.get(i).copied().unwrap_or(0);
        for i in (0..len).rev() {
            let (a, b) = (limb(&self.0, i), limb(&other.0, i));
            if a != b {
                if a < b {
                    return false;
                }
                break;
            }
        }
        self.0.resize(len, 0);
        let mut borrow = 0i64;
        for (i, slot) in self.0.iter_mut().enumerate() {
            let diff = i64::from(*slot) - i64::from(limb(&other.0, i)) - borrow;
            *slot = diff.rem_euclid(1 << 32) as u32;
            borrow = i64::from(diff < 0);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use proptest::prelude::*;

    fn same(text: &str) {
        let expected: f64 = text.parse().unwrap();
        let got = parse(text);
        assert_eq!(
            got.to_bits(),
            expected.to_bits(),
            "{text}: {got:e} vs {expected:e}"
        );
    }

    #[test]
    fn edge_cases_match_the_standard_parser() {
        for text in [
            "0.0",
            "0e5",
            "1.0",
            "0.1",
            "0.5",
            "1.5e3",
            "3.14159",
            "1e-3",
            "1E+2",
            "00012.50",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1e309",
            "1e400",
            "2.2250738585072014e-308",
            "2.2250738585072011e-308",
            "4.9406564584124654e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "1e-325",
            "1e-400",
            "9007199254740993.0",
            "9007199254740993.00000000000001",
            "9007199254740995.0",
            "123456789012345678901234567890.0",
            "1e99999999999999999999",
            "1e-99999999999999999999",
            "0.000000000000000000000000000000000000001e39",
        ] {
            same(text);
        }
    }

    #[test]
    fn text_outside_the_lexer_syntax_is_nan() {
        for text in ["", ".5", "1.", "1e", "1e+", "e5", "1.2.3", "-1.0", "1x"] {
            assert!(parse(text).is_nan(), "{text}");
        }
    }

    #[test]
    fn digits_past_the_kept_count_still_round() {
        // Exactly halfway between 1 and its successor: ties to even, i.e. down.
        let half = "1.00000000000000011102230246251565404236316680908203125";
        same(half);
        same(&format!("{half}{}1", "0".repeat(900)));
        same(&format!("0.{}1e-900", "0".repeat(2000)));
        same(&format!("1.{}e-10", "0".repeat(5000)));
        same(&format!("{}.5e-5000", "9".repeat(5000)));
    }

    /// The exact decimal text of `odd × 2^power`, for midpoints between two floats.
    fn exact(odd: u64, power: i32) -> String {
        if power >= 0 {
            format!("{}.0", u128::from(odd) << power)
        } else {
            let scaled = u128::from(odd) * 5u128.pow(power.unsigned_abs());
            format!("{scaled}.0e{power}")
        }
    }

    proptest! {
        #[test]
        fn random_decimals_match(int in "[0-9]{1,25}", frac in "[0-9]{0,25}", exp in -340i32..320) {
            let text = if frac.is_empty() { format!("{int}e{exp}") } else { format!("{int}.{frac}e{exp}") };
            same(&text);
        }

        #[test]
        fn shortest_forms_round_trip(bits in 1u64..0x7FF0_0000_0000_0000) {
            let value = f64::from_bits(bits);
            same(&format!("{value:e}"));
            same(&format!("{value:.25e}"));
        }

        #[test]
        fn halfway_points_match(mantissa in (1u64 << 52)..(1 << 53), power in -31i32..70, above in any::<bool>()) {
            // 2 × mantissa + 1 has 54 bits: the midpoint of two neighbouring floats.
            let text = exact(2 * mantissa + 1, power);
            same(&text);
            if above {
                same(&text.replacen(".0", ".000000000000000000001", 1));
            }
        }
    }
}
