//! The gossip service: one supervisor task runs chitchat, refreshes the view of the peers every
//! gossip interval and sends the events; [`Gossiper`] is the handle the node keeps.

use std::collections::{BTreeMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use chitchat::{spawn_chitchat, Chitchat, ChitchatConfig, ChitchatHandle, ChitchatId};
use clock::Clock;
use parking_lot::{Mutex, RwLock};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::time::{self, Instant, MissedTickBehavior};
use tracing::{debug, error, info, warn};

use crate::keys::{Status, HOST_ID, STATUS};
use crate::partners::ChitchatSlot;
use crate::view::{Observation, Rules, View};
use crate::wire::{Inbox, WireTransport};
use crate::{
    EndpointView, GossipConfig, GossipError, GossipStats, HostId, Membership, MembershipEvent, Wire,
};

/// Events a slow subscriber may fall behind by before it sees `Lagged`.
const EVENT_CAPACITY: usize = 1024;
/// After gossip (re)starts or this node was paused, peers are not marked down for this many
/// rounds: the detector has not heard them for reasons of this node's own.
const WARM_UP_ROUNDS: u32 = 10;
/// A refresh later than this many rounds means this node was paused (SIGSTOP, overload): the
/// detector has convicted peers it could not hear (Cassandra's local-pause guard).
const PAUSE_ROUNDS: u32 = 4;
/// How long a stopping node keeps gossiping after announcing `status=shutdown`, in rounds.
const ANNOUNCE_ROUNDS: u32 = 2;
/// Tombstoned keys are kept this long (gossip deletes none today).
const DELETED_KEY_GRACE: Duration = Duration::from_secs(60 * 60);

/// The gossip service of one node. Dropping the last handle stops gossip silently (as a crash
/// does); [`Gossiper::shutdown`] stops it after telling the peers.
pub struct Gossiper {
    shared: Arc<Shared>,
    control: mpsc::UnboundedSender<Control>,
    events: broadcast::Sender<MembershipEvent>,
}

struct Shared {
    listen: SocketAddr,
    host_id: HostId,
    running: AtomicBool,
    local: Mutex<Local>,
    view: RwLock<View>,
    inbox: Arc<Inbox>,
}

/// This node's own advertised state, kept here so that a restart of gossip starts from it.
struct Local {
    state: BTreeMap<String, String>,
    generation: u64,
    heartbeat: u64,
}

enum Control {
    Start,
    Stop,
    Set(String, String),
    Shutdown(oneshot::Sender<()>),
}

impl Gossiper {
    /// Starts gossiping: spawns chitchat and the supervisor task on the current tokio runtime.
    pub async fn start(
        config: GossipConfig,
        wire: Arc<dyn Wire>,
    ) -> Result<Arc<Gossiper>, GossipError> {
        config.validate()?;
        let mut state = config.initial_state.clone();
        state
            .entry(HOST_ID.to_string())
            .or_insert_with(|| config.host_id.to_string());
        let shared = Arc::new(Shared {
            listen: config.listen,
            host_id: config.host_id,
            running: AtomicBool::new(true),
            local: Mutex::new(Local {
                state,
                generation: 0,
                heartbeat: 0,
            }),
            view: RwLock::new(View::default()),
            inbox: Arc::new(Inbox::default()),
        });
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let (control, commands) = mpsc::unbounded_channel();
        let mut supervisor = Supervisor::new(config, wire, shared.clone(), events.clone());
        supervisor.launch().await?;
        tokio::spawn(supervisor.run(commands));
        Ok(Arc::new(Gossiper {
            shared,
            control,
            events,
        }))
    }

    /// Hands an inbound gossip message (the `Verb::Gossip` payload) to chitchat; never waits.
    pub fn receive(&self, from: SocketAddr, payload: Bytes) {
        self.shared.inbox.deliver(from, payload);
    }

    /// Stops gossip for good after announcing `status=shutdown`, so peers mark this node down
    /// at once (Cassandra's shutdown announcement).
    pub async fn shutdown(&self) {
        self.shared.running.store(false, Ordering::SeqCst);
        let (done, finished) = oneshot::channel();
        if self.control.send(Control::Shutdown(done)).is_ok() {
            let _ = finished.await;
        }
    }

    pub fn listen(&self) -> SocketAddr {
        self.shared.listen
    }

    pub fn stats(&self) -> GossipStats {
        self.shared.inbox.counters().snapshot()
    }

    fn own_endpoint(&self) -> EndpointView {
        let local = self.shared.local.lock();
        EndpointView {
            addr: self.shared.listen,
            host_id: Some(self.shared.host_id),
            alive: self.is_running(),
            generation: local.generation,
            heartbeat: local.heartbeat,
            state: local.state.clone(),
        }
    }
}

impl Membership for Gossiper {
    fn set_local(&self, key: &str, value: String) {
        self.shared
            .local
            .lock()
            .state
            .insert(key.to_string(), value.clone());
        let _ = self.control.send(Control::Set(key.to_string(), value));
    }

    fn endpoints(&self) -> Vec<EndpointView> {
        let mut endpoints = vec![self.own_endpoint()];
        endpoints.extend(self.shared.view.read().peers().cloned());
        endpoints
    }

    fn is_alive(&self, addr: IpAddr) -> bool {
        if addr == self.shared.listen.ip() {
            return self.is_running();
        }
        let view = self.shared.view.read();
        let mut peers = view.peers();
        peers.any(|peer| peer.addr.ip() == addr && peer.alive)
    }

    fn subscribe(&self) -> broadcast::Receiver<MembershipEvent> {
        self.events.subscribe()
    }

    fn stop(&self) {
        if self.shared.running.swap(false, Ordering::SeqCst) {
            let _ = self.control.send(Control::Stop);
        }
    }

    fn start(&self) {
        let was_running = self.shared.running.swap(true, Ordering::SeqCst);
        if !was_running && self.control.send(Control::Start).is_err() {
            // Shut down for good.
            self.shared.running.store(false, Ordering::SeqCst);
        }
    }

    fn is_running(&self) -> bool {
        self.shared.running.load(Ordering::SeqCst)
    }
}

struct Supervisor {
    config: GossipConfig,
    wire: Arc<dyn Wire>,
    shared: Arc<Shared>,
    events: broadcast::Sender<MembershipEvent>,
    chitchat: Option<ChitchatHandle>,
    /// Until then the detector's verdicts are not trusted (see [`WARM_UP_ROUNDS`]).
    trust_from: Instant,
    last_refresh: Instant,
    /// chitchat instances launched so far (each routes its rounds with its own generator).
    launches: u64,
}

impl Supervisor {
    fn new(
        config: GossipConfig,
        wire: Arc<dyn Wire>,
        shared: Arc<Shared>,
        events: broadcast::Sender<MembershipEvent>,
    ) -> Self {
        let now = Instant::now();
        Supervisor {
            config,
            wire,
            shared,
            events,
            chitchat: None,
            trust_from: now,
            last_refresh: now,
            launches: 0,
        }
    }

    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Control>) {
        let mut tick = time::interval(self.config.interval);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            let terminated = termination(&self.chitchat);
            tokio::select! {
                biased;
                command = commands.recv() => match command {
                    Some(Control::Shutdown(done)) => {
                        self.halt().await;
                        let _ = done.send(());
                        return;
                    }
                    Some(command) => self.obey(command).await,
                    None => return,
                },
                _ = tick.tick() => self.refresh().await,
                outcome = terminated => self.relaunch(outcome).await,
            }
        }
    }

    async fn obey(&mut self, command: Control) {
        match command {
            Control::Start if self.chitchat.is_none() => {
                if let Err(error) = self.launch().await {
                    error!(%error, "gossip could not be started");
                }
            }
            Control::Stop => self.halt().await,
            Control::Set(key, value) => {
                if let Some(handle) = &self.chitchat {
                    handle
                        .with_chitchat(|chitchat| chitchat.self_node_state().set(&key, &value))
                        .await;
                }
            }
            Control::Start | Control::Shutdown(_) => {}
        }
    }

    /// Runs chitchat under a new generation, starting from this node's own state.
    async fn launch(&mut self) -> Result<(), GossipError> {
        let generation = next_generation(&self.config.clock);
        let state: Vec<(String, String)> = {
            let mut local = self.shared.local.lock();
            local.generation = generation;
            local.heartbeat = 0;
            local.state.clone().into_iter().collect()
        };
        let running = ChitchatSlot::default();
        self.launches += 1;
        let launches = self.launches;
        let transport = WireTransport {
            wire: self.wire.clone(),
            inbox: self.shared.inbox.clone(),
            cluster_name: self.config.cluster_name.clone(),
            partners: self
                .config
                .partner_seed
                .map(|seed| (seed.wrapping_add(launches), running.clone())),
        };
        let handle = spawn_chitchat(chitchat_config(&self.config, generation), state, &transport)
            .await
            .map_err(|error| GossipError::Transport(error.to_string()))?;
        // Before chitchat's task first runs: its first round is routed too.
        let _ = running.set(handle.chitchat());
        self.chitchat = Some(handle);
        self.hold_down_from(Instant::now());
        info!(listen = %self.config.listen, generation, "gossip started");
        Ok(())
    }

    async fn relaunch(&mut self, outcome: anyhow::Result<()>) {
        let reason = outcome
            .err()
            .map_or("no error".to_string(), |e| e.to_string());
        error!(%reason, "gossip stopped unexpectedly; restarting it under a new generation");
        self.chitchat = None;
        // At most once a round, should it keep failing.
        time::sleep(self.config.interval).await;
        if self.shared.running.load(Ordering::SeqCst) {
            if let Err(error) = self.launch().await {
                error!(%error, "gossip could not be restarted");
            }
        }
    }

    /// Stops chitchat after telling the live peers `status=shutdown`.
    async fn halt(&mut self) {
        let Some(handle) = self.chitchat.take() else {
            return;
        };
        self.announce_shutdown(&handle).await;
        if let Err(error) = handle.shutdown().await {
            debug!(%error, "gossip ended with an error");
        }
        self.shared.inbox.close();
        info!(listen = %self.config.listen, "gossip stopped");
    }

    async fn announce_shutdown(&self, handle: &ChitchatHandle) {
        let peers = handle
            .with_chitchat(|chitchat| {
                chitchat
                    .self_node_state()
                    .set(STATUS, Status::Shutdown.as_str());
                live_peers(chitchat)
            })
            .await;
        if peers.is_empty() {
            return;
        }
        info!("announcing shutdown to {} live peers", peers.len());
        for peer in peers {
            let _ = handle.gossip(peer);
        }
        time::sleep(self.config.interval * ANNOUNCE_ROUNDS).await;
    }

    /// Reads chitchat's state into the view and sends the events it makes.
    async fn refresh(&mut self) {
        let now = Instant::now();
        self.notice_pause(now);
        let Some(handle) = &self.chitchat else {
            return;
        };
        let (own_heartbeat, peers) = handle.with_chitchat(observe).await;
        self.shared.local.lock().heartbeat = own_heartbeat;
        let trusted = now >= self.trust_from;
        let rules = Rules {
            hold_down: !trusted,
            forget_absent: trusted,
        };
        let events = self.shared.view.write().apply(peers, rules);
        for event in events {
            log_event(event);
            let _ = self.events.send(event);
        }
    }

    fn notice_pause(&mut self, now: Instant) {
        let gap = now.saturating_duration_since(self.last_refresh);
        self.last_refresh = now;
        if gap > self.config.interval * PAUSE_ROUNDS {
            warn!(
                "gossip did not run for {gap:?} (this node was paused or starved): peers are not \
                 marked down for the next {:?}",
                self.warm_up()
            );
            self.hold_down_from(now);
        }
    }

    fn hold_down_from(&mut self, now: Instant) {
        self.trust_from = self.trust_from.max(now + self.warm_up());
    }

    fn warm_up(&self) -> Duration {
        self.config.interval * WARM_UP_ROUNDS
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if let Some(handle) = self.chitchat.take() {
            handle.abort();
        }
        self.shared.inbox.close();
    }
}

