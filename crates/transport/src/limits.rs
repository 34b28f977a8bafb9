//! Overload protection shared by a server's connections, as Cassandra's
//! `ClientResourceLimits` and `ConnectionLimitHandler`: caps on connections (in all and per
//! client address), budgets of request bytes in flight (in all and per client address), the
//! optional request rate limit, and the figures `/metrics` and `nodetool` show.
//!
//! Each scope (all clients, one client address) has two budgets of request bytes, both of
//! the configured size:
//! - *held*: the memory requests hold. A body takes the room its buffer grows to as its bytes
//!   arrive (see `Framer`), a body read at once its length; a request holds its bytes until
//!   its response is queued. Requests hold no more than this budget (one larger than the
//!   budget holds all of it alone).
//! - *announced*: the declared length of each large body being received, from its header to
//!   its last byte. A large body is read only once its length is announced, so the bodies
//!   being received always fit the held budget together and none waits forever for room
//!   another holds; and since a body not yet sent holds nothing, half-sent bodies do not hold
//!   up other requests.
use crate::budget::{Budget, Counted};
use crate::rate::RateLimiter;
use crate::server::ServerConfig;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The limits a server applies (from [`crate::ServerConfig`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LimitSettings {
    pub bytes: u64,
    pub bytes_per_ip: u64,
    pub max_connections: Option<u64>,
    pub max_connections_per_ip: Option<u64>,
    pub requests_per_second: Option<u32>,
}

/// Figures of the limits since the server started, for metrics and `nodetool`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimitStats {
    /// Request bytes held now by requests being read or run (Cassandra's
    /// `Client.RequestsSize`).
    pub bytes_in_flight: u64,
    /// Declared lengths of the large bodies being received now.
    pub bytes_announced: u64,
    /// `native_transport_max_request_data_in_flight`.
    pub bytes_limit: u64,
    /// Connections not read from now, waiting for budget or for the rate limit
    /// (Cassandra's `Client.PausedConnections`).
    pub paused_connections: u64,
    /// Times a connection was paused.
    pub pauses: u64,
    /// Requests answered Overloaded (Cassandra's `Client.RequestDiscarded`).
    pub discarded: u64,
    /// Connections closed on arrival for exceeding a connection limit.
    pub refused_connections: u64,
    /// Connections closed for idling or for a frame that did not arrive in time.
    pub timed_out_connections: u64,
}

#[derive(Debug, Default)]
struct Counters {
    paused: AtomicUsize,
    pauses: AtomicU64,
    discarded: AtomicU64,
    refused: AtomicU64,
    timed_out: AtomicU64,
}

/// Which budget of a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The bytes requests hold.
    Held,
    /// The declared lengths of large bodies being received.
    Announced,
}

/// The budgets of one scope: the server's, or one client address's.
#[derive(Debug)]
struct Budgets {
    held: Budget,
    announced: Budget,
}

impl Budgets {
    fn new(limit: u64) -> Budgets {
        Budgets {
            held: Budget::new(limit),
            announced: Budget::new(limit),
        }
    }

    fn of(&self, kind: Kind) -> &Budget {
        match kind {
            Kind::Held => &self.held,
            Kind::Announced => &self.announced,
        }
    }
}

/// One client address: its open connections and its budgets.
#[derive(Debug)]
struct Address {
    connections: u64,
    budgets: Arc<Budgets>,
}

/// The limits of one server.
#[derive(Debug)]
pub struct Limits {
    settings: LimitSettings,
    global: Budgets,
    addresses: Mutex<HashMap<IpAddr, Address>>,
    connections: AtomicU64,
    rate: Option<RateLimiter>,
    counters: Counters,
}

impl Limits {
    /// The limits `config` sets, with nothing in flight.
    pub fn new(config: &ServerConfig) -> Limits {
        Limits::with(config.limits())
    }

    fn with(settings: LimitSettings) -> Limits {
        Limits {
            settings,
            global: Budgets::new(settings.bytes),
            addresses: Mutex::new(HashMap::new()),
            connections: AtomicU64::new(0),
            rate: settings.requests_per_second.map(RateLimiter::new),
            counters: Counters::default(),
        }
    }

