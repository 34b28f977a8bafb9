//! v5 framing (native_protocol_v5.spec §2): segments with a CRC24-protected header and a CRC32
//! payload trailer, plain or LZ4-compressed, and the packing of envelopes into segments.
use crate::crc::{crc24, crc32};
use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Largest payload one segment carries (128 KiB - 1).
pub const MAX_PAYLOAD: usize = (1 << 17) - 1;
const TRAILER_LEN: usize = 4;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    #[error("Header CRC24 mismatch (received {received:#x}, computed {computed:#x})")]
    HeaderCrc { received: u32, computed: u32 },
    #[error("Payload CRC32 mismatch (received {received:#x}, computed {computed:#x})")]
    PayloadCrc { received: u32, computed: u32 },
    #[error("Invalid LZ4 segment: {0}")]
    Lz4(String),
}

/// One decoded segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub payload: Bytes,
    pub self_contained: bool,
}

fn header_len(lz4: bool) -> usize {
    if lz4 {
        8
    } else {
        6
    }
}

fn le_uint(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0, |acc, b| acc << 8 | u64::from(*b))
}

/// Decodes one segment from the front of `buf`; `Ok(None)` until it is complete.
pub fn read_segment(buf: &mut BytesMut, lz4: bool) -> Result<Option<Segment>, SegmentError> {
    let hlen = header_len(lz4);
    if buf.len() < hlen {
        return Ok(None);
    }
    let fields_len = hlen - 3;
    let fields = le_uint(&buf[..fields_len]);
    let received = le_uint(&buf[fields_len..hlen]) as u32;
    let computed = crc24(&buf[..fields_len]);
    if received != computed {
        return Err(SegmentError::HeaderCrc { received, computed });
    }
    let len = (fields & MAX_PAYLOAD as u64) as usize;
    let (uncompressed, flag_bit) = if lz4 {
        ((fields >> 17) as usize & MAX_PAYLOAD, 34)
    } else {
        (0, 17)
    };
    if buf.len() < hlen + len + TRAILER_LEN {
        buf.reserve(hlen + len + TRAILER_LEN - buf.len());
        return Ok(None);
    }
    buf.advance(hlen);
    let payload = buf.split_to(len).freeze();
    let received = buf.get_u32_le();
    let computed = crc32(&payload);
    if received != computed {
        return Err(SegmentError::PayloadCrc { received, computed });
    }
    let payload = if uncompressed > 0 {
        decompress(&payload, uncompressed)?
    } else {
        payload
    };
    Ok(Some(Segment {
        payload,
        self_contained: fields >> flag_bit & 1 == 1,
    }))
}

fn decompress(payload: &[u8], uncompressed: usize) -> Result<Bytes, SegmentError> {
    let out = lz4_flex::block::decompress(payload, uncompressed)
        .map_err(|e| SegmentError::Lz4(e.to_string()))?;
    if out.len() != uncompressed {
        return Err(SegmentError::Lz4(format!(
            "expected {uncompressed} bytes, got {}",
            out.len()
        )));
    }
    Ok(Bytes::from(out))
}

/// Appends one segment carrying `payload` (at most [`MAX_PAYLOAD`] bytes) to `out`.
pub fn write_segment(out: &mut BytesMut, payload: &[u8], self_contained: bool, lz4: bool) {
    debug_assert!(payload.len() <= MAX_PAYLOAD);
    if lz4 {
        write_lz4_segment(out, payload, self_contained);
    } else {
        let fields = payload.len() as u64 | u64::from(self_contained) << 17;
        write_header(out, fields, 3);
        out.put_slice(payload);
        out.put_u32_le(crc32(payload));
    }
}

fn write_header(out: &mut BytesMut, fields: u64, fields_len: usize) {
    let start = out.len();
    out.put_slice(&fields.to_le_bytes()[..fields_len]);
    let crc = crc24(&out[start..]);
    out.put_slice(&crc.to_le_bytes()[..3]);
}

/// Compresses in place after the header; falls back to the raw payload (uncompressed length 0)
/// when compression does not pay.
fn write_lz4_segment(out: &mut BytesMut, payload: &[u8], self_contained: bool) {
    let header_at = out.len();
    out.put_bytes(0, 8);
    let body_at = out.len();
    out.resize(
        body_at + lz4_flex::block::get_maximum_output_size(payload.len()),
        0,
    );
    let compressed =
        lz4_flex::block::compress_into(payload, &mut out[body_at..]).unwrap_or(usize::MAX);
    let (len, uncompressed) = if compressed < payload.len() {
        out.truncate(body_at + compressed);
        (compressed, payload.len())
    } else {
        out.truncate(body_at);
        out.put_slice(payload);
        (payload.len(), 0)
    };
    let crc = crc32(&out[body_at..]);
    out.put_u32_le(crc);
    let fields = len as u64 | (uncompressed as u64) << 17 | u64::from(self_contained) << 34;
    let mut header = BytesMut::with_capacity(8);
    write_header(&mut header, fields, 5);
    out[header_at..body_at].copy_from_slice(&header);
}

