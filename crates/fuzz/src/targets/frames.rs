//! The native protocol's inbound path: legacy envelopes (with LZ4-compressed bodies) and v5
//! segments (plain and LZ4), then request decoding. The input is a mode byte, a byte that
//! seeds how the stream is cut into reads, then the stream. Properties: decoding never
//! panics or stops making progress, and the envelopes (or the fatal error) are the same
//! whether the stream arrives at once or a few bytes at a time.

use bytes::{BufMut, BytesMut};
use transport::fuzzing::{
    append_compressed, decode_request, decompress_body, Fatal, Framer, Inbound, LegacyDecoder,
    Opcode, SegmentPacker, V5Decoder, FLAG_COMPRESSED, HEADER_LEN,
};

use crate::driver::Target;
use crate::mutate::mutate;
use crate::rng::Rng;

pub const TARGET: Target = Target {
    name: "frames",
    seeds,
    generate,
    mutate: Some(mutate_inside),
    run,
    short_iterations: 1500,
};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Legacy,
    LegacyLz4,
    V5,
    V5Lz4,
}

impl Mode {
    fn of(byte: u8) -> Mode {
        [Mode::Legacy, Mode::LegacyLz4, Mode::V5, Mode::V5Lz4][usize::from(byte & 3)]
    }

    fn framer(self, max_body: usize) -> Framer {
        match self {
            Mode::Legacy | Mode::LegacyLz4 => Framer::Legacy(LegacyDecoder::new(max_body)),
            Mode::V5 => Framer::V5(V5Decoder::new(max_body, false)),
            Mode::V5Lz4 => Framer::V5(V5Decoder::new(max_body, true)),
        }
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut rng = Rng::new(17);
    (0..24).map(|_| generate(&mut rng)).collect()
}

fn generate(rng: &mut Rng) -> Vec<u8> {
    let mode_byte = rng.below(4) as u8;
    let mode = Mode::of(mode_byte);
    let version = match mode {
        Mode::V5 | Mode::V5Lz4 => 5,
        _ => 3 + rng.below(2) as u8,
    };
    let envelopes: Vec<Vec<u8>> = (0..1 + rng.below(4))
        .map(|_| envelope(rng, version))
        .collect();
    let mut out = vec![mode_byte, rng.byte()];
    out.extend_from_slice(&frame(rng, mode, &envelopes));
    out
}

fn frame(rng: &mut Rng, mode: Mode, envelopes: &[Vec<u8>]) -> Vec<u8> {
    let mut out = BytesMut::new();
    match mode {
        Mode::Legacy => envelopes.iter().for_each(|e| out.extend_from_slice(e)),
        Mode::LegacyLz4 => {
            for e in envelopes {
                // The server's own encoder: it takes whole envelopes only.
                match rng.one_in(4) || e.len() < HEADER_LEN {
                    true => out.extend_from_slice(e),
                    false => append_compressed(&mut out, e),
                }
            }
        }
        Mode::V5 | Mode::V5Lz4 => {
            let mut packer = SegmentPacker::new(mode == Mode::V5Lz4);
            for e in envelopes {
                packer.push(e, &mut out);
            }
            packer.flush(&mut out);
        }
    }
    out.to_vec()
}

/// Mutates the envelopes inside the input's framing and frames them again, so the segment
/// checksums hold and the mutations reach the envelope and request decoders.
fn mutate_inside(rng: &mut Rng, base: &[u8], _: &[Vec<u8>]) -> Vec<u8> {
    let [mode_byte, cut, stream @ ..] = base else {
        return generate(rng);
    };
    let mode = Mode::of(*mode_byte);
    let mut envelopes = match decode(mode, 1 << 20, stream, &mut |n| n, &mut |_| true) {
        Ok(decoded) => decoded.inbound.into_iter().filter_map(unframed).collect(),
        Err(_) => Vec::new(),
    };
    if envelopes.is_empty() {
        envelopes.push(envelope(rng, 5));
    }
    let at = rng.below(envelopes.len());
    let others = envelopes.clone();
    mutate(rng, &mut envelopes[at], &others, 4);
    let mut out = vec![*mode_byte, *cut];
    out.extend_from_slice(&frame(rng, mode, &envelopes));
    out
}

/// An envelope's bytes again, its body decompressed.
fn unframed(inbound: Inbound) -> Option<Vec<u8>> {
    let Inbound::Envelope { header, body } = inbound else {
        return None;
    };
    let body = match header.flags & FLAG_COMPRESSED != 0 {
        true => decompress_body(&body, 1 << 20).ok()?,
        false => body,
    };
    let mut out = vec![header.version | u8::from(header.response) << 7];
    out.push(header.flags & !FLAG_COMPRESSED);
    out.put_i16(header.stream);
    out.push(header.opcode);
    out.put_u32(body.len() as u32);
    out.extend_from_slice(&body);
    Some(out)
}

/// One request envelope of `version`, its body written from the spec.
fn envelope(rng: &mut Rng, version: u8) -> Vec<u8> {
    let (opcode, body) = request(rng, version);
    let mut out = vec![version, 0];
    out.put_i16(rng.below(64) as i16);
    out.push(opcode);
    out.put_u32(body.len() as u32);
    out.extend_from_slice(&body);
    out
}

fn request(rng: &mut Rng, version: u8) -> (u8, Vec<u8>) {
    let mut b = Vec::new();
    let opcode = match rng.below(8) {
        0 => {
            b.put_u16(2);
            put_string(&mut b, "CQL_VERSION");
            put_string(&mut b, "3.0.0");
            put_string(&mut b, "COMPRESSION");
            put_string(&mut b, "lz4");
            0x01
        }
        1 => 0x05,
        2 => {
            put_long_string(&mut b, &query_text(rng));
            query_parameters(rng, version, &mut b);
            0x07
        }
        3 => {
            put_long_string(&mut b, &query_text(rng));
            if version >= 5 {
                b.put_i32(1);
                put_string(&mut b, "ks");
            }
            0x09
        }
        4 => {
            put_short_bytes(&mut b, &rng.bytes(16));
            if version >= 5 {
                put_short_bytes(&mut b, &rng.bytes(16));
            }
            query_parameters(rng, version, &mut b);
            0x0A
        }
        5 => {
            batch(rng, version, &mut b);
            0x0D
        }
        6 => {
            b.put_u16(2);
            put_string(&mut b, "SCHEMA_CHANGE");
            put_string(&mut b, "STATUS_CHANGE");
            0x0B
        }
        _ => {
            put_value(&mut b, Some(&rng.blob(32)));
            0x0F
        }
    };
    (opcode, b)
}

fn query_text(rng: &mut Rng) -> String {
    let filler = "x".repeat(rng.size(200));
    format!("SELECT * FROM ks.t WHERE k = ? AND c = '{filler}'")
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.put_u16(s.len() as u16);
    out.extend_from_slice(s.as_bytes());
}

fn put_long_string(out: &mut Vec<u8>, s: &str) {
    out.put_i32(s.len() as i32);
    out.extend_from_slice(s.as_bytes());
}

fn put_short_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.put_u16(b.len() as u16);
    out.extend_from_slice(b);
}

