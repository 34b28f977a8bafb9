//! big-math 2.3.0's `BigDecimalMath.log` and `log10`, step by step: numbers above ten split
//! into mantissa and power of ten, the mantissa brought near one by powers of two and three,
//! Newton's iteration on `exp` for the rest, and its caches of ln 2, ln 3 and ln 10.
use super::exp::exp;
use super::java::Big;
use super::Failure;
use num_bigint::BigInt;
use num_traits::One;
use std::sync::Mutex;

/// ln x to `precision` digits (x > 0).
pub fn log(x: &Big, precision: u64) -> Result<Big, Failure> {
    if x.cmp_value(&Big::one()).is_eq() {
        return Ok(Big::zero());
    }
    let result = match x.cmp_value(&Big::of(10)) {
        std::cmp::Ordering::Equal => constant(10, precision)?,
        std::cmp::Ordering::Greater => using_exponent(x, precision)?,
        std::cmp::Ordering::Less => using_two_three(x, precision)?,
    };
    Ok(result.round(precision))
}

/// log10 x: ln x / ln 10 at two more digits.
pub fn log10(x: &Big, precision: u64) -> Result<Big, Failure> {
    let mc = precision + 2;
    let ln = log(x, mc)?;
    let quotient = ln
        .div_mc(&constant(10, mc)?, mc)
        .ok_or(Failure::DivisionByZero)?;
    Ok(quotient.round(precision))
}

/// `logUsingExponent`: ln(mantissa) + exponent × ln 10.
fn using_exponent(x: &Big, precision: u64) -> Result<Big, Failure> {
    let (twice, mc) = (precision * 2, precision + 4);
    let exponent = x.exponent();
    let mantissa = x.move_point_left(exponent);
    let result = using_two_three(&mantissa, mc)?;
    if exponent == 0 {
        return Ok(result);
    }
    Ok(result.add(&Big::of(exponent).mul_mc(&constant(10, twice)?, mc)))
}

/// `logUsingTwoThree`: x divided or multiplied by a power of two and of three into
/// 0.7..1.4 (by its value as a double), their logs added back.
fn using_two_three(x: &Big, precision: u64) -> Result<Big, Failure> {
    let (twice, mc) = (precision * 2, precision + 4);
    let (twos, threes) = factors(x.to_f64());
    if twos == 0 && threes == 0 {
        return newton(x, precision);
    }
    let mut corrected = x.clone();
    let mut result = Big::zero();
    for (factor, base) in [(twos, 2i64), (threes, 3)] {
        if factor == 0 {
            continue;
        }
        let power = Big::of(base.pow(factor.unsigned_abs()));
        let ln = constant(base as u32, twice)?.mul_mc(&Big::of(i64::from(factor.abs())), mc);
        if factor > 0 {
            corrected = corrected
                .div_mc(&power, mc)
                .ok_or(Failure::DivisionByZero)?;
            result = result.add(&ln);
        } else {
            corrected = corrected.mul_mc(&power, mc);
            result = result.sub(&ln);
        }
    }
    Ok(result.add_mc(&newton(&corrected, mc)?, mc))
}

/// The powers of two and of three big-math takes out of a number (by its double value).
fn factors(value: f64) -> (i32, i32) {
    match value {
        v if v < 0.01 => (0, 0),
        v if v < 0.1 => {
            let (mut v, mut twos) = (v, 0);
            while v < 0.6 {
                v *= 2.0;
                twos -= 1;
            }
            (twos, 0)
        }
        v if v < 0.115 => (0, -2),
        v if v < 0.14 => (-3, 0),
        v if v < 0.2 => (-1, -1),
        v if v < 0.3 => (-2, 0),
        v if v < 0.42 => (0, -1),
        v if v < 0.7 => (-1, 0),
        v if v < 1.4 => (0, 0),
        v if v < 2.5 => (1, 0),
        v if v < 3.5 => (0, 1),
        v if v < 5.0 => (2, 0),
        v if v < 7.0 => (1, 1),
        v if v < 8.5 => (3, 0),
        v if v < 10.0 => (0, 2),
        v => {
            let (mut v, mut twos) = (v, 0);
            while v > 1.4 {
                v /= 2.0;
                twos += 1;
            }
            (twos, 0)
        }
    }
}

/// `logUsingNewton`: y ← y + 2(x − e^y)/(x + e^y) from the double's log, the working
/// precision tripling up to 20 more digits, until a step is at most 10^-(precision+1).
fn newton(x: &Big, precision: u64) -> Result<Big, Failure> {
    let max_precision = precision + 20;
    let acceptable = Big::new(BigInt::one(), precision as i64 + 1);
    let double = x.to_f64();
    let (mut result, mut adaptive) = if double > 0.0 && double.is_finite() {
        (from_f64(double.ln()), 15)
    } else {
        let half = x.div_mc(&Big::of(2), precision);
        (half.ok_or(Failure::DivisionByZero)?, 1)
    };
    loop {
        adaptive = (adaptive * 3).min(max_precision);
        let exp_y = exp(&result, adaptive)?;
        let step = Big::of(2)
            .mul(&x.sub(&exp_y))
            .div_mc(&x.add(&exp_y), adaptive)
            .ok_or(Failure::DivisionByZero)?;
        result = result.add(&step);
        if adaptive >= max_precision && step.abs().cmp_value(&acceptable).is_le() {
            return Ok(result);
        }
    }
}

/// Java's `BigDecimal.valueOf(double)`: the digits of `Double.toString`.
fn from_f64(v: f64) -> Big {
    let text = types::value::java_double_string(v);
    let (mantissa, exponent) = match text.split_once('E') {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0)),
        None => (text.as_str(), 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let unscaled = format!("{int}{frac}").parse().unwrap_or_default();
    Big::new(unscaled, frac.len() as i64 - exponent)
}

/// `logTen`, `logTwo`, `logThree`: Newton's value, kept; a later call at no more digits gets
/// the kept value rounded, a call at more computes and keeps a new one.
fn constant(of: u32, precision: u64) -> Result<Big, Failure> {
    static CACHES: [Mutex<Option<Big>>; 3] = [Mutex::new(None), Mutex::new(None), Mutex::new(None)];
    let slot = match of {
        2 => &CACHES[0],
        3 => &CACHES[1],
        _ => &CACHES[2],
    };
    let mut cache = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(kept) = cache.as_ref().filter(|c| precision <= c.precision()) {
        return Ok(kept.round(precision));
    }
    let value = newton(&Big::of(i64::from(of)), precision)?;
    *cache = Some(value.clone());
    Ok(value)
}