pub(crate) fn chitchat_config(config: &GossipConfig, generation: u64) -> ChitchatConfig {
    ChitchatConfig {
        chitchat_id: ChitchatId::new(config.host_id.to_string(), generation, config.listen),
        cluster_id: config.cluster_name.clone(),
        gossip_interval: config.interval,
        listen_addr: config.listen,
        seed_nodes: config.seeds.iter().map(SocketAddr::to_string).collect(),
        failure_detector_config: config.failure_detector(),
        marked_for_deletion_grace_period: DELETED_KEY_GRACE,
        catchup_callback: None,
        extra_liveness_predicate: None,
    }
}

/// Resolves when the running chitchat instance ends; never while none runs.
fn termination(
    handle: &Option<ChitchatHandle>,
) -> impl std::future::Future<Output = anyhow::Result<()>> + use<> {
    let watcher = handle.as_ref().map(ChitchatHandle::termination_watcher);
    async move {
        match watcher {
            Some(watcher) => watcher.await,
            None => std::future::pending().await,
        }
    }
}

/// This node's heartbeat and every other node chitchat knows. Older generations of this node
/// (gossiped back by peers after a restart of gossip) are not peers.
fn observe(chitchat: &mut Chitchat) -> (u64, Vec<Observation>) {
    let me = chitchat.self_chitchat_id().clone();
    let live: HashSet<&ChitchatId> = chitchat.live_nodes().collect();
    let mut own_heartbeat = 0;
    let mut peers = Vec::new();
    for (id, node) in chitchat.node_states() {
        if *id == me {
            own_heartbeat = node.heartbeat().into();
        } else if id.gossip_advertise_addr != me.gossip_advertise_addr {
            peers.push(Observation {
                addr: id.gossip_advertise_addr,
                host_id: HostId::parse_str(&id.node_id).ok(),
                generation: id.generation_id,
                heartbeat: node.heartbeat().into(),
                live: live.contains(id),
                state: node
                    .key_values()
                    .map(|(key, value)| (key.to_string(), value.to_string()))
                    .collect(),
            });
        }
    }
    (own_heartbeat, peers)
}

