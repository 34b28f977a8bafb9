//! When a connection's reading gives up on its client. A frame begun (some of its bytes
//! read) must be complete within the frame timeout plus the time its declared body takes at
//! [`MIN_FRAME_RATE`]; a client that stalls or trickles is closed, so it cannot hold its
//! reserved budget for long. With no frame begun, `native_transport_idle_timeout` (when set)
//! closes a connection that sends nothing and has no request in flight.
use std::time::{Duration, Instant};

/// The slowest body transfer accepted: 64 KiB/s (a 16 MiB body gets 256 s).
pub const MIN_FRAME_RATE: u64 = 64 * 1024;

/// Why a deadline passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// A frame was begun and not finished in time.
    Frame,
    /// Nothing was received for the idle timeout.
    Idle,
}

#[derive(Debug)]
pub(crate) struct ReadClock {
    frame_timeout: Duration,
    idle_timeout: Option<Duration>,
    /// When the frame now being received began, and its declared body length.
    frame: Option<(Instant, usize)>,
    last_read: Instant,
}

impl ReadClock {
    pub fn new(frame_timeout: Duration, idle_timeout: Option<Duration>, now: Instant) -> Self {
        ReadClock {
            frame_timeout,
            idle_timeout,
            frame: None,
            last_read: now,
        }
    }

    /// Bytes arrived.
    pub fn read(&mut self, now: Instant) {
        self.last_read = now;
    }

    /// A whole unit (an envelope, or a header admitted) came out of the stream: whatever is
    /// still partial is a new frame.
    pub fn progress(&mut self) {
        self.frame = None;
    }

    /// After the buffered input is used up: `pending` is the declared body length of a frame
    /// begun (0 while only part of a header is in), `None` when nothing is partial.
    pub fn waiting(&mut self, pending: Option<usize>, now: Instant) {
        self.frame = match (pending, self.frame) {
            (None, _) => None,
            (Some(body), Some((start, known))) => Some((start, body.max(known))),
            (Some(body), None) => Some((now, body)),
        };
    }

    /// The next deadline and what passing it means.
    pub fn deadline(&self) -> Option<(Instant, Expiry)> {
        match self.frame {
            Some((start, body)) => {
                let transfer = Duration::from_secs_f64(body as f64 / MIN_FRAME_RATE as f64);
                Some((start + self.frame_timeout + transfer, Expiry::Frame))
            }
            None => self
                .idle_timeout
                .map(|idle| (self.last_read + idle, Expiry::Idle)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn a_begun_frame_gets_the_timeout_plus_its_body_at_the_minimum_rate() {
        let t0 = Instant::now();
        let mut clock = ReadClock::new(10 * SECOND, None, t0);
        assert_eq!(clock.deadline(), None, "no idle timeout, nothing begun");
        clock.waiting(Some(0), t0);
        assert_eq!(clock.deadline(), Some((t0 + 10 * SECOND, Expiry::Frame)));
        // The header completes later: the body's time is added to the same start.
        clock.waiting(Some(16 << 20), t0 + SECOND);
        assert_eq!(clock.deadline(), Some((t0 + 266 * SECOND, Expiry::Frame)));
        clock.progress();
        clock.waiting(Some(0), t0 + 2 * SECOND);
        assert_eq!(clock.deadline(), Some((t0 + 12 * SECOND, Expiry::Frame)));
    }

    #[test]
    fn the_idle_deadline_follows_the_last_read() {
        let t0 = Instant::now();
        let mut clock = ReadClock::new(10 * SECOND, Some(60 * SECOND), t0);
        assert_eq!(clock.deadline(), Some((t0 + 60 * SECOND, Expiry::Idle)));
        clock.read(t0 + 5 * SECOND);
        clock.waiting(None, t0 + 5 * SECOND);
        assert_eq!(clock.deadline(), Some((t0 + 65 * SECOND, Expiry::Idle)));
    }
}
