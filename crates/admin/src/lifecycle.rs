//! [`Lifecycle`]: the node's run mode and the requests that end it. `drain` stops the CQL
//! listener and flushes everything while the admin API stays up; `stopdaemon` (like SIGTERM)
//! drains if needed and then ends the process. It also holds the native transport's state:
//! `nodetool disablebinary` and the disk failure policies stop it, `enablebinary` starts it
//! again, and the server follows.

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

/// The native transport (the CQL listener and its connections): whether it should run,
/// whether it does, and why it last failed to start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transport {
    pub wanted: bool,
    pub running: bool,
    pub error: Option<String>,
}

/// The node's mode, its pending stop request and its native transport, shared by the server
/// and the admin API.
#[derive(Debug)]
pub struct Lifecycle {
    mode: watch::Sender<Mode>,
    stop: watch::Sender<bool>,
    transport: watch::Sender<Transport>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            mode: watch::Sender::new(Mode::Normal),
            stop: watch::Sender::new(false),
            transport: watch::Sender::new(Transport {
                wanted: true,
                ..Transport::default()
            }),
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

    pub fn transport(&self) -> Transport {
        self.transport.borrow().clone()
    }

    /// Asks the native transport to stop (`disablebinary`, a failure policy); `true` when it
    /// was wanted until now.
    pub fn stop_transport(&self) -> bool {
        self.transport
            .send_if_modified(|t| std::mem::replace(&mut t.wanted, false))
    }

    /// Asks the native transport to start again (`enablebinary`).
    pub fn start_transport(&self) {
        self.transport.send_modify(|t| {
            t.wanted = true;
            t.error = None;
        });
    }

    /// Resolves once the native transport is asked to stop.
    pub async fn transport_stop_requested(&self) {
        let mut transport = self.transport.subscribe();
        let _ = transport.wait_for(|t| !t.wanted).await;
    }

    /// Resolves once the native transport is asked to start.
    pub async fn transport_start_requested(&self) {
        let mut transport = self.transport.subscribe();
        let _ = transport.wait_for(|t| t.wanted).await;
    }

    /// Records that the native transport runs (or no longer does).
    pub fn set_transport_running(&self, running: bool) {
        self.transport.send_modify(|t| t.running = running);
    }

    /// Records why the native transport could not start; it is no longer wanted.
    pub fn transport_failed(&self, error: String) {
        self.transport.send_modify(|t| {
            t.wanted = false;
            t.running = false;
            t.error = Some(error);
        });
    }

    /// Resolves once the native transport does what is wanted of it (or failed to start).
    pub async fn transport_settled(&self) -> Transport {
        let mut transport = self.transport.subscribe();
        let settled = transport.wait_for(|t| t.running == t.wanted).await;
        settled.map(|t| t.clone()).unwrap_or_default()
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
    async fn the_transport_stops_and_starts_on_request() {
        let life = Lifecycle::default();
        assert!(life.transport().wanted && !life.transport().running);
        life.set_transport_running(true);
        assert!(life.transport_settled().await.running);
        assert!(life.stop_transport());
        assert!(!life.stop_transport(), "already stopped");
        life.transport_stop_requested().await;
        life.set_transport_running(false);
        assert!(!life.transport_settled().await.running);
        life.start_transport();
        life.transport_start_requested().await;
        life.transport_failed("address in use".into());
        let failed = life.transport_settled().await;
        assert_eq!(failed.error.as_deref(), Some("address in use"));
        assert!(!failed.wanted);
    }

    #[tokio::test]
    async fn stop_asks_for_a_drain() {
        let life = Lifecycle::default();
        life.request_stop();
        life.drain_requested().await;
        assert_eq!(life.mode(), Mode::Draining);
    }
}
