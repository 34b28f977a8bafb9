//! The `auto_repair` section (named after Cassandra 5.1's CEP-37 `AutoRepairConfig`): Helenus's
//! built-in repair scheduler, off by default.
//!
//! ```yaml
//! auto_repair:
//!   enabled: true              # the scheduler runs on this node (default false)
//!   repair_check_interval: 5m  # how often it looks for a range that is due (default 5m)
//!   min_repair_interval: 1h    # no range is repaired again sooner (default 1h)
//! ```

use std::time::Duration;

use crate::error::ConfigError;
use crate::spec::format_duration;
use crate::values::Value;
use crate::yaml::Node;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoRepair {
    pub enabled: bool,
    pub repair_check_interval: Duration,
    pub min_repair_interval: Duration,
}

impl Default for AutoRepair {
    fn default() -> Self {
        AutoRepair {
            enabled: false,
            repair_check_interval: Duration::from_secs(300),
            min_repair_interval: Duration::from_secs(3600),
        }
    }
}

impl AutoRepair {
    /// The section's keys read into `self`; an unknown key or a bad value is an error.
    pub(crate) fn apply(&mut self, v: Value) -> Result<(), ConfigError> {
        let Node::Map(entries) = v.node else {
            return Err(v.invalid("expected a mapping of auto_repair settings"));
        };
        for (key, node) in entries {
            let inner = Value {
                key: key.as_str(),
                node,
            };
            match key.as_str() {
                "enabled" => self.enabled = inner.boolean()?,
                "repair_check_interval" => self.repair_check_interval = inner.millis()?,
                "min_repair_interval" => self.min_repair_interval = inner.millis()?,
                _ => return Err(inner.invalid("not an auto_repair setting Helenus knows")),
            }
        }
        Ok(())
    }

    /// The section as `system_views.settings` lists it (`auto_repair.enabled`, ...).
    pub(crate) fn settings(&self) -> Vec<(&'static str, Option<String>)> {
        vec![
            ("auto_repair.enabled", Some(self.enabled.to_string())),
            (
                "auto_repair.repair_check_interval",
                Some(format_duration(self.repair_check_interval)),
            ),
            (
                "auto_repair.min_repair_interval",
                Some(format_duration(self.min_repair_interval)),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use crate::load_str;

    #[test]
    fn the_section_is_read_and_checked() {
        let load = |text: &str| load_str(text, std::path::Path::new("/srv/helenus"));
        let loaded = load(
            "auto_repair:\n  enabled: true\n  repair_check_interval: 2s\n  min_repair_interval: 10s\n",
        )
        .unwrap();
        let auto = &loaded.config.auto_repair;
        assert!(auto.enabled);
        assert_eq!(auto.repair_check_interval.as_secs(), 2);
        assert_eq!(auto.min_repair_interval.as_secs(), 10);
        assert!(!crate::Config::default().auto_repair.enabled);
        let wrong = load("auto_repair:\n  enabled: maybe\n").unwrap_err();
        assert!(wrong.to_string().contains("enabled"), "{wrong}");
        assert!(load("auto_repair:\n  sometimes: true\n").is_err());
        let space = load("repair_session_space: 64MiB\n").unwrap();
        let space = space.config.repair_session_space.map(|s| s.as_bytes());
        assert_eq!(space, Some(64 << 20));
    }
}
