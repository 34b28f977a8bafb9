//! A budget of request bytes in flight, shared by connections. Every request takes from one
//! and gives back when answered, so taking and giving are a few atomic operations and no lock;
//! only a request that finds the budget spent waits, woken when bytes are given back. Waiters
//! are served in arrival order, and nobody takes past them (a request as large as the budget
//! is not starved by smaller ones), as with tokio's fair semaphore.
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use tokio::sync::{Mutex, Notify};

#[derive(Debug)]
pub(crate) struct Budget {
    limit: u64,
    used: AtomicU64,
    /// Takers waiting for bytes; givers wake them only when there are some.
    waiting: AtomicUsize,
    freed: Notify,
    /// Held by the waiter whose turn it is; the others queue for it in arrival order.
    turn: Mutex<()>,
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget {
            limit,
            used: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            freed: Notify::new(),
            turn: Mutex::new(()),
        }
    }

    /// Bytes taken now.
    pub fn used(&self) -> u64 {
        self.used.load(SeqCst)
    }

    /// Takes `n` bytes if the budget has them and nobody waits for bytes. Taking nothing
    /// always succeeds: it waits for nobody.
    pub fn try_take(&self, n: u64) -> bool {
        n == 0 || self.waiting.load(SeqCst) == 0 && self.take_now(n)
    }

    fn take_now(&self, n: u64) -> bool {
        let mut used = self.used.load(SeqCst);
        loop {
            match used.checked_add(n) {
                Some(after) if after <= self.limit => {}
                _ => return false,
            }
            match self
                .used
                .compare_exchange_weak(used, used + n, SeqCst, SeqCst)
            {
                Ok(_) => return true,
                Err(now) => used = now,
            }
        }
    }

    /// Takes `n` bytes (at most the limit), waiting until they are given back.
    pub async fn take(&self, n: u64) {
        if self.try_take(n) {
            return;
        }
        let _waiting = Counted::new(&self.waiting);
        let _turn = self.turn.lock().await;
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before the attempt: bytes given back after it wake this taker.
            freed.as_mut().enable();
            if self.take_now(n) {
                return;
            }
            freed.await;
        }
    }

    /// Gives back `n` bytes taken before (giving nothing wakes nobody).
    pub fn give(&self, n: u64) {
        if n == 0 {
            return;
        }
        self.used.fetch_sub(n, SeqCst);
        if self.waiting.load(SeqCst) > 0 {
            self.freed.notify_waiters();
        }
    }
}

/// Units taken from a shared budget, given back when dropped.
#[derive(Debug)]
pub(crate) struct Taken {
    budget: Arc<Budget>,
    n: u64,
}

impl Taken {
    /// Takes `n` units of `budget`, waiting until they are free.
    pub async fn from(budget: &Arc<Budget>, n: u64) -> Taken {
        budget.take(n).await;
        Taken {
            budget: Arc::clone(budget),
            n,
        }
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        self.budget.give(self.n);
    }
}

/// Counts one in `count` for as long as it lives (a waiter may be dropped while it waits).
pub(crate) struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    pub fn new(count: &'a AtomicUsize) -> Counted<'a> {
        count.fetch_add(1, SeqCst);
        Counted(count)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::task::JoinHandle;

    fn spawn_take(budget: &Arc<Budget>, n: u64) -> JoinHandle<()> {
        let budget = Arc::clone(budget);
        tokio::spawn(async move { budget.take(n).await })
    }

    /// Waits (at most 5 s) for a taker to get its units.
    async fn served(taker: JoinHandle<()>, what: &str) {
        tokio::time::timeout(Duration::from_secs(5), taker)
            .await
            .expect(what)
            .expect("no panic");
    }

    #[test]
    fn takes_up_to_the_limit_and_gives_back() {
        let budget = Budget::new(100);
        assert!(budget.try_take(60));
        assert!(!budget.try_take(41));
        assert!(budget.try_take(40));
        assert_eq!(budget.used(), 100);
        budget.give(60);
        assert_eq!(budget.used(), 40);
        assert!(budget.try_take(60));
        let unlimited = Budget::new(u64::MAX);
        assert!(unlimited.try_take(u64::MAX));
        assert!(!unlimited.try_take(1), "no overflow past the limit");
    }

    #[tokio::test]
    async fn a_waiting_taker_is_woken_when_bytes_come_back() {
        let budget = Arc::new(Budget::new(10));
        assert!(budget.try_take(10));
        let waiter = spawn_take(&budget, 5);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "nothing was given back yet");
        budget.give(5);
        served(waiter, "woken").await;
        assert_eq!(budget.used(), 10);
    }

    #[tokio::test]
    async fn a_taker_dropped_while_waiting_leaves_no_trace() {
        let budget = Budget::new(1);
        assert!(budget.try_take(1));
        let gave_up = tokio::time::timeout(Duration::from_millis(10), budget.take(1)).await;
        assert!(gave_up.is_err());
        assert_eq!(budget.waiting.load(SeqCst), 0);
        budget.give(1);
        assert_eq!(budget.used(), 0);
    }

    #[tokio::test]
    async fn waiters_are_served_in_arrival_order_and_nobody_takes_past_them() {
        let budget = Arc::new(Budget::new(10));
        assert!(budget.try_take(10));
        let whole = spawn_take(&budget, 10);
        tokio::time::sleep(Duration::from_millis(20)).await;
        let small = spawn_take(&budget, 1);
        tokio::time::sleep(Duration::from_millis(20)).await;
        budget.give(9);
        assert!(!budget.try_take(1), "not past the waiters");
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !whole.is_finished() && !small.is_finished(),
            "the first needs all ten"
        );
        budget.give(1);
        served(whole, "the first served").await;
        assert!(!small.is_finished(), "the whole budget is taken");
        budget.give(10);
        served(small, "then the second").await;
    }

    #[tokio::test]
    async fn taking_nothing_waits_for_nobody() {
        let budget = Arc::new(Budget::new(10));
        assert!(budget.try_take(10));
        let waiter = spawn_take(&budget, 5);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(budget.try_take(0), "past the waiter");
        served(spawn_take(&budget, 0), "nothing taken at once").await;
        assert!(!waiter.is_finished());
        budget.give(10);
        served(waiter, "the waiter then").await;
    }

    #[tokio::test]
    async fn taken_units_come_back_when_dropped() {
        let budget = Arc::new(Budget::new(2));
        let one = Taken::from(&budget, 1).await;
        let two = Taken::from(&budget, 1).await;
        assert!(!budget.try_take(1));
        drop((one, two));
        assert_eq!(budget.used(), 0);
    }
}
