//! Splits the inbound byte stream into envelopes: legacy framing (v3/v4, and every connection
//! until STARTUP is answered) and v5 segments. A body not yet read in full is first
//! [`Inbound::Announced`]: the connection admits it ([`Framer::decide`]) or refuses it, and
//! then it is skipped. An admitted body is collected as its bytes arrive, its buffer grown in
//! steps the connection reserves first ([`Inbound::Grow`]). Bodies over the size limit are
//! skipped, not buffered; anything that makes the stream unreadable is a [`Fatal`] error.
use crate::body::{declared as body_len, Body};
use crate::header::{check_version, invalid_version_message, Header, HEADER_LEN};
use crate::segment::{read_segment, Segment};
use bytes::{Buf, Bytes, BytesMut};
use std::collections::VecDeque;

/// One unit read off the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum Inbound {
    /// A header whose body has not arrived in full: call [`Framer::decide`] before `next`.
    Announced {
        header: Header,
    },
    /// The admitted body of `header` needs `bytes` more room for the bytes that arrived: call
    /// [`Framer::decide`] (with the room reserved) before `next`.
    Grow {
        header: Header,
        bytes: usize,
    },
    Envelope {
        header: Header,
        body: Bytes,
    },
    /// The body exceeded the limit and was discarded.
    TooBig {
        header: Header,
    },
}

/// The stream cannot be read any further: answer with a ProtocolError, then close.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fatal {
    pub version: u8,
    pub stream: i16,
    pub message: String,
}

fn fatal<T>(version: u8, stream: i16, message: impl Into<String>) -> Result<T, Fatal> {
    Err(Fatal {
        version,
        stream,
        message: message.into(),
    })
}

/// Parses a header at the front of `bytes` (which holds at least [`HEADER_LEN`] bytes).
fn parse_header(bytes: &[u8]) -> Result<Header, Fatal> {
    let mut raw = [0u8; HEADER_LEN];
    raw.copy_from_slice(&bytes[..HEADER_LEN]);
    let h = Header::parse(&raw);
    if h.length < 0 {
        let msg = format!(
            "Invalid value for envelope header body length field: {}",
            h.length
        );
        return fatal(h.version, h.stream, msg);
    }
    Ok(h)
}

/// Where a legacy decoder is in the stream.
#[derive(Debug)]
enum Legacy {
    /// At a header.
    Header,
    /// A body was announced; waiting for [`LegacyDecoder::decide`].
    Announced(Header),
    /// Collecting an admitted body.
    Body(Body),
    /// Skipping a body; `too_big` reports it once skipped.
    Skip {
        header: Header,
        remaining: usize,
        too_big: bool,
    },
}

/// Legacy (pre-v5) framing: a 9-byte header then the body.
pub struct LegacyDecoder {
    max_body: usize,
    state: Legacy,
}

impl LegacyDecoder {
    pub fn new(max_body: usize) -> LegacyDecoder {
        LegacyDecoder {
            max_body,
            state: Legacy::Header,
        }
    }

    pub fn next(&mut self, buf: &mut BytesMut) -> Result<Option<Inbound>, Fatal> {
        match &mut self.state {
            Legacy::Header => self.header(buf),
            Legacy::Announced(_) => Ok(None),
            Legacy::Body(body) => {
                let n = body.missing().min(buf.len());
                if n == 0 {
                    return Ok(None);
                }
                if let Err(unit) = body.offer(&buf[..n]) {
                    return Ok(unit);
                }
                buf.advance(n);
                if body.missing() > 0 {
                    return Ok(None);
                }
                match std::mem::replace(&mut self.state, Legacy::Header) {
                    Legacy::Body(body) => Ok(Some(Inbound::Envelope {
                        header: body.header(),
                        body: body.into_bytes(),
                    })),
                    _ => Ok(None),
                }
            }
            Legacy::Skip {
                header,
                remaining,
                too_big,
            } => {
                let n = (*remaining).min(buf.len());
                buf.advance(n);
                *remaining -= n;
                if *remaining > 0 {
                    return Ok(None);
                }
                let done = too_big.then_some(Inbound::TooBig { header: *header });
                self.state = Legacy::Header;
                match done {
                    Some(too_big) => Ok(Some(too_big)),
                    None => self.next(buf),
                }
            }
        }
    }

