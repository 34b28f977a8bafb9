//! The errors configuration loading and validation report, each naming the key at fault.

use std::path::PathBuf;

/// Why a configuration could not be loaded or is not acceptable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read (or the working directory could not be found).
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The text is not YAML, or its top level is not a mapping.
    #[error("Invalid yaml: {0}")]
    Yaml(String),
    /// Keys neither Cassandra 5.0 nor Helenus knows (Cassandra refuses to start on them too).
    #[error("Invalid yaml. Please remove properties {} from your cassandra.yaml", bracketed(.0))]
    UnknownKeys(Vec<String>),
    /// An old key and its new name are both set (`old -> new` pairs).
    #[error(
        "Config contains both old and new keys for the same configuration parameters, migrate old -> new: {}",
        bracketed(.0)
    )]
    Conflicting(Vec<String>),
    /// A value that does not parse or is out of range for its key.
    #[error("Invalid value '{value}' for {key}: {reason}")]
    Invalid {
        key: String,
        value: String,
        reason: String,
    },
}

impl ConfigError {
    /// An [`ConfigError::Invalid`] for `key` holding `value`.
    pub fn invalid(key: &str, value: impl ToString, reason: impl ToString) -> Self {
        ConfigError::Invalid {
            key: key.to_string(),
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }
}

fn bracketed(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_message_matches_cassandra() {
        let err = ConfigError::UnknownKeys(vec!["foo".into(), "bar".into()]);
        assert_eq!(
            err.to_string(),
            "Invalid yaml. Please remove properties [foo, bar] from your cassandra.yaml"
        );
    }

    #[test]
    fn invalid_names_key_and_value() {
        let err = ConfigError::invalid("num_tokens", "abc", "not an integer");
        assert_eq!(
            err.to_string(),
            "Invalid value 'abc' for num_tokens: not an integer"
        );
    }
}
