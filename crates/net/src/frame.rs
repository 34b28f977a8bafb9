//! Internode frames. Layout (integers big-endian):
//!
//! ```text
//!  0  u32  payload length on the wire (after compression)
//!  4  u8   messaging version
//!  5  u8   flags (bit 0: payload is an LZ4 block)
//!  6  u8   verb
//!  7  u8   kind (request, response, failure, one-way, ping, pong)
//!  8  u64  message id (a response carries its request's id)
//! 16  u32  timeout in ms left when sent (0: none)
//! 20  u32  payload length before compression
//! 24  u32  CRC32 of bytes 0..24
//! 28       payload
//!     u32  CRC32 of the payload as sent
//! ```
//! The header CRC is checked before the lengths are trusted, and both lengths are checked
//! against the maximum message size before anything is allocated.
use std::io;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

pub(crate) const HEADER_LEN: usize = 28;
pub(crate) const TRAILER_LEN: usize = 4;
const FLAG_LZ4: u8 = 1;
/// Shorter payloads are sent as they are even when compression is on.
const COMPRESS_MIN: usize = 128;

#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Request = 0,
    Response = 1,
    Failure = 2,
    OneWay = 3,
    Ping = 4,
    Pong = 5,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Request,
        Kind::Response,
        Kind::Failure,
        Kind::OneWay,
        Kind::Ping,
        Kind::Pong,
    ];

    fn from_u8(code: u8) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| *kind as u8 == code)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: Kind,
    pub verb: u8,
    pub id: u64,
    pub timeout_ms: u32,
    pub payload: Bytes,
}

impl Frame {
    pub fn new(kind: Kind, verb: u8, id: u64, payload: Bytes) -> Frame {
        Frame {
            kind,
            verb,
            id,
            timeout_ms: 0,
            payload,
        }
    }

    /// Bytes the frame occupies on the wire before compression.
    pub fn wire_len(&self) -> usize {
        HEADER_LEN + self.payload.len() + TRAILER_LEN
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection closed")]
    Closed,
    #[error("connection closed inside a frame")]
    Truncated,
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("frame header failed its CRC check")]
    HeaderCrc,
    #[error("frame payload failed its CRC check")]
    PayloadCrc,
    #[error("frame of messaging version {got}, the connection uses {want}")]
    Version { got: u8, want: u8 },
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    #[error("unknown frame flags 0x{0:02x}")]
    UnknownFlags(u8),
    #[error("message of {size} bytes exceeds the maximum of {max}")]
    TooLarge { size: usize, max: usize },
    #[error("uncompressed payload length {raw} differs from its wire length {wire}")]
    LengthMismatch { raw: usize, wire: usize },
    #[error("LZ4 payload does not decompress: {0}")]
    Decompress(String),
}

impl FrameError {
    pub fn is_crc(&self) -> bool {
        matches!(self, FrameError::HeaderCrc | FrameError::PayloadCrc)
    }
}

/// A frame ready to write: header, payload (shared, not copied unless compressed), trailer.
pub struct Encoded {
    head: [u8; HEADER_LEN],
    payload: Bytes,
    tail: [u8; TRAILER_LEN],
}

impl Encoded {
    pub async fn write_to<W: AsyncWrite + Unpin>(&self, out: &mut W) -> io::Result<()> {
        out.write_all(&self.head).await?;
        out.write_all(&self.payload).await?;
        out.write_all(&self.tail).await
    }

    #[cfg(test)]
    pub fn to_vec(&self) -> Vec<u8> {
        [&self.head[..], &self.payload, &self.tail].concat()
    }
}

pub fn encode(frame: &Frame, version: u8, compress: bool) -> Encoded {
    let raw_len = frame.payload.len();
    let (flags, payload) = match compress.then(|| compressed(&frame.payload)).flatten() {
        Some(smaller) => (FLAG_LZ4, smaller),
        None => (0, frame.payload.clone()),
    };
    let mut head = [0u8; HEADER_LEN];
    head[0..4].copy_from_slice(&(payload.len() as u32).to_be_bytes());
    head[4] = version;
    head[5] = flags;
    head[6] = frame.verb;
    head[7] = frame.kind as u8;
    head[8..16].copy_from_slice(&frame.id.to_be_bytes());
    head[16..20].copy_from_slice(&frame.timeout_ms.to_be_bytes());
    head[20..24].copy_from_slice(&(raw_len as u32).to_be_bytes());
    let crc = crc32fast::hash(&head[..24]);
    head[24..28].copy_from_slice(&crc.to_be_bytes());
    let tail = crc32fast::hash(&payload).to_be_bytes();
    Encoded {
        head,
        payload,
        tail,
    }
}

fn compressed(payload: &[u8]) -> Option<Bytes> {
    if payload.len() < COMPRESS_MIN {
        return None;
    }
    let block = lz4_flex::block::compress(payload);
    (block.len() < payload.len()).then(|| Bytes::from(block))
}

