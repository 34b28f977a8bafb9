//! A deterministic simulation of proposers and replicas, checked for linearizability.
//!
//! A few clients, each with its own proposer (and a clock skewed from the others'), run
//! reads, writes and compare-and-sets on a few registers over three replicas (and, for some
//! seeds, a pending fourth, voting from the start or joining, empty, while operations run).
//! One seeded generator orders every message delivery, loses messages, and crashes and
//! restarts replicas (which keep only their durable store and data). Each operation's call and return are recorded in real-time order; an operation
//! that timed out with its write unknown returns at infinity, one that surely did not apply
//! is left out. The history must be linearizable ([`check_registers`]).
//!
//! `cargo test -p paxos` runs fixed seeds; `PAXOS_SEEDS=N cargo test -p paxos -- sim::` runs
//! N more random ones and prints any failing seed (`PAXOS_SEED=S` replays one).
mod store;
mod world;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Waker};

use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::ballot::BallotGenerator;
use crate::error::Outcome;
use crate::linearizability::{check_registers, Operation, RegisterInput, RegisterOutput};
use crate::metrics::Metrics;
use crate::proposer::{Broken, Config, Proposer};
use crate::testing::set;
use world::{Faults, Link, World};

type SimProposer = Proposer<crate::testing::Reg, Link, Link>;
type History = Vec<Operation<(u8, RegisterInput), RegisterOutput>>;

/// One run's shape.
#[derive(Clone, Copy, Debug)]
struct Settings {
    seed: u64,
    clients: usize,
    ops_per_client: usize,
    keys: u8,
    pending: usize,
    /// The step at which the pending replica starts to vote.
    joins_at: u64,
    faults: Faults,
    broken: Option<Broken>,
}

impl Settings {
    /// Settings varied by the seed.
    fn for_seed(seed: u64) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Settings {
            seed,
            clients: rng.random_range(3..=5),
            ops_per_client: 30,
            keys: rng.random_range(1..=3),
            pending: usize::from(rng.random_bool(0.3)),
            joins_at: [0, rng.random_range(0..3_000)][rng.random_range(0..2)],
            faults: Faults {
                drop: [0.0, 0.05, 0.15][rng.random_range(0..3)],
                crash: 0.002,
                restart: [0.01, 0.2][rng.random_range(0..2)],
                crash_after_answer: 0.01,
                max_down: 1,
                write_behind: false,
            },
            broken: None,
        }
    }
}

/// An operation as it runs: `output` is `None` until it returns.
struct Running {
    key: u8,
    input: RegisterInput,
    call: u64,
    ret: Option<u64>,
    output: Option<RegisterOutput>,
    /// It surely had no effect (failed, unavailable, or a read without an answer).
    void: bool,
}

/// The history, with a counter ordering every call and return.
#[derive(Default)]
struct Recorder {
    ticks: AtomicU64,
    operations: Mutex<Vec<Running>>,
}

impl Recorder {
    fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, Ordering::SeqCst)
    }

    fn invoke(&self, key: u8, input: RegisterInput) -> usize {
        let mut operations = self.operations.lock();
        operations.push(Running {
            key,
            input,
            call: self.tick(),
            ret: None,
            output: None,
            void: false,
        });
        operations.len() - 1
    }

    /// Records a return; `None`: the operation surely did not take effect.
    fn complete(&self, index: usize, output: Option<RegisterOutput>) {
        let ret = self.tick();
        let mut operations = self.operations.lock();
        let running = &mut operations[index];
        match output {
            None => running.void = true,
            Some(RegisterOutput::Unknown) => running.output = Some(RegisterOutput::Unknown),
            Some(output) => {
                running.output = Some(output);
                running.ret = Some(ret);
            }
        }
    }

    /// The history to check: unfinished writes return at infinity, unfinished reads and
    /// void operations are left out.
    fn history(&self) -> History {
        let operations = self.operations.lock();
        operations
            .iter()
            .filter(|r| !r.void && (r.output.is_some() || r.input != RegisterInput::Read))
            .map(|r| Operation {
                input: (r.key, r.input),
                output: r.output.unwrap_or(RegisterOutput::Unknown),
                call: r.call,
                ret: r.ret,
            })
            .collect()
    }
}

