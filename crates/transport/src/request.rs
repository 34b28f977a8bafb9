//! Decoding of request message bodies (spec §4.1) into [`Request`].
use crate::header::{Opcode, FLAG_CUSTOM_PAYLOAD};
use crate::options::{optional, read_flags, read_positional, read_query_options};
use crate::options::{KEYSPACE, NAMED_VALUES, NOW_IN_SECONDS, SERIAL_CONSISTENCY, TIMESTAMP};
use crate::wire::{DecodeError, DecodeResult, Reader};
use bytes::Bytes;
use types::request::{BatchKind, BatchRequest, BatchStatement, QueryOptions};

/// The event types a client can REGISTER for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    TopologyChange = 0x01,
    StatusChange = 0x02,
    SchemaChange = 0x04,
}

impl EventKind {
    fn parse(name: &str) -> DecodeResult<EventKind> {
        match name {
            "TOPOLOGY_CHANGE" => Ok(EventKind::TopologyChange),
            "STATUS_CHANGE" => Ok(EventKind::StatusChange),
            "SCHEMA_CHANGE" => Ok(EventKind::SchemaChange),
            _ => Err(DecodeError(format!("Invalid event type {name}"))),
        }
    }
}

/// A decoded request message.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    Startup(Vec<(String, String)>),
    Options,
    Query {
        query: String,
        options: QueryOptions,
    },
    Prepare {
        query: String,
        keyspace: Option<String>,
    },
    Execute {
        id: Bytes,
        result_metadata_id: Option<Bytes>,
        options: QueryOptions,
    },
    Batch(BatchRequest),
    Register(Vec<EventKind>),
    AuthResponse(Option<Bytes>),
}

/// Decodes the body of a request with the given header flags and opcode.
pub fn decode_request(version: u8, flags: u8, op: Opcode, body: Bytes) -> DecodeResult<Request> {
    let mut r = Reader::new(body);
    if flags & FLAG_CUSTOM_PAYLOAD != 0 {
        r.skip_bytes_map()?;
    }
    match op {
        Opcode::Startup => Ok(Request::Startup(r.string_map()?)),
        Opcode::Options => Ok(Request::Options),
        Opcode::Query => Ok(Request::Query {
            query: r.long_string()?,
            options: read_query_options(&mut r, version)?,
        }),
        Opcode::Prepare => read_prepare(&mut r, version),
        Opcode::Execute => read_execute(&mut r, version),
        Opcode::Batch => read_batch(&mut r, version).map(Request::Batch),
        Opcode::Register => read_register(&mut r),
        Opcode::AuthResponse => Ok(Request::AuthResponse(r.bytes()?)),
        other => Err(DecodeError(format!("{} is not a request", other.name()))),
    }
}

fn read_prepare(r: &mut Reader, version: u8) -> DecodeResult<Request> {
    let query = r.long_string()?;
    let flags = if version >= 5 { r.int()? as u32 } else { 0 };
    let keyspace = optional(flags & 0x01, || r.string())?;
    Ok(Request::Prepare { query, keyspace })
}

fn read_execute(r: &mut Reader, version: u8) -> DecodeResult<Request> {
    let id = r.short_bytes()?;
    let result_metadata_id = if version >= 5 {
        Some(r.short_bytes()?)
    } else {
        None
    };
    let options = read_query_options(r, version)?;
    Ok(Request::Execute {
        id,
        result_metadata_id,
        options,
    })
}

fn read_register(r: &mut Reader) -> DecodeResult<Request> {
    let names = r.string_list()?;
    let kinds = names.iter().map(|n| EventKind::parse(n));
    Ok(Request::Register(kinds.collect::<DecodeResult<_>>()?))
}

fn read_batch_kind(r: &mut Reader) -> DecodeResult<BatchKind> {
    match r.byte()? {
        0 => Ok(BatchKind::Logged),
        1 => Ok(BatchKind::Unlogged),
        2 => Ok(BatchKind::Counter),
        k => Err(DecodeError(format!("Invalid BATCH message type {k}"))),
    }
}

