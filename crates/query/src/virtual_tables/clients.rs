//! `system_views.clients`: one row per live native-protocol connection, keyed by the
//! client's address and port.
use std::net::SocketAddr;

use schema::Row as ValueRow;
use types::{CqlResult, Value};

use super::{row, text, NodeView, VirtualTable};

/// What the transport knows about one connection.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectedClient {
    pub address: SocketAddr,
    /// `None` until STARTUP fixed the protocol version.
    pub protocol_version: Option<u8>,
    pub driver_name: Option<String>,
    pub driver_version: Option<String>,
    /// The keyspace set by `USE`.
    pub keyspace: Option<String>,
    /// Requests received so far.
    pub request_count: u64,
    /// The options the client sent in STARTUP.
    pub options: Vec<(String, String)>,
}

pub(super) struct Clients;

impl VirtualTable for Clients {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_views", "clients")
    }

    fn rows(&self, node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        let Some(clients) = &node.sources.clients else {
            return Ok(Vec::new());
        };
        Ok(clients().iter().map(client_row).collect())
    }
}

/// Cassandra's connection stage: `ready` once STARTUP succeeded (Helenus has no
/// authentication step), `established` before.
fn stage(client: &ConnectedClient) -> &'static str {
    match client.protocol_version {
        Some(_) => "ready",
        None => "established",
    }
}

fn client_row(client: &ConnectedClient) -> ValueRow {
    let options = client
        .options
        .iter()
        .map(|(k, v)| (Value::Text(k.clone()), Value::Text(v.clone())))
        .collect();
    let count = i64::try_from(client.request_count).unwrap_or(i64::MAX);
    row(vec![
        ("address", Some(Value::Inet(client.address.ip()))),
        ("port", Some(Value::Int(i32::from(client.address.port())))),
        ("client_options", Some(Value::Map(options))),
        ("connection_stage", text(stage(client))),
        ("driver_name", client.driver_name.as_deref().and_then(text)),
        (
            "driver_version",
            client.driver_version.as_deref().and_then(text),
        ),
        ("keyspace_name", client.keyspace.as_deref().and_then(text)),
        (
            "protocol_version",
            client.protocol_version.map(|v| Value::Int(i32::from(v))),
        ),
        ("request_count", Some(Value::Bigint(count))),
        ("ssl_enabled", Some(Value::Boolean(false))),
        // Without authentication every client is Cassandra's anonymous user.
        ("username", text("anonymous")),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_client_is_ready_with_its_driver() {
        let client = ConnectedClient {
            address: "127.0.0.1:5000".parse().expect("address"),
            protocol_version: Some(5),
            driver_name: Some("d".into()),
            driver_version: Some("1".into()),
            keyspace: None,
            request_count: 3,
            options: vec![("CQL_VERSION".into(), "3.0.0".into())],
        };
        let r = client_row(&client);
        assert_eq!(r.get("port"), Some(&Some(Value::Int(5000))));
        assert_eq!(r.get("connection_stage"), Some(&text("ready")));
        assert_eq!(r.get("protocol_version"), Some(&Some(Value::Int(5))));
        assert_eq!(r.get("request_count"), Some(&Some(Value::Bigint(3))));
        assert!(!r.contains_key("keyspace_name"));
        let fresh = ConnectedClient {
            protocol_version: None,
            ..client
        };
        assert_eq!(
            client_row(&fresh).get("connection_stage"),
            Some(&text("established"))
        );
    }
}
