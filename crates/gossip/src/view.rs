//! This node's view of its peers, one entry per listen address, and the events its changes make.
//!
//! chitchat knows a node by (host id, generation, address): a restarted node is a new chitchat
//! node beside the old one. The view keeps the newest generation per address, so a restart
//! replaces the old state, and it turns chitchat's liveness and the `status` key into one
//! `alive` bit per peer: a peer that announced `status=shutdown` is down at once.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

use crate::keys::{Status, HOST_ID, STATUS};
use crate::{EndpointView, HostId, MembershipEvent};

/// One chitchat node as the running instance sees it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Observation {
    pub addr: SocketAddr,
    pub host_id: Option<HostId>,
    pub generation: u64,
    pub heartbeat: u64,
    /// chitchat's failure detector says it is live.
    pub live: bool,
    pub state: BTreeMap<String, String>,
}

impl Observation {
    fn announced_shutdown(&self) -> bool {
        self.state.get(STATUS).map(String::as_str) == Some(Status::Shutdown.as_str())
    }

    fn alive(&self) -> bool {
        self.live && !self.announced_shutdown()
    }
}

/// How to treat what the detector reports in this refresh.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rules {
    /// The detector's verdicts cannot be trusted yet (this node just started gossip, or was
    /// itself paused): do not mark peers down, except those that announced a shutdown.
    pub hold_down: bool,
    /// Peers chitchat no longer knows are forgotten (Removed). Off while a new chitchat instance
    /// is still learning the cluster.
    pub forget_absent: bool,
}

#[derive(Default)]
pub(crate) struct View {
    peers: BTreeMap<SocketAddr, EndpointView>,
}

impl View {
    pub(crate) fn peers(&self) -> impl Iterator<Item = &EndpointView> {
        self.peers.values()
    }

    /// Takes in one refresh of chitchat's state (self excluded) and returns the events, in order.
    pub(crate) fn apply(
        &mut self,
        observations: Vec<Observation>,
        rules: Rules,
    ) -> Vec<MembershipEvent> {
        let newest = newest_per_address(observations);
        let mut events = Vec::new();
        if rules.forget_absent {
            self.forget_absent(&newest, &mut events);
        }
        for observation in newest.into_values() {
            self.observe(observation, rules, &mut events);
        }
        events
    }

    fn observe(&mut self, seen: Observation, rules: Rules, events: &mut Vec<MembershipEvent>) {
        let addr = seen.addr;
        let Some(known) = self.peers.get_mut(&addr) else {
            events.push(MembershipEvent::Changed(addr));
            if seen.alive() {
                events.push(MembershipEvent::Alive(addr));
            }
            self.peers.insert(addr, endpoint(&seen, seen.alive()));
            return;
        };
        if seen.generation < known.generation {
            return;
        }
        let restarted = seen.generation > known.generation;
        if restarted && known.alive {
            // The old process is gone even if its successor is not yet seen alive.
            events.push(MembershipEvent::Dead(addr));
            known.alive = false;
        }
        if restarted || seen.state != known.state {
            events.push(MembershipEvent::Changed(addr));
        }
        let alive = next_liveness(known.alive, &seen, rules);
        match (known.alive, alive) {
            (false, true) => events.push(MembershipEvent::Alive(addr)),
            (true, false) => events.push(MembershipEvent::Dead(addr)),
            _ => {}
        }
        *known = endpoint(&seen, alive);
    }

    fn forget_absent(
        &mut self,
        present: &HashMap<SocketAddr, Observation>,
        events: &mut Vec<MembershipEvent>,
    ) {
        let absent: Vec<SocketAddr> = self
            .peers
            .keys()
            .filter(|addr| !present.contains_key(addr))
            .copied()
            .collect();
        for addr in absent {
            if let Some(gone) = self.peers.remove(&addr) {
                if gone.alive {
                    events.push(MembershipEvent::Dead(addr));
                }
                events.push(MembershipEvent::Removed(addr));
            }
        }
    }
}

