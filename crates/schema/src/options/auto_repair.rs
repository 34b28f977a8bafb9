//! `auto_repair`: the table's part in the built-in repair scheduler, as Cassandra 5.1's
//! (trunk, CEP-37) `AutoRepairParams`: `{'full_enabled': 'true', 'incremental_enabled':
//! 'true', 'preview_repaired_enabled': 'true', 'priority': '0'}`. A table that never set it
//! holds an empty map (Helenus then leaves the choice to `nodetool setautorepairconfig`); one
//! that did holds every sub-option, the ones not given at their defaults, as trunk stores it.

use std::collections::BTreeMap;

use crate::error::SchemaError;

pub(crate) const FULL_ENABLED: &str = "full_enabled";
pub(crate) const INCREMENTAL_ENABLED: &str = "incremental_enabled";
const PREVIEW_REPAIRED_ENABLED: &str = "preview_repaired_enabled";
const PRIORITY: &str = "priority";

const DEFAULTS: [(&str, &str); 4] = [
    (FULL_ENABLED, "true"),
    (INCREMENTAL_ENABLED, "true"),
    (PREVIEW_REPAIRED_ENABLED, "true"),
    (PRIORITY, "0"),
];

/// The sub-options given, over the defaults, checked with trunk's messages.
pub(crate) fn parse_auto_repair(
    entries: &[(String, String)],
) -> Result<BTreeMap<String, String>, SchemaError> {
    let mut options: BTreeMap<String, String> = DEFAULTS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (key, value) in entries {
        let key = key.to_ascii_lowercase();
        if !options.contains_key(&key) {
            return Err(SchemaError::Config(format!("Unknown property '{key}'")));
        }
        options.insert(key, value.clone());
    }
    for (key, value) in &options {
        let valid = if key == PRIORITY {
            !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
        } else {
            value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false")
        };
        if !valid {
            let kind = if key == PRIORITY {
                "an integer"
            } else {
                "a boolean"
            };
            return Err(SchemaError::Config(format!(
                "Invalid value {value} for '{key}' repair sub-option - must be {kind}"
            )));
        }
    }
    Ok(options)
}

/// What a table's `auto_repair` says of the scheduler's repairs of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoRepairSetting {
    pub full: bool,
    pub incremental: bool,
    /// Tables of a higher priority are repaired first.
    pub priority: u32,
}

/// The setting of a table's `auto_repair` map, `None` when the table never set it.
pub fn auto_repair_setting(options: &BTreeMap<String, String>) -> Option<AutoRepairSetting> {
    if options.is_empty() {
        return None;
    }
    let flag = |key: &str| {
        options
            .get(key)
            .is_none_or(|v| v.eq_ignore_ascii_case("true"))
    };
    Some(AutoRepairSetting {
        full: flag(FULL_ENABLED),
        incremental: flag(INCREMENTAL_ENABLED),
        priority: options
            .get(PRIORITY)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::owned_pairs;

    #[test]
    fn sub_options_fill_in_defaults_and_are_checked() {
        let parsed = parse_auto_repair(&owned_pairs(&[("incremental_enabled", "false")])).unwrap();
        assert_eq!(parsed.get("incremental_enabled").unwrap(), "false");
        assert_eq!(parsed.get("full_enabled").unwrap(), "true");
        assert_eq!(parsed.get("priority").unwrap(), "0");
        let setting = auto_repair_setting(&parsed).unwrap();
        assert!(setting.full && !setting.incremental);

        let unknown = parse_auto_repair(&owned_pairs(&[("enabled", "true")]));
        assert_eq!(
            unknown,
            Err(SchemaError::Config("Unknown property 'enabled'".into()))
        );
        let bad = parse_auto_repair(&owned_pairs(&[("full_enabled", "maybe")]));
        assert_eq!(
            bad,
            Err(SchemaError::Config(
                "Invalid value maybe for 'full_enabled' repair sub-option - must be a boolean"
                    .into()
            ))
        );
        let priority = parse_auto_repair(&owned_pairs(&[("priority", "-1")]));
        assert!(priority.is_err());
        assert_eq!(auto_repair_setting(&BTreeMap::new()), None);
    }
}
