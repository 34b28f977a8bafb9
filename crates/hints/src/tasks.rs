//! The service's background work: the periodic flush, the dispatch trigger (every 10 s, as
//! Cassandra's `HintsDispatchTrigger`), and one delivery task per host being delivered to, at
//! most `max_hints_delivery_threads` running at once (Cassandra's `HintsDispatchExecutor`).
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use clock::Clock;
use net::HostId;
use tokio::time::{interval_at, Instant, MissedTickBehavior};
use tracing::error;

use crate::dispatcher::HintsDispatcher;
use crate::metrics::Counters;
use crate::service::{blocking, HintsService};
use crate::store::{Delivered, HintsStore};
use crate::throttle::{rate_per_delivery, Throttle};

/// How often hosts with hints are checked for delivery.
pub const DISPATCH_INTERVAL: Duration = Duration::from_secs(10);

impl HintsService {
    pub(crate) fn start_tasks(self: &Arc<Self>) {
        let flusher = tokio::spawn(flush_periodically(
            Arc::downgrade(self),
            self.flush_soon.clone(),
            self.config.hints_flush_period,
        ));
        let trigger = tokio::spawn(trigger_periodically(Arc::downgrade(self)));
        self.tasks.lock().extend([flusher, trigger]);
    }

    /// Schedules delivery to every live host with hints.
    pub(crate) fn trigger(self: &Arc<Self>) {
        for store in self.catalog.stores() {
            self.schedule(store.host_id);
        }
    }

    /// Starts delivering to `host_id` unless delivery is paused, the host is not known alive,
    /// has no hints, or is already being delivered to.
    pub(crate) fn schedule(self: &Arc<Self>, host_id: HostId) {
        if self.is_paused() || self.is_stopped() {
            return;
        }
        let Some(addr) = self.live_address(host_id) else {
            return;
        };
        let Some(store) = self.catalog.get(host_id).filter(|s| s.has_hints()) else {
            return;
        };
        if !self.scheduled.lock().insert(host_id) {
            return;
        }
        let service = self.clone();
        tokio::spawn(async move {
            let _scheduled = Scheduled(&service, host_id);
            if let Ok(_slot) = service.slots.clone().acquire_owned().await {
                service.deliver_to(&store, addr).await;
            }
        });
    }

    fn live_address(&self, host_id: HostId) -> Option<SocketAddr> {
        let endpoint = self.endpoints.lock().get(&host_id).copied()?;
        endpoint.alive.then_some(endpoint.addr)
    }

    /// Whether delivery to `host_id` must stop now.
    fn must_stop(&self, host_id: HostId) -> bool {
        self.is_paused() || self.is_stopped() || self.live_address(host_id).is_none()
    }

    fn rate(&self) -> Option<f64> {
        rate_per_delivery(self.config.hinted_handoff_throttle, (self.env.node_count)())
    }

    /// Delivers the host's files, oldest first, until they are all delivered or one stops.
    async fn deliver_to(&self, store: &Arc<HintsStore>, addr: SocketAddr) {
        if let Err(e) = self.seal(store).await {
            error!("cannot write hints for {}: {e}", store.host_id);
        }
        let mut throttle = Throttle::new(self.rate());
        while !self.must_stop(store.host_id) {
            let Some(lease) = store.lease() else { break };
            throttle.set_rate(self.rate());
            let abort = || self.must_stop(store.host_id) || store.truncated_since(&lease);
            let mut dispatcher = HintsDispatcher {
                deliver: self.env.deliver.clone(),
                addr,
                gc_grace: &self.env.gc_grace,
                clock: self.clock.clone(),
                counters: &self.counters,
                throttle: &mut throttle,
                abort: &abort,
            };
            let delivered = dispatcher
                .dispatch(&self.config.hints_directory, &lease)
                .await;
            let releasing = store.clone();
            let released = blocking(move || releasing.release(lease, delivered)).await;
            if released.is_err() || delivered != Delivered::All {
                break;
            }
        }
    }

    /// Writes the host's buffered hints and closes its current file, so all can be delivered.
    async fn seal(&self, store: &Arc<HintsStore>) -> io::Result<()> {
        self.flush_stores(vec![store.clone()], true).await
    }

    /// Writes (and with `close`, closes) the stores' files; the first error is returned,
    /// after every store was tried.
    pub(crate) async fn flush_stores(
        &self,
        stores: Vec<Arc<HintsStore>>,
        close: bool,
    ) -> io::Result<()> {
        let now = self.clock.now_millis();
        let max_file_size = self.config.max_hints_file_size;
        let flushed = blocking(move || {
            let flushed = stores
                .iter()
                .map(|s| (s.host_id, s.flush(now, max_file_size, close)));
            flushed.collect::<Vec<_>>()
        })
        .await?;
        let mut first_error = None;
        for (host_id, flushed) in flushed {
            Counters::add(&self.counters.not_stored, flushed.lost);
            if let Some(e) = flushed.error {
                error!(
                    "writing hints for {host_id} failed ({} hints lost): {e}",
                    flushed.lost
                );
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Takes a host off the scheduled set when its delivery task ends, however it ends.
struct Scheduled<'a>(&'a HintsService, HostId);

impl Drop for Scheduled<'_> {
    fn drop(&mut self) {
        let mut scheduled = self.0.scheduled.lock();
        scheduled.remove(&self.1);
        if scheduled.is_empty() {
            self.0.idle.notify_one();
        }
    }
}

async fn flush_periodically(
    service: Weak<HintsService>,
    soon: Arc<tokio::sync::Notify>,
    period: Duration,
) {
    let mut ticks = interval_at(Instant::now() + period, period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            _ = ticks.tick() => {}
            _ = soon.notified() => {}
        }
        let Some(service) = service.upgrade() else {
            return;
        };
        // Errors are logged by flush_stores; the next period tries again.
        let _ = service.flush().await;
    }
}

async fn trigger_periodically(service: Weak<HintsService>) {
    let mut ticks = interval_at(Instant::now() + DISPATCH_INTERVAL, DISPATCH_INTERVAL);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(service) = service.upgrade() else {
            return;
        };
        service.trigger();
    }
}
