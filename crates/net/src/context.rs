//! State shared by the messaging service and its connection tasks.
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use tokio::runtime::Handle;
use tokio::task::JoinSet;

use crate::config::{HostId, NetConfig, Tuning};
use crate::error::NetError;
use crate::frame::Limits;
use crate::handler::Handler;
use crate::handshake::Hello;
use crate::network::Network;
use crate::outbound::Outbound;
use crate::stats::Stats;
use crate::verb::{Class, Verb};

pub(crate) struct Context {
    pub config: NetConfig,
    pub tuning: Tuning,
    pub network: Arc<dyn Network>,
    /// The address we listen on (with the port the system chose if configured as 0).
    pub local: SocketAddr,
    pub hello: Hello,
    pub stats: Stats,
    handlers: RwLock<HashMap<Verb, Arc<dyn Handler>>>,
    host_ids: RwLock<HashMap<SocketAddr, HostId>>,
    outbounds: Mutex<BTreeMap<(SocketAddr, Class), Arc<Outbound>>>,
    /// Every long-lived task (listener, connections); `None` once shut down.
    tasks: Mutex<Option<JoinSet<()>>>,
    runtime: Handle,
    next_id: AtomicU64,
}

impl Context {
    pub fn new(
        config: NetConfig,
        tuning: Tuning,
        network: Arc<dyn Network>,
        local: SocketAddr,
        hello: Hello,
    ) -> Context {
        Context {
            config,
            tuning,
            network,
            local,
            hello,
            stats: Stats::default(),
            handlers: RwLock::default(),
            host_ids: RwLock::default(),
            outbounds: Mutex::default(),
            tasks: Mutex::new(Some(JoinSet::new())),
            runtime: Handle::current(),
            next_id: AtomicU64::new(1),
        }
    }

    /// Spawns a task that shutdown aborts; false once shut down.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) -> bool {
        let mut tasks = self.tasks.lock();
        let Some(set) = tasks.as_mut() else {
            return false;
        };
        while set.try_join_next().is_some() {}
        set.spawn_on(task, &self.runtime);
        true
    }

    pub fn limits(&self, version: u8) -> Limits {
        Limits {
            version,
            max_message: self.config.max_message_bytes,
        }
    }

    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Relaxed)
    }

    pub fn register(&self, verb: Verb, handler: Arc<dyn Handler>) {
        self.handlers.write().insert(verb, handler);
    }

    pub fn handler(&self, verb: Verb) -> Option<Arc<dyn Handler>> {
        self.handlers.read().get(&verb).cloned()
    }

    pub fn learn(&self, addr: SocketAddr, host_id: HostId) {
        self.host_ids.write().insert(addr, host_id);
    }

    pub fn host_id_of(&self, addr: SocketAddr) -> Option<HostId> {
        self.host_ids.read().get(&addr).copied()
    }

    /// The queue and connection for a peer and class, started on first use.
    pub fn outbound(
        self: &Arc<Self>,
        peer: SocketAddr,
        class: Class,
    ) -> Result<Arc<Outbound>, NetError> {
        let mut outbounds = self.outbounds.lock();
        if let Some(found) = outbounds.get(&(peer, class)) {
            return Ok(found.clone());
        }
        let outbound = Arc::new(Outbound::new(peer, class, self));
        if !self.spawn(outbound.clone().run(self.clone())) {
            return Err(NetError::Shutdown);
        }
        outbounds.insert((peer, class), outbound.clone());
        Ok(outbound)
    }

    /// Ends the reconnect backoff of every link to `peer` (see [`Outbound::retry_now`]).
    pub fn retry_now(&self, peer: IpAddr) {
        let links: Vec<Arc<Outbound>> = self
            .outbounds
            .lock()
            .iter()
            .filter(|((addr, _), _)| addr.ip() == peer)
            .map(|(_, link)| link.clone())
            .collect();
        for link in links {
            link.retry_now();
        }
    }

    /// Stops every task (closing the connections) without waiting for them.
    pub fn abort(&self) {
        drop(self.tasks.lock().take());
        self.fail_outbounds();
    }

    /// Stops every task, closes the connections and fails what is pending with `Shutdown`.
    pub async fn shutdown(&self) {
        let mut tasks = self.tasks.lock().take();
        if let Some(tasks) = &mut tasks {
            tasks.abort_all();
        }
        self.fail_outbounds();
        if let Some(mut tasks) = tasks {
            while tasks.join_next().await.is_some() {}
        }
        // Handlers often hold what holds this messaging (a coordinator attached to it): dropping
        // them breaks that cycle, so a node's storage is released once messaging shuts down.
        self.handlers.write().clear();
    }

    fn fail_outbounds(&self) {
        let outbounds: Vec<_> = self.outbounds.lock().values().cloned().collect();
        for outbound in outbounds {
            outbound.close(NetError::Shutdown);
        }
    }
}
