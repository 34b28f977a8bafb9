//! `HintsService`: the front of the crate — stores hints, decides whether to hint, and holds
//! the operators' switches (`nodetool pausehandoff`, `disablehandoff`, `truncatehints`, ...).
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use mutation::{Mutation, TableId};
use net::HostId;
use parking_lot::Mutex;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::info;

use crate::catalog::HintsCatalog;
use crate::config::HintsConfig;
use crate::deliver::Deliver;
use crate::dispatcher::GcGrace;
use crate::metrics::{Counters, HintsMetrics};
use crate::store::HintsStore;
use crate::{hint, record};
use clock::{Clock, SharedClock, SteadyClock};

/// Buffered hints past this size are written at once rather than at the next flush period.
pub(crate) const FLUSH_EARLY_BYTES: u64 = 32 * 1024 * 1024;

/// Buffered hints past this size make `store` refuse new ones until they are written.
pub(crate) const MAX_BUFFERED_BYTES: u64 = 128 * 1024 * 1024;

/// What the node provides to the service.
pub struct HintsEnv {
    pub deliver: Arc<dyn Deliver>,
    /// A table's current `gc_grace_seconds`; `None` for a table that does not exist.
    pub gc_grace: GcGrace,
    /// Nodes in the cluster, this one included: the throttle is divided among the others.
    pub node_count: Arc<dyn Fn() -> usize + Send + Sync>,
}

/// Why `store` refused a hint.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("unknown table {0}")]
    UnknownTable(TableId),
    #[error("too many hints waiting to be written")]
    Overloaded,
    #[error("the hints service is shut down")]
    ShutDown,
}

/// `nodetool statushandoff`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandoffStatus {
    /// New hints are stored (`enablehandoff` / `disablehandoff`).
    pub enabled: bool,
    /// Delivery is paused (`pausehandoff` / `resumehandoff`).
    pub paused: bool,
    pub disabled_datacenters: Vec<String>,
}

/// One host's pending hints (`nodetool listpendinghints`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingHints {
    pub host_id: HostId,
    /// Known once gossip has reported the host alive.
    pub address: Option<SocketAddr>,
    /// Files waiting or being written.
    pub files: usize,
    /// Milliseconds since the epoch: the oldest file's start (or buffered hint's creation).
    pub oldest_ms: i64,
    pub newest_ms: i64,
    /// On disk and buffered.
    pub total_bytes: u64,
}

#[derive(Clone, Copy)]
pub(crate) struct Endpoint {
    pub addr: SocketAddr,
    pub alive: bool,
}

