//! `SchemaError`: everything that can go wrong building, validating or loading schema, with
//! messages worded like Cassandra's.
use thiserror::Error;

/// A schema error. `Syntax`, `Invalid` and `Config` carry Cassandra's message verbatim; the
/// layer above maps `Syntax`/`Invalid` to an invalid-query error, `Config` to a configuration
/// error and `AlreadyExists` to the protocol's already-exists error.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SchemaError {
    /// Cassandra's `SyntaxException` (unknown property, unparsable number...).
    #[error("{0}")]
    Syntax(String),
    /// Cassandra's `ConfigurationException` (option out of range, unknown class...).
    #[error("{0}")]
    Config(String),
    /// Cassandra's `InvalidRequestException` (bad table definition...).
    #[error("{0}")]
    Invalid(String),
    /// A keyspace (`table: None`) or table that already exists.
    #[error("{}", already_exists_message(keyspace, table.as_deref()))]
    AlreadyExists {
        keyspace: String,
        table: Option<String>,
    },
    /// A `system_schema` row that cannot be turned back into metadata.
    #[error("Invalid schema row in system_schema.{table}: {reason}")]
    Corrupt { table: &'static str, reason: String },
}

fn already_exists_message(keyspace: &str, table: Option<&str>) -> String {
    match table {
        None => format!("Cannot add existing keyspace \"{keyspace}\""),
        Some(table) => {
            format!("Cannot add already existing table \"{table}\" to keyspace \"{keyspace}\"")
        }
    }
}

impl SchemaError {
    pub(crate) fn corrupt(table: &'static str, reason: impl Into<String>) -> SchemaError {
        SchemaError::Corrupt {
            table,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn already_exists_messages() {
        let ks = SchemaError::AlreadyExists {
            keyspace: "ks".into(),
            table: None,
        };
        assert_eq!(ks.to_string(), "Cannot add existing keyspace \"ks\"");
        let table = SchemaError::AlreadyExists {
            keyspace: "ks".into(),
            table: Some("t".into()),
        };
        assert_eq!(
            table.to_string(),
            "Cannot add already existing table \"t\" to keyspace \"ks\""
        );
    }
}
