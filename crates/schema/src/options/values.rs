//! Parsing option values the way Cassandra's `PropertyDefinitions` does (booleans, integers,
//! doubles, with its error messages) and printing doubles the way Java does.
use super::OptionValue;
use crate::error::SchemaError;

/// The option's value as a string, or Cassandra's error when it is a map.
pub(crate) fn constant<'a>(name: &str, value: &'a OptionValue) -> Result<&'a str, SchemaError> {
    match value {
        OptionValue::Constant(text) => Ok(text),
        OptionValue::Map(_) => Err(SchemaError::Syntax(format!(
            "Invalid value for property '{name}'. It should be a string"
        ))),
    }
}

/// The option's value as a map, or Cassandra's error when it is a string.
pub(crate) fn map<'a>(
    name: &str,
    value: &'a OptionValue,
) -> Result<&'a [(String, String)], SchemaError> {
    match value {
        OptionValue::Map(entries) => Ok(entries),
        OptionValue::Constant(_) => Err(SchemaError::Syntax(format!(
            "Invalid value for property '{name}'. It should be a map."
        ))),
    }
}

pub(crate) fn parse_bool(name: &str, text: &str) -> Result<bool, SchemaError> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err(SchemaError::Syntax(format!(
            "Invalid boolean value {text} for '{name}'. Positive values can be '1', 'true' or \
             'yes'. Negative values can be '0', 'false' or 'no'."
        ))),
    }
}

pub(crate) fn parse_int(name: &str, text: &str) -> Result<i32, SchemaError> {
    text.parse()
        .map_err(|_| SchemaError::Syntax(format!("Invalid integer value {text} for '{name}'")))
}

pub(crate) fn parse_double(name: &str, text: &str) -> Result<f64, SchemaError> {
    text.trim()
        .parse()
        .map_err(|_| SchemaError::Syntax(format!("Invalid double value {text} for '{name}'")))
}

/// `value` as Java's `Double.toString` prints it: `0.01`, `1.0`, `6.71E-5`.
pub fn java_double(value: f64) -> String {
    if !value.is_finite() {
        return if value.is_nan() {
            "NaN".into()
        } else if value > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let magnitude = value.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        let text = format!("{value}");
        return if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        };
    }
    let text = format!("{value:E}");
    match text.split_once('E') {
        Some((mantissa, exponent)) if !mantissa.contains('.') => format!("{mantissa}.0E{exponent}"),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_accept_cassandra_words() -> Result<(), SchemaError> {
        assert!(parse_bool("cdc", "YES")?);
        assert!(parse_bool("cdc", "1")?);
        assert!(!parse_bool("cdc", "no")?);
        assert_eq!(
            parse_bool("cdc", "maybe").err().map(|e| e.to_string()),
            Some("Invalid boolean value maybe for 'cdc'. Positive values can be '1', 'true' or 'yes'. Negative values can be '0', 'false' or 'no'.".to_string())
        );
        Ok(())
    }

    #[test]
    fn numbers_report_the_option() {
        assert_eq!(parse_int("gc_grace_seconds", "-5"), Ok(-5));
        assert_eq!(
            parse_int("gc_grace_seconds", "abc")
                .err()
                .map(|e| e.to_string()),
            Some("Invalid integer value abc for 'gc_grace_seconds'".to_string())
        );
        assert_eq!(parse_double("crc_check_chance", "0.5"), Ok(0.5));
        assert!(parse_double("crc_check_chance", "x").is_err());
    }

    #[test]
    fn doubles_print_like_java() {
        assert_eq!(java_double(0.01), "0.01");
        assert_eq!(java_double(1.0), "1.0");
        assert_eq!(java_double(2.0), "2.0");
        assert_eq!(java_double(0.1), "0.1");
        assert_eq!(java_double(6.71e-5), "6.71E-5");
        assert_eq!(java_double(2e10), "2.0E10");
        assert_eq!(java_double(0.0), "0.0");
    }
}