pub struct HintsService {
    pub(crate) config: HintsConfig,
    pub(crate) env: HintsEnv,
    /// Wall-clock milliseconds for hint creation times and expiry.
    pub(crate) clock: SharedClock,
    pub(crate) catalog: HintsCatalog,
    pub(crate) counters: Counters,
    enabled: AtomicBool,
    paused: AtomicBool,
    stopped: AtomicBool,
    disabled_dcs: Mutex<BTreeSet<String>>,
    pub(crate) endpoints: Mutex<HashMap<HostId, Endpoint>>,
    /// When each host gossip holds down went down (since it was last seen alive).
    down_since: Mutex<HashMap<HostId, Instant>>,
    /// Hosts with a delivery running or waiting for a slot.
    pub(crate) scheduled: Mutex<HashSet<HostId>>,
    /// Signalled when `scheduled` empties.
    pub(crate) idle: Notify,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) flush_soon: Arc<Notify>,
    pub(crate) tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl HintsService {
    /// Loads the hints files under `hints_directory` (creating it), and starts the periodic
    /// flush and the delivery trigger. Must run inside a tokio runtime. Hints are timed by the
    /// system time at start-up advanced by tokio's monotonic clock, so a step of the system
    /// clock cannot reorder them, and tests with paused time control it.
    pub async fn open(config: HintsConfig, env: HintsEnv) -> io::Result<Arc<HintsService>> {
        HintsService::open_with_clock(config, env, SharedClock::new(SteadyClock::new())).await
    }

    /// [`HintsService::open`] with the node's clock (a simulated node's, in simulations).
    pub async fn open_with_clock(
        config: HintsConfig,
        env: HintsEnv,
        clock: SharedClock,
    ) -> io::Result<Arc<HintsService>> {
        let (dir, compression) = (config.hints_directory.clone(), config.hints_compression);
        let loaded = tokio::task::spawn_blocking(move || HintsCatalog::load(&dir, compression))
            .await
            .map_err(io::Error::other)??;
        let counters = Counters::default();
        Counters::add(&counters.corrupt, loaded.corrupt);
        let service = Arc::new(HintsService {
            enabled: AtomicBool::new(config.hinted_handoff_enabled),
            paused: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            disabled_dcs: Mutex::new(config.hinted_handoff_disabled_datacenters.clone()),
            slots: Arc::new(Semaphore::new(config.max_hints_delivery_threads.max(1))),
            config,
            env,
            clock,
            catalog: loaded.catalog,
            counters,
            endpoints: Mutex::new(HashMap::new()),
            down_since: Mutex::new(HashMap::new()),
            scheduled: Mutex::new(HashSet::new()),
            idle: Notify::new(),
            flush_soon: Arc::new(Notify::new()),
            tasks: Mutex::new(Vec::new()),
        });
        let stores = service.catalog.stores();
        if !stores.is_empty() {
            info!("found pending hints for {} hosts", stores.len());
        }
        service.start_tasks();
        Ok(service)
    }

    /// Whether a write that `host_id` (in data center `dc`) missed should be hinted: hinted
    /// handoff is enabled for that data center, the host has not been down (since the first
    /// `host_down` after it was last alive) longer than `max_hint_window`, its oldest pending
    /// file is not older than
    /// the window either (`hint_window_persistent_enabled`), and its pending hints are within
    /// `max_hints_size_per_host`.
    pub fn should_hint(&self, host_id: HostId, dc: &str) -> bool {
        if !self.enabled.load(Relaxed) || self.disabled_dcs.lock().contains(dc) {
            return false;
        }
        let window = self.config.max_hint_window;
        let down_since = self.down_since.lock().get(&host_id).copied();
        let down_too_long = down_since.is_some_and(|since| since.elapsed() > window);
        let store = self.catalog.get(host_id);
        let store = store.as_deref();
        let refused = down_too_long || self.past_window(store) || self.over_size(store);
        if refused {
            Counters::add(&self.counters.not_stored, 1);
        }
        !refused
    }

    fn past_window(&self, store: Option<&HintsStore>) -> bool {
        let window_ms = self.config.max_hint_window.as_millis() as i64;
        let oldest = store.and_then(HintsStore::oldest_file_ms);
        self.config.hint_window_persistent_enabled
            && oldest.is_some_and(|oldest| self.clock.now_millis() - oldest > window_ms)
    }

    fn over_size(&self, store: Option<&HintsStore>) -> bool {
        let limit = self.config.max_hints_size_per_host;
        limit > 0 && store.is_some_and(|s| s.pending_bytes() > limit)
    }

    /// Stores a hint of `mutation` for `host_id`. It is buffered, and written and synced to
    /// the host's file within `hints_flush_period` (or by `flush`).
    pub fn store(&self, host_id: HostId, mutation: &Mutation) -> Result<(), StoreError> {
        if self.stopped.load(Relaxed) {
            return Err(StoreError::ShutDown);
        }
        let gc_grace =
            (self.env.gc_grace)(mutation.table).ok_or(StoreError::UnknownTable(mutation.table))?;
        let buffered = self.catalog.buffered_total();
        if buffered.load(Relaxed) >= MAX_BUFFERED_BYTES {
            Counters::add(&self.counters.not_stored, 1);
            self.flush_soon.notify_one();
            return Err(StoreError::Overloaded);
        }
        let now = self.clock.now_millis();
        let payload = hint::encode(mutation, now, gc_grace);
        let record = record::encode(&self.config.hints_compression.pack(payload));
        self.catalog.get_or_create(host_id).append(record, now);
        Counters::add(&self.counters.written, 1);
        if buffered.load(Relaxed) >= FLUSH_EARLY_BYTES {
            self.flush_soon.notify_one();
        }
        Ok(())
    }

    /// Writes and syncs every buffered hint.
    pub async fn flush(&self) -> io::Result<()> {
        self.flush_stores(self.catalog.stores(), false).await
    }

    /// Gossip saw `host_id` alive at `addr` (its listen address): deliver its hints now.
    pub fn host_alive(self: &Arc<Self>, host_id: HostId, addr: SocketAddr) {
        let endpoint = Endpoint { addr, alive: true };
        self.endpoints.lock().insert(host_id, endpoint);
        self.down_since.lock().remove(&host_id);
        self.schedule(host_id);
    }

    /// Gossip saw `host_id` down: delivery to it stops after the hints in flight, and the hint
    /// window counts from now (from the first report, until the host is seen alive again).
    pub fn host_down(&self, host_id: HostId) {
        self.down_since
            .lock()
            .entry(host_id)
            .or_insert_with(Instant::now);
        if let Some(endpoint) = self.endpoints.lock().get_mut(&host_id) {
            endpoint.alive = false;
        }
    }

    /// `nodetool pausehandoff`: deliveries stop after the hints in flight.
    pub fn pause_delivery(&self) {
        info!("paused hints dispatch");
        self.paused.store(true, Relaxed);
    }

    /// `nodetool resumehandoff`.
    pub fn resume_delivery(self: &Arc<Self>) {
        info!("resumed hints dispatch");
        self.paused.store(false, Relaxed);
        self.trigger();
    }

    /// `nodetool enablehandoff`.
    pub fn enable(&self) {
        self.enabled.store(true, Relaxed);
    }

    /// `nodetool disablehandoff`: no new hints; those stored are still delivered.
    pub fn disable(&self) {
        self.enabled.store(false, Relaxed);
    }

    /// `nodetool disablehintsfordc`.
    pub fn disable_for_dc(&self, dc: &str) {
        self.disabled_dcs.lock().insert(dc.to_string());
    }

    /// `nodetool enablehintsfordc`.
    pub fn enable_for_dc(&self, dc: &str) {
        self.disabled_dcs.lock().remove(dc);
    }

    pub fn status(&self) -> HandoffStatus {
        HandoffStatus {
            enabled: self.enabled.load(Relaxed),
            paused: self.paused.load(Relaxed),
            disabled_datacenters: self.disabled_dcs.lock().iter().cloned().collect(),
        }
    }

    pub(crate) fn is_paused(&self) -> bool {
        self.paused.load(Relaxed)
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Relaxed)
    }

    /// Hosts with hints, in host id order.
    pub fn pending(&self) -> Vec<PendingHints> {
        let endpoints = self.endpoints.lock().clone();
        let stores = self.catalog.stores().into_iter();
        let pending = stores.map(|store| (store.host_id, store.summary()));
        pending
            .filter_map(|(host_id, summary)| {
                Some(PendingHints {
                    host_id,
                    address: endpoints.get(&host_id).map(|e| e.addr),
                    files: summary.files,
                    oldest_ms: summary.oldest_ms?,
                    newest_ms: summary.newest_ms?,
                    total_bytes: summary.bytes,
                })
            })
            .collect()
    }

    /// `nodetool truncatehints [host]`: deletes the hints of one host, or of all.
    pub async fn truncate(&self, host_id: Option<HostId>) -> io::Result<()> {
        let stores = match host_id {
            Some(host_id) => self.catalog.get(host_id).into_iter().collect(),
            None => self.catalog.stores(),
        };
        blocking(move || stores.iter().for_each(|store| store.truncate())).await
    }

    /// Forgets a node removed from the cluster, deleting its hints.
    pub async fn delete_for(&self, host_id: HostId) -> io::Result<()> {
        self.endpoints.lock().remove(&host_id);
        self.down_since.lock().remove(&host_id);
        match self.catalog.remove(host_id) {
            Some(store) => blocking(move || store.truncate()).await,
            None => Ok(()),
        }
    }

    /// Hosts being delivered to, or waiting for a delivery slot.
    pub fn deliveries(&self) -> usize {
        self.scheduled.lock().len()
    }

    pub fn metrics(&self) -> HintsMetrics {
        let mut metrics = HintsMetrics::default();
        self.counters.fill(&mut metrics);
        for store in self.catalog.stores() {
            let summary = store.summary();
            metrics.in_progress += summary.buffered_hints;
            if summary.bytes > 0 {
                metrics.bytes_on_disk.insert(store.host_id, summary.bytes);
            }
        }
        metrics
    }

    /// Stops delivery (hints in flight are awaited), then writes, syncs and closes every
    /// file. Later `store` calls fail.
    pub async fn shutdown(&self) -> io::Result<()> {
        self.stopped.store(true, Relaxed);
        self.tasks.lock().drain(..).for_each(|task| task.abort());
        loop {
            let idle = self.idle.notified();
            if self.scheduled.lock().is_empty() {
                break;
            }
            idle.await;
        }
        self.flush_stores(self.catalog.stores(), true).await
    }
}

/// Runs blocking file work off the runtime's threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> io::Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(io::Error::other)
}
