//! The error type of the ring crate: malformed keys and invalid replication options.

/// A malformed partition key or an invalid replication setting. Messages read like Cassandra's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RingError {
    /// A composite partition key whose bytes do not split into the expected components.
    #[error("{0}")]
    MalformedKey(String),
    /// Replication options Cassandra would reject with a ConfigurationException.
    #[error("{0}")]
    Config(String),
}
