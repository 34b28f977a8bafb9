//! The simulated cluster: replicas, the messages between proposers and replicas, timers and
//! virtual time, all driven by one seeded generator. Each step delivers, drops or delays one
//! message, and now and then crashes or restarts a replica.
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::ballot::Clock;
use crate::messages::{Answer, NoReply, Prepare, PrepareAnswer, ProposeAnswer};
use crate::replica::Replica;
use crate::replicas::{Electorate, Replicas};
use crate::testing::{MemoryData, Reg, Write};
use crate::types::Proposal;

use super::store::SimStore;

type SimReplica = Replica<Reg, Arc<SimStore>, Arc<MemoryData>>;

/// How hostile the network and the replicas are.
#[derive(Clone, Copy, Debug)]
pub(super) struct Faults {
    /// Chance that a message picked for delivery is lost (its sender times out).
    pub(super) drop: f64,
    /// Chance per step that an up replica crashes, and that a down one restarts.
    pub(super) crash: f64,
    pub(super) restart: f64,
    /// Chance that a replica crashes right after it handled a request (its answer is out).
    pub(super) crash_after_answer: f64,
    /// At most this many replicas down at once.
    pub(super) max_down: usize,
    /// Broken on purpose: replicas' Paxos stores sync in the background, so a crash loses
    /// state a replica already answered with.
    pub(super) write_behind: bool,
}

type Delivery = Box<dyn FnOnce() + Send>;

enum Message {
    Request {
        to: usize,
        handle: Box<dyn FnOnce(&SimReplica) -> Delivery + Send>,
        timeout: Delivery,
    },
    Response {
        deliver: Delivery,
        timeout: Delivery,
    },
}

struct Node {
    /// What survives a crash: the durable store and data (the replica keeps nothing else).
    replica: Arc<SimReplica>,
    store: Arc<SimStore>,
    up: bool,
}

pub(super) struct World {
    rng: SmallRng,
    now: u64,
    nodes: Vec<Node>,
    natural: Vec<usize>,
    pending: Vec<usize>,
    /// The step at which the pending replicas join the electorate (a topology change
    /// starting while operations run); they are idle and empty before.
    joins_at: u64,
    steps: u64,
    in_flight: Vec<Message>,
    timers: Vec<(u64, Delivery)>,
    faults: Faults,
    pub(super) crashes: u32,
}

impl World {
    pub(super) fn new(
        seed: u64,
        natural: usize,
        pending: usize,
        joins_at: u64,
        faults: Faults,
    ) -> Self {
        World {
            rng: SmallRng::seed_from_u64(seed),
            now: 1_000_000_000,
            nodes: (0..natural + pending)
                .map(|_| {
                    let store = Arc::new(SimStore::new(faults.write_behind));
                    Node {
                        replica: Arc::new(Replica::new(store.clone(), Arc::default())),
                        store,
                        up: true,
                    }
                })
                .collect(),
            natural: (0..natural).collect(),
            pending: (natural..natural + pending).collect(),
            joins_at,
            steps: 0,
            in_flight: Vec::new(),
            timers: Vec::new(),
            faults,
            crashes: 0,
        }
    }

    /// One step: time moves on, due timers fire, a replica may crash or restart, and one
    /// message is delivered or lost; with nothing in flight, time jumps to the next timer.
    pub(super) fn step(&mut self) {
        self.steps += 1;
        self.now += self.rng.random_range(0..=200);
        self.fire_timers();
        self.crash_or_restart();
        if self.in_flight.is_empty() {
            if let Some(next) = self.timers.iter().map(|(at, _)| *at).min() {
                self.now = self.now.max(next);
                self.fire_timers();
            }
            return;
        }
        let picked = self.rng.random_range(0..self.in_flight.len());
        let message = self.in_flight.swap_remove(picked);
        let lost = self.rng.random_bool(self.faults.drop);
        match message {
            Message::Request {
                to,
                handle,
                timeout,
            } => {
                if lost || !self.nodes[to].up {
                    return timeout();
                }
                let deliver = handle(&self.nodes[to].replica);
                self.in_flight.push(Message::Response { deliver, timeout });
                if self.rng.random_bool(self.faults.crash_after_answer) {
                    self.crash(to);
                }
            }
            Message::Response { deliver, timeout } => match lost {
                true => timeout(),
                false => deliver(),
            },
        }
    }

