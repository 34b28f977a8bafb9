//! Numbers from literal text, with Java's parsing rules and Cassandra's messages.
use crate::error::TypeError;
use num_bigint::BigInt;

fn unable(what: &str, text: &str) -> TypeError {
    TypeError(format!("Unable to make {what} from '{text}'"))
}

/// An integer of any size (Java's `parseInt`/`parseLong`: optional sign, ASCII digits).
pub fn integer<T: TryFrom<i128>>(text: &str, what: &str) -> Result<T, TypeError> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(unable(what, text));
    }
    text.parse::<i128>()
        .ok()
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| unable(what, text))
}

pub fn varint(text: &str) -> Result<BigInt, TypeError> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(unable("int", text));
    }
    text.parse().map_err(|_| unable("int", text))
}

/// Java's `Double.parseDouble` on CQL float/integer literals: decimal digits with optional
/// fraction and exponent, `NaN`, `Infinity`, `-Infinity`.
pub fn double(text: &str, what: &str) -> Result<f64, TypeError> {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let special = matches!(unsigned, "NaN" | "Infinity");
    if !special && decimal_parts(text).is_none() {
        return Err(unable(what, text));
    }
    let rust_form = text.replace("Infinity", "inf");
    rust_form.parse::<f64>().map_err(|_| unable(what, text))
}

/// Whether a float literal's value is not the double nearest it (Cassandra's
/// `Constants.Type.FLOAT` then prefers decimal: `BigDecimal(text)` differs from
/// `BigDecimal.valueOf(double)`, the double's shortest digits). `NaN` and `Infinity` are
/// doubles; a literal beyond the doubles' range is not.
pub fn float_needs_decimal(text: &str) -> bool {
    let bare = text.strip_prefix(['-', '+']).unwrap_or(text);
    if bare == "NaN" || bare == "Infinity" {
        return false;
    }
    let Ok(double) = text.parse::<f64>() else {
        return true;
    };
    if !double.is_finite() {
        return true;
    }
    match (decimal(text), decimal(&format!("{double:e}"))) {
        (Ok(written), Ok(nearest)) => !same_decimal(written, nearest),
        _ => true,
    }
}

/// Whether two (unscaled, scale) pairs are one number: the same digits and scale once
/// trailing zeros are dropped.
fn same_decimal(a: (BigInt, i32), b: (BigInt, i32)) -> bool {
    fn stripped((unscaled, scale): (BigInt, i32)) -> (String, i64) {
        let digits = unscaled.to_string();
        let kept = digits.trim_end_matches('0');
        if kept.is_empty() || kept == "-" {
            return (String::from("0"), 0);
        }
        let dropped = (digits.len() - kept.len()) as i64;
        (kept.to_string(), i64::from(scale) - dropped)
    }
    stripped(a) == stripped(b)
}

/// Java's `BigDecimal(String)`: the unscaled integer and the scale.
pub fn decimal(text: &str) -> Result<(BigInt, i32), TypeError> {
    let error = || TypeError(format!("unable to make BigDecimal from '{text}'"));
    let (mantissa, fraction, exponent) = decimal_parts(text).ok_or_else(error)?;
    let unscaled: BigInt = format!("{mantissa}{fraction}")
        .parse()
        .map_err(|_| error())?;
    let scale = i64::try_from(fraction.len()).map_err(|_| error())? - exponent;
    let scale = i32::try_from(scale).map_err(|_| error())?;
    Ok((unscaled, scale))
}

/// Splits `-12.34e5` into (`-12`, `34`, 5); `None` if it is not such a number.
fn decimal_parts(text: &str) -> Option<(&str, &str, i64)> {
    let (number, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let (int_part, fraction) = number.split_once('.').unwrap_or((number, ""));
    let int_digits = int_part.strip_prefix(['+', '-']).unwrap_or(int_part);
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_digits.len() + fraction.len() == 0 || !all_digits(int_digits) || !all_digits(fraction) {
        return None;
    }
    let exponent = match exponent {
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !all_digits(digits) {
                return None;
            }
            e.parse::<i64>().ok()?
        }
        None => 0,
    };
    Some((int_part, fraction, exponent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(integer::<i32>("-42", "int"), Ok(-42));
        assert_eq!(integer::<i8>("127", "byte"), Ok(127));
        assert_eq!(
            integer::<i8>("128", "byte"),
            Err(TypeError("Unable to make byte from '128'".into()))
        );
        assert_eq!(
            integer::<i64>("abc", "long"),
            Err(TypeError("Unable to make long from 'abc'".into()))
        );
        assert!(integer::<i64>("99999999999999999999999999999999999999999", "long").is_err());
        assert_eq!(
            varint("-123456789012345678901234567890").map(|v| v.to_string()),
            Ok("-123456789012345678901234567890".into())
        );
    }

    #[test]
    fn doubles() {
        assert_eq!(double("1.5e3", "double"), Ok(1500.0));
        assert_eq!(double("-Infinity", "double"), Ok(f64::NEG_INFINITY));
        assert!(double("NaN", "double").is_ok_and(f64::is_nan));
        assert_eq!(double(".5", "double"), Ok(0.5));
        assert_eq!(double("7", "float"), Ok(7.0));
        assert!(double("inf", "double").is_err());
        assert!(double("1e", "double").is_err());
    }

    #[test]
    fn decimals() {
        assert_eq!(decimal("123.45"), Ok((BigInt::from(12345), 2)));
        assert_eq!(decimal("-1.5E3"), Ok((BigInt::from(-15), -2)));
        assert_eq!(decimal("1e-2"), Ok((BigInt::from(1), 2)));
        assert_eq!(
            decimal("NaN"),
            Err(TypeError("unable to make BigDecimal from 'NaN'".into()))
        );
    }
}