    fn header(&mut self, buf: &mut BytesMut) -> Result<Option<Inbound>, Fatal> {
        let Some(&first) = buf.first() else {
            return Ok(None);
        };
        if let Err(reply) = check_version(first) {
            return fatal(reply, 0, invalid_version_message(first & 0x7f));
        }
        if buf.len() < HEADER_LEN {
            return Ok(None);
        }
        let header = parse_header(buf)?;
        let len = body_len(&header);
        if len > self.max_body {
            buf.advance(HEADER_LEN);
            self.skip(header, true);
            return self.next(buf);
        }
        if buf.len() < HEADER_LEN + len {
            buf.advance(HEADER_LEN);
            self.state = Legacy::Announced(header);
            return Ok(Some(Inbound::Announced { header }));
        }
        buf.advance(HEADER_LEN);
        // A copy, not `split_to(len).freeze()`: values decoded from the body live on in
        // memtables, and a slice would pin the whole read buffer (64 KiB per socket read,
        // mostly untouched) until the memtable is flushed, and keep the connection from
        // reusing it.
        let body = Bytes::copy_from_slice(&buf[..len]);
        buf.advance(len);
        Ok(Some(Inbound::Envelope { header, body }))
    }

    fn skip(&mut self, header: Header, too_big: bool) {
        self.state = Legacy::Skip {
            header,
            remaining: body_len(&header),
            too_big,
        };
    }

    /// Reads the announced body or skips it; gives the room asked for, or skips the rest of
    /// the body.
    pub fn decide(&mut self, admit: bool) {
        match &mut self.state {
            Legacy::Announced(header) if admit => self.state = Legacy::Body(Body::new(*header)),
            Legacy::Announced(header) => {
                let header = *header;
                self.skip(header, false);
            }
            Legacy::Body(body) if body.asking() && admit => body.give_room(),
            Legacy::Body(body) if body.asking() => {
                self.state = Legacy::Skip {
                    header: body.header(),
                    remaining: body.missing(),
                    too_big: false,
                }
            }
            _ => {}
        }
    }

    fn pending_body(&self) -> Option<usize> {
        match &self.state {
            Legacy::Header => None,
            Legacy::Announced(header) | Legacy::Skip { header, .. } => Some(body_len(header)),
            Legacy::Body(body) => Some(body_len(&body.header())),
        }
    }
}

/// An envelope spread over non-self-contained segments.
enum Large {
    /// Its first part is in; waiting for [`V5Decoder::decide`].
    Announced {
        header: Header,
        first: Bytes,
        remaining: usize,
    },
    /// Admitted: `pending` arrived and waits for room in `body`.
    Collect { body: Body, pending: Bytes },
    /// Skipped; `too_big` reports it once skipped.
    Skip {
        header: Header,
        remaining: usize,
        too_big: bool,
    },
}

impl Large {
    fn header(&self) -> Header {
        match self {
            Large::Announced { header, .. } | Large::Skip { header, .. } => *header,
            Large::Collect { body, .. } => body.header(),
        }
    }
}

/// v5 framing: segments holding whole envelopes, or one part of a large envelope each.
pub struct V5Decoder {
    max_body: usize,
    lz4: bool,
    ready: VecDeque<Inbound>,
    large: Option<Large>,
}

impl V5Decoder {
    pub fn new(max_body: usize, lz4: bool) -> V5Decoder {
        V5Decoder {
            max_body,
            lz4,
            ready: VecDeque::new(),
            large: None,
        }
    }

    pub fn next(&mut self, buf: &mut BytesMut) -> Result<Option<Inbound>, Fatal> {
        while self.ready.is_empty() {
            match &mut self.large {
                Some(Large::Announced { .. }) => return Ok(None),
                Some(Large::Collect { body, pending }) if !pending.is_empty() => {
                    if let Err(unit) = body.offer(pending) {
                        return Ok(unit);
                    }
                    *pending = Bytes::new();
                    self.finish_large();
                    continue;
                }
                _ => {}
            }
            let segment = match read_segment(buf, self.lz4) {
                Ok(Some(s)) => s,
                Ok(None) => return Ok(None),
                Err(e) => return fatal(5, 0, e.to_string()),
            };
            self.on_segment(segment)?;
        }
        Ok(self.ready.pop_front())
    }

