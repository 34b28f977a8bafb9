//! Precise pacing for `-rate fixed=`/`throttle=`: operation `i` is due at `start + i/rate`.
//!
//! tokio's timer has 1 ms ticks, so waiting for each slot with `sleep_until` started
//! operations up to 1 ms late — and under `fixed=` that lateness counts as latency. Instead a
//! dedicated thread releases one permit per operation as it falls due: it sleeps with the
//! thread's timer slack at 1 ns until shortly before the due time, then yields in a loop.
//! Workers take permits in order; the `k`-th permit taken is operation `k`, so an operation's
//! intended start never follows its release, and a worker busy when a slot fell due still
//! has the wait counted (no coordinated omission). The lateness of operations whose worker
//! was already waiting (release and wake-up, nothing else) is kept for the summary.
#![allow(unsafe_code)] // prctl(2) sets the pacer thread's timer slack

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use parking_lot::Mutex;
use tokio::sync::Semaphore;

use crate::metrics::new_histogram;

const NANOS: u128 = 1_000_000_000;
/// How close to a due time the thread stops sleeping and yields instead.
const SPIN: Duration = Duration::from_micros(20);
/// The longest single sleep, so that a stop is noticed quickly even at low rates.
const MAX_SLEEP: Duration = Duration::from_millis(5);

/// The uniform schedule: when operation `i` is due, after the start.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    per_second: u64,
}

impl Schedule {
    pub fn new(per_second: u64) -> Schedule {
        Schedule {
            per_second: per_second.max(1),
        }
    }

    /// Operation `i`'s due time: `i / rate` seconds, rounded down to the nanosecond.
    pub fn due(&self, i: u64) -> Duration {
        let ns = u128::from(i) * NANOS / u128::from(self.per_second);
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// How many operations are due at or before `elapsed`.
    pub fn due_by(&self, elapsed: Duration) -> u64 {
        let n = (elapsed.as_nanos() + 1) * u128::from(self.per_second);
        u64::try_from(n.div_ceil(NANOS)).unwrap_or(u64::MAX)
    }
}

/// What the pacing thread does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Release permits until this many operations have been released in all.
    Release(u64),
    Sleep(Duration),
    Yield,
}

/// The pacing thread's decision when `released` operations are out and `elapsed` has passed.
pub fn step(schedule: &Schedule, released: u64, elapsed: Duration) -> Step {
    let due = schedule.due_by(elapsed);
    if due > released {
        return Step::Release(due);
    }
    let wait = schedule.due(released).saturating_sub(elapsed);
    if wait <= SPIN {
        Step::Yield
    } else {
        Step::Sleep((wait - SPIN).min(MAX_SLEEP))
    }
}

/// How late operations started after their due time when their worker was waiting for them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lateness {
    pub count: u64,
    pub median_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The permits of one phase and their schedule.
pub struct Pacer {
    start: Instant,
    schedule: Schedule,
    permits: Semaphore,
    taken: AtomicU64,
    stopped: AtomicBool,
    lateness: Mutex<Histogram<u64>>,
}

impl Pacer {
    pub fn new(per_second: u64, start: Instant) -> Pacer {
        Pacer {
            start,
            schedule: Schedule::new(per_second),
            permits: Semaphore::new(0),
            taken: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            lateness: Mutex::new(new_histogram()),
        }
    }

    /// Starts the pacing thread; it runs until [`Pacer::stop`].
    pub fn spawn(self: &Arc<Pacer>) -> std::io::Result<JoinHandle<()>> {
        let pacer = Arc::clone(self);
        std::thread::Builder::new()
            .name("stress-pacer".into())
            .spawn(move || pacer.release_loop())
    }

    fn release_loop(&self) {
        precise_timer_slack();
        let mut released = 0;
        while !self.stopped.load(Ordering::Relaxed) {
            match step(&self.schedule, released, self.start.elapsed()) {
                Step::Release(due) => {
                    self.release(due - released);
                    released = due;
                }
                Step::Sleep(d) => std::thread::sleep(d),
                Step::Yield => std::thread::yield_now(),
            }
        }
    }

    /// Makes `n` more operations available to the workers.
    pub fn release(&self, n: u64) {
        // Far above any backlog a run can build (usize::MAX >> 3 permits).
        self.permits
            .add_permits(usize::try_from(n).unwrap_or(usize::MAX >> 4));
    }

