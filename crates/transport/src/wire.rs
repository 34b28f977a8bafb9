//! The primitive notations of the native protocol (spec §3): a bounds-checked reader over a
//! request body, and the matching writers used when encoding responses.
use bytes::{Buf, BufMut, Bytes, BytesMut};
use std::net::{IpAddr, SocketAddr};
use types::request::BoundValue;
use types::Consistency;

/// A malformed request body; becomes a ProtocolError on the request's stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

pub type DecodeResult<T> = Result<T, DecodeError>;

fn decode_error<T>(message: impl Into<String>) -> DecodeResult<T> {
    Err(DecodeError(message.into()))
}

/// Reads protocol notations from a body. Slices share the body's memory (no copies).
pub struct Reader {
    buf: Bytes,
}

impl Reader {
    pub fn new(buf: Bytes) -> Reader {
        Reader { buf }
    }

    #[cfg(test)]
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    fn need(&self, n: usize, what: &str) -> DecodeResult<()> {
        if self.buf.len() < n {
            return decode_error(format!(
                "Not enough bytes to read {what}: need {n}, have {}",
                self.buf.len()
            ));
        }
        Ok(())
    }

    pub fn byte(&mut self) -> DecodeResult<u8> {
        self.need(1, "a byte")?;
        Ok(self.buf.get_u8())
    }

    pub fn short(&mut self) -> DecodeResult<u16> {
        self.need(2, "a short")?;
        Ok(self.buf.get_u16())
    }

    pub fn int(&mut self) -> DecodeResult<i32> {
        self.need(4, "an int")?;
        Ok(self.buf.get_i32())
    }

    pub fn long(&mut self) -> DecodeResult<i64> {
        self.need(8, "a long")?;
        Ok(self.buf.get_i64())
    }

    pub fn take(&mut self, n: usize) -> DecodeResult<Bytes> {
        self.need(n, "bytes")?;
        Ok(self.buf.split_to(n))
    }

    fn utf8(&mut self, n: usize) -> DecodeResult<String> {
        let raw = self.take(n)?;
        String::from_utf8(raw.to_vec()).or_else(|_| decode_error("Invalid UTF-8 in string"))
    }

    /// `[string]`
    pub fn string(&mut self) -> DecodeResult<String> {
        let n = self.short()?;
        self.utf8(usize::from(n))
    }

    /// `[long string]`
    pub fn long_string(&mut self) -> DecodeResult<String> {
        let n = self.int()?;
        match usize::try_from(n) {
            Ok(n) => self.utf8(n),
            Err(_) => decode_error(format!("Invalid long string length {n}")),
        }
    }

    /// `[short bytes]`
    pub fn short_bytes(&mut self) -> DecodeResult<Bytes> {
        let n = self.short()?;
        self.take(usize::from(n))
    }