fn live_peers(chitchat: &Chitchat) -> Vec<SocketAddr> {
    let me = chitchat.self_chitchat_id().gossip_advertise_addr;
    chitchat
        .live_nodes()
        .map(|id| id.gossip_advertise_addr)
        .filter(|addr| *addr != me)
        .collect()
}

fn log_event(event: MembershipEvent) {
    match event {
        MembershipEvent::Alive(addr) => info!("{addr} is now UP"),
        MembershipEvent::Dead(addr) => info!("{addr} is now DOWN"),
        MembershipEvent::Removed(addr) => info!("{addr} is removed from gossip"),
        MembershipEvent::Changed(addr) => debug!("{addr} changed its gossip state"),
    }
}

/// A generation for a new run of gossip: milliseconds since the epoch by the node's clock,
/// strictly above every generation handed out before in this process.
fn next_generation(clock: &impl Clock) -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = clock.now_millis().max(0) as u64;
    let previous = LAST
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
            Some(now.max(last + 1))
        })
        .unwrap_or_else(|last| last);
    now.max(previous + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nodes gossiping over `net` on turmoil's network; the second's chitchat dies when
    /// its inbox is closed under it.
    #[cfg(feature = "net")]
    #[test]
    fn gossip_that_dies_is_restarted_under_a_new_generation() {
        let addr = |last| SocketAddr::from(([192, 168, 9, last], 7000));
        let mut sim = turmoil::Builder::new().build();
        let started: Arc<Mutex<BTreeMap<u8, Arc<Gossiper>>>> = Arc::default();
        for node in [1u8, 2] {
            let started = started.clone();
            sim.host(addr(node).ip(), move || {
                let started = started.clone();
                async move {
                    let host_id = HostId::from_u128(node.into());
                    let config = net::NetConfig::new("C", host_id, addr(node));
                    let network = Arc::new(net::TurmoilNetwork);
                    let messaging = net::Messaging::start(config, network).await?;
                    let mut config = GossipConfig::new("C", host_id, addr(node));
                    config.seeds = vec![addr(1)];
                    let gossiper = crate::net_wire::start_over_net(config, messaging).await?;
                    started.lock().insert(node, gossiper);
                    std::future::pending::<()>().await;
                    Ok(())
                }
            });
        }
        let run_for = |sim: &mut turmoil::Sim, time: Duration| {
            let until = sim.elapsed() + time;
            while sim.elapsed() < until {
                sim.step().unwrap();
            }
        };
        run_for(&mut sim, Duration::from_secs(3));
        let one = started.lock()[&1].clone();
        let two = started.lock()[&2].clone();
        assert!(one.is_alive(addr(2).ip()));
        let first = two.endpoints()[0].generation;
        // Closing the inbox under chitchat ends its server loop with an error.
        two.shared.inbox.close();
        run_for(&mut sim, Duration::from_secs(3));
        assert!(two.is_running());
        assert!(two.endpoints()[0].generation > first);
        assert!(one.is_alive(addr(2).ip()) && two.is_alive(addr(1).ip()));
        let seen_by_one = one
            .endpoints()
            .into_iter()
            .find(|e| e.addr == addr(2))
            .unwrap();
        assert!(seen_by_one.generation > first);
    }

    #[test]
    fn generations_strictly_increase_and_follow_the_clock() {
        let clock = clock::SystemClock;
        let first = next_generation(&clock);
        let second = next_generation(&clock);
        assert!(second > first);
        let now_ms = clock.now_millis() as u64;
        assert!(
            first <= now_ms + 1_000 && first + 60_000 > now_ms,
            "{first} vs {now_ms}"
        );
    }
}