/// What a reader accepts: the connection's negotiated version and the size limit.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub version: u8,
    pub max_message: usize,
}

struct Header {
    wire_len: usize,
    raw_len: usize,
    lz4: bool,
    verb: u8,
    kind: Kind,
    id: u64,
    timeout_ms: u32,
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_be_bytes(word)
}

fn decode_header(head: &[u8; HEADER_LEN], limits: Limits) -> Result<Header, FrameError> {
    if crc32fast::hash(&head[..24]) != u32_at(head, 24) {
        return Err(FrameError::HeaderCrc);
    }
    if head[4] != limits.version {
        let (got, want) = (head[4], limits.version);
        return Err(FrameError::Version { got, want });
    }
    if head[5] & !FLAG_LZ4 != 0 {
        return Err(FrameError::UnknownFlags(head[5]));
    }
    let kind = Kind::from_u8(head[7]).ok_or(FrameError::UnknownKind(head[7]))?;
    let wire_len = u32_at(head, 0) as usize;
    let raw_len = u32_at(head, 20) as usize;
    let lz4 = head[5] & FLAG_LZ4 != 0;
    for size in [wire_len, raw_len] {
        if size > limits.max_message {
            return Err(FrameError::TooLarge {
                size,
                max: limits.max_message,
            });
        }
    }
    if !lz4 && raw_len != wire_len {
        return Err(FrameError::LengthMismatch {
            raw: raw_len,
            wire: wire_len,
        });
    }
    let mut id = [0u8; 8];
    id.copy_from_slice(&head[8..16]);
    Ok(Header {
        wire_len,
        raw_len,
        lz4,
        verb: head[6],
        kind,
        id: u64::from_be_bytes(id),
        timeout_ms: u32_at(head, 16),
    })
}

/// Fills `buf`; returns how many bytes arrived before the end of the stream.
async fn read_full<R: AsyncRead + Unpin>(input: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]).await? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Reads one frame. A clean end of stream between frames is `Closed`; anything malformed is
/// an error (the caller closes the connection).
pub async fn read_frame<R: AsyncRead + Unpin>(
    input: &mut R,
    limits: Limits,
) -> Result<Frame, FrameError> {
    let mut head = [0u8; HEADER_LEN];
    match read_full(input, &mut head).await? {
        0 => return Err(FrameError::Closed),
        HEADER_LEN => {}
        _ => return Err(FrameError::Truncated),
    }
    let header = decode_header(&head, limits)?;
    let mut body = vec![0u8; header.wire_len + TRAILER_LEN];
    if read_full(input, &mut body).await? < body.len() {
        return Err(FrameError::Truncated);
    }
    let (payload, trailer) = body.split_at(header.wire_len);
    if crc32fast::hash(payload) != u32_at(trailer, 0) {
        return Err(FrameError::PayloadCrc);
    }
    body.truncate(header.wire_len);
    let payload = if header.lz4 {
        decompress(&body, header.raw_len)?
    } else {
        Bytes::from(body)
    };
    Ok(Frame {
        kind: header.kind,
        verb: header.verb,
        id: header.id,
        timeout_ms: header.timeout_ms,
        payload,
    })
}