    pub fn stats(&self) -> LimitStats {
        let c = &self.counters;
        LimitStats {
            bytes_in_flight: self.global.held.used(),
            bytes_announced: self.global.announced.used(),
            bytes_limit: self.settings.bytes,
            paused_connections: c.paused.load(Ordering::Relaxed) as u64,
            pauses: c.pauses.load(Ordering::Relaxed),
            discarded: c.discarded.load(Ordering::Relaxed),
            refused_connections: c.refused.load(Ordering::Relaxed),
            timed_out_connections: c.timed_out.load(Ordering::Relaxed),
        }
    }

    fn addresses(&self) -> MutexGuard<'_, HashMap<IpAddr, Address>> {
        self.addresses
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Admits a new connection from `ip`, or says which limit it exceeds (Cassandra's words).
    pub(crate) fn connect(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, String> {
        let count = self.connections.fetch_add(1, Ordering::Relaxed) + 1;
        let mut addresses = self.addresses();
        let address = addresses.entry(ip).or_insert_with(|| Address {
            connections: 0,
            budgets: Arc::new(Budgets::new(self.settings.bytes_per_ip)),
        });
        address.connections += 1;
        let slot = Slot {
            shares: Arc::new(Shares {
                limits: Arc::clone(self),
                address: Arc::clone(&address.budgets),
            }),
            ip,
        };
        let per_ip = address.connections;
        drop(addresses);
        let refusal = match (self.settings.max_connections, self.settings.max_connections_per_ip) {
            (Some(limit), _) if count > limit => format!(
                "Exceeded maximum native connection limit of {limit} by using {count} connections"
            ),
            (_, Some(limit)) if per_ip > limit => format!(
                "Exceeded maximum native connection limit per ip of {limit} by using {per_ip} connections"
            ),
            _ => return Ok(slot),
        };
        self.counters.refused.fetch_add(1, Ordering::Relaxed);
        Err(refusal)
    }

    pub(crate) fn count_timeout(&self) {
        self.counters.timed_out.fetch_add(1, Ordering::Relaxed);
    }

    fn disconnect(&self, ip: IpAddr) {
        self.connections.fetch_sub(1, Ordering::Relaxed);
        let mut addresses = self.addresses();
        if let Some(address) = addresses.get_mut(&ip) {
            address.connections -= 1;
            if address.connections == 0 {
                addresses.remove(&ip);
            }
        }
    }
}

/// A request's bytes of one kind: `bytes` asked for, of which `own` taken from its address's
/// budget and `all` from the server's (each at most its budget).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Share {
    bytes: u64,
    own: u64,
    all: u64,
}

/// Request bytes reserved for one request; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    shares: Arc<Shares>,
    held: Share,
    announced: Share,
}

impl Reservation {
    fn share(&mut self, kind: Kind) -> &mut Share {
        match kind {
            Kind::Held => &mut self.held,
            Kind::Announced => &mut self.announced,
        }
    }

    /// The body is in, its bytes held: its announced length is given back.
    pub fn arrived(&mut self) {
        let announced = std::mem::take(&mut self.announced);
        self.shares.give(Kind::Announced, announced);
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.shares.give(Kind::Held, self.held);
        self.shares.give(Kind::Announced, self.announced);
    }
}

/// The budgets a connection's requests take from: its address's and the server's.
#[derive(Debug)]
struct Shares {
    limits: Arc<Limits>,
    address: Arc<Budgets>,
}

impl Shares {
    fn global(&self, kind: Kind) -> &Budget {
        self.limits.global.of(kind)
    }

    fn try_take(&self, kind: Kind, share: Share) -> bool {
        if !self.address.of(kind).try_take(share.own) {
            return false;
        }
        if !self.global(kind).try_take(share.all) {
            self.address.of(kind).give(share.own);
            return false;
        }
        true
    }

    fn give(&self, kind: Kind, share: Share) {
        self.address.of(kind).give(share.own);
        self.global(kind).give(share.all);
    }
}

/// One admitted connection: its share of the limits. Dropping it counts the connection out.
#[derive(Debug)]
pub(crate) struct Slot {
    shares: Arc<Shares>,
    ip: IpAddr,
}

