//! An established outbound connection: writes the queue, reads the answers, and pings a
//! peer that has gone quiet (closing the connection when it stays silent).
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::io::{AsyncWriteExt, BufReader, BufWriter, ReadHalf, WriteHalf};
use tokio::time::{Instant, MissedTickBehavior};
use tracing::warn;

use crate::config::Tuning;
use crate::context::Context;
use crate::error::{NetError, RemoteError};
use crate::frame::{self, Frame, FrameError, Kind};
use crate::network::BoxStream;
use crate::outbound::Outbound;
use crate::stats::LinkCounters;
use crate::verb::Class;

pub(crate) const READ_BUFFER: usize = 64 * 1024;
pub(crate) const WRITE_BUFFER: usize = 64 * 1024;

/// Serves connection `generation` until it fails; returns why it ended.
pub(crate) async fn serve(
    ctx: &Context,
    out: &Outbound,
    stream: BoxStream,
    version: u8,
    generation: u64,
) -> String {
    let (reader, writer) = tokio::io::split(stream);
    let live = Liveness::default();
    tokio::select! {
        biased;
        reason = read_answers(ctx, out, reader, version, &live) => reason,
        reason = write_queue(ctx, out, writer, version, generation, &live) => reason,
        reason = watchdog(ctx, out, &live) => reason,
    }
}

async fn write_queue(
    ctx: &Context,
    out: &Outbound,
    writer: WriteHalf<BoxStream>,
    version: u8,
    generation: u64,
    live: &Liveness,
) -> String {
    let mut writer = BufWriter::with_capacity(WRITE_BUFFER, writer);
    let counters = &out.counters;
    loop {
        if live.take_ping() {
            let ping = frame::encode(&Frame::new(Kind::Ping, 0, 0, Bytes::new()), version, false);
            if let Err(error) = ping.write_to(&mut writer).await {
                return format!("write failed: {error}");
            }
            live.sent(Instant::now());
        }
        let Some(mut envelope) = out.next(generation) else {
            if let Err(error) = writer.flush().await {
                return format!("write failed: {error}");
            }
            out.wake.notified().await;
            continue;
        };
        let now = Instant::now();
        let Some(timeout_ms) = remaining_ms(envelope.deadline, now) else {
            out.release(&envelope);
            LinkCounters::bump(&counters.expired);
            continue;
        };
        envelope.frame.timeout_ms = timeout_ms;
        let encoded = frame::encode(&envelope.frame, version, ctx.config.compression);
        let written = encoded.write_to(&mut writer).await;
        out.release(&envelope);
        if let Err(error) = written {
            return format!("write failed: {error}");
        }
        LinkCounters::bump(&counters.sent_messages);
        let size = envelope.frame.wire_len() as u64;
        counters.sent_bytes.fetch_add(size, Relaxed);
        live.sent(now);
    }
}

/// The timeout left to carry in the frame: `Some(0)` for none, `None` once it has passed.
fn remaining_ms(deadline: Option<Instant>, now: Instant) -> Option<u32> {
    let Some(deadline) = deadline else {
        return Some(0);
    };
    let left = deadline
        .checked_duration_since(now)
        .filter(|d| !d.is_zero())?;
    let millis = left.as_micros().div_ceil(1000);
    Some(millis.clamp(1, u32::MAX as u128) as u32)
}

async fn read_answers(
    ctx: &Context,
    out: &Outbound,
    reader: ReadHalf<BoxStream>,
    version: u8,
    live: &Liveness,
) -> String {
    let mut reader = BufReader::with_capacity(READ_BUFFER, reader);
    loop {
        let frame = match frame::read_frame(&mut reader, ctx.limits(version)).await {
            Ok(frame) => frame,
            Err(error) => return frame_failure(out.peer, out.class, &out.counters, error),
        };
        live.heard();
        match frame.kind {
            Kind::Response => out.complete(frame.id, Ok(frame.payload)),
            Kind::Failure => {
                let error = RemoteError::decode(&frame.payload);
                out.complete(frame.id, Err(NetError::Remote(error)));
            }
            Kind::Pong => {}
            kind => return format!("unexpected {kind:?} frame from {}", out.peer),
        }
    }
}

