//! Issue 30: a repair under message loss and crashes. Hints are off, so a replica killed
//! while rows are written and deleted at QUORUM misses them; once it is back, a node runs an
//! incremental repair of the keyspace (the plan `nodetool repair` makes: every range of the
//! node with all its replicas, through `Repair::run`) while every link loses messages and,
//! on the seed's choice, the link between the repair's coordinator and a participant is cut
//! for a moment, or either crashes, mid-repair. The
//! interrupted repair must end (FAILED, or successful if the faults spared it) within a bound
//! of simulated time; then, links healed and nodes back, a rerun must succeed (nothing of
//! the first stays claimed), and each replica read alone must hold exactly the rows written
//! and not deleted.
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use helenus::node::Node;
use mutation::TableId;
use net::SimRng;
use repair::{RepairPlan, RepairState, SessionPlan};
use tokio::time::Instant;
use types::request::QueryOptions;
use types::Consistency;

use crate::cluster::{addr, Cluster};
use crate::scenario::{read_alone, set_loss, simulate};
use crate::workload::{create_schema, on, write, KEYS};

const NODES: usize = 3;
/// Rows written at ALL first, and rows written at QUORUM while the victim is down.
const BASE_ROWS: u32 = 24;
const MISSED_ROWS: u32 = 18;
/// Every third base row is deleted while the victim is down.
const DELETE_EVERY: u32 = 3;
/// The replica down while rows are written and deleted.
const VICTIM: usize = 2;
/// The probability a link breaks in a given millisecond during the first repair.
const LOSS: f64 = 0.003;
/// How long a repair may take in simulated time before the run fails as hung.
const REPAIR_LIMIT: Duration = Duration::from_secs(120);
const HINTS_OFF: &str = "hinted_handoff_enabled: false\n";

/// What happens to the first repair besides the message loss, a few milliseconds in: the
/// link between its coordinator and a participant cut for a moment, or a crash of either.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crash {
    CutLink,
    Coordinator,
    Participant,
}

impl Crash {
    pub fn of(seed: u64) -> Crash {
        match seed % 3 {
            0 => Crash::CutLink,
            1 => Crash::Coordinator,
            _ => Crash::Participant,
        }
    }
}

/// How long the cut link stays cut.
const CUT_FOR: Duration = Duration::from_millis(300);

/// Runs the scenario on `seed`: a summary, or why a check failed.
pub fn run(seed: u64) -> Result<String, String> {
    simulate(seed, async move {
        let cluster = Cluster::start_with(NODES, NODES, seed, HINTS_OFF).await;
        create_schema(&cluster, seed, &[]).await;
        let mut rng = SimRng::new(seed);
        let coordinator = rng.below(NODES as u64) as usize;
        let scenario = Scenario {
            crash: Crash::of(seed),
            rng,
            cluster,
            coordinator,
            rows: BTreeSet::new(),
            events: Vec::new(),
        };
        scenario.play().await
    })
}

struct Scenario {
    crash: Crash,
    rng: SimRng,
    cluster: Cluster,
    /// The node that runs the repairs.
    coordinator: usize,
    /// (partition, row) of the rows that must be there.
    rows: BTreeSet<(u32, u32)>,
    events: Vec<String>,
}

impl Scenario {
    async fn play(mut self) -> Result<String, String> {
        self.diverge().await?;
        let first = self.interrupted_repair().await?;
        self.events.push(format!("first repair: {first}"));
        let open = self.open_sessions();
        // A participant's session whose coordinator crashed stays open (docs/simulation.md).
        if self.crash != Crash::Coordinator && !open.is_empty() {
            return Err(format!(
                "sessions still open after the repair ended: {open:?}"
            ));
        }
        self.events.push(format!("sessions left open: {open:?}"));
        let rerun = self.repair().await?;
        if rerun != RepairState::Success {
            return Err(format!("the rerun failed: {rerun:?}; {:?}", self.events));
        }
        self.check_replicas().await?;
        Ok(format!("{:?}: {}", self.crash, self.events.join("; ")))
    }

