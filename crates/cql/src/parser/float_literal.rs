//! The check Cassandra's parser makes on every float literal (`FLOAT` token): it reads the
//! text as Java's `BigDecimal` and compares it with `BigDecimal.valueOf(double)`, so a literal
//! whose exponent or scale Java refuses, or whose magnitude is beyond a double (the double is
//! infinite, and `BigDecimal` cannot read `Infinity`), fails the whole statement with Java's
//! `NumberFormatException` message, whatever the literal is used for.

/// Java's `NumberFormatException` message for a float literal Cassandra 5.0.4 refuses while
/// parsing, or `None` when it is accepted. `text` is the token (`-1.5E+3`); it is not checked
/// again here for its form, which the lexer gave.
pub(super) fn refusal(text: &str) -> Option<&'static str> {
    if let Some(refused) = exponent_refusal(text) {
        return Some(refused);
    }
    let infinite = text.parse::<f64>().is_ok_and(f64::is_infinite);
    infinite.then_some(
        "Character I is neither a decimal digit number, decimal point, nor \"e\" notation \
         exponential mark.",
    )
}

/// What `new BigDecimal(text)` says of the exponent: more than ten digits once its leading
/// zeros are dropped, beyond an `int`, or a scale (fraction digits minus exponent) beyond an
/// `int`.
fn exponent_refusal(text: &str) -> Option<&'static str> {
    let (number, exponent) = text.split_once(['e', 'E'])?;
    let digits = exponent
        .trim_start_matches(['+', '-'])
        .trim_start_matches('0');
    if digits.len() > 10 {
        return Some("Too many nonzero exponent digits.");
    }
    let magnitude: i64 = digits.parse().unwrap_or(0);
    let exponent = if exponent.starts_with('-') {
        -magnitude
    } else {
        magnitude
    };
    if i32::try_from(exponent).is_err() {
        return Some("Exponent overflow.");
    }
    let fraction_digits = number.split_once('.').map_or(0, |(_, f)| f.len());
    let scale = i64::try_from(fraction_digits)
        .unwrap_or(i64::MAX)
        .saturating_sub(exponent);
    i32::try_from(scale)
        .is_err()
        .then_some("Scale out of range.")
}

#[cfg(test)]
mod tests {
    use super::refusal;

    const INFINITE: &str = "Character I is neither a decimal digit number, decimal point, nor \
                            \"e\" notation exponential mark.";

    /// The answers of Cassandra 5.0.4 (on Java 17) to these literals in `VALUES`.
    #[test]
    fn refused_as_cassandra_refuses_them() {
        for (text, expected) in [
            ("1E+400", Some(INFINITE)),
            ("1.8E+308", Some(INFINITE)),
            ("-1E+400", Some(INFINITE)),
            ("1e400", Some(INFINITE)),
            ("1.0e400", Some(INFINITE)),
            ("1.7976931348623159E+308", Some(INFINITE)),
            ("-1.7976931348623159E+308", Some(INFINITE)),
            ("1E+2147483647", Some(INFINITE)),
            ("1E+00000000000400", Some(INFINITE)),
            ("1E+12345678901", Some("Too many nonzero exponent digits.")),
            ("1E+99999999999", Some("Too many nonzero exponent digits.")),
            ("1E+9999999999", Some("Exponent overflow.")),
            ("1E-9999999999", Some("Exponent overflow.")),
            ("0E+9999999999", Some("Exponent overflow.")),
            ("1E+2147483648", Some("Exponent overflow.")),
            ("1E-2147483648", Some("Scale out of range.")),
            ("1.5E-2147483647", Some("Scale out of range.")),
        ] {
            assert_eq!(refusal(text), expected, "{text}");
        }
    }

    #[test]
    fn accepted_as_cassandra_accepts_them() {
        for text in [
            "1.7E+308",
            "1.7976931348623157E+308",
            "1.79769313486231580E+308",
            "1E+308",
            "1E-400",
            "4.9E-324",
            "1E-325",
            "0E+400",
            "0.0E+999",
            "1E+00000000000001",
            "1E-00000000000001",
            "123456789012345678901234567890.5",
            "1.",
            "-2.5",
        ] {
            assert_eq!(refusal(text), None, "{text}");
        }
    }
}
