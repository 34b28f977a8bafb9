//! Options whose values are small policy words: `speculative_retry` and
//! `additional_write_policy` ('99p', '50ms', 'ALWAYS', 'NEVER', 'MIN(99p,50ms)'),
//! `read_repair` ('BLOCKING'/'NONE') and `memtable`.
use crate::error::SchemaError;

/// A speculative retry policy in the canonical form Cassandra stores and prints.
pub(crate) fn parse_retry_policy(option: &str, text: &str) -> Result<String, SchemaError> {
    let invalid = || SchemaError::Config(format!("Invalid value {text} for option '{option}'"));
    let upper = text.trim().to_ascii_uppercase();
    match upper.as_str() {
        "ALWAYS" => return Ok("ALWAYS".into()),
        "NEVER" | "NONE" => return Ok("NEVER".into()),
        _ => {}
    }
    if let Some(hybrid) = parse_hybrid(&upper) {
        return hybrid.ok_or_else(invalid);
    }
    parse_percentile(&upper)
        .or_else(|| parse_fixed(&upper))
        .ok_or_else(invalid)
}

/// `MIN(a,b)` / `MAX(a,b)` with one percentile and one fixed part; `None` when `text` is not
/// a function call at all, `Some(None)` when it is one but malformed.
fn parse_hybrid(text: &str) -> Option<Option<String>> {
    let (function, rest) = text.split_once('(')?;
    if function != "MIN" && function != "MAX" {
        return Some(None);
    }
    let parts = rest
        .strip_suffix(')')
        .and_then(|inner| inner.split_once(','));
    let Some((first, second)) = parts else {
        return Some(None);
    };
    let (first, second) = (first.trim(), second.trim());
    let percentile = parse_percentile(first).or_else(|| parse_percentile(second));
    let fixed = parse_fixed(first).or_else(|| parse_fixed(second));
    Some(
        percentile
            .zip(fixed)
            .map(|(p, f)| format!("{function}({p},{f})")),
    )
}

fn parse_percentile(text: &str) -> Option<String> {
    let number = text
        .strip_suffix("PERCENTILE")
        .or_else(|| text.strip_suffix('P'))?;
    let value: f64 = number.parse().ok()?;
    if !(0.0..=100.0).contains(&value) {
        return None;
    }
    Some(format!("{}p", trim_number(value)))
}

fn parse_fixed(text: &str) -> Option<String> {
    let value: f64 = text.strip_suffix("MS")?.parse().ok()?;
    if !(value >= 0.0 && value.is_finite()) {
        return None;
    }
    Some(format!("{}ms", trim_number(value)))
}

/// `99` for 99.0, `99.5` for 99.5.
fn trim_number(value: f64) -> String {
    format!("{value}")
}

/// `read_repair`: 'BLOCKING' or 'NONE', in upper case.
pub(crate) fn parse_read_repair(text: &str) -> Result<String, SchemaError> {
    let upper = text.to_ascii_uppercase();
    if upper == "BLOCKING" || upper == "NONE" {
        return Ok(upper);
    }
    Err(SchemaError::Config(format!(
        "Invalid value {text} for option 'read_repair'"
    )))
}

/// `memtable`: only the 'default' configuration exists here.
pub(crate) fn parse_memtable(text: &str) -> Result<String, SchemaError> {
    if text == "default" {
        return Ok(text.to_string());
    }
    Err(SchemaError::Config(format!(
        "Memtable configuration \"{text}\" not found."
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry(text: &str) -> Result<String, SchemaError> {
        parse_retry_policy("speculative_retry", text)
    }

    #[test]
    fn canonical_forms_match_cassandra() -> Result<(), SchemaError> {
        assert_eq!(retry("99p")?, "99p");
        assert_eq!(retry("99PERCENTILE")?, "99p");
        assert_eq!(retry("99.5p")?, "99.5p");
        assert_eq!(retry("10ms")?, "10ms");
        assert_eq!(retry("always")?, "ALWAYS");
        assert_eq!(retry("NONE")?, "NEVER");
        assert_eq!(retry("MIN(99p,50ms)")?, "MIN(99p,50ms)");
        assert_eq!(retry("max(50ms, 90p)")?, "MAX(90p,50ms)");
        Ok(())
    }

    #[test]
    fn bad_policies() {
        assert_eq!(
            retry("bogus").err().map(|e| e.to_string()),
            Some("Invalid value bogus for option 'speculative_retry'".to_string())
        );
        assert!(retry("MIN(99p,98p)").is_err());
        assert!(retry("AVG(99p,50ms)").is_err());
        assert!(retry("101p").is_err());
    }

    #[test]
    fn read_repair_and_memtable() {
        assert_eq!(parse_read_repair("none"), Ok("NONE".to_string()));
        assert!(parse_read_repair("x").is_err());
        assert_eq!(parse_memtable("default"), Ok("default".to_string()));
        assert_eq!(
            parse_memtable("foo").err().map(|e| e.to_string()),
            Some("Memtable configuration \"foo\" not found.".to_string())
        );
    }
}