impl Slot {
    fn limits(&self) -> &Limits {
        &self.shares.limits
    }

    /// A reservation of nothing yet.
    pub(crate) fn nothing(&self) -> Reservation {
        Reservation {
            shares: Arc::clone(&self.shares),
            held: Share::default(),
            announced: Share::default(),
        }
    }

    /// `share` with `bytes` more asked for, and what that takes from each budget. A request
    /// asking for more than a budget takes the whole budget, so it waits for every other
    /// request to finish rather than forever.
    fn grown(&self, share: Share, bytes: u64) -> (Share, Share) {
        let s = &self.limits().settings;
        let bytes = share.bytes.saturating_add(bytes);
        let after = Share {
            bytes,
            own: bytes.min(s.bytes_per_ip),
            all: bytes.min(s.bytes),
        };
        let taken = Share {
            bytes: 0,
            own: after.own - share.own,
            all: after.all - share.all,
        };
        (after, taken)
    }

    /// Adds `bytes` of `kind` to `held` when the budgets have room now.
    pub(crate) fn reserve_at_once(&self, held: &mut Reservation, kind: Kind, bytes: u64) -> bool {
        let (after, taken) = self.grown(*held.share(kind), bytes);
        if !self.shares.try_take(kind, taken) {
            return false;
        }
        *held.share(kind) = after;
        true
    }

    /// Adds `bytes` of `kind` to `held`, or says why not (Cassandra's Overloaded message for
    /// protocol `version`): for connections that throw on overload and never wait.
    pub(crate) fn try_reserve(
        &self,
        held: &mut Reservation,
        kind: Kind,
        bytes: u64,
        version: u8,
    ) -> Result<(), String> {
        if self.reserve_at_once(held, kind, bytes) {
            return Ok(());
        }
        Err(self.discard(self.bytes_message(kind, version)))
    }

    /// Adds `bytes` of `kind` to `held`, waiting while the budgets are spent: the connection
    /// is not read from meanwhile (back-pressure).
    pub(crate) async fn reserve(&self, held: &mut Reservation, kind: Kind, bytes: u64) {
        if !self.reserve_at_once(held, kind, bytes) {
            self.paused(self.wait_for(held, kind, bytes)).await;
        }
    }

    /// Waits for the address budget first, then the global one (always in that order, so
    /// waiters never hold what another waits for in a cycle). Dropped while waiting, it
    /// gives back what it took.
    async fn wait_for(&self, held: &mut Reservation, kind: Kind, bytes: u64) {
        let (after, taken) = self.grown(*held.share(kind), bytes);
        let mut partial = self.nothing();
        self.shares.address.of(kind).take(taken.own).await;
        partial.share(kind).own = taken.own;
        self.shares.global(kind).take(taken.all).await;
        *partial.share(kind) = Share::default();
        *held.share(kind) = after;
    }

    /// Whether requests pass a rate limit.
    pub(crate) fn rate_limited(&self) -> bool {
        self.limits().rate.is_some()
    }

    /// Passes the rate limit now, or says why not (Cassandra's Overloaded message).
    pub(crate) fn try_pass_rate(&self) -> Result<(), String> {
        match &self.limits().rate {
            Some(rate) if !rate.try_reserve() => Err(self.discard(rate.message())),
            _ => Ok(()),
        }
    }

    /// Waits out the rate limit, paused.
    pub(crate) async fn pass_rate(&self) {
        let delay = self
            .limits()
            .rate
            .as_ref()
            .map_or(Duration::ZERO, RateLimiter::reserve);
        if !delay.is_zero() {
            self.paused(tokio::time::sleep(delay)).await;
        }
    }

    /// Runs `wait` counted as a paused connection, until it ends or is dropped.
    async fn paused<T>(&self, wait: impl std::future::Future<Output = T>) -> T {
        let c = &self.limits().counters;
        c.pauses.fetch_add(1, Ordering::Relaxed);
        let _paused = Counted::new(&c.paused);
        wait.await
    }