/// What one operation returned, as the history records it.
async fn perform(proposer: &SimProposer, key: u8, input: RegisterInput) -> Option<RegisterOutput> {
    let result = match input {
        RegisterInput::Read => proposer.read(&key, &()).await.map(RegisterOutput::Value),
        RegisterInput::Write(value) => proposer
            .cas(&key, &(), |_, ballot| Some(set(value, ballot.micros)))
            .await
            .map(|_| RegisterOutput::Done),
        RegisterInput::Cas { expect, new } => proposer
            .cas(&key, &(), |current, ballot| {
                (*current == expect).then_some(set(new, ballot.micros))
            })
            .await
            .map(|outcome| match outcome {
                Outcome::Applied => RegisterOutput::Done,
                Outcome::NotApplied(seen) => RegisterOutput::NotApplied(seen),
            }),
    };
    match result {
        Ok(output) => Some(output),
        Err(error) if error.write_unknown() => Some(RegisterOutput::Unknown),
        Err(_) => None,
    }
}

/// A client: operations one after another on random keys, compare-and-sets expecting the
/// value it saw last; every written value is unique.
async fn client(
    id: usize,
    proposer: Arc<SimProposer>,
    recorder: Arc<Recorder>,
    settings: Settings,
) {
    let mut rng = SmallRng::seed_from_u64(settings.seed ^ ((id as u64 + 1) << 40));
    let mut seen: HashMap<u8, i64> = HashMap::new();
    for n in 0..settings.ops_per_client {
        let key = rng.random_range(0..settings.keys);
        let unique = (id as i64 + 1) * 1_000 + n as i64;
        let input = match rng.random_range(0..10) {
            0..=2 => RegisterInput::Read,
            3..=4 => RegisterInput::Write(unique),
            _ => RegisterInput::Cas {
                expect: seen.get(&key).copied().unwrap_or(0),
                new: unique,
            },
        };
        let index = recorder.invoke(key, input);
        let output = perform(&proposer, key, input).await;
        match (input, output) {
            (_, Some(RegisterOutput::Value(v) | RegisterOutput::NotApplied(v))) => {
                seen.insert(key, v);
            }
            (
                RegisterInput::Write(v) | RegisterInput::Cas { new: v, .. },
                Some(RegisterOutput::Done),
            ) => {
                seen.insert(key, v);
            }
            _ => {}
        }
        recorder.complete(index, output);
    }
}

/// What a run produced.
struct Report {
    settings: Settings,
    history: History,
    steps: u64,
    crashes: u32,
    finished: bool,
    applied: u64,
    unknown: u64,
    repairs: u64,
    contentions: u64,
}

impl Report {
    fn describe(&self) -> String {
        let mut sorted = self.history.clone();
        sorted.sort_by_key(|o| (o.input.0, o.call));
        let lines: Vec<String> = sorted
            .iter()
            .map(|o| {
                format!(
                    "  key {} [{}, {:?}] {:?} -> {:?}",
                    o.input.0, o.call, o.ret, o.input.1, o.output
                )
            })
            .collect();
        format!(
            "{:?}: {} steps, {} crashes, {} applied, {} unknown, {} repairs, {} contentions\n{}",
            self.settings,
            self.steps,
            self.crashes,
            self.applied,
            self.unknown,
            self.repairs,
            self.contentions,
            lines.join("\n")
        )
    }
}

const MAX_STEPS: u64 = 2_000_000;

/// Runs the clients to completion (or the step limit), one world event between two polls.
fn run(settings: Settings) -> Report {
    let world = Arc::new(Mutex::new(World::new(
        settings.seed,
        3,
        settings.pending,
        settings.joins_at,
        settings.faults,
    )));
    let recorder = Arc::new(Recorder::default());
    let mut rng = SmallRng::seed_from_u64(settings.seed);
    let proposers: Vec<Arc<SimProposer>> = (0..settings.clients)
        .map(|id| {
            let link = Link {
                world: world.clone(),
                skew: rng.random_range(-20_000..=20_000),
            };
            let ballots = BallotGenerator::new(link.clone(), 100 + id as u64, 0, None);
            let mut proposer =
                Proposer::new(link, ballots, Config::default(), settings.seed ^ id as u64);
            proposer.broken = settings.broken;
            Arc::new(proposer)
        })
        .collect();
    let mut tasks: Vec<Option<Pin<Box<dyn Future<Output = ()>>>>> = proposers
        .iter()
        .enumerate()
        .map(|(id, p)| Some(Box::pin(client(id, p.clone(), recorder.clone(), settings)) as _))
        .collect();
    let mut cx = Context::from_waker(Waker::noop());
    let mut steps = 0;
    loop {
        for task in tasks.iter_mut() {
            if task
                .as_mut()
                .is_some_and(|t| t.as_mut().poll(&mut cx).is_ready())
            {
                *task = None;
            }
        }
        if tasks.iter().all(Option::is_none) || steps == MAX_STEPS {
            break;
        }
        world.lock().step();
        steps += 1;
    }
    let total = |counter: fn(&Metrics) -> &AtomicU64| -> u64 {
        proposers
            .iter()
            .map(|p| Metrics::get(counter(p.metrics())))
            .sum()
    };
    let crashes = world.lock().crashes;
    Report {
        settings,
        history: recorder.history(),
        steps,
        crashes,
        finished: tasks.iter().all(Option::is_none),
        applied: total(|m| &m.applied),
        unknown: total(|m| &m.write_unknown),
        repairs: total(|m| &m.repairs),
        contentions: total(|m| &m.contentions),
    }
}

