//! Internode messaging's decoders (`net`): frames (CRC32-checked header and payload, LZ4
//! payloads, size limits) and the handshake both sides read. Mutated inputs have their
//! checksums recomputed half of the time so the mutations reach the fields behind them.
//! Properties: no panic or hang; a decoded frame encodes and decodes to itself; an accepted
//! handshake is from our cluster, and a connection never speaks below the oldest version.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use net::fuzzing::{accept, encode, initiate, read_frame, Frame, FrameError, Hello, Kind, Limits};
use net::{Class, HostId, MESSAGING_VERSION, MIN_MESSAGING_VERSION};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use uuid::Uuid;

use super::reseal::{reseal, Framing};
use crate::driver::Target;
use crate::mutate::mutate;
use crate::rng::Rng;

pub const TARGET: Target = Target {
    name: "internode",
    seeds,
    generate,
    mutate: Some(mutate_and_fix),
    run,
    short_iterations: 2000,
};

const FRAME_HEADER: usize = 28;
/// A frame: a 28-byte header with the CRC32 of its first 24 bytes last, payload, CRC32.
const FRAMES: Framing = Framing {
    header_len: FRAME_HEADER,
    crc_at: 24,
    zero_ends: false,
};
const MAGIC: &[u8] = b"HLNS";
const CLUSTER: &str = "Test Cluster";

/// Input: a mode byte (frames with a large or a small limit, a hello to accept, an answer
/// to our hello), then the bytes the peer sent.
fn run(input: &[u8]) -> Result<(), String> {
    let [mode, stream @ ..] = input else {
        return Ok(());
    };
    match mode % 4 {
        0 => frames(stream, 1 << 20),
        1 => frames(stream, 300),
        2 => accepted(stream),
        _ => initiated(stream),
    }
}

/// Polls a future that never waits (its reads come from a slice) to its end.
fn finish<F: Future>(future: F) -> Result<F::Output, String> {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(out) => Ok(out),
        Poll::Pending => Err("a decoder waits for input with all of it available".into()),
    }
}

fn frames(mut stream: &[u8], max_message: usize) -> Result<(), String> {
    let limits = Limits {
        version: MESSAGING_VERSION,
        max_message,
    };
    for _ in 0..=stream.len() / FRAME_HEADER {
        match finish(read_frame(&mut stream, limits))? {
            Ok(frame) => round_trip(&frame, limits)?,
            Err(FrameError::Closed) => return Ok(()),
            Err(_) => return Ok(()),
        }
    }
    Err("more frames read than the stream can hold".into())
}

fn round_trip(frame: &Frame, limits: Limits) -> Result<(), String> {
    for compress in [false, true] {
        let mut bytes = Vec::new();
        finish(encode(frame, limits.version, compress).write_to(&mut bytes))?
            .map_err(|e| e.to_string())?;
        let big = Limits {
            max_message: usize::MAX,
            ..limits
        };
        match finish(read_frame(&mut &bytes[..], big))? {
            Ok(again) if again == *frame => {}
            other => {
                return Err(format!(
                    "{frame:?} encodes to a frame that reads as {other:?}"
                ))
            }
        }
    }
    Ok(())
}

fn ours() -> Hello {
    Hello {
        version: MESSAGING_VERSION,
        host_id: HostId::from_bytes([7; 16]),
        listen: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 7000),
        cluster_name: CLUSTER.into(),
    }
}

fn accepted(stream: &[u8]) -> Result<(), String> {
    let mut peer = Peer::new(stream);
    if let Ok((_, theirs, version)) = finish(accept(&mut peer, &ours()))? {
        if theirs.cluster_name != CLUSTER || version < MIN_MESSAGING_VERSION {
            return Err(format!("accepted {theirs:?} at version {version}"));
        }
    }
    Ok(())
}

fn initiated(stream: &[u8]) -> Result<(), String> {
    let mut peer = Peer::new(stream);
    if let Ok((theirs, version)) = finish(initiate(&mut peer, &ours(), Class::Small))? {
        if version < MIN_MESSAGING_VERSION || version > MESSAGING_VERSION {
            return Err(format!("connected to {theirs:?} at version {version}"));
        }
    }
    Ok(())
}