    fn discard(&self, message: String) -> String {
        let c = &self.limits().counters;
        c.discarded.fetch_add(1, Ordering::Relaxed);
        message
    }

    /// Cassandra 5.0.4's words, which differ between its pre-v5 and v5 handlers, with the
    /// figures of the budgets that refused.
    fn bytes_message(&self, kind: Kind, version: u8) -> String {
        let s = &self.limits().settings;
        let own = self.shares.address.of(kind).used();
        let all = self.shares.global(kind).used();
        let usage = if version < 5 {
            format!(
                "Using {own}/{} bytes of endpoint limit and {all}/{} bytes of global limit.",
                s.bytes_per_ip, s.bytes
            )
        } else {
            format!(
                "Endpoint: {own}/{} bytes, Global: {all}/{} bytes.",
                s.bytes_per_ip, s.bytes
            )
        };
        format!(
            "Request breached limit on bytes in flight. ({usage})Server is currently in an \
             overloaded state and cannot accept more requests."
        )
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.limits().disconnect(self.ip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(bytes: u64, per_ip: u64) -> Arc<Limits> {
        Arc::new(Limits::with(LimitSettings {
            bytes,
            bytes_per_ip: per_ip,
            max_connections: Some(3),
            max_connections_per_ip: Some(2),
            requests_per_second: None,
        }))
    }

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));

    /// A new reservation of `bytes` of `kind` when the budgets have room now.
    fn at_once(slot: &Slot, kind: Kind, bytes: u64) -> Option<Reservation> {
        let mut held = slot.nothing();
        slot.reserve_at_once(&mut held, kind, bytes).then_some(held)
    }

    /// Spawns a wait for `bytes` of `kind` on a new reservation.
    fn spawn_reserve(
        slot: &Arc<Slot>,
        kind: Kind,
        bytes: u64,
    ) -> tokio::task::JoinHandle<Reservation> {
        let slot = Arc::clone(slot);
        tokio::spawn(async move {
            let mut held = slot.nothing();
            slot.reserve(&mut held, kind, bytes).await;
            held
        })
    }

    fn figures(limits: &Limits) -> (u64, u64, u64) {
        let s = limits.stats();
        (s.bytes_in_flight, s.bytes_announced, s.paused_connections)
    }

    #[test]
    fn connections_are_capped_in_all_and_per_address() {
        let limits = limits(100, 50);
        let a1 = limits.connect(A).unwrap();
        let _a2 = limits.connect(A).unwrap();
        assert_eq!(
            limits.connect(A).unwrap_err(),
            "Exceeded maximum native connection limit per ip of 2 by using 3 connections"
        );
        let _b1 = limits.connect(B).unwrap();
        assert_eq!(
            limits.connect(B).unwrap_err(),
            "Exceeded maximum native connection limit of 3 by using 4 connections"
        );
        drop(a1);
        assert!(limits.connect(A).is_ok());
        assert_eq!(limits.stats().refused_connections, 2);
    }

    #[test]
    fn budgets_refuse_over_the_limit_and_release_on_drop() {
        let limits = limits(100, 60);
        let a = limits.connect(A).unwrap();
        let b = limits.connect(B).unwrap();
        let mut first = a.nothing();
        a.try_reserve(&mut first, Kind::Held, 50, 5).unwrap();
        assert_eq!(limits.stats().bytes_in_flight, 50);
        // Cassandra 5.0.4's texts (refcass, THROW_ON_OVERLOAD), v5 then v4.
        let mut refused = a.nothing();
        assert_eq!(
            a.try_reserve(&mut refused, Kind::Held, 20, 5).unwrap_err(),
            "Request breached limit on bytes in flight. (Endpoint: 50/60 bytes, Global: 50/100 bytes.)\
             Server is currently in an overloaded state and cannot accept more requests."
        );
        assert_eq!(
            a.try_reserve(&mut refused, Kind::Held, 20, 4).unwrap_err(),
            "Request breached limit on bytes in flight. (Using 50/60 bytes of endpoint limit and \
             50/100 bytes of global limit.)Server is currently in an overloaded state and cannot \
             accept more requests."
        );
        let second = at_once(&b, Kind::Held, 50).unwrap();
        assert!(
            at_once(&b, Kind::Held, 1).is_none(),
            "the global budget is spent"
        );
        drop((first, second, refused));
        assert_eq!(limits.stats().bytes_in_flight, 0);
        assert_eq!(limits.stats().discarded, 2);
        // A request larger than a budget takes all of it rather than never fitting.
        let whole = at_once(&a, Kind::Held, 1000).unwrap();
        assert_eq!((whole.held.own, limits.stats().bytes_in_flight), (60, 100));
        drop(whole);
    }