fn put_value(out: &mut Vec<u8>, value: Option<&[u8]>) {
    match value {
        Some(v) => {
            out.put_i32(v.len() as i32);
            out.extend_from_slice(v);
        }
        None => out.put_i32(-1),
    }
}

/// Fewer than `max` `[value]`s: values, nulls and (v4+) unsets.
fn put_values(rng: &mut Rng, out: &mut Vec<u8>, max: usize, named: bool) {
    let count = rng.below(max);
    out.put_u16(count as u16);
    for i in 0..count {
        if named {
            put_string(out, &format!("v{i}"));
        }
        match rng.below(5) {
            0 => out.put_i32(-1),
            1 => out.put_i32(-2),
            _ => put_value(out, Some(&rng.blob(24))),
        }
    }
}

fn put_flags(out: &mut Vec<u8>, version: u8, flags: u32) {
    match version >= 5 {
        true => out.put_u32(flags),
        false => out.put_u8(flags as u8),
    }
}

/// `<consistency><flags>[values][page size][paging state][serial][timestamp][keyspace][now]`.
fn query_parameters(rng: &mut Rng, version: u8, out: &mut Vec<u8>) {
    let mut flags = (rng.next_u64() & 0x7f) as u32;
    if version >= 5 {
        flags |= (rng.next_u64() & 0x180) as u32;
    }
    out.put_u16(rng.below(11) as u16);
    put_flags(out, version, flags);
    if flags & 0x01 != 0 {
        put_values(rng, out, 4, flags & 0x40 != 0);
    }
    if flags & 0x04 != 0 {
        out.put_i32(rng.edgy_i64() as i32);
    }
    if flags & 0x08 != 0 {
        put_value(out, Some(&rng.blob(16)));
    }
    if flags & 0x10 != 0 {
        out.put_u16(8 + rng.below(2) as u16);
    }
    if flags & 0x20 != 0 {
        out.put_i64(rng.edgy_i64());
    }
    if flags & 0x80 != 0 {
        put_string(out, "ks");
    }
    if flags & 0x100 != 0 {
        out.put_i32(rng.edgy_i64() as i32);
    }
}