fn next_liveness(was_alive: bool, seen: &Observation, rules: Rules) -> bool {
    let alive = seen.alive();
    if was_alive && !alive && rules.hold_down && !seen.announced_shutdown() {
        return true;
    }
    alive
}

fn endpoint(seen: &Observation, alive: bool) -> EndpointView {
    EndpointView {
        addr: seen.addr,
        host_id: seen.host_id,
        alive,
        generation: seen.generation,
        heartbeat: seen.heartbeat,
        state: seen.state.clone(),
    }
}

/// The newest generation per address among the nodes whose state has arrived (chitchat learns
/// of a node from a digest before its keys come in a delta; every node advertises `host_id`).
fn newest_per_address(observations: Vec<Observation>) -> HashMap<SocketAddr, Observation> {
    let mut newest: HashMap<SocketAddr, Observation> = HashMap::new();
    let known = observations
        .into_iter()
        .filter(|observation| observation.state.contains_key(HOST_ID));
    for observation in known {
        match newest.get(&observation.addr) {
            Some(kept) if kept.generation >= observation.generation => {}
            _ => {
                newest.insert(observation.addr, observation);
            }
        }
    }
    newest
}

#[cfg(test)]
mod tests {
    use super::*;
    use MembershipEvent::*;

    const TRUSTED: Rules = Rules {
        hold_down: false,
        forget_absent: true,
    };
    const WARMING_UP: Rules = Rules {
        hold_down: true,
        forget_absent: false,
    };

    fn addr(last: u8) -> SocketAddr {
        SocketAddr::from(([127, 0, 9, last], 7000))
    }

    fn node(last: u8, generation: u64, live: bool) -> Observation {
        Observation {
            addr: addr(last),
            host_id: Some(HostId::from_u128(last as u128)),
            generation,
            heartbeat: 1,
            live,
            state: BTreeMap::from([
                (HOST_ID.to_string(), last.to_string()),
                ("dc".to_string(), "dc1".to_string()),
            ]),
        }
    }

    fn with(mut observation: Observation, key: &str, value: &str) -> Observation {
        observation.state.insert(key.to_string(), value.to_string());
        observation
    }

    #[test]
    fn a_new_live_peer_is_changed_then_alive_and_a_new_dead_one_only_changed() {
        let mut view = View::default();
        let events = view.apply(vec![node(2, 1, true), node(3, 1, false)], TRUSTED);
        assert_eq!(events.len(), 3);
        assert!(events.contains(&Changed(addr(2))) && events.contains(&Alive(addr(2))));
        assert!(events.contains(&Changed(addr(3))));
    }

    #[test]
    fn each_transition_is_reported_once() {
        let mut view = View::default();
        view.apply(vec![node(2, 1, true)], TRUSTED);
        assert_eq!(view.apply(vec![node(2, 1, true)], TRUSTED), vec![]);
        assert_eq!(
            view.apply(vec![node(2, 1, false)], TRUSTED),
            vec![Dead(addr(2))]
        );
        assert_eq!(view.apply(vec![node(2, 1, false)], TRUSTED), vec![]);
        assert_eq!(
            view.apply(vec![node(2, 1, true)], TRUSTED),
            vec![Alive(addr(2))]
        );
        assert_eq!(view.apply(vec![node(2, 1, true)], TRUSTED), vec![]);
    }

    #[test]
    fn heartbeats_alone_are_not_changes() {
        let mut view = View::default();
        view.apply(vec![node(2, 1, true)], TRUSTED);
        let mut later = node(2, 1, true);
        later.heartbeat = 40;
        assert_eq!(view.apply(vec![later], TRUSTED), vec![]);
        assert_eq!(view.peers().next().unwrap().heartbeat, 40);
    }

    #[test]
    fn a_state_change_is_one_changed_event() {
        let mut view = View::default();
        view.apply(vec![node(2, 1, true)], TRUSTED);
        let changed = with(with(node(2, 1, true), "load", "10"), "rack", "r2");
        assert_eq!(view.apply(vec![changed], TRUSTED), vec![Changed(addr(2))]);
    }

