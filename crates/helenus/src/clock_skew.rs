//! Warns when another node's wall clock is off from this one's. Cells' write timestamps come
//! from the coordinators' clocks and the newest wins, so a node whose clock runs behind loses
//! its writes silently (and TTLs and tombstone purges shift with it): operators must keep the
//! clocks synchronised (NTP), and this tells them when they are not. Each live peer is sent an
//! Echo, which answers with its wall clock, within a few seconds of being seen up (a peer that
//! comes back is measured again) and then every minute; the skew is its clock minus the
//! midpoint of this node's clock around the exchange, and only a skew beyond what the round
//! trip leaves uncertain is reported.
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use clock::Clock;
use gossip::Membership;
use net::{wall_clock_of, Messaging, Verb};
use tokio::time::Instant;

/// A skew at least this large is worth a warning.
const WARN_SKEW_MS: i64 = 500;
/// How often the live peers are looked at: a peer seen up waits at most this for its first
/// measurement.
const TICK: Duration = Duration::from_secs(5);
/// How often a peer that stays up is measured again.
const CHECK_EVERY: Duration = Duration::from_secs(60);
const ECHO_TIMEOUT: Duration = Duration::from_secs(2);
/// While a peer's clock stays off, it is warned about at most this often.
const WARN_EVERY: Duration = Duration::from_secs(600);

/// Checks the clocks of the live peers while the node runs.
pub fn start(messaging: Arc<Messaging>, gossip: Arc<dyn Membership>, local: IpAddr) {
    tokio::spawn(async move {
        let mut warned = Warnings::default();
        let mut schedule = Schedule::default();
        loop {
            tokio::time::sleep(TICK).await;
            let live = gossip
                .endpoints_by_ip()
                .into_iter()
                .filter(|(ip, view)| *ip != local && view.alive)
                .map(|(ip, view)| (ip, view.addr));
            for (ip, addr) in schedule.due(live.collect(), Instant::now()) {
                if let Some(skew) = measure(&messaging, addr).await {
                    if warned.should_warn(ip, skew, Instant::now()) {
                        tracing::warn!(
                            "the clock of {ip} is {skew:+} ms from this node's: write timestamps \
                             (the newest write wins), TTLs and tombstone purges depend on \
                             synchronised clocks; check NTP on both nodes"
                        );
                    }
                }
            }
        }
    });
}

/// When each live peer was last measured.
#[derive(Default)]
struct Schedule {
    measured: HashMap<IpAddr, Instant>,
}

impl Schedule {
    /// The peers of `live` to measure now: those new or back up since the last tick, and those
    /// measured [`CHECK_EVERY`] ago; forgets the peers no longer live.
    fn due(&mut self, live: Vec<(IpAddr, SocketAddr)>, now: Instant) -> Vec<(IpAddr, SocketAddr)> {
        self.measured
            .retain(|ip, _| live.iter().any(|(live_ip, _)| live_ip == ip));
        let due: Vec<_> = live
            .into_iter()
            .filter(|(ip, _)| {
                self.measured
                    .get(ip)
                    .is_none_or(|at| now.duration_since(*at) >= CHECK_EVERY)
            })
            .collect();
        for (ip, _) in &due {
            self.measured.insert(*ip, now);
        }
        due
    }
}

/// The peer's skew in ms, when it answers in time with its clock and the round trip leaves
/// the sign of a skew of [`WARN_SKEW_MS`] certain; else `None`.
async fn measure(messaging: &Messaging, peer: SocketAddr) -> Option<i64> {
    let sent = messaging.clock().now_millis();
    let answer = messaging
        .request(peer, Verb::Echo, Default::default(), ECHO_TIMEOUT)
        .await
        .ok()?;
    let received = messaging.clock().now_millis();
    skew_of(sent, received, wall_clock_of(&answer)?)
}

/// The remote clock minus the midpoint of the exchange, reduced by half the round trip (the
/// most the midpoint can be wrong by); `None` when nothing is left of it.
fn skew_of(sent: i64, received: i64, remote: i64) -> Option<i64> {
    let uncertainty = (received - sent).max(0) / 2;
    let skew = remote - sent - (received - sent) / 2;
    let certain = skew.abs() - uncertainty;
    (certain > 0).then_some(skew.signum() * certain)
}

/// When each peer was last warned about.
#[derive(Default)]
struct Warnings {
    last: HashMap<IpAddr, Instant>,
}

impl Warnings {
    fn should_warn(&mut self, peer: IpAddr, skew: i64, now: Instant) -> bool {
        if skew.abs() < WARN_SKEW_MS {
            self.last.remove(&peer);
            return false;
        }
        let due = self
            .last
            .get(&peer)
            .is_none_or(|at| now.duration_since(*at) >= WARN_EVERY);
        if due {
            self.last.insert(peer, now);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skew_is_the_remote_clock_against_the_midpoint_less_the_round_trips_doubt() {
        // 10 ms round trip: the midpoint is 1005, the doubt 5 ms
        assert_eq!(skew_of(1000, 1010, 3005), Some(1995));
        assert_eq!(skew_of(1000, 1010, 5), Some(-995));
        assert_eq!(skew_of(1000, 1010, 1008), None);
        assert_eq!(skew_of(1000, 1000, 1001), Some(1));
    }

    #[test]
    fn a_peer_is_measured_when_seen_up_then_every_minute_and_again_when_back() {
        let mut schedule = Schedule::default();
        let peer = (
            IpAddr::from([127, 0, 0, 2]),
            "127.0.0.2:7000".parse().unwrap(),
        );
        let t0 = Instant::now();
        assert_eq!(schedule.due(vec![peer], t0), vec![peer]);
        assert!(schedule.due(vec![peer], t0 + TICK).is_empty());
        assert_eq!(schedule.due(vec![peer], t0 + CHECK_EVERY), vec![peer]);
        // down, then up again: measured at once
        assert!(schedule.due(vec![], t0 + CHECK_EVERY + TICK).is_empty());
        assert_eq!(
            schedule.due(vec![peer], t0 + CHECK_EVERY + TICK * 2),
            vec![peer]
        );
    }

    #[test]
    fn a_peer_is_warned_about_once_every_ten_minutes_while_off() {
        let mut warned = Warnings::default();
        let peer = IpAddr::from([127, 0, 0, 2]);
        let t0 = Instant::now();
        assert!(!warned.should_warn(peer, 499, t0));
        assert!(warned.should_warn(peer, -700, t0));
        assert!(!warned.should_warn(peer, -700, t0 + Duration::from_secs(60)));
        assert!(warned.should_warn(peer, 900, t0 + WARN_EVERY));
        // back in step, then off again: warned at once
        assert!(!warned.should_warn(peer, 10, t0 + WARN_EVERY + Duration::from_secs(60)));
        assert!(warned.should_warn(peer, 900, t0 + WARN_EVERY + Duration::from_secs(120)));
    }
}
