//! The 9-byte envelope header (spec §2), opcodes, header flags and protocol-version checks,
//! plus helpers that write a whole envelope into one buffer.
use bytes::{BufMut, BytesMut};

pub const HEADER_LEN: usize = 9;
pub const MIN_VERSION: u8 = 3;
pub const MAX_VERSION: u8 = 5;

pub const FLAG_COMPRESSED: u8 = 0x01;
/// Request: trace this request; response: the body starts with the trace session id.
pub const FLAG_TRACING: u8 = 0x02;
pub const FLAG_CUSTOM_PAYLOAD: u8 = 0x04;
pub const FLAG_WARNING: u8 = 0x08;

const RESPONSE_BIT: u8 = 0x80;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    Error = 0x00,
    Startup = 0x01,
    Ready = 0x02,
    Authenticate = 0x03,
    Options = 0x05,
    Supported = 0x06,
    Query = 0x07,
    Result = 0x08,
    Prepare = 0x09,
    Execute = 0x0A,
    Register = 0x0B,
    Event = 0x0C,
    Batch = 0x0D,
    AuthChallenge = 0x0E,
    AuthResponse = 0x0F,
    AuthSuccess = 0x10,
}

impl Opcode {
    pub fn from_byte(b: u8) -> Option<Opcode> {
        use Opcode::*;
        Some(match b {
            0x00 => Error,
            0x01 => Startup,
            0x02 => Ready,
            0x03 => Authenticate,
            0x05 => Options,
            0x06 => Supported,
            0x07 => Query,
            0x08 => Result,
            0x09 => Prepare,
            0x0A => Execute,
            0x0B => Register,
            0x0C => Event,
            0x0D => Batch,
            0x0E => AuthChallenge,
            0x0F => AuthResponse,
            0x10 => AuthSuccess,
            _ => return None,
        })
    }

    pub fn is_request(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            Startup | Options | Query | Prepare | Execute | Register | Batch | AuthResponse
        )
    }

    /// The name Cassandra prints in error messages.
    pub fn name(self) -> &'static str {
        use Opcode::*;
        match self {
            Error => "ERROR",
            Startup => "STARTUP",
            Ready => "READY",
            Authenticate => "AUTHENTICATE",
            Options => "OPTIONS",
            Supported => "SUPPORTED",
            Query => "QUERY",
            Result => "RESULT",
            Prepare => "PREPARE",
            Execute => "EXECUTE",
            Register => "REGISTER",
            Event => "EVENT",
            Batch => "BATCH",
            AuthChallenge => "AUTH_CHALLENGE",
            AuthResponse => "AUTH_RESPONSE",
            AuthSuccess => "AUTH_SUCCESS",
        }
    }
}

/// A decoded envelope header. `opcode` stays raw so an unknown one can be answered per stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub response: bool,
    pub flags: u8,
    pub stream: i16,
    pub opcode: u8,
    pub length: i32,
}

impl Header {
    pub fn parse(b: &[u8; HEADER_LEN]) -> Header {
        Header {
            version: b[0] & !RESPONSE_BIT,
            response: b[0] & RESPONSE_BIT != 0,
            flags: b[1],
            stream: i16::from_be_bytes([b[2], b[3]]),
            opcode: b[4],
            length: i32::from_be_bytes([b[5], b[6], b[7], b[8]]),
        }
    }
}

/// Cassandra's wording (`ProtocolVersion.invalidVersionMessage`); drivers match on it to downgrade.
pub fn invalid_version_message(version: u8) -> String {
    format!(
        "Invalid or unsupported protocol version ({version}); supported versions are (3/v3, 4/v4, 5/v5)"
    )
}

/// Checks the version bits of an envelope's first byte. On failure returns the version the
/// error frame must carry: the client's own for the retired v1/v2, else our highest.
pub fn check_version(first_byte: u8) -> Result<u8, u8> {
    match first_byte & !RESPONSE_BIT {
        v @ MIN_VERSION..=MAX_VERSION => Ok(v),
        v @ (1 | 2) => Err(v),
        _ => Err(MAX_VERSION),
    }
}

/// Starts a response envelope in `out`; returns the offset to hand to [`finish_envelope`].
pub fn start_envelope(
    out: &mut BytesMut,
    version: u8,
    flags: u8,
    stream: i16,
    op: Opcode,
) -> usize {
    let start = out.len();
    out.put_u8(version | RESPONSE_BIT);
    out.put_u8(flags);
    out.put_i16(stream);
    out.put_u8(op as u8);
    out.put_i32(0);
    start
}

/// Patches the body length of the envelope started at `start`.
pub fn finish_envelope(out: &mut BytesMut, start: usize) {
    let body = out.len() - start - HEADER_LEN;
    out[start + 5..start + HEADER_LEN].copy_from_slice(&(body as u32).to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_header_round_trip() {
        let mut out = BytesMut::new();
        let start = start_envelope(&mut out, 4, FLAG_WARNING, -1, Opcode::Event);
        out.put_slice(b"abc");
        finish_envelope(&mut out, start);
        let h = Header::parse(out[..HEADER_LEN].try_into().unwrap());
        assert_eq!(
            h,
            Header {
                version: 4,
                response: true,
                flags: FLAG_WARNING,
                stream: -1,
                opcode: 0x0C,
                length: 3
            }
        );
    }

    #[test]
    fn version_checks() {
        assert_eq!(check_version(0x04), Ok(4));
        assert_eq!(check_version(0x05), Ok(5));
        assert_eq!(check_version(0x03), Ok(3));
        assert_eq!(check_version(0x02), Err(2));
        assert_eq!(check_version(0x06), Err(5));
        assert_eq!(check_version(0x41), Err(5));
        assert!(
            invalid_version_message(6).starts_with("Invalid or unsupported protocol version (6)")
        );
    }

    #[test]
    fn opcodes() {
        for b in 0..=0x10u8 {
            if let Some(op) = Opcode::from_byte(b) {
                assert_eq!(op as u8, b);
            }
        }
        assert_eq!(Opcode::from_byte(0x04), None);
        assert!(Opcode::Query.is_request());
        assert!(!Opcode::Result.is_request());
    }
}
