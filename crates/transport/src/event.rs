//! Server-pushed events (spec §4.2.6) and their EVENT bodies.
use crate::request::EventKind;
use crate::result::write_schema_change;
use crate::wire::{put_inet, put_string};
use bytes::BytesMut;
use std::net::SocketAddr;
use types::result::SchemaChange;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyChangeKind {
    NewNode,
    RemovedNode,
}

/// An event the node publishes; delivered to connections that REGISTERed for its kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    SchemaChange(SchemaChange),
    TopologyChange {
        change: TopologyChangeKind,
        addr: SocketAddr,
    },
    StatusChange {
        up: bool,
        addr: SocketAddr,
    },
}

impl Event {
    pub fn kind(&self) -> EventKind {
        match self {
            Event::SchemaChange(_) => EventKind::SchemaChange,
            Event::TopologyChange { .. } => EventKind::TopologyChange,
            Event::StatusChange { .. } => EventKind::StatusChange,
        }
    }

    /// Writes the EVENT body.
    pub fn write_body(&self, out: &mut BytesMut) {
        match self {
            Event::SchemaChange(sc) => {
                put_string(out, "SCHEMA_CHANGE");
                write_schema_change(out, sc);
            }
            Event::TopologyChange { change, addr } => {
                put_string(out, "TOPOLOGY_CHANGE");
                put_string(
                    out,
                    match change {
                        TopologyChangeKind::NewNode => "NEW_NODE",
                        TopologyChangeKind::RemovedNode => "REMOVED_NODE",
                    },
                );
                put_inet(out, *addr);
            }
            Event::StatusChange { up, addr } => {
                put_string(out, "STATUS_CHANGE");
                put_string(out, if *up { "UP" } else { "DOWN" });
                put_inet(out, *addr);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Reader;

    #[test]
    fn status_change_body() {
        let e = Event::StatusChange {
            up: false,
            addr: "127.0.0.1:9042".parse().unwrap(),
        };
        assert_eq!(e.kind(), EventKind::StatusChange);
        let mut out = BytesMut::new();
        e.write_body(&mut out);
        let mut r = Reader::new(out.freeze());
        assert_eq!(r.string().unwrap(), "STATUS_CHANGE");
        assert_eq!(r.string().unwrap(), "DOWN");
        assert_eq!(r.byte().unwrap(), 4);
        r.take(4).unwrap();
        assert_eq!(r.int().unwrap(), 9042);
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn topology_change_body() {
        let e = Event::TopologyChange {
            change: TopologyChangeKind::NewNode,
            addr: "[::1]:9042".parse().unwrap(),
        };
        let mut out = BytesMut::new();
        e.write_body(&mut out);
        let mut r = Reader::new(out.freeze());
        assert_eq!(r.string().unwrap(), "TOPOLOGY_CHANGE");
        assert_eq!(r.string().unwrap(), "NEW_NODE");
        assert_eq!(r.byte().unwrap(), 16);
    }
}