fn batch(rng: &mut Rng, version: u8, out: &mut Vec<u8>) {
    out.push(rng.below(3) as u8);
    let n = rng.below(4);
    out.put_u16(n as u16);
    for _ in 0..n {
        match rng.one_in(2) {
            true => {
                out.push(0);
                put_long_string(out, &query_text(rng));
            }
            false => {
                out.push(1);
                put_short_bytes(out, &rng.bytes(16));
            }
        }
        put_values(rng, out, 3, false);
    }
    out.put_u16(rng.below(11) as u16);
    let flags = (rng.next_u64() & 0x30) as u32;
    put_flags(out, version, flags);
    if flags & 0x10 != 0 {
        out.put_u16(8);
    }
    if flags & 0x20 != 0 {
        out.put_i64(rng.edgy_i64());
    }
}

/// What decoding a stream produced: envelopes in order, then a fatal error if one ended it.
#[derive(Debug, PartialEq)]
struct Decoded {
    inbound: Vec<Inbound>,
    fatal: Option<Fatal>,
}

fn run(input: &[u8]) -> Result<(), String> {
    check(input).map(|_| ())
}

/// Runs the properties on one input; returns how many requests decoded.
fn check(input: &[u8]) -> Result<usize, String> {
    let [mode, cut, stream @ ..] = input else {
        return Ok(0);
    };
    let mode = Mode::of(*mode);
    let max_body = if cut & 0x80 != 0 { 200 } else { 1 << 20 };
    let whole = decode(mode, max_body, stream, &mut |n| n, &mut |_| true)?;
    let mut cuts = Rng::new(u64::from(*cut));
    let mut sizes = |_: usize| 1 + cuts.below(40);
    let pieces = decode(mode, max_body, stream, &mut sizes, &mut |_| true)?;
    if pieces != whole {
        return Err(format!(
            "a stream read in pieces decodes differently from the whole:\n{pieces:?}\n{whole:?}"
        ));
    }
    let mut choices = Rng::new(u64::from(*cut) << 8);
    decode(mode, max_body, stream, &mut |n| n, &mut |_| {
        choices.one_in(2)
    })?;
    Ok(whole
        .inbound
        .into_iter()
        .filter(|e| decode_body(mode, e.clone()))
        .count())
}

/// Feeds `stream` to a framer in reads of `read_size` bytes, answering each announced body
/// and each body's call for room with `admit`. Both are left out of the result (an admitted
/// body follows as an envelope).
fn decode(
    mode: Mode,
    max_body: usize,
    stream: &[u8],
    read_size: &mut dyn FnMut(usize) -> usize,
    admit: &mut dyn FnMut(usize) -> bool,
) -> Result<Decoded, String> {
    let mut framer = mode.framer(max_body);
    let mut buf = BytesMut::new();
    let mut decoded = Decoded {
        inbound: Vec::new(),
        fatal: None,
    };
    let mut budget = 4 * stream.len() + 16;
    let mut rest = stream;
    while !rest.is_empty() {
        let (read, left) = rest.split_at(read_size(rest.len()).min(rest.len()));
        rest = left;
        buf.extend_from_slice(read);
        loop {
            budget = budget
                .checked_sub(1)
                .ok_or("the framer yields more units than the stream can hold")?;
            match framer.next(&mut buf) {
                Ok(Some(Inbound::Announced { .. } | Inbound::Grow { .. })) => {
                    framer.decide(admit(budget))
                }
                Ok(Some(unit)) => decoded.inbound.push(unit),
                Ok(None) => break,
                Err(fatal) => {
                    decoded.fatal = Some(fatal);
                    return Ok(decoded);
                }
            }
        }
    }
    Ok(decoded)
}

/// Decompresses (legacy LZ4) and decodes the request an envelope carries, as the connection
/// does; any outcome but a panic is fine. True when a request came out.
fn decode_body(mode: Mode, inbound: Inbound) -> bool {
    let Inbound::Envelope { header, body } = inbound else {
        return false;
    };
    let body = match mode == Mode::LegacyLz4 && header.flags & FLAG_COMPRESSED != 0 {
        true => match decompress_body(&body, 1 << 20) {
            Ok(body) => body,
            Err(_) => return false,
        },
        false => body,
    };
    Opcode::from_byte(header.opcode)
        .is_some_and(|op| decode_request(header.version, header.flags, op, body).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Fuzzer;

    /// Guards the fuzzer's reach: most inputs must get through the framing checksums to
    /// the request decoder, mutated or not.
    #[test]
    fn inputs_reach_the_request_decoder() {
        let mut fuzzer = Fuzzer::new(&TARGET, 1);
        let decoded: Vec<usize> = (0..1000)
            .map(|i| check(&fuzzer.next_input(i)).expect("no failure"))
            .collect();
        let reaching = decoded.iter().filter(|n| **n > 0).count();
        assert!(
            reaching > 300,
            "only {reaching} of 1000 inputs decoded a request"
        );
    }
}
