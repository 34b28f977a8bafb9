//! `exp`, `log` and `log10` of decimals as Cassandra 5.0.4 computes them: big-math 2.3.0's
//! `BigDecimalMath` at the argument's precision (at least 32 digits, at most 10,000), half even.
//! big-math's results are not always correctly rounded (its last digit depends on where it
//! rounds on the way), so its algorithms are ported step by step over an emulation of Java's
//! `BigDecimal` rather than computed by a general arbitrary-precision library.
mod exp;
mod java;
mod log;

use super::numeric::Decimal;
use java::Big;

/// A Java `ArithmeticException` big-math or `BigDecimal` throws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// An integral part or a scale past an `int`.
    Overflow,
    DivisionByZero,
    /// The log of zero or less (callers refuse it first, with Cassandra's own message).
    NotPositive,
    /// A number below 10^n, so close to zero that big-math would work on it for minutes
    /// (Newton's iteration for the log from a double that is zero takes about |ln x| / 2
    /// steps; the sums of exp align it over as many digits).
    TooSmall(i64),
}

/// The smallest powers of ten of arguments that are computed: Cassandra takes about two
/// seconds for the log of 1E-5000 and a minute for 1E-20000.
const MIN_EXP_EXPONENT: i64 = -100_000;
const MIN_LOG_EXPONENT: i64 = -5_000;

impl Failure {
    /// The exception's message.
    pub fn message(self) -> String {
        match self {
            Failure::Overflow => "Overflow".into(),
            Failure::DivisionByZero => "Division by zero".into(),
            Failure::NotPositive => "Illegal log(x) for x <= 0".into(),
            Failure::TooSmall(exponent) => format!("Argument below 1E{exponent}"),
        }
    }
}

/// `DecimalType`'s `MathContext`: the argument's digits, between 32 and 10,000.
fn precision(x: &Big) -> u64 {
    x.precision().clamp(32, 10_000)
}

fn to_big(d: &Decimal, min_exponent: i64) -> Result<Big, Failure> {
    let big = Big::new(d.unscaled.clone(), i64::from(d.scale));
    if !big.is_zero() && big.exponent() < min_exponent {
        return Err(Failure::TooSmall(min_exponent));
    }
    Ok(big)
}

fn to_decimal(b: Big) -> Result<Decimal, Failure> {
    let scale = i32::try_from(b.scale).map_err(|_| Failure::Overflow)?;
    Ok(Decimal::new(b.unscaled, scale))
}

/// e^x.
pub fn exp(x: &Decimal) -> Result<Decimal, Failure> {
    let x = to_big(x, MIN_EXP_EXPONENT)?;
    to_decimal(exp::exp(&x, precision(&x))?)
}

fn positive(x: &Decimal) -> Result<Big, Failure> {
    let x = to_big(x, MIN_LOG_EXPONENT)?;
    match x.signum() {
        num_bigint::Sign::Plus => Ok(x),
        _ => Err(Failure::NotPositive),
    }
}

/// ln x.
pub fn log(x: &Decimal) -> Result<Decimal, Failure> {
    let x = positive(x)?;
    to_decimal(log::log(&x, precision(&x))?)
}

/// log10 x.
pub fn log10(x: &Decimal) -> Result<Decimal, Failure> {
    let x = positive(x)?;
    to_decimal(log::log10(&x, precision(&x))?)
}

#[cfg(test)]
pub(super) mod tests;
