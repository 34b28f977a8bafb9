//! Overload protection shared by a server's connections, as Cassandra's
//! `ClientResourceLimits` and `ConnectionLimitHandler`: caps on connections (in all and per
//! client address), budgets of request bytes in flight (in all and per client address), the
//! optional request rate limit, and the figures `/metrics` and `nodetool` show.
//!
//! A request's bytes are its envelope's declared body length. They are reserved when its
//! header is read, before its body is (see `Framer`), and held until its response is queued,
//! so a client declaring large bodies holds no more memory than the budgets admit.
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
    /// Request bytes in flight now (Cassandra's `Client.RequestsSize`).
    pub bytes_in_flight: u64,
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

/// One client address: its open connections and its budget.
#[derive(Debug)]
struct Address {
    connections: u64,
    budget: Arc<Budget>,
}

/// The limits of one server.
#[derive(Debug)]
pub struct Limits {
    settings: LimitSettings,
    global: Budget,
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
            global: Budget::new(settings.bytes),
            addresses: Mutex::new(HashMap::new()),
            connections: AtomicU64::new(0),
            rate: settings.requests_per_second.map(RateLimiter::new),
            counters: Counters::default(),
        }
    }

    pub fn stats(&self) -> LimitStats {
        let c = &self.counters;
        LimitStats {
            bytes_in_flight: self.global.used(),
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
            budget: Arc::new(Budget::new(self.settings.bytes_per_ip)),
        });
        address.connections += 1;
        let slot = Slot {
            shares: Arc::new(Shares {
                limits: Arc::clone(self),
                address: Arc::clone(&address.budget),
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

/// Request bytes reserved for one request; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    shares: Arc<Shares>,
    own: u64,
    all: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.shares.address.give(self.own);
        self.shares.limits.global.give(self.all);
    }
}

/// The budgets a connection's requests take from: its address's and the server's.
#[derive(Debug)]
struct Shares {
    limits: Arc<Limits>,
    address: Arc<Budget>,
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

    /// Bytes for a request of `bytes` from the address budget and from the global one. A
    /// request larger than a budget takes the whole budget, so it waits for every other
    /// request to finish rather than forever.
    fn counts(&self, bytes: u32) -> (u64, u64) {
        let s = &self.limits().settings;
        (
            u64::from(bytes).min(s.bytes_per_ip),
            u64::from(bytes).min(s.bytes),
        )
    }

    /// Reserves `bytes` and passes the rate limit, or says why not (Cassandra's Overloaded
    /// message for protocol `version`): `throw_on_overload` connections never wait.
    pub(crate) fn try_admit(&self, bytes: u32, version: u8) -> Result<Reservation, String> {
        let (own, all) = self.counts(bytes);
        let reservation = self
            .try_reserve(own, all)
            .ok_or_else(|| self.discard(self.bytes_message(version)))?;
        match &self.limits().rate {
            Some(rate) if !rate.try_reserve() => Err(self.discard(rate.message())),
            _ => Ok(reservation),
        }
    }

    /// Reserves `bytes` when that needs no wait: the budgets have room and no rate limit is
    /// set (the common case, taken without setting up a wait).
    pub(crate) fn admit_at_once(&self, bytes: u32) -> Option<Reservation> {
        if self.limits().rate.is_some() {
            return None;
        }
        let (own, all) = self.counts(bytes);
        self.try_reserve(own, all)
    }

    /// Reserves `bytes`, waiting while the budgets are spent, then waits out the rate limit:
    /// the connection is not read from meanwhile (back-pressure).
    pub(crate) async fn admit(&self, bytes: u32) -> Reservation {
        let (own, all) = self.counts(bytes);
        let reservation = match self.try_reserve(own, all) {
            Some(r) => r,
            None => self.paused(self.reserve(own, all)).await,
        };
        let delay = self
            .limits()
            .rate
            .as_ref()
            .map_or(Duration::ZERO, RateLimiter::reserve);
        if !delay.is_zero() {
            self.paused(tokio::time::sleep(delay)).await;
        }
        reservation
    }

    fn try_reserve(&self, own: u64, all: u64) -> Option<Reservation> {
        let shares = &self.shares;
        if !shares.address.try_take(own) {
            return None;
        }
        if !shares.limits.global.try_take(all) {
            shares.address.give(own);
            return None;
        }
        Some(self.reservation(own, all))
    }

    /// Waits for the address budget first, then the global one (always in that order, so
    /// waiters never hold what another waits for in a cycle). Dropped while waiting, it
    /// gives back what it took.
    async fn reserve(&self, own: u64, all: u64) -> Reservation {
        self.shares.address.take(own).await;
        let mut held = self.reservation(own, 0);
        self.shares.limits.global.take(all).await;
        held.all = all;
        held
    }

    fn reservation(&self, own: u64, all: u64) -> Reservation {
        Reservation {
            shares: Arc::clone(&self.shares),
            own,
            all,
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

    /// Cassandra 5.0.4's words, which differ between its pre-v5 and v5 handlers.
    fn bytes_message(&self, version: u8) -> String {
        let s = &self.limits().settings;
        let (own, all) = (self.shares.address.used(), self.limits().global.used());
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
        let first = a.try_admit(50, 5).unwrap();
        assert_eq!(limits.stats().bytes_in_flight, 50);
        // Cassandra 5.0.4's texts (refcass, THROW_ON_OVERLOAD), v5 then v4.
        assert_eq!(
            a.try_admit(20, 5).unwrap_err(),
            "Request breached limit on bytes in flight. (Endpoint: 50/60 bytes, Global: 50/100 bytes.)\
             Server is currently in an overloaded state and cannot accept more requests."
        );
        assert_eq!(
            a.try_admit(20, 4).unwrap_err(),
            "Request breached limit on bytes in flight. (Using 50/60 bytes of endpoint limit and \
             50/100 bytes of global limit.)Server is currently in an overloaded state and cannot \
             accept more requests."
        );
        let second = b.try_admit(50, 5).unwrap();
        assert!(b.try_admit(1, 5).is_err(), "the global budget is spent");
        drop((first, second));
        assert_eq!(limits.stats().bytes_in_flight, 0);
        assert_eq!(limits.stats().discarded, 3);
        // A request larger than a budget takes all of it rather than never fitting.
        let whole = a.try_admit(1000, 5).unwrap();
        assert_eq!(limits.stats().bytes_in_flight, 100);
        drop(whole);
    }

    #[tokio::test]
    async fn admission_waits_for_budget_and_counts_the_pause() {
        let limits = limits(100, 100);
        let slot = Arc::new(limits.connect(A).unwrap());
        let held = slot.try_admit(80, 5).unwrap();
        let waiter = {
            let slot = Arc::clone(&slot);
            tokio::spawn(async move { slot.admit(40).await })
        };
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
    async fn a_wait_given_up_is_no_longer_counted_as_paused() {
        let limits = limits(100, 100);
        let slot = Arc::new(limits.connect(A).unwrap());
        let held = slot.try_admit(80, 5).unwrap();
        let gave_up = tokio::time::timeout(Duration::from_millis(20), slot.admit(40)).await;
        assert!(gave_up.is_err());
        let stats = limits.stats();
        assert_eq!((stats.paused_connections, stats.pauses), (0, 1));
        assert_eq!(stats.bytes_in_flight, 80);
        drop(held);
    }
}
