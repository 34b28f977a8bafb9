//! The `-Dcassandra.*` system properties Helenus honours from `JVM_OPTS` and `JVM_EXTRA_OPTS`,
//! as operators pass them to Cassandra (`JVM_EXTRA_OPTS="-Dcassandra.replace_address_first_boot=10.0.0.7"`):
//! `replace_address_first_boot` (and the older `replace_address`), `ring_delay_ms` and
//! `consistent.rangemovement`. Other properties are ignored.

use std::time::Duration;

use crate::config::Config;
use crate::error::ConfigError;
use crate::values::resolve;

/// Applies the properties found in `options` (whitespace-separated JVM arguments).
pub fn apply_jvm_options(config: &mut Config, options: &str) -> Result<(), ConfigError> {
    for word in options.split_whitespace() {
        let Some((name, value)) = word
            .strip_prefix("-Dcassandra.")
            .and_then(|p| p.split_once('='))
        else {
            continue;
        };
        let invalid = |why: &str| ConfigError::invalid(&format!("-Dcassandra.{name}"), value, why);
        match name {
            "replace_address_first_boot" | "replace_address" => {
                let addr = resolve(value).ok_or_else(|| invalid("not an IP address"))?;
                config.replace_address_first_boot = Some(addr);
            }
            "ring_delay_ms" => {
                let ms = value
                    .parse()
                    .map_err(|_| invalid("not a number of milliseconds"))?;
                config.ring_delay = Duration::from_millis(ms);
            }
            "consistent.rangemovement" => {
                config.consistent_rangemovement = match value {
                    "true" => true,
                    "false" => false,
                    _ => return Err(invalid("not true or false")),
                };
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_address_and_ring_delay_come_from_system_properties() {
        let mut config = Config::default();
        apply_jvm_options(
            &mut config,
            "-Xmx4G -Dcassandra.replace_address_first_boot=127.0.0.9 -Dcassandra.ring_delay_ms=500 -Dother=1",
        )
        .expect("valid options");
        assert_eq!(
            config.replace_address_first_boot,
            Some("127.0.0.9".parse().unwrap())
        );
        assert_eq!(config.ring_delay, Duration::from_millis(500));
        let mut older = Config::default();
        apply_jvm_options(&mut older, "-Dcassandra.replace_address=10.1.2.3").expect("valid");
        assert!(older.replace_address_first_boot.is_some());
        let bad = apply_jvm_options(&mut older, "-Dcassandra.ring_delay_ms=soon");
        assert!(bad.is_err());
    }

    #[test]
    fn consistent_range_movement_is_turned_off_by_its_system_property() {
        let mut config = Config::default();
        assert!(config.consistent_rangemovement);
        apply_jvm_options(&mut config, "-Dcassandra.consistent.rangemovement=false")
            .expect("valid");
        assert!(!config.consistent_rangemovement);
        let bad = apply_jvm_options(&mut config, "-Dcassandra.consistent.rangemovement=no");
        assert!(bad.is_err());
    }
}
