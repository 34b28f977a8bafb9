//! Counters for metrics, `nodetool tpstats` (per verb) and `nodetool netstats` (per link).
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::verb::{Class, Verb};
use crate::wait::{QueueWait, WaitHistogram};

/// Verb codes are below this (checked by a test).
const VERB_SLOTS: usize = 64;

/// A snapshot of every counter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    /// One entry per verb, in code order.
    pub verbs: Vec<VerbStats>,
    /// One entry per peer and class that has been used either way, in address order.
    pub links: Vec<LinkStats>,
}

impl NetStats {
    pub fn verb(&self, verb: Verb) -> VerbStats {
        let found = self.verbs.iter().find(|stats| stats.verb == verb);
        found.cloned().unwrap_or_else(|| VerbStats::zero(verb))
    }

    pub fn link(&self, peer: SocketAddr, class: Class) -> Option<&LinkStats> {
        self.links
            .iter()
            .find(|l| l.peer == peer && l.class == class)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerbStats {
    pub verb: Verb,
    /// Messages of this verb whose handler ran here (answered with a result or an error).
    pub completed: u64,
    /// Messages received here that expired before their handler could start.
    pub dropped: u64,
    /// Requests sent from here that got no answer in time.
    pub timeouts: u64,
    /// Messages sent from here that failed otherwise (unreachable, remote error, overloaded,
    /// refused, too large, shut down).
    pub failures: u64,
    /// How long the messages whose handler ran waited for it after arriving.
    pub queue_wait: QueueWait,
}

impl VerbStats {
    fn zero(verb: Verb) -> VerbStats {
        VerbStats {
            verb,
            completed: 0,
            dropped: 0,
            timeouts: 0,
            failures: 0,
            queue_wait: QueueWait::default(),
        }
    }
}

/// One peer and connection class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkStats {
    pub peer: SocketAddr,
    pub class: Class,
    /// Our outbound connection is established.
    pub connected: bool,
    /// Inbound connections from that peer in that class.
    pub inbound_connections: u64,
    /// Messages and bytes queued for sending.
    pub pending_messages: u64,
    pub pending_bytes: u64,
    pub sent_messages: u64,
    pub sent_bytes: u64,
    /// Outbound connections established after the first.
    pub reconnects: u64,
    /// Frames that failed their CRC check, either way (each closed its connection).
    pub crc_errors: u64,
    /// Sends refused because the queue was full.
    pub overloaded: u64,
    /// Queued messages whose timeout passed before they could be written.
    pub expired: u64,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Tally {
    Completed,
    Dropped,
    Timeout,
    Failure,
}

struct VerbCounters {
    completed: [AtomicU64; VERB_SLOTS],
    dropped: [AtomicU64; VERB_SLOTS],
    timeouts: [AtomicU64; VERB_SLOTS],
    failures: [AtomicU64; VERB_SLOTS],
    waits: [WaitHistogram; VERB_SLOTS],
}

impl Default for VerbCounters {
    fn default() -> VerbCounters {
        VerbCounters {
            completed: std::array::from_fn(|_| AtomicU64::new(0)),
            dropped: std::array::from_fn(|_| AtomicU64::new(0)),
            timeouts: std::array::from_fn(|_| AtomicU64::new(0)),
            failures: std::array::from_fn(|_| AtomicU64::new(0)),
            waits: std::array::from_fn(|_| WaitHistogram::default()),
        }
    }
}

/// Live counters of one peer and class.
#[derive(Default)]
pub(crate) struct LinkCounters {
    pub connected: AtomicBool,
    pub inbound_connections: AtomicU64,
    pub pending_messages: AtomicU64,
    pub pending_bytes: AtomicU64,
    pub sent_messages: AtomicU64,
    pub sent_bytes: AtomicU64,
    pub reconnects: AtomicU64,
    pub crc_errors: AtomicU64,
    pub overloaded: AtomicU64,
    pub expired: AtomicU64,
}

impl LinkCounters {
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    fn snapshot(&self, peer: SocketAddr, class: Class) -> LinkStats {
        LinkStats {
            peer,
            class,
            connected: self.connected.load(Relaxed),
            inbound_connections: self.inbound_connections.load(Relaxed),
            pending_messages: self.pending_messages.load(Relaxed),
            pending_bytes: self.pending_bytes.load(Relaxed),
            sent_messages: self.sent_messages.load(Relaxed),
            sent_bytes: self.sent_bytes.load(Relaxed),
            reconnects: self.reconnects.load(Relaxed),
            crc_errors: self.crc_errors.load(Relaxed),
            overloaded: self.overloaded.load(Relaxed),
            expired: self.expired.load(Relaxed),
        }
    }
}

#[derive(Default)]
pub(crate) struct Stats {
    verbs: VerbCounters,
    links: Mutex<BTreeMap<(SocketAddr, Class), Arc<LinkCounters>>>,
}

impl Stats {
    pub fn count(&self, verb: Verb, tally: Tally) {
        let slots = match tally {
            Tally::Completed => &self.verbs.completed,
            Tally::Dropped => &self.verbs.dropped,
            Tally::Timeout => &self.verbs.timeouts,
            Tally::Failure => &self.verbs.failures,
        };
        slots[verb as usize].fetch_add(1, Relaxed);
    }

    /// A message of `verb` whose handler starts after it `waited` since arriving.
    pub fn waited(&self, verb: Verb, waited: Duration) {
        self.verbs.waits[verb as usize].record(waited);
    }

    /// The counters of a peer and class, created on first use.
    pub fn link(&self, peer: SocketAddr, class: Class) -> Arc<LinkCounters> {
        self.links.lock().entry((peer, class)).or_default().clone()
    }

    pub fn snapshot(&self) -> NetStats {
        let verbs = Verb::ALL
            .iter()
            .map(|&verb| {
                let at = verb as usize;
                VerbStats {
                    verb,
                    completed: self.verbs.completed[at].load(Relaxed),
                    dropped: self.verbs.dropped[at].load(Relaxed),
                    timeouts: self.verbs.timeouts[at].load(Relaxed),
                    failures: self.verbs.failures[at].load(Relaxed),
                    queue_wait: self.verbs.waits[at].snapshot(),
                }
            })
            .collect();
        let links = self.links.lock();
        let links = links
            .iter()
            .map(|((peer, class), c)| c.snapshot(*peer, *class))
            .collect();
        NetStats { verbs, links }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verb_has_a_slot() {
        assert!(Verb::ALL.iter().all(|verb| (*verb as usize) < VERB_SLOTS));
    }

    #[test]
    fn counts_land_on_their_verb_and_link() {
        let stats = Stats::default();
        stats.count(Verb::Read, Tally::Dropped);
        stats.count(Verb::Read, Tally::Dropped);
        stats.count(Verb::Mutation, Tally::Timeout);
        stats.waited(Verb::Read, Duration::from_micros(5));
        let peer: SocketAddr = "127.0.6.3:7000".parse().unwrap();
        LinkCounters::bump(&stats.link(peer, Class::Large).crc_errors);
        let snapshot = stats.snapshot();
        assert_eq!(snapshot.verbs.len(), Verb::ALL.len());
        assert_eq!(snapshot.verb(Verb::Read).dropped, 2);
        assert_eq!(snapshot.verb(Verb::Mutation).timeouts, 1);
        assert_eq!(snapshot.verb(Verb::Read).queue_wait.max_micros(), 5);
        assert_eq!(snapshot.verb(Verb::Mutation).queue_wait.count(), 0);
        assert_eq!(snapshot.verb(Verb::Echo), VerbStats::zero(Verb::Echo));
        assert_eq!(
            snapshot.link(peer, Class::Large).map(|l| l.crc_errors),
            Some(1)
        );
        assert!(snapshot.link(peer, Class::Small).is_none());
    }
}
