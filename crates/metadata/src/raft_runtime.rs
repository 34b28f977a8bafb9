//! openraft's async runtime for the metadata group: tokio's, except the random generator
//! behind election timeouts. openraft draws each election timeout from its runtime's
//! `thread_rng` (the OS-seeded `rand::thread_rng` for `TokioRuntime`); this one draws from a
//! generator [`seed_election_timeouts`] seeds on the calling thread, so that a simulation
//! running every node on one thread elects the same leaders when its seed is replayed.
//! Unseeded (production), it is `rand::thread_rng`.
use std::cell::RefCell;
use std::future::Future;
use std::time::Duration;

use openraft::async_runtime::TokioOneShotSender;
use openraft::{AsyncRuntime, OptionalSend, TokioInstant, TokioRuntime};
use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};

thread_local! {
    static SEEDED: RefCell<Option<StdRng>> = const { RefCell::new(None) };
}

/// Makes the election timeouts of the metadata groups running on this thread follow `seed`.
pub fn seed_election_timeouts(seed: u64) {
    SEEDED.with(|seeded| *seeded.borrow_mut() = Some(StdRng::seed_from_u64(seed)));
}

/// The generator openraft draws from: this thread's seeded one, else `rand::thread_rng`.
pub struct ElectionRng;

impl ElectionRng {
    fn with<T>(draw: impl FnOnce(&mut dyn RngCore) -> T) -> T {
        SEEDED.with(|seeded| match seeded.borrow_mut().as_mut() {
            Some(rng) => draw(rng),
            None => draw(&mut rand::thread_rng()),
        })
    }
}

impl RngCore for ElectionRng {
    fn next_u32(&mut self) -> u32 {
        ElectionRng::with(|rng| rng.next_u32())
    }

    fn next_u64(&mut self) -> u64 {
        ElectionRng::with(|rng| rng.next_u64())
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        ElectionRng::with(|rng| rng.fill_bytes(dest))
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        ElectionRng::with(|rng| rng.try_fill_bytes(dest))
    }
}

/// `TokioRuntime` with [`ElectionRng`].
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Runtime;

impl AsyncRuntime for Runtime {
    type JoinError = <TokioRuntime as AsyncRuntime>::JoinError;
    type JoinHandle<T: OptionalSend + 'static> = <TokioRuntime as AsyncRuntime>::JoinHandle<T>;
    type Sleep = <TokioRuntime as AsyncRuntime>::Sleep;
    type Instant = TokioInstant;
    type TimeoutError = <TokioRuntime as AsyncRuntime>::TimeoutError;
    type Timeout<R, T: Future<Output = R> + OptionalSend> =
        <TokioRuntime as AsyncRuntime>::Timeout<R, T>;
    type ThreadLocalRng = ElectionRng;
    type OneshotSender<T: OptionalSend> = TokioOneShotSender<T>;
    type OneshotReceiver<T: OptionalSend> = <TokioRuntime as AsyncRuntime>::OneshotReceiver<T>;
    type OneshotReceiverError = <TokioRuntime as AsyncRuntime>::OneshotReceiverError;

    fn spawn<T>(future: T) -> Self::JoinHandle<T::Output>
    where
        T: Future + OptionalSend + 'static,
        T::Output: OptionalSend + 'static,
    {
        TokioRuntime::spawn(future)
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        TokioRuntime::sleep(duration)
    }

    fn sleep_until(deadline: Self::Instant) -> Self::Sleep {
        TokioRuntime::sleep_until(deadline)
    }

    fn timeout<R, F: Future<Output = R> + OptionalSend>(
        duration: Duration,
        future: F,
    ) -> Self::Timeout<R, F> {
        TokioRuntime::timeout(duration, future)
    }

    fn timeout_at<R, F: Future<Output = R> + OptionalSend>(
        deadline: Self::Instant,
        future: F,
    ) -> Self::Timeout<R, F> {
        TokioRuntime::timeout_at(deadline, future)
    }

    fn is_panic(join_error: &Self::JoinError) -> bool {
        TokioRuntime::is_panic(join_error)
    }

    fn thread_rng() -> Self::ThreadLocalRng {
        ElectionRng
    }

    fn oneshot<T>() -> (Self::OneshotSender<T>, Self::OneshotReceiver<T>)
    where
        T: OptionalSend,
    {
        TokioRuntime::oneshot()
    }
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use super::*;

    fn timeouts() -> Vec<u64> {
        (0..20)
            .map(|_| Runtime::thread_rng().gen_range(150..300))
            .collect()
    }

    #[test]
    fn a_seeded_thread_draws_the_same_timeouts_again() {
        let draws = |seed| {
            std::thread::spawn(move || {
                seed_election_timeouts(seed);
                timeouts()
            })
            .join()
            .unwrap()
        };
        assert_eq!(draws(4), draws(4));
        assert_ne!(draws(4), draws(5));
    }

    #[test]
    fn an_unseeded_thread_draws_from_the_os_seeded_generator() {
        let unseeded = || std::thread::spawn(timeouts).join().unwrap();
        assert!(unseeded().iter().all(|t| (150..300).contains(t)));
        assert_ne!(unseeded(), unseeded());
    }
}