/// Packs whole envelopes into self-contained segments and splits large ones.
pub struct SegmentPacker {
    lz4: bool,
    pending: BytesMut,
}

impl SegmentPacker {
    pub fn new(lz4: bool) -> SegmentPacker {
        SegmentPacker {
            lz4,
            pending: BytesMut::new(),
        }
    }

    /// Adds one complete envelope, writing finished segments to `out`.
    pub fn push(&mut self, envelope: &[u8], out: &mut BytesMut) {
        if envelope.len() > MAX_PAYLOAD {
            self.flush(out);
            for part in envelope.chunks(MAX_PAYLOAD) {
                write_segment(out, part, false, self.lz4);
            }
            return;
        }
        if self.pending.len() + envelope.len() > MAX_PAYLOAD {
            self.flush(out);
        }
        self.pending.extend_from_slice(envelope);
    }

    /// Writes the pending envelopes, if any, as one self-contained segment.
    pub fn flush(&mut self, out: &mut BytesMut) {
        if !self.pending.is_empty() {
            write_segment(out, &self.pending, true, self.lz4);
            self.pending.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(payload: &[u8], sc: bool, lz4: bool) -> Segment {
        let mut out = BytesMut::new();
        write_segment(&mut out, payload, sc, lz4);
        let seg = read_segment(&mut out, lz4).unwrap().unwrap();
        assert!(out.is_empty());
        seg
    }

    #[test]
    fn plain_and_lz4_round_trip() {
        for lz4 in [false, true] {
            for payload in [
                &b""[..],
                b"hello",
                &[7u8; 5000][..],
                &[1u8; MAX_PAYLOAD][..],
            ] {
                for sc in [true, false] {
                    let seg = round_trip(payload, sc, lz4);
                    assert_eq!(&seg.payload[..], payload);
                    assert_eq!(seg.self_contained, sc);
                }
            }
        }
    }

    #[test]
    fn lz4_actually_compresses_and_falls_back() {
        let mut out = BytesMut::new();
        write_segment(&mut out, &[0u8; 10_000], true, true);
        assert!(out.len() < 1000);
        let mut raw = BytesMut::new();
        write_segment(&mut raw, b"xyz", true, true);
        assert_eq!(raw.len(), 8 + 3 + 4);
        assert_eq!(&raw[8..11], b"xyz");
    }

    #[test]
    fn uncompressed_header_layout() {
        let mut out = BytesMut::new();
        write_segment(&mut out, b"ab", true, false);
        assert_eq!(&out[..3], &[2, 0, 2]);
        assert_eq!(le_uint(&out[3..6]) as u32, crc24(&[2, 0, 2]));
    }

    #[test]
    fn partial_input_waits() {
        let mut out = BytesMut::new();
        write_segment(&mut out, b"hello", true, false);
        for cut in 0..out.len() {
            let mut part = BytesMut::from(&out[..cut]);
            assert_eq!(read_segment(&mut part, false), Ok(None));
        }
    }

    #[test]
    fn crc_failures() {
        for lz4 in [false, true] {
            let mut out = BytesMut::new();
            write_segment(&mut out, b"hello world", true, lz4);
            let mut bad_header = out.clone();
            bad_header[0] ^= 1;
            assert!(matches!(
                read_segment(&mut bad_header, lz4),
                Err(SegmentError::HeaderCrc { .. })
            ));
            let mut bad_payload = out.clone();
            let last = bad_payload.len() - 5;
            bad_payload[last] ^= 0x40;
            assert!(matches!(
                read_segment(&mut bad_payload, lz4),
                Err(SegmentError::PayloadCrc { .. })
            ));
        }
    }

    #[test]
    fn corrupt_lz4_payload_is_an_error() {
        let payload = [0xF0u8, 1, 2];
        let fields = 3u64 | 100 << 17 | 1 << 34;
        let mut out = BytesMut::new();
        write_header(&mut out, fields, 5);
        out.put_slice(&payload);
        out.put_u32_le(crc32(&payload));
        assert!(matches!(
            read_segment(&mut out, true),
            Err(SegmentError::Lz4(_))
        ));
    }

    #[test]
    fn packer_packs_small_and_splits_large() {
        let mut packer = SegmentPacker::new(false);
        let mut out = BytesMut::new();
        packer.push(b"one", &mut out);
        packer.push(b"two", &mut out);
        assert!(out.is_empty());
        let big = vec![9u8; MAX_PAYLOAD * 2 + 10];
        packer.push(&big, &mut out);
        packer.push(b"three", &mut out);
        packer.flush(&mut out);
        let mut segs = Vec::new();
        while let Some(s) = read_segment(&mut out, false).unwrap() {
            segs.push(s);
        }
        assert_eq!(segs.len(), 5);
        assert_eq!(
            (&segs[0].payload[..], segs[0].self_contained),
            (&b"onetwo"[..], true)
        );
        assert!(segs[1..4].iter().all(|s| !s.self_contained));
        let joined: Vec<u8> = segs[1..4].iter().flat_map(|s| s.payload.to_vec()).collect();
        assert_eq!(joined, big);
        assert_eq!(&segs[4].payload[..], b"three");
    }
}
