//! The application-state keys a node advertises through gossip: Cassandra's `ApplicationState`
//! names in lower case. Only liveness and advertised facts live here; tokens and schema are
//! authoritative in the `metadata` crate.

use std::fmt;

pub const HOST_ID: &str = "host_id";
pub const DC: &str = "dc";
pub const RACK: &str = "rack";
pub const NATIVE_ADDRESS: &str = "native_address";
pub const NATIVE_PORT: &str = "native_port";
pub const RELEASE_VERSION: &str = "release_version";
pub const SCHEMA_VERSION: &str = "schema_version";
pub const LOAD: &str = "load";
pub const STATUS: &str = "status";
/// `true` once the node serves CQL (drivers are told NEW_NODE/UP only then).
pub const RPC_READY: &str = "rpc_ready";
pub const NET_VERSION: &str = "net_version";

/// The value of the `status` key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    Starting,
    Normal,
    Leaving,
    Left,
    /// Announced by a node that stops gossip cleanly: peers mark it down at once.
    Shutdown,
}

impl Status {
    /// The text Cassandra gossips for this status (`shutdown` is lower case there too).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Starting => "STARTING",
            Status::Normal => "NORMAL",
            Status::Leaving => "LEAVING",
            Status::Left => "LEFT",
            Status::Shutdown => "shutdown",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        [
            Status::Starting,
            Status::Normal,
            Status::Leaving,
            Status::Left,
            Status::Shutdown,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_text_round_trips_with_cassandra_spelling() {
        for (status, text) in [
            (Status::Starting, "STARTING"),
            (Status::Normal, "NORMAL"),
            (Status::Leaving, "LEAVING"),
            (Status::Left, "LEFT"),
            (Status::Shutdown, "shutdown"),
        ] {
            assert_eq!(status.as_str(), text);
            assert_eq!(Status::parse(text), Some(status));
            assert_eq!(status.to_string(), text);
        }
    }

    #[test]
    fn unknown_status_text_is_not_a_status() {
        assert_eq!(Status::parse("SHUTDOWN"), None);
        assert_eq!(Status::parse("normal"), None);
        assert_eq!(Status::parse(""), None);
    }
}