    fn fire_timers(&mut self) {
        let now = self.now;
        let (due, waiting) = std::mem::take(&mut self.timers)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.timers = waiting;
        for (_, fire) in due {
            fire();
        }
    }

    fn crash_or_restart(&mut self) {
        let node = self.rng.random_range(0..self.nodes.len());
        if self.rng.random_bool(0.005) {
            self.nodes[node].store.sync();
        }
        if self.nodes[node].up {
            if self.rng.random_bool(self.faults.crash) {
                self.crash(node);
            }
        } else if self.rng.random_bool(self.faults.restart) {
            self.nodes[node].up = true;
        }
    }

    /// Crashes `node` (a `kill -9`) unless that would put too many down.
    fn crash(&mut self, node: usize) {
        let down = self.nodes.iter().filter(|n| !n.up).count();
        if down < self.faults.max_down && self.nodes[node].up {
            self.nodes[node].up = false;
            self.nodes[node].store.crash();
            self.crashes += 1;
        }
    }
}

/// An answer the world fills in later.
struct Slot<A>(Arc<Mutex<Option<A>>>);

impl<A> Future for Slot<A> {
    type Output = A;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<A> {
        match self.0.lock().take() {
            Some(answer) => Poll::Ready(answer),
            None => Poll::Pending,
        }
    }
}

/// One proposer's view of the world: its link to the replicas and its skewed clock.
#[derive(Clone)]
pub(super) struct Link {
    pub(super) world: Arc<Mutex<World>>,
    /// This proposer's clock runs this far ahead of (or behind) virtual time.
    pub(super) skew: i64,
}

impl Link {
    fn send<A: Send + 'static>(
        &self,
        to: usize,
        handle: impl FnOnce(&SimReplica) -> Answer<A> + Send + 'static,
    ) -> Slot<Answer<A>> {
        let slot = Arc::new(Mutex::new(None));
        let (answered, timed_out) = (slot.clone(), slot.clone());
        let handle = move |replica: &SimReplica| -> Delivery {
            let answer = handle(replica);
            Box::new(move || *answered.lock() = Some(answer))
        };
        self.world.lock().in_flight.push(Message::Request {
            to,
            handle: Box::new(handle),
            timeout: Box::new(move || *timed_out.lock() = Some(Err(NoReply::Timeout))),
        });
        Slot(slot)
    }
}

impl Clock for Link {
    fn now_micros(&self) -> i64 {
        self.world.lock().now.saturating_add_signed(self.skew) as i64
    }
}

fn failed<A>(result: Result<A, crate::StoreError>) -> Answer<A> {
    result.map_err(|_| NoReply::Failed)
}

impl Replicas<Reg> for Link {
    type Node = usize;

    fn electorate(&self, _key: &u8) -> Electorate<usize> {
        let world = self.world.lock();
        Electorate {
            natural: world.natural.clone(),
            pending: match world.steps >= world.joins_at {
                true => world.pending.clone(),
                false => Vec::new(),
            },
        }
    }

    fn is_alive(&self, node: &usize) -> bool {
        self.world.lock().nodes[*node].up
    }

    fn prepare(
        &self,
        to: &usize,
        request: &Prepare<Reg>,
    ) -> impl Future<Output = Answer<PrepareAnswer<Reg>>> + Send {
        let request = request.clone();
        self.send(*to, move |replica| failed(replica.prepare(&request)))
    }

    fn propose(
        &self,
        to: &usize,
        key: &u8,
        proposal: &Proposal<Option<Write>>,
    ) -> impl Future<Output = Answer<ProposeAnswer>> + Send {
        let (key, proposal) = (*key, proposal.clone());
        self.send(*to, move |replica| failed(replica.propose(&key, &proposal)))
    }

    fn commit(
        &self,
        to: &usize,
        key: &u8,
        commit: &Proposal<Option<Write>>,
    ) -> impl Future<Output = Answer<()>> + Send {
        let (key, commit) = (*key, commit.clone());
        self.send(*to, move |replica| failed(replica.commit(&key, &commit)))
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        let slot = Arc::new(Mutex::new(None));
        let fired = slot.clone();
        let mut world = self.world.lock();
        let at = world.now + duration.as_micros() as u64;
        world
            .timers
            .push((at, Box::new(move || *fired.lock() = Some(()))));
        Slot(slot)
    }
}