/// Logs and counts a frame that could not be read; returns why the connection ends.
pub(crate) fn frame_failure(
    peer: SocketAddr,
    class: Class,
    counters: &LinkCounters,
    error: FrameError,
) -> String {
    match &error {
        FrameError::Closed | FrameError::Truncated | FrameError::Io(_) => {}
        crc if crc.is_crc() => {
            LinkCounters::bump(&counters.crc_errors);
            warn!("internode {class} connection with {peer}: {error}; closing it");
        }
        _ => warn!("internode {class} connection with {peer}: {error}; closing it"),
    }
    error.to_string()
}

async fn watchdog(ctx: &Context, out: &Outbound, live: &Liveness) -> String {
    let period = (ctx.tuning.keepalive / 4).max(Duration::from_millis(10));
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match live.check(Instant::now(), &ctx.tuning) {
            Check::Quiet => {}
            Check::Ping => out.wake.notify_one(),
            Check::Dead(silence) => {
                let (class, peer) = (out.class, out.peer);
                warn!(
                    "internode {class} connection to {peer}: no answer for {silence:?}; closing it"
                );
                return format!("no answer for {silence:?}");
            }
        }
    }
}

/// How long the peer has been silent since we sent it something.
#[derive(Default)]
struct Liveness(Mutex<Silence>);

#[derive(Default)]
struct Silence {
    /// The first frame written since the peer last spoke.
    since: Option<Instant>,
    ping_due: bool,
    pinged: bool,
}

enum Check {
    Quiet,
    Ping,
    Dead(Duration),
}

impl Liveness {
    fn sent(&self, now: Instant) {
        self.0.lock().since.get_or_insert(now);
    }

    fn heard(&self) {
        *self.0.lock() = Silence::default();
    }

    fn take_ping(&self) -> bool {
        std::mem::take(&mut self.0.lock().ping_due)
    }

    fn check(&self, now: Instant, tuning: &Tuning) -> Check {
        let mut silence = self.0.lock();
        let Some(since) = silence.since else {
            return Check::Quiet;
        };
        let quiet = now.saturating_duration_since(since);
        if quiet >= tuning.dead_after {
            return Check::Dead(quiet);
        }
        if quiet >= tuning.keepalive && !silence.pinged {
            silence.pinged = true;
            silence.ping_due = true;
            return Check::Ping;
        }
        Check::Quiet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_timeout_rounds_up_and_expires() {
        let now = Instant::now();
        assert_eq!(remaining_ms(None, now), Some(0));
        assert_eq!(remaining_ms(Some(now), now), None);
        assert_eq!(
            remaining_ms(Some(now + Duration::from_micros(10)), now),
            Some(1)
        );
        assert_eq!(
            remaining_ms(Some(now + Duration::from_millis(250)), now),
            Some(250)
        );
        let far = now + Duration::from_secs(10_000_000);
        assert_eq!(remaining_ms(Some(far), now), Some(u32::MAX));
        assert_eq!(remaining_ms(Some(now), now + Duration::from_secs(1)), None);
    }

    #[test]
    fn silence_is_pinged_once_then_declared_dead() {
        let tuning = Tuning {
            keepalive: Duration::from_secs(1),
            dead_after: Duration::from_secs(3),
            ..Tuning::default()
        };
        let live = Liveness::default();
        let start = Instant::now();
        assert!(matches!(
            live.check(start + Duration::from_secs(10), &tuning),
            Check::Quiet
        ));
        live.sent(start);
        live.sent(start + Duration::from_millis(900));
        assert!(matches!(
            live.check(start + Duration::from_millis(999), &tuning),
            Check::Quiet
        ));
        assert!(matches!(
            live.check(start + Duration::from_secs(1), &tuning),
            Check::Ping
        ));
        assert!(live.take_ping());
        assert!(!live.take_ping());
        assert!(matches!(
            live.check(start + Duration::from_secs(2), &tuning),
            Check::Quiet
        ));
        assert!(matches!(
            live.check(start + Duration::from_secs(3), &tuning),
            Check::Dead(_)
        ));
        live.heard();
        assert!(matches!(
            live.check(start + Duration::from_secs(9), &tuning),
            Check::Quiet
        ));
    }
}
