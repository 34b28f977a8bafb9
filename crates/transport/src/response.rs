//! Builds complete response envelopes (header + body) in one buffer each.
use crate::error_body::write_error;
use crate::event::Event;
use crate::header::{finish_envelope, start_envelope, Opcode, FLAG_TRACING, FLAG_WARNING};
use crate::result::write_result;
use crate::wire::{put_bytes, put_string, put_string_list};
use bytes::{BufMut, BytesMut};
use types::result::{Outcome, QueryResult};
use types::CqlError;

/// The CQL version we announce in SUPPORTED.
pub const CQL_VERSION: &str = "3.4.7";

fn envelope(
    version: u8,
    flags: u8,
    stream: i16,
    op: Opcode,
    body: impl FnOnce(&mut BytesMut),
) -> BytesMut {
    let mut out = BytesMut::with_capacity(64);
    let start = start_envelope(&mut out, version, flags, stream, op);
    body(&mut out);
    finish_envelope(&mut out, start);
    out
}

pub fn ready(version: u8, stream: i16) -> BytesMut {
    envelope(version, 0, stream, Opcode::Ready, |_| {})
}

/// AUTH_SUCCESS with a null token, as AllowAllAuthenticator's negotiator answers.
pub fn auth_success(version: u8, stream: i16) -> BytesMut {
    envelope(version, 0, stream, Opcode::AuthSuccess, |out| {
        put_bytes(out, None)
    })
}

pub fn supported(version: u8, stream: i16) -> BytesMut {
    envelope(version, 0, stream, Opcode::Supported, |out| {
        out.put_u16(3);
        put_string(out, "CQL_VERSION");
        put_string_list(out, &[CQL_VERSION]);
        put_string(out, "COMPRESSION");
        put_string_list(out, &["lz4"]);
        put_string(out, "PROTOCOL_VERSIONS");
        put_string_list(out, &["3/v3", "4/v4", "5/v5"]);
    })
}

pub fn error(version: u8, stream: i16, err: &CqlError) -> BytesMut {
    envelope(version, 0, stream, Opcode::Error, |out| {
        write_error(out, version, err)
    })
}

pub fn protocol_error(version: u8, stream: i16, message: impl Into<String>) -> BytesMut {
    error(version, stream, &CqlError::Protocol(message.into()))
}

fn rows_size_hint(result: &QueryResult) -> usize {
    match result {
        QueryResult::Rows(rows) => rows.content.len() + 64 * rows.columns.len() + 32,
        _ => 64,
    }
}

/// A RESULT; warnings go out with the warning flag from v4 on, a trace session id (which
/// precedes them) with the tracing flag.
pub fn result(version: u8, stream: i16, outcome: &Outcome) -> BytesMut {
    let warn = version >= 4 && !outcome.warnings.is_empty();
    let mut flags = if warn { FLAG_WARNING } else { 0 };
    if outcome.tracing_id.is_some() {
        flags |= FLAG_TRACING;
    }
    let mut out = BytesMut::with_capacity(rows_size_hint(&outcome.result));
    let start = start_envelope(&mut out, version, flags, stream, Opcode::Result);
    if let Some(id) = &outcome.tracing_id {
        out.put_slice(id.as_bytes());
    }
    if warn {
        put_string_list(&mut out, &outcome.warnings);
    }
    write_result(&mut out, version, &outcome.result);
    finish_envelope(&mut out, start);
    out
}

/// An EVENT, always on stream -1.
pub fn event(version: u8, event: &Event) -> BytesMut {
    envelope(version, 0, -1, Opcode::Event, |out| event.write_body(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::{Header, HEADER_LEN};
    use crate::wire::Reader;
    use bytes::Bytes;

    fn split(env: BytesMut) -> (Header, Reader) {
        let h = Header::parse(env[..HEADER_LEN].try_into().unwrap());
        assert_eq!(h.length as usize, env.len() - HEADER_LEN);
        (h, Reader::new(Bytes::from(env).slice(HEADER_LEN..)))
    }

    #[test]
    fn supported_lists_options() {
        let (h, mut r) = split(supported(4, 3));
        assert_eq!(
            (h.opcode, h.stream, h.version, h.response),
            (0x06, 3, 4, true)
        );
        assert_eq!(r.short().unwrap(), 3);
        assert_eq!(r.string().unwrap(), "CQL_VERSION");
        assert_eq!(r.string_list().unwrap(), vec![CQL_VERSION]);
        assert_eq!(r.string().unwrap(), "COMPRESSION");
        assert_eq!(r.string_list().unwrap(), vec!["lz4"]);
        assert_eq!(r.string().unwrap(), "PROTOCOL_VERSIONS");
        assert_eq!(r.string_list().unwrap(), vec!["3/v3", "4/v4", "5/v5"]);
    }

    #[test]
    fn ready_and_auth_success() {
        let (h, r) = split(ready(5, 1));
        assert_eq!((h.opcode, r.remaining()), (0x02, 0));
        let (h, mut r) = split(auth_success(4, 1));
        assert_eq!(h.opcode, 0x10);
        assert_eq!(r.bytes().unwrap(), None);
    }

    #[test]
    fn warnings_flag_from_v4() {
        let outcome = Outcome {
            result: QueryResult::Void,
            warnings: vec!["careful".into()],
            tracing_id: None,
        };
        let (h, mut r) = split(result(4, 9, &outcome));
        assert_eq!(h.flags, FLAG_WARNING);
        assert_eq!(r.string_list().unwrap(), vec!["careful"]);
        assert_eq!(r.int().unwrap(), 1);
        let (h3, mut r3) = split(result(3, 9, &outcome));
        assert_eq!(h3.flags, 0);
        assert_eq!(r3.int().unwrap(), 1);
    }

    #[test]
    fn trace_session_id_precedes_warnings() {
        let id = uuid::Uuid::from_u128(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10);
        let outcome = Outcome {
            result: QueryResult::Void,
            warnings: vec!["careful".into()],
            tracing_id: Some(id),
        };
        let (h, mut r) = split(result(4, 2, &outcome));
        assert_eq!(h.flags, FLAG_TRACING | FLAG_WARNING);
        assert_eq!(r.take(16).unwrap().as_ref(), id.as_bytes());
        assert_eq!(r.string_list().unwrap(), vec!["careful"]);
        assert_eq!(r.int().unwrap(), 1);
    }

    #[test]
    fn protocol_error_envelope() {
        let (h, mut r) = split(protocol_error(5, 7, "nope"));
        assert_eq!((h.opcode, h.stream), (0x00, 7));
        assert_eq!(
            (r.int().unwrap(), r.string().unwrap()),
            (0x000A, "nope".into())
        );
    }

    #[test]
    fn event_on_stream_minus_one() {
        let e = Event::StatusChange {
            up: true,
            addr: "1.2.3.4:9042".parse().unwrap(),
        };
        let (h, mut r) = split(event(4, &e));
        assert_eq!((h.opcode, h.stream), (0x0C, -1));
        assert_eq!(r.string().unwrap(), "STATUS_CHANGE");
    }
}
