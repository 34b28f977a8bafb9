//! Math functions (Cassandra's `MathFcts`): `abs`, `exp`, `log`, `log10` and `round` for every
//! numeric type, each returning its argument's type (integer results of `exp` and `log` are
//! Java's `(int) Math.exp(x)`, so `exp(1)` is 2; decimals and varints go through big-math's
//! algorithms, `bigmath`).
use types::{CqlError, CqlResult, CqlType, NativeType};

use super::bigmath::{self, Failure};
use super::numeric::{Decimal, Num, NUMERIC};
use super::{Function, Registry};

pub fn register(r: &mut Registry) {
    for ty in NUMERIC {
        r.add(unary("abs", ty, |n| Ok(abs(n))));
        r.add(unary("round", ty, |n| Ok(round(n))));
        for (name, f, big) in [
            ("exp", f64::exp as fn(f64) -> f64, bigmath::exp as BigFn),
            ("log", f64::ln, bigmath::log),
            ("log10", f64::log10, bigmath::log10),
        ] {
            r.add(unary(name, ty, move |n| transcendental(name, n, f, big)));
        }
    }
}

type BigFn = fn(&Decimal) -> Result<Decimal, Failure>;

fn unary(
    name: &str,
    ty: NativeType,
    f: impl Fn(&Num) -> CqlResult<Num> + Send + Sync + 'static,
) -> Function {
    Function::scalar(
        name,
        vec![CqlType::Native(ty)],
        CqlType::Native(ty),
        move |args, _| {
            let Some(n) = args[0].as_ref().and_then(Num::of) else {
                return Ok(None);
            };
            f(&n).map(|r| Some(r.into_value(ty)))
        },
    )
}

fn abs(n: &Num) -> Num {
    match n {
        Num::I8(v) => Num::I8(v.wrapping_abs()),
        Num::I16(v) => Num::I16(v.wrapping_abs()),
        Num::I32(v) => Num::I32(v.wrapping_abs()),
        Num::I64(v) => Num::I64(v.wrapping_abs()),
        Num::F32(v) => Num::F32(v.abs()),
        Num::F64(v) => Num::F64(v.abs()),
        Num::Big(v) => Num::Big(num_traits::Signed::abs(v)),
        Num::Dec(d) => Num::Dec(Decimal::new(num_traits::Signed::abs(&d.unscaled), d.scale)),
    }
}

/// Java's `Math.round`: floor(x + 0.5), saturating, NaN to 0; integers unchanged; decimals
/// half up to scale 0.
fn round(n: &Num) -> Num {
    match n {
        Num::F32(v) => Num::F32(((*v + 0.5).floor() as i32) as f32),
        Num::F64(v) => Num::F64(((*v + 0.5).floor() as i64) as f64),
        Num::Dec(d) => Num::Dec(d.round_half_up()),
        other => other.clone(),
    }
}

/// `f` on the number as a double, back in the number's type; decimals and varints with
/// big-math (a varint as a decimal, the result's integer part), with Cassandra's errors: the
/// log of zero or less, and Java's `ArithmeticException`s.
fn transcendental(name: &str, n: &Num, f: fn(f64) -> f64, big: BigFn) -> CqlResult<Num> {
    let server = |m: &str| CqlError::Server(format!("java.lang.ArithmeticException: {m}"));
    let decimal = match n {
        Num::Dec(d) => d.clone(),
        Num::Big(v) => Decimal::new(v.clone(), 0),
        _ => return Ok(Num::F64(f(n.to_f64()))),
    };
    let positive = !decimal.is_negative() && !num_traits::Zero::is_zero(&decimal.unscaled);
    match name {
        "log" if !positive => return Err(server("Natural log of number zero or less")),
        "log10" if !positive => return Err(server("Log10 of number zero or less")),
        _ => {}
    }
    let result = big(&decimal).map_err(|e| match e {
        Failure::TooSmall(exponent) => CqlError::invalid(format!(
            "{name}() of a number below 1E{exponent} is not computed"
        )),
        _ => server(&e.message()),
    })?;
    Ok(match n {
        Num::Big(_) => Num::Big(result.truncated()),
        _ => Num::Dec(result),
    })
}