    /// Base rows at ALL, then with the victim down new rows at QUORUM and a third of the
    /// base rows deleted at QUORUM; the victim comes back without them.
    async fn diverge(&mut self) -> Result<(), String> {
        for id in 0..BASE_ROWS {
            self.change(0, Change::Write(id % KEYS as u32, id), Consistency::All)
                .await?;
        }
        self.cluster.crash(VICTIM).await;
        for id in BASE_ROWS..BASE_ROWS + MISSED_ROWS {
            let node = self.rng.below(2) as usize;
            self.change(
                node,
                Change::Write(id % KEYS as u32, id),
                Consistency::Quorum,
            )
            .await?;
        }
        for id in (0..BASE_ROWS).step_by(DELETE_EVERY as usize) {
            let node = self.rng.below(2) as usize;
            self.change(
                node,
                Change::Delete(id % KEYS as u32, id),
                Consistency::Quorum,
            )
            .await?;
        }
        self.cluster.restart(VICTIM).await;
        let missing = self.missing_on(VICTIM).await?;
        if missing == 0 {
            return Err(format!("node {VICTIM} missed nothing while it was down"));
        }
        self.events
            .push(format!("node {VICTIM} alone differs in {missing} rows"));
        Ok(())
    }

    /// Applies `change` through node `node`, tried until it succeeds.
    async fn change(&mut self, node: usize, change: Change, cl: Consistency) -> Result<(), String> {
        let mut last = String::new();
        for _ in 0..10 {
            let done = on(&self.cluster, node, move |qp| async move {
                match change {
                    Change::Write(key, id) => write(&qp, key, id, cl).await,
                    Change::Delete(key, id) => delete(&qp, key, id, cl).await,
                }
            });
            match done.await {
                Ok(()) => {
                    match change {
                        Change::Write(key, id) => self.rows.insert((key, id)),
                        Change::Delete(key, id) => self.rows.remove(&(key, id)),
                    };
                    return Ok(());
                }
                Err(e) => last = e,
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(format!(
            "{change:?} at {cl:?} via node {node} kept failing: {last}"
        ))
    }

    /// The first repair, under message loss and the seed's crash; how it ended.
    async fn interrupted_repair(&mut self) -> Result<String, String> {
        let links = [(0, 1), (0, 2), (1, 2)];
        for (a, b) in links {
            set_loss(a, b, LOSS).await;
        }
        let started = Instant::now();
        let task = self.spawn_repair()?;
        let participant = (self.coordinator + 1) % NODES;
        let crashed = match self.crash {
            Crash::CutLink => None,
            Crash::Coordinator => Some(self.coordinator),
            Crash::Participant => Some(participant),
        };
        let delay = 2 + self.rng.below(30);
        tokio::time::sleep(Duration::from_millis(delay)).await;
        if let Some(node) = crashed {
            self.events
                .push(format!("node {node} crashed {delay} ms into the repair"));
            self.cluster.crash(node).await;
        } else {
            let (a, b) = (addr(self.coordinator), addr(participant));
            self.events.push(format!(
                "link node {} - node {participant} cut {delay} ms into the repair",
                self.coordinator
            ));
            turmoil::partition(a, b);
            tokio::time::sleep(CUT_FOR).await;
            turmoil::repair(a, b);
        }
        let ended = tokio::time::timeout(REPAIR_LIMIT, task).await;
        let took = started.elapsed();
        for (a, b) in links {
            set_loss(a, b, 0.0).await;
        }
        let outcome = match ended {
            Err(_) => return Err(format!("the repair did not end within {REPAIR_LIMIT:?}")),
            Ok(Err(_)) if crashed == Some(self.coordinator) => "ended with its node".to_string(),
            Ok(Err(e)) => return Err(format!("the repair's task failed: {e}")),
            Ok(Ok(state)) => self.ended(state)?,
        };
        if let Some(node) = crashed {
            self.cluster.restart(node).await;
        }
        Ok(format!("{outcome} after {:.1} s", took.as_secs_f64()))
    }

    /// How a repair that returned ended; an error if its node still lists a repair running.
    fn ended(&self, state: RepairState) -> Result<String, String> {
        let node = self
            .cluster
            .node(self.coordinator)
            .ok_or("the coordinator is down")?;
        let repair = node
            .repair
            .as_ref()
            .ok_or("the node has no repair service")?;
        let statuses = repair.statuses();
        if let Some(running) = statuses.iter().find(|s| s.state == RepairState::Running) {
            return Err(format!("repair {} still runs after it ended", running.id));
        }
        Ok(match state {
            RepairState::Failed(why) => format!("FAILED: {why}"),
            other => format!("{other:?}"),
        })
    }

    /// A repair without faults; how it ended.
    async fn repair(&mut self) -> Result<RepairState, String> {
        let task = self.spawn_repair()?;
        let ended = tokio::time::timeout(REPAIR_LIMIT, task).await;
        match ended {
            Err(_) => Err(format!("the rerun did not end within {REPAIR_LIMIT:?}")),
            Ok(Err(e)) => Err(format!("the rerun's task failed: {e}")),
            Ok(Ok(state)) => Ok(state),
        }
    }

    fn spawn_repair(&self) -> Result<tokio::task::JoinHandle<RepairState>, String> {
        let node = self.coordinator;
        let task = self.cluster.spawn_with_node(node, |node| async move {
            let Some(service) = node.repair.clone() else {
                return RepairState::Failed("no repair service".into());
            };
            let plan = match plan(&node) {
                Ok(plan) => plan,
                Err(e) => return RepairState::Failed(e),
            };
            let command = service.next_command();
            service.run(command, plan, &|_| {}).await.state
        });
        task.ok_or_else(|| format!("node {node} does not run"))
    }

    /// The incremental sessions the nodes take part in that have not ended.
    fn open_sessions(&self) -> Vec<String> {
        let mut open = Vec::new();
        for i in 0..NODES {
            let Some(node) = self.cluster.node(i) else {
                continue;
            };
            let Some(repair) = node.repair.as_ref() else {
                continue;
            };
            for session in repair.local_sessions(false) {
                open.push(format!("node {i}: {}", session.state.name()));
            }
        }
        open
    }

    /// The rows of every partition that node `node` alone lacks or holds too many of.
    async fn missing_on(&self, node: usize) -> Result<usize, String> {
        let mut wrong = 0;
        for key in 0..KEYS as u32 {
            let held: BTreeSet<u32> = read_alone(&self.cluster, node, key)
                .await?
                .into_iter()
                .collect();
            let want: BTreeSet<u32> = self.rows_of(key);
            wrong += held.symmetric_difference(&want).count();
        }
        Ok(wrong)
    }

    fn rows_of(&self, key: u32) -> BTreeSet<u32> {
        let rows = self.rows.iter().filter(|(k, _)| *k == key);
        rows.map(|(_, id)| *id).collect()
    }

    /// Each replica alone holds exactly the rows written and not deleted.
    async fn check_replicas(&self) -> Result<(), String> {
        for node in 0..NODES {
            for key in 0..KEYS as u32 {
                let held: BTreeSet<u32> = read_alone(&self.cluster, node, key)
                    .await?
                    .into_iter()
                    .collect();
                let want = self.rows_of(key);
                if held != want {
                    let lacks: Vec<_> = want.difference(&held).collect();
                    let extra: Vec<_> = held.difference(&want).collect();
                    return Err(format!(
                        "after the repair node {node} alone lacks rows {lacks:?} of k{key} \
                         and holds deleted or unknown rows {extra:?} ({:?})",
                        self.events
                    ));
                }
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
enum Change {
    Write(u32, u32),
    Delete(u32, u32),
}

/// `nodetool repair sim` on `node`: each of its ranges with all the range's replicas, ranges
/// with the same replicas in one session, every table, incremental.
fn plan(node: &Arc<Node>) -> Result<RepairPlan, String> {
    let processor = &node.processor;
    let ranges = processor.ranges("sim").map_err(|e| e.to_string())?;
    let local = processor.node().listen_address;
    let port = node.config.storage_port;
    let mut sessions: Vec<SessionPlan> = Vec::new();
    for range in ranges
        .iter()
        .filter(|r| r.replicas.iter().any(|e| e.addr == local))
    {
        let mut replicas = vec![SocketAddr::new(local, port)];
        let others = range.replicas.iter().filter(|e| e.addr != local);
        replicas.extend(others.map(|e| SocketAddr::new(e.addr, port)));
        match sessions.iter_mut().find(|s| s.replicas == replicas) {
            Some(session) => session.ranges.push((range.start, range.end)),
            None => sessions.push(SessionPlan {
                ranges: vec![(range.start, range.end)],
                replicas,
            }),
        }
    }
    let schema = processor.schema();
    let keyspace = schema.schema.keyspace("sim").ok_or("no keyspace sim")?;
    let tables = keyspace.tables.values();
    Ok(RepairPlan {
        keyspace: "sim".into(),
        tables: tables.map(|t| (t.name.clone(), TableId(t.id))).collect(),
        sessions,
        sequential: false,
        job_threads: 1,
        incremental: true,
        preview: None,
        options: "repair options (incremental: true)".into(),
        refused: None,
    })
}

async fn delete(
    processor: &query::QueryProcessor,
    key: u32,
    id: u32,
    cl: Consistency,
) -> Result<(), String> {
    let text = format!("DELETE FROM sim.cells WHERE k = {key} AND c = {id}");
    let options = QueryOptions {
        consistency: cl,
        ..QueryOptions::default()
    };
    let outcome = processor.query(None, &text, options).await;
    outcome.map(|_| ()).map_err(|e| e.to_string())
}
