//! Taking a lock on the write path, and saying when that took long, without reading the clock
//! when it did not: a write takes two such locks, and two clock reads each cost more than an
//! uncontended lock.

use std::time::{Duration, Instant};

/// The guard `try_take` gives, else the one `take` waits for; with how long the wait lasted
/// (zero without one).
pub(crate) fn take_timed<G>(
    try_take: impl FnOnce() -> Option<G>,
    take: impl FnOnce() -> G,
) -> (G, Duration) {
    if let Some(guard) = try_take() {
        return (guard, Duration::ZERO);
    }
    let asked = Instant::now();
    let guard = take();
    (guard, asked.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    #[test]
    fn a_free_lock_is_taken_without_a_wait_and_a_held_one_reports_its_wait() {
        let lock = std::sync::Arc::new(Mutex::new(0));
        let (guard, waited) = take_timed(|| lock.try_lock(), || lock.lock());
        assert_eq!(waited, Duration::ZERO);
        let holder = {
            let lock = lock.clone();
            std::thread::spawn(move || {
                let _held = lock.lock();
                std::thread::sleep(Duration::from_millis(50));
            })
        };
        drop(guard);
        while lock.try_lock().is_some() {
            std::thread::yield_now();
        }
        let (_guard, waited) = take_timed(|| lock.try_lock(), || lock.lock());
        assert!(waited > Duration::ZERO);
        holder.join().expect("holder");
    }
}
