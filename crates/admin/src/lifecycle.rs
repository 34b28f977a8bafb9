//! [`Lifecycle`]: the node's run mode and the requests that end it. `drain` stops the CQL
//! listener and flushes everything while the admin API stays up; `stopdaemon` (like SIGTERM)
//! drains if needed and then ends the process.

use tokio::sync::watch;

/// What the node is doing, as `nodetool netstats` reports Cassandra's operation mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Draining,
    Drained,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Normal => "NORMAL",
            Mode::Draining => "DRAINING",
            Mode::Drained => "DRAINED",
        }
    }
}

/// The node's mode and its pending stop request, shared by the server and the admin API.
#[derive(Debug)]
pub struct Lifecycle {
    mode: watch::Sender<Mode>,
    stop: watch::Sender<bool>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            mode: watch::Sender::new(Mode::Normal),
            stop: watch::Sender::new(false),
        }
    }
}

impl Lifecycle {
    pub fn mode(&self) -> Mode {
        *self.mode.borrow()
    }

    /// Asks for a drain; `false` if one was already asked for.
    pub fn request_drain(&self) -> bool {
        self.mode.send_if_modified(|mode| {
            let start = *mode == Mode::Normal;
            if start {
                *mode = Mode::Draining;
            }
            start
        })
    }

    /// Resolves once a drain has been asked for.
    pub async fn drain_requested(&self) {
        let mut mode = self.mode.subscribe();
        let _ = mode.wait_for(|m| *m != Mode::Normal).await;
    }

    /// Records that the node is drained: no listener, everything flushed.
    pub fn mark_drained(&self) {
        self.mode.send_replace(Mode::Drained);
    }

    /// Resolves once the node is drained.
    pub async fn drained(&self) {
        let mut mode = self.mode.subscribe();
        let _ = mode.wait_for(|m| *m == Mode::Drained).await;
    }

    /// Asks the process to stop (`stopdaemon`), draining first.
    pub fn request_stop(&self) {
        self.request_drain();
        self.stop.send_replace(true);
    }

    /// Resolves once a stop has been asked for.
    pub async fn stop_requested(&self) {
        let mut stop = self.stop.subscribe();
        let _ = stop.wait_for(|s| *s).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drain_then_stop() {
        let life = Lifecycle::default();
        assert_eq!(life.mode(), Mode::Normal);
        assert!(life.request_drain());
        assert!(!life.request_drain());
        life.drain_requested().await;
        life.mark_drained();
        life.drained().await;
        life.request_stop();
        life.stop_requested().await;
        assert_eq!(life.mode(), Mode::Drained);
    }

    #[tokio::test]
    async fn stop_asks_for_a_drain() {
        let life = Lifecycle::default();
        life.request_stop();
        life.drain_requested().await;
        assert_eq!(life.mode(), Mode::Draining);
    }
}