    #[test]
    fn announced_shutdown_is_dead_at_once_even_while_holding_down() {
        let mut view = View::default();
        view.apply(vec![node(2, 1, true)], TRUSTED);
        let leaving = with(node(2, 1, true), STATUS, "shutdown");
        assert_eq!(
            view.apply(vec![leaving.clone()], WARMING_UP),
            vec![Changed(addr(2)), Dead(addr(2))]
        );
        let convicted = with(node(2, 1, false), STATUS, "shutdown");
        assert_eq!(view.apply(vec![convicted], TRUSTED), vec![]);
    }

    #[test]
    fn holding_down_keeps_peers_up_but_lets_them_come_up() {
        let mut view = View::default();
        view.apply(vec![node(2, 1, true), node(3, 1, false)], TRUSTED);
        let events = view.apply(vec![node(2, 1, false), node(3, 1, true)], WARMING_UP);
        assert_eq!(events, vec![Alive(addr(3))]);
        assert!(view.peers().all(|peer| peer.alive));
        // Once the detector is trusted again, its verdict stands.
        assert_eq!(
            view.apply(vec![node(2, 1, false), node(3, 1, true)], TRUSTED),
            vec![Dead(addr(2))]
        );
    }

    #[test]
    fn a_restart_replaces_the_old_generation() {
        let mut view = View::default();
        view.apply(
            vec![with(node(2, 1, true), "release_version", "5.0.3")],
            TRUSTED,
        );
        let restarted = with(node(2, 7, false), "release_version", "5.0.4");
        let events = view.apply(vec![node(2, 1, true), restarted.clone()], TRUSTED);
        assert_eq!(events, vec![Dead(addr(2)), Changed(addr(2))]);
        let peer = view.peers().next().unwrap().clone();
        assert_eq!((peer.generation, peer.alive), (7, false));
        assert_eq!(peer.state["release_version"], "5.0.4");
        let mut up = restarted;
        up.live = true;
        assert_eq!(
            view.apply(vec![node(2, 1, false), up], TRUSTED),
            vec![Alive(addr(2))]
        );
    }

    #[test]
    fn a_restart_seen_while_warming_up_still_reports_the_old_process_dead() {
        let mut view = View::default();
        view.apply(vec![node(2, 1, true)], TRUSTED);
        let events = view.apply(vec![node(2, 2, true)], WARMING_UP);
        assert_eq!(
            events,
            vec![Dead(addr(2)), Changed(addr(2)), Alive(addr(2))]
        );
    }

    #[test]
    fn an_older_generation_never_overrides_a_newer_one() {
        let mut view = View::default();
        view.apply(vec![node(2, 5, true)], TRUSTED);
        assert_eq!(view.apply(vec![node(2, 4, false)], TRUSTED), vec![]);
        assert_eq!(view.peers().next().unwrap().generation, 5);
    }

    #[test]
    fn a_peer_is_not_shown_before_its_state_arrives() {
        let mut view = View::default();
        let mut bare = node(2, 1, true);
        bare.state.clear();
        assert_eq!(view.apply(vec![bare.clone()], TRUSTED), vec![]);
        assert_eq!(view.peers().count(), 0);
        // A restart whose state has not arrived yet leaves the old generation in place.
        view.apply(vec![node(2, 1, true)], TRUSTED);
        bare.generation = 2;
        assert_eq!(view.apply(vec![node(2, 1, true), bare], TRUSTED), vec![]);
        assert_eq!(view.peers().next().unwrap().generation, 1);
    }

    #[test]
    fn forgotten_peers_are_removed_only_when_allowed() {
        let mut view = View::default();
        view.apply(vec![node(2, 1, true), node(3, 1, false)], TRUSTED);
        assert_eq!(view.apply(vec![], WARMING_UP), vec![]);
        let events = view.apply(vec![], TRUSTED);
        assert_eq!(
            events,
            vec![Dead(addr(2)), Removed(addr(2)), Removed(addr(3))]
        );
        assert_eq!(view.peers().count(), 0);
    }
}
