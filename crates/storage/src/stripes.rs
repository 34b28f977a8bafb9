//! Striping by thread: what many threads update at once (latency counters, a memtable's
//! allocator) is split into stripes and each thread keeps to one, so the cores neither wait
//! for one another nor bounce one cache line between them.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The calling thread's stripe among `stripes`: threads take numbers in turn as they first ask.
pub fn thread_stripe(stripes: usize) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static NUMBER: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    NUMBER.with(|number| *number) % stripes
}

/// Stripes of a [`StripedCounter`].
const COUNTER_STRIPES: usize = 8;

/// A count that threads add to on stripes of their own; reading it sums the stripes.
#[derive(Default)]
pub struct StripedCounter {
    stripes: [Stripe; COUNTER_STRIPES],
}

/// One stripe, on a cache line of its own.
#[derive(Default)]
#[repr(align(64))]
struct Stripe(AtomicUsize);

impl StripedCounter {
    pub fn add(&self, n: usize) {
        self.stripes[thread_stripe(COUNTER_STRIPES)]
            .0
            .fetch_add(n, Ordering::Relaxed);
    }

    /// The sum of what was added (what threads add meanwhile may or may not be included).
    pub fn sum(&self) -> usize {
        self.stripes
            .iter()
            .map(|stripe| stripe.0.load(Ordering::Relaxed))
            .fold(0, usize::wrapping_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_striped_count_sums_what_every_thread_added() {
        let counter = StripedCounter::default();
        std::thread::scope(|scope| {
            for n in 1..=5 {
                let counter = &counter;
                scope.spawn(move || (0..1000).for_each(|_| counter.add(n)));
            }
        });
        assert_eq!(counter.sum(), 1000 * (1 + 2 + 3 + 4 + 5));
    }

    #[test]
    fn a_thread_keeps_its_stripe_and_threads_take_them_in_turn() {
        let mine = thread_stripe(8);
        assert_eq!(thread_stripe(8), mine);
        let others: Vec<usize> = (0..4)
            .map(|_| {
                std::thread::spawn(|| thread_stripe(1 << 20))
                    .join()
                    .unwrap()
            })
            .collect();
        let mut distinct = others.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), others.len());
    }
}