    /// Waits for the next operation's permit; its intended start, or `None` once stopped.
    pub async fn wait(&self) -> Option<Instant> {
        let asked = Instant::now();
        self.permits.acquire().await.ok()?.forget();
        let i = self.taken.fetch_add(1, Ordering::Relaxed);
        let intended = self.start + self.schedule.due(i);
        if asked <= intended {
            let late = Instant::now().saturating_duration_since(intended);
            let us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX).max(1);
            self.lateness.lock().saturating_record(us);
        }
        Some(intended)
    }

    /// Ends the pacing thread and wakes every waiting worker with `None`.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        self.permits.close();
    }

    pub fn lateness(&self) -> Lateness {
        let h = self.lateness.lock();
        let ms = |us: u64| us as f64 / 1000.0;
        Lateness {
            count: h.len(),
            median_ms: ms(h.value_at_quantile(0.5)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            max_ms: ms(h.max()),
        }
    }
}

/// Linux lets a sleeping thread wake up to its timer slack (50 µs by default) late; 1 ns
/// makes `thread::sleep` as precise as the scheduler allows.
fn precise_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK only changes this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_i_is_due_at_i_over_rate() {
        let s = Schedule::new(8000);
        assert_eq!(s.due(0), Duration::ZERO);
        assert_eq!(s.due(1), Duration::from_micros(125));
        assert_eq!(s.due(8000), Duration::from_secs(1));
        // 1e9/3 is not whole: no drift, operation 3k is due at exactly k seconds.
        let t = Schedule::new(3);
        assert_eq!(t.due(1), Duration::from_nanos(333_333_333));
        assert_eq!(t.due(3_000), Duration::from_secs(1_000));
    }

    #[test]
    fn due_by_counts_the_operations_due() {
        for rate in [1, 3, 7, 1000, 8000, 33_333, 1_000_000] {
            let s = Schedule::new(rate);
            for ns in [
                0,
                1,
                124_999,
                125_000,
                125_001,
                333_333_333,
                999_999_999,
                5_000_000_007,
            ] {
                let e = Duration::from_nanos(ns);
                let n = s.due_by(e);
                assert!(s.due(n - 1) <= e, "rate {rate} at {ns} ns: {n}");
                assert!(s.due(n) > e, "rate {rate} at {ns} ns: {n}");
            }
        }
    }

    #[test]
    fn steps_release_what_is_due_and_sleep_short_of_the_next() {
        let s = Schedule::new(1000);
        // At the start operation 0 is due.
        assert_eq!(step(&s, 0, Duration::ZERO), Step::Release(1));
        // Late by 2.5 ms: operations 1, 2 (and 0) are released at once.
        assert_eq!(step(&s, 0, Duration::from_micros(2_500)), Step::Release(3));
        // Operation 3 is due in 500 µs: sleep until 20 µs before it.
        assert_eq!(
            step(&s, 3, Duration::from_micros(2_500)),
            Step::Sleep(Duration::from_micros(480))
        );
        // Within 20 µs of it: yield.
        assert_eq!(step(&s, 3, Duration::from_micros(2_990)), Step::Yield);
        // A slow rate sleeps in bounded pieces.
        let slow = Schedule::new(1);
        assert_eq!(step(&slow, 1, Duration::ZERO), Step::Sleep(MAX_SLEEP));
    }

    #[tokio::test]
    async fn permits_hand_out_the_schedule_in_order() {
        let start = Instant::now();
        let pacer = Pacer::new(1000, start);
        pacer.release(3);
        for i in 0..3 {
            assert_eq!(pacer.wait().await, Some(start + Duration::from_millis(i)));
        }
        pacer.release(1);
        assert_eq!(pacer.wait().await, Some(start + Duration::from_millis(3)));
    }

    #[tokio::test]
    async fn a_stopped_pacer_releases_waiters() {
        let pacer = Arc::new(Pacer::new(1, Instant::now()));
        let waiter = {
            let p = Arc::clone(&pacer);
            tokio::spawn(async move { p.wait().await })
        };
        pacer.stop();
        assert_eq!(waiter.await.ok(), Some(None));
    }

    #[tokio::test]
    async fn lateness_counts_only_operations_a_worker_waited_for() {
        // Started an hour ago: every slot is long past, so no worker waited for it.
        let Some(start) = Instant::now().checked_sub(Duration::from_secs(3600)) else {
            return;
        };
        let pacer = Pacer::new(1000, start);
        pacer.release(2);
        pacer.wait().await;
        pacer.wait().await;
        assert_eq!(pacer.lateness().count, 0);
    }
}