fn read_batch_statement(r: &mut Reader, version: u8) -> DecodeResult<BatchStatement> {
    match r.byte()? {
        0 => {
            let query = r.long_string()?;
            Ok(BatchStatement::Query {
                query,
                values: read_positional(r, version)?,
            })
        }
        1 => {
            let id = r.short_bytes()?;
            Ok(BatchStatement::Prepared {
                id,
                values: read_positional(r, version)?,
            })
        }
        k => Err(DecodeError(format!(
            "Invalid query kind in BATCH messages. Must be 0 or 1 but got {k}"
        ))),
    }
}

fn read_batch(r: &mut Reader, version: u8) -> DecodeResult<BatchRequest> {
    let kind = read_batch_kind(r)?;
    let n = r.short()?;
    let statements = (0..n)
        .map(|_| read_batch_statement(r, version))
        .collect::<DecodeResult<Vec<_>>>()?;
    let consistency = r.consistency()?;
    let flags = read_flags(r, version)?;
    if flags & NAMED_VALUES != 0 {
        return Err(DecodeError(
            "Named values in BATCH are not supported".into(),
        ));
    }
    Ok(BatchRequest {
        kind,
        statements,
        consistency,
        serial_consistency: optional(flags & SERIAL_CONSISTENCY, || r.consistency())?,
        timestamp: optional(flags & TIMESTAMP, || r.long())?,
        keyspace: optional(flags & KEYSPACE, || r.string())?,
        now_in_seconds: optional(flags & NOW_IN_SECONDS, || r.int())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::tests::{encode as encode_options, put_values};
    use crate::wire::{put_short_bytes, put_string, put_string_list};
    use bytes::{BufMut, BytesMut};
    use types::request::{BoundValue, Values};
    use types::Consistency;

    fn long_string(out: &mut BytesMut, s: &str) {
        out.put_i32(s.len() as i32);
        out.put_slice(s.as_bytes());
    }

    fn decode(version: u8, op: Opcode, body: BytesMut) -> DecodeResult<Request> {
        decode_request(version, 0, op, body.freeze())
    }

    #[test]
    fn startup_and_options() {
        let mut body = BytesMut::new();
        body.put_u16(2);
        put_string(&mut body, "CQL_VERSION");
        put_string(&mut body, "3.0.0");
        put_string(&mut body, "COMPRESSION");
        put_string(&mut body, "lz4");
        let expected = vec![
            ("CQL_VERSION".to_string(), "3.0.0".to_string()),
            ("COMPRESSION".to_string(), "lz4".to_string()),
        ];
        assert_eq!(
            decode(4, Opcode::Startup, body).unwrap(),
            Request::Startup(expected)
        );
        assert_eq!(
            decode(4, Opcode::Options, BytesMut::new()).unwrap(),
            Request::Options
        );
    }

    #[test]
    fn query_with_custom_payload() {
        let mut body = BytesMut::new();
        body.put_u16(1);
        put_string(&mut body, "key");
        body.put_i32(1);
        body.put_u8(9);
        long_string(&mut body, "SELECT 1");
        body.put_slice(&encode_options(&QueryOptions::default(), 4));
        let req = decode_request(4, FLAG_CUSTOM_PAYLOAD, Opcode::Query, body.freeze()).unwrap();
        assert_eq!(
            req,
            Request::Query {
                query: "SELECT 1".into(),
                options: QueryOptions::default()
            }
        );
    }

    #[test]
    fn prepare_v4_and_v5_keyspace() {
        let mut v4 = BytesMut::new();
        long_string(&mut v4, "SELECT");
        assert_eq!(
            decode(4, Opcode::Prepare, v4).unwrap(),
            Request::Prepare {
                query: "SELECT".into(),
                keyspace: None
            }
        );
        let mut v5 = BytesMut::new();
        long_string(&mut v5, "SELECT");
        v5.put_i32(1);
        put_string(&mut v5, "ks");
        assert_eq!(
            decode(5, Opcode::Prepare, v5).unwrap(),
            Request::Prepare {
                query: "SELECT".into(),
                keyspace: Some("ks".into())
            }
        );
    }

    #[test]
    fn execute_v4_and_v5() {
        let opts = QueryOptions {
            values: Values::Positional(vec![BoundValue::Unset]),
            ..QueryOptions::default()
        };
        let mut v4 = BytesMut::new();
        put_short_bytes(&mut v4, b"id");
        v4.put_slice(&encode_options(&opts, 4));
        let expected = Request::Execute {
            id: Bytes::from_static(b"id"),
            result_metadata_id: None,
            options: opts.clone(),
        };
        assert_eq!(decode(4, Opcode::Execute, v4).unwrap(), expected);
        let mut v5 = BytesMut::new();
        put_short_bytes(&mut v5, b"id");
        put_short_bytes(&mut v5, b"md");
        v5.put_slice(&encode_options(&opts, 5));
        let Request::Execute {
            result_metadata_id, ..
        } = decode(5, Opcode::Execute, v5).unwrap()
        else {
            panic!("not an execute")
        };
        assert_eq!(result_metadata_id, Some(Bytes::from_static(b"md")));
    }

    fn batch_body(version: u8, flags: u32) -> BytesMut {
        let mut b = BytesMut::new();
        b.put_u8(1);
        b.put_u16(2);
        b.put_u8(0);
        long_string(&mut b, "INSERT");
        put_values(&mut b, [(None, &BoundValue::Null)].into_iter());
        b.put_u8(1);
        put_short_bytes(&mut b, b"pid");
        b.put_u16(0);
        b.put_u16(Consistency::Quorum as u16);
        if version >= 5 {
            b.put_u32(flags);
        } else {
            b.put_u8(flags as u8);
        }
        if flags & SERIAL_CONSISTENCY != 0 {
            b.put_u16(Consistency::Serial as u16);
        }
        if flags & TIMESTAMP != 0 {
            b.put_i64(77);
        }
        if flags & KEYSPACE != 0 {
            put_string(&mut b, "ks");
        }
        if flags & NOW_IN_SECONDS != 0 {
            b.put_i32(5);
        }
        b
    }

    #[test]
    fn batch_v4_and_v5_flags() {
        let Request::Batch(b) = decode(4, Opcode::Batch, batch_body(4, 0x30)).unwrap() else {
            panic!("not a batch")
        };
        assert_eq!(b.kind, BatchKind::Unlogged);
        assert_eq!(b.statements.len(), 2);
        assert_eq!(
            b.statements[0],
            BatchStatement::Query {
                query: "INSERT".into(),
                values: vec![BoundValue::Null]
            }
        );
        assert_eq!(b.consistency, Consistency::Quorum);
        assert_eq!(b.serial_consistency, Some(Consistency::Serial));
        assert_eq!(b.timestamp, Some(77));
        let Request::Batch(b5) = decode(5, Opcode::Batch, batch_body(5, 0x1b0)).unwrap() else {
            panic!("not a batch")
        };
        assert_eq!(b5.keyspace.as_deref(), Some("ks"));
        assert_eq!(b5.now_in_seconds, Some(5));
        assert!(decode(4, Opcode::Batch, batch_body(4, 0x40)).is_err());
    }

    #[test]
    fn register_and_auth_response() {
        let mut body = BytesMut::new();
        put_string_list(&mut body, &["SCHEMA_CHANGE", "STATUS_CHANGE"]);
        assert_eq!(
            decode(4, Opcode::Register, body).unwrap(),
            Request::Register(vec![EventKind::SchemaChange, EventKind::StatusChange])
        );
        let mut bad = BytesMut::new();
        put_string_list(&mut bad, &["NOPE"]);
        assert!(decode(4, Opcode::Register, bad).is_err());
        let mut auth = BytesMut::new();
        auth.put_i32(-1);
        assert_eq!(
            decode(4, Opcode::AuthResponse, auth).unwrap(),
            Request::AuthResponse(None)
        );
    }

    #[test]
    fn responses_are_not_requests() {
        assert!(decode(4, Opcode::Result, BytesMut::new()).is_err());
    }
}
