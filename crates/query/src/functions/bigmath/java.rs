//! The arithmetic of Java's `BigDecimal` that big-math's functions use, with its rounding to a
//! `MathContext` (a precision, half even) and its choice of scale, so that a computation ported
//! step by step gives the same digits.
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;

/// `unscaled × 10^-scale`, as a Java `BigDecimal` (whose scale is an `int`; it is kept wider
/// here and checked when the result leaves).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Big {
    pub unscaled: BigInt,
    pub scale: i64,
}

pub fn pow10(n: u64) -> BigUint {
    BigUint::from(10u32).pow(u32::try_from(n).unwrap_or(u32::MAX))
}

/// The number of decimal digits of `n` (1 for zero), Java's `precision()`.
pub fn digits(n: &BigUint) -> u64 {
    if n.is_zero() {
        return 1;
    }
    // bits × log10(2) is the count or one more than it.
    let estimate = ((n.bits() - 1) as f64 * std::f64::consts::LOG10_2).floor() as u64 + 1;
    if *n >= pow10(estimate) {
        estimate + 1
    } else {
        estimate
    }
}

/// `q` rounded half even after dropping `drop` digits, with `sticky` telling that the value
/// had more (non-zero) digits below `q`; and whether the result is exact.
fn drop_digits(q: &BigUint, drop: u64, sticky: bool) -> (BigUint, bool) {
    if drop == 0 {
        return (q.clone(), !sticky);
    }
    let divisor = pow10(drop);
    let (mut kept, rest) = (q / &divisor, q % &divisor);
    let twice = &rest * 2u32;
    let round_up = match twice.cmp(&divisor) {
        Ordering::Greater => true,
        Ordering::Equal => sticky || (&kept % 2u32).is_one(),
        Ordering::Less => false,
    };
    let exact = rest.is_zero() && !sticky;
    if round_up {
        kept += 1u32;
    }
    (kept, exact)
}

impl Big {
    pub fn new(unscaled: BigInt, scale: i64) -> Big {
        Big { unscaled, scale }
    }

    pub fn of(value: i64) -> Big {
        Big::new(BigInt::from(value), 0)
    }

    pub fn zero() -> Big {
        Big::of(0)
    }

    pub fn one() -> Big {
        Big::of(1)
    }

    pub fn signum(&self) -> Sign {
        self.unscaled.sign()
    }

    pub fn is_zero(&self) -> bool {
        self.unscaled.is_zero()
    }

    pub fn precision(&self) -> u64 {
        digits(self.unscaled.magnitude())
    }

    /// Java's `round(MathContext)`: at most `precision` digits, half even.
    pub fn round(&self, precision: u64) -> Big {
        let have = self.precision();
        if have <= precision {
            return self.clone();
        }
        let (kept, _) = drop_digits(self.unscaled.magnitude(), have - precision, false);
        let rounded = Big::new(
            BigInt::from_biguint(self.signum(), kept),
            self.scale - (have - precision) as i64,
        );
        // A carry (9.99 → 10.0) leaves one digit too many, which is a zero.
        rounded.round(precision)
    }

    fn aligned(&self, other: &Big) -> (BigInt, BigInt, i64) {
        let scale = self.scale.max(other.scale);
        let up = |b: &Big| &b.unscaled * BigInt::from(pow10((scale - b.scale) as u64));
        (up(self), up(other), scale)
    }

    pub fn add(&self, other: &Big) -> Big {
        let (a, b, scale) = self.aligned(other);
        Big::new(a + b, scale)
    }

    pub fn sub(&self, other: &Big) -> Big {
        self.add(&other.negate())
    }

    pub fn negate(&self) -> Big {
        Big::new(-&self.unscaled, self.scale)
    }

    pub fn abs(&self) -> Big {
        Big::new(self.unscaled.abs(), self.scale)
    }

    pub fn mul(&self, other: &Big) -> Big {
        Big::new(&self.unscaled * &other.unscaled, self.scale + other.scale)
    }

    /// `multiply(other, mc)`: the exact product rounded.
    pub fn mul_mc(&self, other: &Big, precision: u64) -> Big {
        self.mul(other).round(precision)
    }

    /// `add(other, mc)`: the exact sum rounded; when one side is zero, the other rounded at
    /// the larger scale where the precision allows it.
    pub fn add_mc(&self, other: &Big, precision: u64) -> Big {
        let preferred = self.scale.max(other.scale);
        if !self.is_zero() && !other.is_zero() {
            return self.add(other).round(precision);
        }
        if self.is_zero() && other.is_zero() {
            return Big::new(BigInt::zero(), preferred);
        }
        let result = if self.is_zero() { other } else { self }.round(precision);
        match result.scale.cmp(&preferred) {
            Ordering::Equal => result,
            Ordering::Greater => result.stripped_to(preferred),
            Ordering::Less => {
                let room = precision as i64 - result.precision() as i64;
                result.with_scale(result.scale + room.min(preferred - result.scale))
            }
        }
    }

    /// The same value at a larger scale.
    fn with_scale(&self, scale: i64) -> Big {
        let up = pow10((scale - self.scale).max(0) as u64);
        Big::new(&self.unscaled * BigInt::from(up), scale.max(self.scale))
    }