fn decompress(block: &[u8], raw_len: usize) -> Result<Bytes, FrameError> {
    let mut out = vec![0u8; raw_len];
    let written = lz4_flex::block::decompress_into(block, &mut out)
        .map_err(|e| FrameError::Decompress(e.to_string()))?;
    if written != raw_len {
        return Err(FrameError::Decompress(format!(
            "{written} bytes, the header says {raw_len}"
        )));
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        version: 1,
        max_message: 1 << 20,
    };

    fn sample(payload: &[u8]) -> Frame {
        Frame {
            kind: Kind::Request,
            verb: 21,
            id: 0x0102_0304_0506_0708,
            timeout_ms: 1500,
            payload: Bytes::copy_from_slice(payload),
        }
    }

    fn compressible() -> Vec<u8> {
        b"helenus internode ".repeat(200)
    }

    async fn decode(bytes: &[u8]) -> Result<Frame, FrameError> {
        read_frame(&mut &bytes[..], LIMITS).await
    }

    #[tokio::test]
    async fn frames_round_trip_with_and_without_compression() {
        for payload in [
            Vec::new(),
            b"short".to_vec(),
            compressible(),
            vec![7u8; 70_000],
        ] {
            for compress in [false, true] {
                let frame = sample(&payload);
                let bytes = encode(&frame, 1, compress).to_vec();
                assert_eq!(decode(&bytes).await.unwrap(), frame);
            }
        }
        for kind in Kind::ALL {
            let frame = Frame::new(kind, 0, 9, Bytes::new());
            assert_eq!(
                decode(&encode(&frame, 1, false).to_vec()).await.unwrap(),
                frame
            );
        }
    }

    #[tokio::test]
    async fn compression_shrinks_repetitive_payloads_only() {
        let big = encode(&sample(&compressible()), 1, true).to_vec();
        assert!(big.len() < compressible().len() / 4, "{}", big.len());
        assert_eq!(big[5], FLAG_LZ4);
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u8
            })
            .collect();
        let sent = encode(&sample(&noise), 1, true).to_vec();
        assert_eq!(sent[5], 0, "incompressible payloads go as they are");
    }

    #[tokio::test]
    async fn consecutive_frames_then_a_clean_end() {
        let mut stream = encode(&sample(b"one"), 1, false).to_vec();
        stream.extend(encode(&sample(b"two"), 1, true).to_vec());
        let mut input = &stream[..];
        assert_eq!(
            read_frame(&mut input, LIMITS).await.unwrap().payload,
            &b"one"[..]
        );
        assert_eq!(
            read_frame(&mut input, LIMITS).await.unwrap().payload,
            &b"two"[..]
        );
        assert!(matches!(
            read_frame(&mut input, LIMITS).await,
            Err(FrameError::Closed)
        ));
    }

    #[tokio::test]
    async fn every_truncation_is_an_error() {
        for compress in [false, true] {
            let bytes = encode(&sample(&compressible()), 1, compress).to_vec();
            for cut in 1..bytes.len() {
                let result = decode(&bytes[..cut]).await;
                assert!(
                    matches!(result, Err(FrameError::Truncated)),
                    "cut {cut}: {result:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn every_flipped_bit_is_an_error() {
        for compress in [false, true] {
            let bytes = encode(&sample(&compressible()[..300]), 1, compress).to_vec();
            for at in 0..bytes.len() {
                for bit in 0..8 {
                    let mut corrupt = bytes.clone();
                    corrupt[at] ^= 1 << bit;
                    let result = decode(&corrupt).await;
                    assert!(result.is_err(), "byte {at} bit {bit} went unnoticed");
                }
            }
        }
    }

    #[tokio::test]
    async fn crc_errors_are_reported_as_such() {
        let bytes = encode(&sample(b"payload"), 1, false).to_vec();
        let mut header = bytes.clone();
        header[6] ^= 0x40;
        assert!(matches!(decode(&header).await, Err(FrameError::HeaderCrc)));
        let mut payload = bytes.clone();
        payload[HEADER_LEN] ^= 1;
        assert!(matches!(
            decode(&payload).await,
            Err(FrameError::PayloadCrc)
        ));
        assert!(decode(&payload).await.unwrap_err().is_crc());
    }

    /// Rewrites header byte `at` and fixes the header CRC, as a buggy (not corrupting) peer would.
    fn with_header_byte(bytes: &[u8], at: usize, value: u8) -> Vec<u8> {
        let mut out = bytes.to_vec();
        out[at] = value;
        let crc = crc32fast::hash(&out[..24]);
        out[24..28].copy_from_slice(&crc.to_be_bytes());
        out
    }

    #[tokio::test]
    async fn well_formed_but_invalid_headers_are_refused() {
        let bytes = encode(&sample(b"payload"), 1, false).to_vec();
        let version = with_header_byte(&bytes, 4, 2);
        assert!(matches!(
            decode(&version).await,
            Err(FrameError::Version { got: 2, want: 1 })
        ));
        let flags = with_header_byte(&bytes, 5, 0x80);
        assert!(matches!(
            decode(&flags).await,
            Err(FrameError::UnknownFlags(0x80))
        ));
        let kind = with_header_byte(&bytes, 7, 9);
        assert!(matches!(
            decode(&kind).await,
            Err(FrameError::UnknownKind(9))
        ));
        let raw_len = with_header_byte(&bytes, 23, 99);
        assert!(matches!(
            decode(&raw_len).await,
            Err(FrameError::LengthMismatch { .. })
        ));
        let lz4_flag = with_header_byte(&bytes, 5, FLAG_LZ4);
        assert!(matches!(
            decode(&lz4_flag).await,
            Err(FrameError::Decompress(_))
        ));
    }

    #[tokio::test]
    async fn oversized_lengths_are_refused_before_reading_the_body() {
        let bytes = encode(&sample(&[1u8; 100]), 1, false).to_vec();
        let small = Limits {
            version: 1,
            max_message: 99,
        };
        // Only the header is given: the limit must be enforced before the body is awaited.
        let result = read_frame(&mut &bytes[..HEADER_LEN], small).await;
        assert!(matches!(
            result,
            Err(FrameError::TooLarge { size: 100, max: 99 })
        ));
        let mut huge = with_header_byte(&bytes, 0, 0xff);
        huge = with_header_byte(&huge, 20, 0xff);
        let result = decode(&huge[..HEADER_LEN]).await;
        assert!(
            matches!(result, Err(FrameError::TooLarge { .. })),
            "{result:?}"
        );
    }
}