    /// `[bytes]`; a negative length is `null`.
    pub fn bytes(&mut self) -> DecodeResult<Option<Bytes>> {
        let n = self.int()?;
        match usize::try_from(n) {
            Ok(n) => self.take(n).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// `[value]`: -1 is null, -2 is unset (v4+; v3 treats every negative length as null).
    pub fn value(&mut self, version: u8) -> DecodeResult<BoundValue> {
        let n = self.int()?;
        if let Ok(n) = usize::try_from(n) {
            return Ok(BoundValue::Set(self.take(n)?));
        }
        match n {
            _ if version < 4 => Ok(BoundValue::Null),
            -1 => Ok(BoundValue::Null),
            -2 => Ok(BoundValue::Unset),
            _ => decode_error(format!("Invalid ByteBuffer length {n}")),
        }
    }

    /// `[string list]`
    pub fn string_list(&mut self) -> DecodeResult<Vec<String>> {
        let n = self.short()?;
        (0..n).map(|_| self.string()).collect()
    }

    /// `[string map]`
    pub fn string_map(&mut self) -> DecodeResult<Vec<(String, String)>> {
        let n = self.short()?;
        (0..n)
            .map(|_| Ok((self.string()?, self.string()?)))
            .collect()
    }

    /// `[bytes map]`, read and dropped (custom payloads are ignored).
    pub fn skip_bytes_map(&mut self) -> DecodeResult<()> {
        let n = self.short()?;
        for _ in 0..n {
            self.string()?;
            self.bytes()?;
        }
        Ok(())
    }

    /// `[consistency]`
    pub fn consistency(&mut self) -> DecodeResult<Consistency> {
        let code = self.short()?;
        match Consistency::from_code(code) {
            Some(c) => Ok(c),
            None => decode_error(format!("Unknown code {code} for a consistency level")),
        }
    }
}

/// Clamps `s` to at most `max` bytes on a char boundary.
fn clamp(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `[string]`; longer strings are truncated to 65535 bytes rather than corrupting the frame.
pub fn put_string(out: &mut BytesMut, s: &str) {
    let s = clamp(s, usize::from(u16::MAX));
    out.put_u16(s.len() as u16);
    out.put_slice(s.as_bytes());
}

/// `[string list]`
pub fn put_string_list<S: AsRef<str>>(out: &mut BytesMut, list: &[S]) {
    out.put_u16(list.len().min(usize::from(u16::MAX)) as u16);
    for s in list.iter().take(usize::from(u16::MAX)) {
        put_string(out, s.as_ref());
    }
}

/// `[short bytes]`; truncated to 65535 bytes.
pub fn put_short_bytes(out: &mut BytesMut, b: &[u8]) {
    let b = &b[..b.len().min(usize::from(u16::MAX))];
    out.put_u16(b.len() as u16);
    out.put_slice(b);
}

/// `[bytes]`; `None` is null.
pub fn put_bytes(out: &mut BytesMut, b: Option<&[u8]>) {
    match b {
        Some(b) => {
            out.put_i32(b.len() as i32);
            out.put_slice(b);
        }
        None => out.put_i32(-1),
    }
}

/// `[inetaddr]`
pub fn put_inetaddr(out: &mut BytesMut, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            out.put_u8(4);
            out.put_slice(&v4.octets());
        }
        IpAddr::V6(v6) => {
            out.put_u8(16);
            out.put_slice(&v6.octets());
        }
    }
}

/// `[inet]`
pub fn put_inet(out: &mut BytesMut, addr: SocketAddr) {
    put_inetaddr(out, addr.ip());
    out.put_i32(i32::from(addr.port()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(bytes: &[u8]) -> Reader {
        Reader::new(Bytes::copy_from_slice(bytes))
    }

    #[test]
    fn strings_round_trip() {
        let mut out = BytesMut::new();
        put_string(&mut out, "héllo");
        put_string_list(&mut out, &["a", "bc"]);
        let mut r = Reader::new(out.freeze());
        assert_eq!(r.string().unwrap(), "héllo");
        assert_eq!(r.string_list().unwrap(), vec!["a", "bc"]);
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn long_strings_are_clamped_on_char_boundary() {
        let s = "é".repeat(40_000);
        let mut out = BytesMut::new();
        put_string(&mut out, &s);
        let mut r = Reader::new(out.freeze());
        let back = r.string().unwrap();
        assert_eq!(back.len(), 65_534);
    }

    #[test]
    fn values_null_unset_and_invalid() {
        let mut r = reader(&[
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 1, 7,
        ]);
        assert_eq!(r.value(4).unwrap(), BoundValue::Null);
        assert_eq!(r.value(4).unwrap(), BoundValue::Unset);
        assert_eq!(
            r.value(4).unwrap(),
            BoundValue::Set(Bytes::from_static(&[7]))
        );
        let mut bad = reader(&[0xff, 0xff, 0xff, 0xfd]);
        assert!(bad.value(4).is_err());
        let mut v3 = reader(&[0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(v3.value(3).unwrap(), BoundValue::Null);
    }

    #[test]
    fn short_reads_are_errors() {
        assert!(reader(&[0]).short().is_err());
        assert!(reader(&[0, 5, b'a']).string().is_err());
        assert!(reader(&[0xff, 0xff, 0xff, 0xff]).long_string().is_err());
        assert!(reader(&[0, 0x20]).consistency().is_err());
        assert!(reader(&[0, 2, 0xff, 0xfe]).string().is_err());
    }

    #[test]
    fn inet_encoding() {
        let mut out = BytesMut::new();
        put_inet(&mut out, "10.0.0.1:9042".parse().unwrap());
        assert_eq!(&out[..], &[4, 10, 0, 0, 1, 0, 0, 0x23, 0x52]);
    }
}