    fn on_segment(&mut self, segment: Segment) -> Result<(), Fatal> {
        match (segment.self_contained, self.large.is_some()) {
            (true, false) => self.split_envelopes(segment.payload),
            (false, false) => self.start_large(segment.payload),
            (false, true) => self.continue_large(segment.payload),
            (true, true) => fatal(
                5,
                0,
                "Self-contained frame received inside a large envelope",
            ),
        }
    }

    fn split_envelopes(&mut self, mut payload: Bytes) -> Result<(), Fatal> {
        while !payload.is_empty() {
            if payload.len() < HEADER_LEN {
                return fatal(5, 0, "Incomplete envelope header in self-contained frame");
            }
            let header = parse_header(&payload)?;
            let len = header.length as usize;
            if payload.len() < HEADER_LEN + len {
                return fatal(
                    5,
                    header.stream,
                    "Incomplete envelope in self-contained frame",
                );
            }
            payload.advance(HEADER_LEN);
            // A copy for the same reason as in `LegacyDecoder::next`: the payload may be a
            // slice of the connection's read buffer.
            let body = Bytes::copy_from_slice(&payload[..len]);
            payload.advance(len);
            self.ready.push_back(if len > self.max_body {
                Inbound::TooBig { header }
            } else {
                Inbound::Envelope { header, body }
            });
        }
        Ok(())
    }

    fn start_large(&mut self, payload: Bytes) -> Result<(), Fatal> {
        if payload.len() < HEADER_LEN {
            return fatal(
                5,
                0,
                "Incomplete envelope header in first frame of a large envelope",
            );
        }
        let header = parse_header(&payload)?;
        let total = HEADER_LEN + header.length as usize;
        if payload.len() > total {
            return fatal(5, header.stream, "Frame holds more than one large envelope");
        }
        let remaining = total - payload.len();
        if body_len(&header) > self.max_body {
            self.large = Some(Large::Skip {
                header,
                remaining,
                too_big: true,
            });
            self.finish_large();
        } else {
            self.large = Some(Large::Announced {
                header,
                first: payload.slice(HEADER_LEN..),
                remaining,
            });
            self.ready.push_back(Inbound::Announced { header });
        }
        Ok(())
    }

    /// Collects the announced envelope or skips it; gives the room asked for, or skips the
    /// rest of the envelope.
    pub fn decide(&mut self, admit: bool) {
        self.large = match self.large.take() {
            Some(Large::Announced { header, first, .. }) if admit => Some(Large::Collect {
                body: Body::new(header),
                pending: first,
            }),
            Some(Large::Announced {
                header, remaining, ..
            }) => Some(Large::Skip {
                header,
                remaining,
                too_big: false,
            }),
            Some(Large::Collect { mut body, pending }) if body.asking() && admit => {
                body.give_room();
                Some(Large::Collect { body, pending })
            }
            Some(Large::Collect { body, pending }) if body.asking() => Some(Large::Skip {
                header: body.header(),
                remaining: body.missing() - pending.len(),
                too_big: false,
            }),
            other => other,
        };
        self.finish_large();
    }

    fn pending_body(&self) -> Option<usize> {
        self.large.as_ref().map(|large| body_len(&large.header()))
    }

    fn continue_large(&mut self, payload: Bytes) -> Result<(), Fatal> {
        let (stream, remaining) = match self.large.as_mut() {
            Some(Large::Collect { body, pending }) => {
                if payload.len() > body.missing() {
                    let stream = body.header().stream;
                    return fatal(5, stream, "Frame overruns its large envelope");
                }
                *pending = payload;
                return Ok(());
            }
            Some(Large::Skip {
                header, remaining, ..
            }) => (header.stream, remaining),
            Some(Large::Announced { .. }) | None => return Ok(()),
        };
        if payload.len() > *remaining {
            return fatal(5, stream, "Frame overruns its large envelope");
        }
        *remaining -= payload.len();
        self.finish_large();
        Ok(())
    }

    fn finish_large(&mut self) {
        let done = match &self.large {
            Some(Large::Collect { body, pending }) => body.missing() == 0 && pending.is_empty(),
            Some(Large::Skip { remaining, .. }) => *remaining == 0,
            Some(Large::Announced { .. }) | None => false,
        };
        if !done {
            return;
        }
        match self.large.take() {
            Some(Large::Collect { body, .. }) => self.ready.push_back(Inbound::Envelope {
                header: body.header(),
                body: body.into_bytes(),
            }),
            Some(Large::Skip {
                header,
                too_big: true,
                ..
            }) => self.ready.push_back(Inbound::TooBig { header }),
            _ => {}
        }
    }
}