/// A peer whose bytes are the input; what we send is kept and ignored.
struct Peer<'a> {
    input: &'a [u8],
    sent: Vec<u8>,
}

impl<'a> Peer<'a> {
    fn new(input: &'a [u8]) -> Peer<'a> {
        Peer {
            input,
            sent: Vec::new(),
        }
    }
}

impl AsyncRead for Peer<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.input).poll_read(cx, buf)
    }
}

impl AsyncWrite for Peer<'_> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.sent.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut rng = Rng::new(23);
    (0..16).map(|_| generate(&mut rng)).collect()
}

fn generate(rng: &mut Rng) -> Vec<u8> {
    let mode = rng.below(4) as u8;
    let mut out = vec![mode];
    match mode {
        0 | 1 => (0..1 + rng.below(3)).for_each(|_| out.extend(frame_bytes(rng))),
        _ => out.extend(hello_bytes(rng)),
    }
    out
}

fn frame_bytes(rng: &mut Rng) -> Vec<u8> {
    let payload = match rng.one_in(2) {
        true => vec![rng.byte(); rng.size(2000)],
        false => rng.blob(600),
    };
    let mut frame = Frame::new(
        *rng.pick(&Kind::ALL),
        rng.byte(),
        rng.next_u64(),
        Bytes::from(payload),
    );
    frame.timeout_ms = rng.edgy_i64() as u32;
    let mut out = Vec::new();
    let written = finish(encode(&frame, MESSAGING_VERSION, rng.one_in(2)).write_to(&mut out));
    debug_assert!(
        matches!(written, Ok(Ok(()))),
        "writing to a Vec cannot fail"
    );
    out
}

/// A hello (or an answer: the tag is the verdict) as the handshake writes it.
fn hello_bytes(rng: &mut Rng) -> Vec<u8> {
    let mut body = vec![rng.below(3) as u8, rng.below(3) as u8];
    body.extend_from_slice(Uuid::from_u128(u128::from(rng.next_u64())).as_bytes());
    match rng.one_in(2) {
        true => {
            body.push(4);
            body.extend_from_slice(&Ipv4Addr::new(127, 0, 0, rng.byte()).octets());
        }
        false => {
            body.push(6);
            body.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        }
    }
    body.extend_from_slice(&7000u16.to_be_bytes());
    let name = match rng.one_in(3) {
        true => "Other Cluster".to_string(),
        false => CLUSTER.to_string(),
    };
    body.extend_from_slice(&(name.len() as u16).to_be_bytes());
    body.extend_from_slice(name.as_bytes());
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(body.len() as u16).to_be_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    out
}

fn mutate_and_fix(rng: &mut Rng, base: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let mut input = base.to_vec();
    mutate(rng, &mut input, others, 4);
    if let Some((mode, stream)) = input.split_first_mut() {
        match *mode % 4 {
            0 | 1 => reseal(stream, &FRAMES),
            _ => fix_hello(stream),
        }
    }
    input
}

/// Recomputes a hello's body checksum.
fn fix_hello(stream: &mut [u8]) {
    if stream.len() < 6 {
        return;
    }
    let len = usize::from(u16::from_be_bytes([stream[4], stream[5]]));
    if stream.len() >= 6 + len + 4 {
        let crc = crc32fast::hash(&stream[6..6 + len]);
        stream[6 + len..10 + len].copy_from_slice(&crc.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_frames_and_hellos_decode() {
        let mut rng = Rng::new(3);
        for _ in 0..200 {
            let input = generate(&mut rng);
            let limits = Limits {
                version: MESSAGING_VERSION,
                max_message: 1 << 20,
            };
            match input[0] % 4 {
                0 | 1 => {
                    let frame = finish(read_frame(&mut &input[1..], limits)).expect("ready");
                    assert!(frame.is_ok(), "{frame:?}");
                }
                mode => {
                    let mut peer = Peer::new(&input[1..]);
                    let outcome = match mode {
                        2 => finish(accept(&mut peer, &ours()))
                            .expect("ready")
                            .map(|_| ()),
                        _ => finish(initiate(&mut peer, &ours(), Class::Small))
                            .expect("ready")
                            .map(|_| ()),
                    };
                    if let Err(e) = outcome {
                        assert!(!e.to_string().contains("malformed"), "{e}");
                    }
                }
            }
        }
    }
}
