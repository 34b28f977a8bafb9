//! big-math 2.3.0's `BigDecimalMath.exp`, step by step: the integral part as a power of
//! e^(1 + fraction/integral), the Taylor series of x/256 raised to the 256th power, every
//! product and quotient rounded where big-math rounds it.
use super::java::Big;
use super::Failure;
use num_bigint::BigInt;
use num_traits::One;

/// e^x to `precision` digits.
pub fn exp(x: &Big, precision: u64) -> Result<Big, Failure> {
    if x.is_zero() {
        return Ok(Big::one());
    }
    if x.exponent() >= 10 {
        // The integral part is past an int (checked before it is written out).
        return Err(Failure::Overflow);
    }
    let integral = x.integral_part();
    if integral.is_zero() {
        return taylor(x, precision);
    }
    let n = integral.to_i32_exact().ok_or(Failure::Overflow)?;
    let fraction = x.sub(&integral);
    let mc = precision + 10;
    let z = Big::one().add(&fraction.div_mc(&integral, mc).ok_or(Failure::Overflow)?);
    let t = taylor(&z, mc)?;
    Ok(pow(&t, i64::from(n), mc)?.round(precision))
}

/// `expTaylor`: the series of x/256 to precision + 6 digits, to the 256th power.
fn taylor(x: &Big, precision: u64) -> Result<Big, Failure> {
    let mc = precision + 6;
    let x = x.div_mc(&Big::of(256), mc).ok_or(Failure::Overflow)?;
    let sum = series(&x, mc);
    Ok(pow(&sum, 256, mc)?.round(precision))
}

/// `ExpCalculator`: the sum of x^n/n! (powers and terms rounded) until a term is at most
/// 10^-(precision+1).
fn series(x: &Big, precision: u64) -> Big {
    let acceptable = Big::new(BigInt::one(), precision as i64 + 1);
    let (mut sum, mut power, mut factorial) = (Big::zero(), Big::one(), BigInt::one());
    let mut n = 0i64;
    loop {
        let factor = Big::new(factorial.clone(), 0);
        // x^n/n!: the quotient of non-zero numbers always exists.
        let step = power.div_mc(&factor, precision).unwrap_or_else(Big::zero);
        power = power.mul_mc(x, precision);
        sum = sum.add(&step);
        n += 1;
        factorial *= n;
        if step.abs().cmp_value(&acceptable).is_le() {
            return sum.round(precision);
        }
    }
}

/// `pow(x, long y, mc)`: squaring and multiplying at precision + 10 digits.
pub fn pow(x: &Big, y: i64, precision: u64) -> Result<Big, Failure> {
    let mc = precision + 10;
    if y < 0 {
        let positive = pow(x, -y, mc)?;
        let reciprocal = Big::one()
            .div_mc(&positive, mc)
            .ok_or(Failure::DivisionByZero)?;
        return Ok(reciprocal.round(precision));
    }
    let (mut result, mut x, mut y) = (Big::one(), x.clone(), y);
    while y > 0 {
        if y & 1 == 1 {
            result = result.mul_mc(&x, mc);
            y -= 1;
        }
        if y > 0 {
            x = x.mul_mc(&x, mc);
        }
        y >>= 1;
    }
    Ok(result.round(precision))
}