/// The framing currently applied to inbound bytes.
pub enum Framer {
    Legacy(LegacyDecoder),
    V5(V5Decoder),
}

impl Framer {
    pub fn next(&mut self, buf: &mut BytesMut) -> Result<Option<Inbound>, Fatal> {
        match self {
            Framer::Legacy(d) => d.next(buf),
            Framer::V5(d) => d.next(buf),
        }
    }

    /// After [`Inbound::Announced`]: `true` reads the body, `false` skips it. After
    /// [`Inbound::Grow`]: `true` gives the room (reserved now), `false` skips the rest of the
    /// body.
    pub fn decide(&mut self, admit: bool) {
        match self {
            Framer::Legacy(d) => d.decide(admit),
            Framer::V5(d) => d.decide(admit),
        }
    }

    /// The declared body length of the envelope being received, if one is begun past its
    /// header.
    pub fn pending_body(&self) -> Option<usize> {
        match self {
            Framer::Legacy(d) => d.pending_body(),
            Framer::V5(d) => d.pending_body(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{write_segment, SegmentPacker, MAX_PAYLOAD};
    use bytes::BufMut;

    fn request(version: u8, stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![version, 0];
        out.extend_from_slice(&stream.to_be_bytes());
        out.push(opcode);
        out.extend_from_slice(&(body.len() as i32).to_be_bytes());
        out.extend_from_slice(body);
        out
    }

    /// Every unit `buf` yields, admitting announced bodies and giving the room they ask for.
    fn drain(framer: &mut Framer, buf: &mut BytesMut) -> Vec<Inbound> {
        drain_growing(framer, buf, &mut Vec::new())
    }

    /// As [`drain`], noting the room each body asks for in `steps`.
    fn drain_growing(
        framer: &mut Framer,
        buf: &mut BytesMut,
        steps: &mut Vec<usize>,
    ) -> Vec<Inbound> {
        let mut got = Vec::new();
        while let Some(i) = framer.next(buf).unwrap() {
            match i {
                Inbound::Announced { .. } => framer.decide(true),
                Inbound::Grow { bytes, .. } => {
                    steps.push(bytes);
                    framer.decide(true);
                }
                other => got.push(other),
            }
        }
        got
    }

    /// The streams of `got`, which must all be envelopes.
    fn streams(got: &[Inbound]) -> Vec<i16> {
        got.iter()
            .map(|i| match i {
                Inbound::Envelope { header, .. } => header.stream,
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[test]
    fn legacy_bodies_not_yet_in_are_announced_then_read_or_skipped() {
        for admit in [true, false] {
            let mut framer = Framer::Legacy(LegacyDecoder::new(1 << 20));
            let big = vec![7u8; 100_000];
            let wire = [request(4, 1, 7, &big), request(4, 2, 5, b"")].concat();
            let mut buf = BytesMut::from(&wire[..1000]);
            let Ok(Some(Inbound::Announced { header })) = framer.next(&mut buf) else {
                panic!("not announced")
            };
            assert_eq!((header.stream, header.length), (1, 100_000));
            assert_eq!(framer.pending_body(), Some(100_000));
            assert_eq!(
                framer.next(&mut buf),
                Ok(None),
                "nothing before the decision"
            );
            framer.decide(admit);
            let (mut got, mut steps) = (Vec::new(), Vec::new());
            for chunk in wire[1000..].chunks(4096) {
                buf.put_slice(chunk);
                got.extend(drain_growing(&mut framer, &mut buf, &mut steps));
            }
            if let Some(Inbound::Envelope { body, .. }) = got.first().filter(|_| admit) {
                assert_eq!(body[..], big[..]);
            }
            assert_eq!(streams(&got), if admit { vec![1, 2] } else { vec![2] });
            // A short body asks for all its room once, when its first bytes are read.
            assert_eq!(steps, if admit { vec![100_000] } else { vec![] });
            assert_eq!(framer.pending_body(), None);
        }
    }

    /// A long body asks for room as its bytes arrive, never before; room refused skips the
    /// rest of the body and the stream goes on.
    #[test]
    fn a_long_body_asks_for_room_as_it_arrives() {
        for (framing, give) in [(4, true), (4, false), (5, true), (5, false)] {
            let length = 600_000;
            let big = request(framing, 1, 7, &vec![5u8; length]);
            let next = request(framing, 2, 5, b"");
            let (mut framer, wire) = if framing == 4 {
                let framer = Framer::Legacy(LegacyDecoder::new(1 << 20));
                (framer, [big, next].concat())
            } else {
                let mut packer = SegmentPacker::new(false);
                let mut wire = BytesMut::new();
                packer.push(&big, &mut wire);
                packer.push(&next, &mut wire);
                packer.flush(&mut wire);
                (Framer::V5(V5Decoder::new(1 << 20, false)), wire.to_vec())
            };
            let (mut asked, mut got) = (Vec::new(), Vec::new());
            let mut buf = BytesMut::new();
            for chunk in wire.chunks(64 << 10) {
                buf.put_slice(chunk);
                while let Some(i) = framer.next(&mut buf).unwrap() {
                    match i {
                        Inbound::Announced { .. } => framer.decide(true),
                        Inbound::Grow { header, bytes } => {
                            assert_eq!(header.stream, 1);
                            asked.push(bytes);
                            // Refused at the third step, when half the body is in.
                            framer.decide(give || asked.len() < 3);
                        }
                        other => got.push(other),
                    }
                }
            }
            let k = 128 << 10;
            if give {
                assert_eq!(asked, vec![k, k, 2 * k, length - 4 * k], "{framing}");
                assert_eq!(streams(&got), vec![1, 2]);
            } else {
                assert_eq!(asked, vec![k, k, 2 * k], "{framing}");
                assert_eq!(streams(&got), vec![2], "the rest skipped ({framing})");
            }
        }
    }

    #[test]
    fn v5_large_envelopes_are_announced_then_read_or_skipped() {
        for admit in [true, false] {
            let mut framer = Framer::V5(V5Decoder::new(1 << 20, false));
            let mut packer = SegmentPacker::new(false);
            let mut wire = BytesMut::new();
            packer.push(&request(5, 1, 7, &vec![1u8; MAX_PAYLOAD * 2]), &mut wire);
            packer.push(&request(5, 2, 5, b""), &mut wire);
            packer.flush(&mut wire);
            let Ok(Some(Inbound::Announced { header })) = framer.next(&mut wire) else {
                panic!("not announced")
            };
            assert_eq!(header.stream, 1);
            assert_eq!(
                framer.next(&mut wire),
                Ok(None),
                "nothing before the decision"
            );
            framer.decide(admit);
            let got = drain(&mut framer, &mut wire);
            assert_eq!(streams(&got), if admit { vec![1, 2] } else { vec![2] });
        }
    }

    #[test]
    fn legacy_envelopes_and_partial_input() {
        let mut framer = Framer::Legacy(LegacyDecoder::new(100));
        let bytes = [request(4, 1, 5, b""), request(4, 2, 7, b"body")].concat();
        let mut buf = BytesMut::from(&bytes[..12]);
        let first = drain(&mut framer, &mut buf);
        assert_eq!(first.len(), 1);
        buf.put_slice(&bytes[12..]);
        let rest = drain(&mut framer, &mut buf);
        let Inbound::Envelope { header, body } = &rest[0] else {
            panic!("not an envelope")
        };
        assert_eq!(
            (header.stream, header.opcode, &body[..]),
            (2, 7, &b"body"[..])
        );
    }

    /// Request values end up in memtables; a body that sliced the read buffer would pin the
    /// whole buffer (64 KiB per socket read) until the memtable is flushed.
    #[test]
    fn envelope_bodies_do_not_share_the_read_buffer() {
        let mut legacy = Framer::Legacy(LegacyDecoder::new(1000));
        let mut buf = BytesMut::with_capacity(64 * 1024);
        buf.put_slice(
            &[
                request(4, 1, 7, b"value one"),
                request(4, 2, 7, b"value two"),
            ]
            .concat(),
        );
        let (start, end) = (
            buf.as_ptr() as usize,
            buf.as_ptr() as usize + buf.capacity(),
        );
        let got = drain(&mut legacy, &mut buf);
        assert_eq!(got.len(), 2);
        for inbound in &got {
            let Inbound::Envelope { body, .. } = inbound else {
                panic!("not an envelope")
            };
            assert!(body.starts_with(b"value"));
            let p = body.as_ptr() as usize;
            assert!(p < start || p >= end, "legacy body slices the read buffer");
        }
        // With no body holding on to it, the connection can reuse its buffer.
        buf.reserve(64 * 1024);
        assert_eq!(buf.as_ptr() as usize, start);

        let mut v5 = V5Decoder::new(1000, false);
        let mut payload = BytesMut::new();
        payload.put_slice(&[request(5, 3, 7, b"value three"), request(5, 4, 7, b"four")].concat());
        let segment = payload.freeze();
        let (start, len) = (segment.as_ptr() as usize, segment.len());
        v5.split_envelopes(segment).expect("split");
        assert_eq!(v5.ready.len(), 2);
        for inbound in &v5.ready {
            let Inbound::Envelope { body, .. } = inbound else {
                panic!("not an envelope")
            };
            let p = body.as_ptr() as usize;
            assert!(
                p < start || p >= start + len,
                "v5 body slices the segment payload"
            );
        }
    }

    #[test]
    fn legacy_too_big_is_skipped_and_stream_continues() {
        let mut framer = Framer::Legacy(LegacyDecoder::new(4));
        let bytes = [request(4, 3, 7, &[0; 50]), request(4, 4, 5, b"")].concat();
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for chunk in bytes.chunks(7) {
            buf.put_slice(chunk);
            got.extend(drain(&mut framer, &mut buf));
        }
        assert!(matches!(&got[0], Inbound::TooBig { header } if header.stream == 3));
        assert!(matches!(&got[1], Inbound::Envelope { header, .. } if header.stream == 4));
    }

    #[test]
    fn legacy_bad_version_and_negative_length_are_fatal() {
        let mut framer = Framer::Legacy(LegacyDecoder::new(100));
        let err = framer.next(&mut BytesMut::from(&[0x02u8][..])).unwrap_err();
        assert_eq!(err.version, 2);
        let err = framer.next(&mut BytesMut::from(&[0x06u8][..])).unwrap_err();
        assert_eq!(err.version, 5);
        assert!(err.message.contains("(6)"));
        let mut neg = BytesMut::from(&[4u8, 0, 0, 1, 7, 0xff, 0xff, 0xff, 0xff][..]);
        assert!(framer.next(&mut neg).is_err());
    }

    #[test]
    fn v5_packed_and_large_envelopes() {
        for lz4 in [false, true] {
            let mut framer = Framer::V5(V5Decoder::new(1 << 20, lz4));
            let mut packer = SegmentPacker::new(lz4);
            let mut wire = BytesMut::new();
            let big = vec![3u8; MAX_PAYLOAD * 2];
            packer.push(&request(5, 1, 7, b"a"), &mut wire);
            packer.push(&request(5, 2, 7, b"b"), &mut wire);
            packer.push(&request(5, 3, 7, &big), &mut wire);
            packer.flush(&mut wire);
            let got = drain(&mut framer, &mut wire);
            assert_eq!(got.len(), 3);
            let Inbound::Envelope { header, body } = &got[2] else {
                panic!("not an envelope")
            };
            assert_eq!((header.stream, body.len()), (3, big.len()));
        }
    }

    #[test]
    fn v5_large_envelope_over_limit_is_skipped() {
        let mut framer = Framer::V5(V5Decoder::new(1000, false));
        let mut packer = SegmentPacker::new(false);
        let mut wire = BytesMut::new();
        packer.push(&request(5, 8, 7, &vec![0u8; MAX_PAYLOAD + 5]), &mut wire);
        packer.push(&request(5, 9, 5, b""), &mut wire);
        packer.flush(&mut wire);
        let got = drain(&mut framer, &mut wire);
        assert!(matches!(&got[0], Inbound::TooBig { header } if header.stream == 8));
        assert!(matches!(&got[1], Inbound::Envelope { header, .. } if header.stream == 9));
    }

    #[test]
    fn v5_broken_segments_are_fatal() {
        let mut framer = Framer::V5(V5Decoder::new(1000, false));
        let mut wire = BytesMut::new();
        write_segment(&mut wire, &request(5, 1, 7, b"abc")[..10], true, false);
        assert!(framer.next(&mut wire).is_err());
        let mut framer = Framer::V5(V5Decoder::new(1000, false));
        let mut garbage = BytesMut::from(&[1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10][..]);
        assert!(framer.next(&mut garbage).is_err());
    }
}
