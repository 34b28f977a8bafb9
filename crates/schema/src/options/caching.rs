//! The `caching` option: `keys` ('ALL'/'NONE') and `rows_per_partition` ('ALL'/'NONE'/count).
use crate::error::SchemaError;
use std::collections::BTreeMap;

/// The default caching map: all keys, no rows.
pub(crate) fn default_caching() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("keys".to_string(), "ALL".to_string()),
        ("rows_per_partition".to_string(), "NONE".to_string()),
    ])
}

/// Validates a `caching = {...}` map; absent sub-options are 'NONE', as in Cassandra.
pub(crate) fn parse_caching(
    entries: &[(String, String)],
) -> Result<BTreeMap<String, String>, SchemaError> {
    let unknown: Vec<&str> = entries
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| *k != "keys" && *k != "rows_per_partition")
        .collect();
    if !unknown.is_empty() {
        return Err(SchemaError::Config(format!(
            "Invalid caching sub-options [{}]: only 'keys' and 'rows_per_partition' are allowed",
            unknown.join(", ")
        )));
    }
    let get = |key: &str| {
        entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let keys = parse_keys(get("keys").unwrap_or("NONE"))?;
    let rows = parse_rows(get("rows_per_partition").unwrap_or("NONE"))?;
    Ok(BTreeMap::from([
        ("keys".to_string(), keys),
        ("rows_per_partition".to_string(), rows),
    ]))
}

fn parse_keys(text: &str) -> Result<String, SchemaError> {
    let upper = text.to_ascii_uppercase();
    if upper == "ALL" || upper == "NONE" {
        return Ok(upper);
    }
    Err(SchemaError::Config(format!(
        "Invalid value '{text}' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"
    )))
}

fn parse_rows(text: &str) -> Result<String, SchemaError> {
    let upper = text.to_ascii_uppercase();
    if upper == "ALL" || upper == "NONE" {
        return Ok(upper);
    }
    match text.parse::<i32>() {
        Ok(count) if count >= 0 => Ok(count.to_string()),
        _ => Err(SchemaError::Config(format!(
            "Invalid value '{text}' for caching sub-option 'rows_per_partition': only 'ALL', \
             'NONE', and integer values are allowed"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(entries: &[(&str, &str)]) -> Result<BTreeMap<String, String>, SchemaError> {
        parse_caching(&crate::options::owned_pairs(entries))
    }

    #[test]
    fn absent_sub_options_are_none() -> Result<(), SchemaError> {
        let rows_only = parse(&[("rows_per_partition", "ALL")])?;
        assert_eq!(rows_only.get("keys").map(String::as_str), Some("NONE"));
        assert_eq!(
            rows_only.get("rows_per_partition").map(String::as_str),
            Some("ALL")
        );
        let counted = parse(&[("keys", "all"), ("rows_per_partition", "10")])?;
        assert_eq!(counted.get("keys").map(String::as_str), Some("ALL"));
        assert_eq!(
            counted.get("rows_per_partition").map(String::as_str),
            Some("10")
        );
        Ok(())
    }

    #[test]
    fn errors_match_cassandra() {
        let message =
            |e: &[(&str, &str)]| parse(e).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            message(&[("keys", "SOME")]),
            "Invalid value 'SOME' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"
        );
        assert_eq!(
            message(&[("rows_per_partition", "x")]),
            "Invalid value 'x' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer values are allowed"
        );
        assert_eq!(
            message(&[("foo", "1")]),
            "Invalid caching sub-options [foo]: only 'keys' and 'rows_per_partition' are allowed"
        );
    }
}
