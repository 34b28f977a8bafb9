//! [`Work`]: the tasks running on one table's files besides flushes — compactions, garbage
//! collection, scrub, verify, snapshot links — and their cancellation. A DROP cancels them for
//! good, a TRUNCATE cancels those already running; both wait until the cancelled tasks have
//! stopped before deleting any file, so no task ever finds its files gone under it (a missing
//! file then always means something a disk failure policy must hear of). A cancelled task
//! notices at its next check ([`Task::cancelled`]) and stops with
//! [`StorageError::Cancelled`](crate::error::StorageError::Cancelled), which no policy counts
//! as a disk failure. Flushes are kept out by the table's flush lock instead: they hold it
//! throughout, and DROP and TRUNCATE take it after cancelling the tasks.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Condvar, Mutex, MutexGuard};

/// The epoch of a dropped table: every task is cancelled and none may start.
const DROPPED: u64 = u64::MAX;

/// Why a task was cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cancel {
    Dropped,
    Truncated,
}

impl Cancel {
    /// What happened to the table, as error messages say it.
    pub fn verb(self) -> &'static str {
        match self {
            Cancel::Dropped => "dropped",
            Cancel::Truncated => "truncated",
        }
    }
}

/// The tasks running on one table's files.
#[derive(Default)]
pub struct Work {
    /// Advanced by each truncation, [`DROPPED`] after the drop: a task started in an earlier
    /// epoch is cancelled.
    epoch: AtomicU64,
    state: Mutex<State>,
    /// Signalled when a task ends, a pause ends or the table is dropped.
    changed: Condvar,
}

#[derive(Default)]
struct State {
    running: usize,
    /// Truncations in progress: no task starts meanwhile.
    paused: usize,
}

/// One running task; it ends when dropped.
pub struct Task<'a> {
    work: &'a Work,
    epoch: u64,
}

/// A truncation in progress: tasks wait to start until it is dropped.
pub struct Pause<'a> {
    work: &'a Work,
}

impl Work {
    /// Starts a task, waiting while a truncation runs; fails once the table is dropped.
    pub fn start(&self) -> Result<Task<'_>, Cancel> {
        let mut state = self.state.lock();
        loop {
            let epoch = self.epoch.load(Ordering::Acquire);
            if epoch == DROPPED {
                return Err(Cancel::Dropped);
            }
            if state.paused == 0 {
                state.running += 1;
                return Ok(Task { work: self, epoch });
            }
            self.changed.wait(&mut state);
        }
    }

    /// Cancels the running tasks and waits until they have stopped; no task starts until the
    /// pause is dropped (a truncation).
    pub fn pause(&self) -> Pause<'_> {
        let mut state = self.state.lock();
        state.paused += 1;
        let _ = self
            .epoch
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |epoch| match epoch {
                DROPPED => None,
                _ => Some(epoch + 1),
            });
        self.wait_idle(&mut state);
        Pause { work: self }
    }

    /// Cancels every task for good and waits until the running ones have stopped (a drop).
    pub fn close(&self) {
        let mut state = self.state.lock();
        self.epoch.store(DROPPED, Ordering::Release);
        self.changed.notify_all();
        self.wait_idle(&mut state);
    }

    /// Whether the table was dropped.
    pub fn closed(&self) -> bool {
        self.epoch.load(Ordering::Acquire) == DROPPED
    }

    fn wait_idle(&self, state: &mut MutexGuard<'_, State>) {
        while state.running > 0 {
            self.changed.wait(state);
        }
    }
}

impl Task<'_> {
    /// Why the task must stop, if it must.
    pub fn cancelled(&self) -> Option<Cancel> {
        match self.work.epoch.load(Ordering::Acquire) {
            epoch if epoch == self.epoch => None,
            DROPPED => Some(Cancel::Dropped),
            _ => Some(Cancel::Truncated),
        }
    }
}

impl Drop for Task<'_> {
    fn drop(&mut self) {
        self.work.state.lock().running -= 1;
        self.work.changed.notify_all();
    }
}

impl Drop for Pause<'_> {
    fn drop(&mut self) {
        self.work.state.lock().paused -= 1;
        self.work.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_truncation_cancels_running_tasks_and_holds_back_new_ones() {
        let work = Work::default();
        let before = work.start().expect("start");
        std::thread::scope(|scope| {
            let (paused_tx, paused_rx) = mpsc::channel();
            let work = &work;
            let truncation = scope.spawn(move || {
                let pause = work.pause();
                paused_tx.send(()).expect("send");
                std::thread::sleep(Duration::from_millis(50));
                drop(pause);
            });
            // The truncation waits for the running task, which sees it is cancelled.
            while before.cancelled().is_none() {
                std::thread::yield_now();
            }
            assert_eq!(before.cancelled(), Some(Cancel::Truncated));
            assert!(paused_rx.try_recv().is_err(), "waits for the task");
            drop(before);
            paused_rx.recv().expect("paused once the task ended");
            let after = work.start().expect("starts once the truncation is over");
            assert_eq!(after.cancelled(), None, "a later task is not cancelled");
            truncation.join().expect("join");
        });
    }

    #[test]
    fn a_drop_cancels_for_good() {
        let work = Work::default();
        let task = work.start().expect("start");
        std::thread::scope(|scope| {
            let closing = scope.spawn(|| work.close());
            while task.cancelled().is_none() {
                std::thread::yield_now();
            }
            assert_eq!(task.cancelled(), Some(Cancel::Dropped));
            std::thread::sleep(Duration::from_millis(10));
            assert!(!closing.is_finished(), "waits for the task");
            drop(task);
            closing.join().expect("join");
        });
        assert!(work.closed());
        assert_eq!(work.start().err(), Some(Cancel::Dropped));
        drop(work.pause());
        assert!(work.closed(), "a later truncation does not reopen it");
    }

    #[test]
    fn a_task_waiting_for_a_truncation_fails_when_the_table_is_dropped() {
        let work = Work::default();
        let pause = work.pause();
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| work.start().err());
            std::thread::sleep(Duration::from_millis(20));
            work.close();
            assert_eq!(waiting.join().expect("join"), Some(Cancel::Dropped));
        });
        drop(pause);
    }
}