    #[test]
    fn a_reservation_grows_up_to_each_budget() {
        let limits = limits(100, 60);
        let a = limits.connect(A).unwrap();
        let mut held = at_once(&a, Kind::Held, 40).unwrap();
        assert!(a.reserve_at_once(&mut held, Kind::Held, 40));
        assert_eq!(
            (held.held.own, held.held.all, limits.stats().bytes_in_flight),
            (60, 80, 80),
            "capped at the address's budget, not the server's"
        );
        assert!(
            a.reserve_at_once(&mut held, Kind::Held, 1000),
            "takes the rest"
        );
        assert_eq!((held.held.own, held.held.all), (60, 100));
        drop(held);
        assert_eq!(limits.stats().bytes_in_flight, 0);
    }

    /// The lockout of issue 27: bodies announced and not sent hold no memory, so the
    /// requests of other connections (of the same address) are not held up by them, nor by
    /// the announced bodies that wait their turn.
    #[tokio::test]
    async fn announced_bodies_do_not_hold_up_other_requests() {
        let limits = limits(1000, 100);
        let slot = Arc::new(limits.connect(A).unwrap());
        let mut first = at_once(&slot, Kind::Announced, 90).unwrap();
        let second = spawn_reserve(&slot, Kind::Announced, 90);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            figures(&limits),
            (0, 90, 1),
            "the second body waits its turn"
        );
        let small = at_once(&slot, Kind::Held, 100).expect("all the memory is free");
        drop(small);
        // The first body's bytes arrive: held as they come, its announced length given back
        // when it is in, which lets the second begin.
        assert!(slot.reserve_at_once(&mut first, Kind::Held, 90));
        first.arrived();
        let second = tokio::time::timeout(Duration::from_secs(5), second)
            .await
            .expect("the second body's turn")
            .expect("no panic");
        assert_eq!(figures(&limits), (90, 90, 0));
        drop((first, second));
        assert_eq!(figures(&limits), (0, 0, 0));
    }

    #[tokio::test]
    async fn growth_waits_for_room_and_counts_the_pause() {
        let limits = limits(100, 100);
        let slot = Arc::new(limits.connect(A).unwrap());
        let held = at_once(&slot, Kind::Held, 80).unwrap();
        let waiter = spawn_reserve(&slot, Kind::Held, 40);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(limits.stats().paused_connections, 1);
        assert!(!waiter.is_finished());
        drop(held);
        let reservation = waiter.await.unwrap();
        let stats = limits.stats();
        assert_eq!((stats.paused_connections, stats.pauses), (0, 1));
        assert_eq!(stats.bytes_in_flight, 40);
        drop(reservation);
    }

    #[tokio::test]
    async fn a_wait_given_up_is_no_longer_counted_and_keeps_nothing() {
        // The address's budget has room and the server's not: the wait is given up after
        // taking from the address, which gets it back.
        let limits = limits(100, 100);
        let a = Arc::new(limits.connect(A).unwrap());
        let b = limits.connect(B).unwrap();
        let held = at_once(&b, Kind::Held, 80).unwrap();
        let mut waiting = a.nothing();
        let gave_up = tokio::time::timeout(
            Duration::from_millis(20),
            a.reserve(&mut waiting, Kind::Held, 40),
        )
        .await;
        assert!(gave_up.is_err());
        assert_eq!(waiting.held, Share::default());
        let stats = limits.stats();
        assert_eq!((stats.paused_connections, stats.pauses), (0, 1));
        assert_eq!(stats.bytes_in_flight, 80);
        assert_eq!(a.shares.address.held.used(), 0);
        drop(held);
    }
}