    /// Trailing zeros removed while the scale is above `preferred`.
    fn stripped_to(mut self, preferred: i64) -> Big {
        while self.scale > preferred && !self.is_zero() && (&self.unscaled % 10u32).is_zero() {
            self.unscaled /= 10u32;
            self.scale -= 1;
        }
        self
    }

    /// `divide(divisor, mc)`: the quotient rounded to `precision` digits, half even; an exact
    /// quotient has its trailing zeros stripped down to the preferred scale (the difference of
    /// the scales). `None` for a zero divisor.
    pub fn div_mc(&self, divisor: &Big, precision: u64) -> Option<Big> {
        if divisor.is_zero() {
            return None;
        }
        let preferred = self.scale - divisor.scale;
        if self.is_zero() {
            return Some(Big::new(BigInt::zero(), preferred));
        }
        let (a, b) = (self.unscaled.magnitude(), divisor.unscaled.magnitude());
        // a·10^shift / b has at least precision + 1 digits.
        let shift = precision as i64 + 1 + digits(b) as i64 - digits(a) as i64;
        let (num, den) = if shift >= 0 {
            (a * pow10(shift as u64), b.clone())
        } else {
            (a.clone(), b * pow10(shift.unsigned_abs()))
        };
        let (q, r) = (&num / &den, &num % &den);
        let drop = digits(&q).saturating_sub(precision);
        let (kept, exact) = drop_digits(&q, drop, !r.is_zero());
        let sign = if self.signum() == divisor.signum() {
            Sign::Plus
        } else {
            Sign::Minus
        };
        let quotient = Big::new(
            BigInt::from_biguint(sign, kept),
            preferred + shift - drop as i64,
        )
        .round(precision);
        Some(if exact {
            quotient.stripped_to(preferred)
        } else {
            quotient
        })
    }

    /// `setScale(0, RoundingMode.DOWN)`: the integer part.
    pub fn integral_part(&self) -> Big {
        if self.scale <= 0 {
            return self.with_scale(0);
        }
        Big::new(&self.unscaled / BigInt::from(pow10(self.scale as u64)), 0)
    }

    /// `movePointLeft(n)`: the scale moved, never below zero.
    pub fn move_point_left(&self, n: i64) -> Big {
        Big::new(self.unscaled.clone(), self.scale + n).with_scale(0)
    }

    /// `precision() - scale() - 1`: the power of ten of the first digit.
    pub fn exponent(&self) -> i64 {
        self.precision() as i64 - self.scale - 1
    }

    pub fn cmp_value(&self, other: &Big) -> Ordering {
        let (a, b, _) = self.aligned(other);
        a.cmp(&b)
    }

    /// `doubleValue()`: the nearest double.
    pub fn to_f64(&self) -> f64 {
        let scale =
            i32::try_from(self.scale).unwrap_or(if self.scale > 0 { i32::MAX } else { i32::MIN });
        types::value::java_decimal_string(&self.unscaled, scale)
            .parse()
            .unwrap_or(f64::NAN)
    }

    /// `intValueExact()`, `None` past an `int`.
    pub fn to_i32_exact(&self) -> Option<i32> {
        if self.scale > 0 && !(&self.unscaled % BigInt::from(pow10(self.scale as u64))).is_zero() {
            return None;
        }
        self.integral_part().with_scale(0).unscaled.to_i32()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(text: &str) -> Big {
        let (digits, scale) = match text.split_once('.') {
            Some((int, frac)) => (format!("{int}{frac}"), frac.len() as i64),
            None => (text.to_string(), 0),
        };
        Big::new(digits.parse().unwrap_or_default(), scale)
    }

    #[test]
    fn rounding_is_half_even_with_java_scales() {
        assert_eq!(big("2.345").round(3), big("2.34"));
        assert_eq!(big("2.355").round(3), big("2.36"));
        assert_eq!(big("9.995").round(3), big("10.0"));
        assert_eq!(big("-2.3451").round(3), big("-2.35"));
        assert_eq!(big("12").round(5), big("12"));
    }

    #[test]
    fn division_keeps_java_scales() {
        let third = big("1").div_mc(&big("3"), 5);
        assert_eq!(third, Some(big("0.33333")));
        assert_eq!(big("1").div_mc(&big("4"), 5), Some(big("0.25")));
        assert_eq!(big("1.00").div_mc(&big("4"), 5), Some(big("0.25")));
        assert_eq!(big("10").div_mc(&big("5"), 5), Some(big("2")));
        assert_eq!(big("2.000").div_mc(&big("1"), 2), Some(big("2.0")));
        assert_eq!(
            Big::zero().div_mc(&big("2.5"), 5),
            Some(Big::new(BigInt::zero(), -1))
        );
        assert_eq!(big("2").div_mc(&big("3"), 3), Some(big("0.667")));
        assert_eq!(big("1").div_mc(&Big::zero(), 3), None);
    }

    #[test]
    fn digits_count() {
        for (n, expected) in [
            (0u64, 1),
            (9, 1),
            (10, 2),
            (99, 2),
            (100, 3),
            (u64::MAX, 20),
        ] {
            assert_eq!(digits(&BigUint::from(n)), expected, "{n}");
        }
    }
}