/// Fixed seeds of the suite.
const SEEDS: u64 = 40;

#[test]
fn fixed_seeds_give_linearizable_histories() {
    let mut totals = (0, 0, 0, 0, 0);
    for seed in 0..SEEDS {
        let report = run(Settings::for_seed(seed));
        assert!(
            report.finished,
            "seed {seed} did not finish: {}",
            report.describe()
        );
        assert!(
            check_registers(&report.history),
            "seed {seed}: {}",
            report.describe()
        );
        totals.0 += report.history.len();
        totals.1 += report.applied;
        totals.2 += report.unknown;
        totals.3 += report.repairs;
        totals.4 += report.crashes;
    }
    // The runs exercise what they claim to: writes applied, unknown outcomes, repairs of
    // in-progress proposals, crashes.
    let (operations, applied, unknown, repairs, crashes) = totals;
    assert!(operations > 3_000 && applied > 500, "{totals:?}");
    assert!(unknown > 10 && repairs > 10 && crashes > 10, "{totals:?}");
}

/// How many of the fixed seeds catch a proposer broken `how`.
fn seeds_catching(how: Broken) -> usize {
    (0..SEEDS)
        .filter(|seed| {
            let settings = Settings {
                broken: Some(how),
                ..Settings::for_seed(*seed)
            };
            !check_registers(&run(settings).history)
        })
        .count()
}

#[test]
fn a_seed_replays_the_same_run() {
    let settings = Settings::for_seed(11);
    let (one, two) = (run(settings), run(settings));
    assert_eq!(one.history, two.history);
    assert_eq!((one.steps, one.crashes), (two.steps, two.crashes));
}

#[test]
fn the_checker_catches_a_proposer_that_skips_repairing_in_progress_proposals() {
    let caught = seeds_catching(Broken::SkipRepair);
    assert!(caught > 0, "no seed of {SEEDS} caught the broken proposer");
}

/// Replicas crashing right after they answer, often, and restarting soon: a `kill -9` between
/// an answer and the next request.
fn crashing_after_answers(seed: u64, write_behind: bool) -> Settings {
    let mut settings = Settings::for_seed(seed);
    settings.faults.crash_after_answer = 0.2;
    settings.faults.restart = 0.5;
    settings.faults.write_behind = write_behind;
    settings
}

#[test]
fn the_checker_catches_replicas_that_answer_before_their_state_is_durable() {
    let mut caught = 0;
    for seed in 0..SEEDS {
        let durable = run(crashing_after_answers(seed, false));
        assert!(
            check_registers(&durable.history),
            "seed {seed}: {}",
            durable.describe()
        );
        if !check_registers(&run(crashing_after_answers(seed, true)).history) {
            caught += 1;
        }
    }
    assert!(
        caught > 0,
        "no seed of {SEEDS} caught replicas losing answered state"
    );
}

/// `PAXOS_SEEDS=N` random seeds, or `PAXOS_SEED=S` one; nothing when neither is set.
#[test]
fn random_seeds_from_the_environment() {
    let seeds: Vec<u64> = match (std::env::var("PAXOS_SEED"), std::env::var("PAXOS_SEEDS")) {
        (Ok(seed), _) => vec![seed.parse().expect("PAXOS_SEED is a number")],
        (_, Ok(count)) => {
            let count: u64 = count.parse().expect("PAXOS_SEEDS is a number");
            let start = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            (0..count)
                .map(|i| start.wrapping_add(i.wrapping_mul(0x9E37_79B9)))
                .collect()
        }
        _ => return,
    };
    let failing: Vec<u64> = seeds
        .iter()
        .copied()
        .filter(|seed| {
            let report = run(Settings::for_seed(*seed));
            let ok = report.finished && check_registers(&report.history);
            if !ok {
                eprintln!("PAXOS_SEED={seed} fails: {}", report.describe());
            }
            !ok
        })
        .collect();
    assert!(failing.is_empty(), "failing seeds: {failing:?}");
}
