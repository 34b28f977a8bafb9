//! Helpers for the hints tests: an in-memory `Deliver`, tables with a gc grace, mutations.
#![allow(dead_code)]
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hints::{decode_hint, BoxFuture, Deliver, DeliveryError, HintsConfig, HintsEnv, HintsService};
use mutation::{Cell, ColumnData, Mutation, PartitionKey, PartitionUpdate, Row, TableId};
use parking_lot::Mutex;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use uuid::Uuid;

pub const TABLE: TableId = TableId(Uuid::from_u128(1));
pub const GC_GRACE: u32 = 864_000;

pub fn host(n: u128) -> Uuid {
    Uuid::from_u128(n)
}

pub fn addr(n: u8) -> SocketAddr {
    SocketAddr::from(([127, 0, 11, n], 7000))
}

/// A mutation of `TABLE` whose key is `key` and whose value has `value_len` bytes.
pub fn mutation(key: &str, value_len: usize) -> Mutation {
    let mut row = Row::new(Bytes::from_static(b"c"));
    let value = Bytes::from(vec![b'v'; value_len]);
    row.columns = vec![ColumnData::simple("v", Cell::live(1, value))];
    Mutation {
        table: TABLE,
        key: PartitionKey {
            token: 0,
            key: Bytes::copy_from_slice(key.as_bytes()),
        },
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

pub fn key_of(m: &Mutation) -> String {
    String::from_utf8_lossy(&m.key.key).into_owned()
}

/// One hint as the replica got it.
#[derive(Clone, Debug)]
pub struct Received {
    pub addr: SocketAddr,
    pub key: String,
    pub bytes: usize,
    pub at: Instant,
}

#[derive(Default)]
struct RecorderState {
    received: Vec<Received>,
    refused: HashSet<String>,
    calls: usize,
}

/// Records the hints it is given; refuses those whose key is in `refuse`; when gated, each
/// answer waits for a permit of the gate.
#[derive(Clone, Default)]
pub struct Recorder {
    state: Arc<Mutex<RecorderState>>,
    gate: Option<Arc<Semaphore>>,
}

impl Recorder {
    pub fn gated() -> (Recorder, Arc<Semaphore>) {
        let gate = Arc::new(Semaphore::new(0));
        let recorder = Recorder {
            gate: Some(gate.clone()),
            ..Recorder::default()
        };
        (recorder, gate)
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.lock().received.clone()
    }

    pub fn keys(&self) -> Vec<String> {
        self.received().into_iter().map(|r| r.key).collect()
    }

    pub fn calls(&self) -> usize {
        self.state.lock().calls
    }

    pub fn refuse(&self, key: &str) {
        self.state.lock().refused.insert(key.to_string());
    }

    pub fn accept_all(&self) {
        self.state.lock().refused.clear();
    }
}

impl Deliver for Recorder {
    fn deliver(
        &self,
        addr: SocketAddr,
        hint: Bytes,
    ) -> BoxFuture<'static, Result<(), DeliveryError>> {
        let (state, gate) = (self.state.clone(), self.gate.clone());
        Box::pin(async move {
            let mutation = decode_hint(&hint).map_err(|e| DeliveryError::Failed(e.to_string()))?;
            let key = key_of(&mutation);
            state.lock().calls += 1;
            if let Some(gate) = gate {
                gate.acquire().await.map(|permit| permit.forget()).ok();
            }
            let mut state = state.lock();
            if state.refused.contains(&key) {
                return Err(DeliveryError::Failed(format!("refused {key}")));
            }
            let at = Instant::now();
            let bytes = hint.len();
            state.received.push(Received {
                addr,
                key,
                bytes,
                at,
            });
            Ok(())
        })
    }
}

/// Tables and their gc grace, changeable by the test.
#[derive(Clone)]
pub struct Tables(Arc<Mutex<HashMap<TableId, u32>>>);

impl Tables {
    pub fn new() -> Tables {
        Tables(Arc::new(Mutex::new(HashMap::from([(TABLE, GC_GRACE)]))))
    }

    pub fn set(&self, table: TableId, gc_grace: Option<u32>) {
        match gc_grace {
            Some(g) => self.0.lock().insert(table, g),
            None => self.0.lock().remove(&table),
        };
    }
}

pub struct Harness {
    pub service: Arc<HintsService>,
    pub recorder: Recorder,
    pub tables: Tables,
}

pub fn config(dir: &Path) -> HintsConfig {
    HintsConfig {
        hinted_handoff_throttle: 0,
        ..HintsConfig::new(dir)
    }
}

pub async fn open(config: HintsConfig) -> Harness {
    open_with(config, Recorder::default(), Tables::new()).await
}

pub async fn open_with(config: HintsConfig, recorder: Recorder, tables: Tables) -> Harness {
    let lookup = tables.clone();
    let env = HintsEnv {
        deliver: Arc::new(recorder.clone()),
        gc_grace: Arc::new(move |table| lookup.0.lock().get(&table).copied()),
        node_count: Arc::new(|| 2),
    };
    let service = HintsService::open(config, env).await.expect("open");
    Harness {
        service,
        recorder,
        tables,
    }
}

impl Harness {
    /// Stores hints `<prefix>0..<prefix>n` for `host`.
    pub fn store(&self, host_id: Uuid, prefix: &str, n: usize, value_len: usize) {
        for i in 0..n {
            let m = mutation(&format!("{prefix}{i}"), value_len);
            self.service.store(host_id, &m).expect("store");
        }
    }

    pub fn pending_bytes(&self, host_id: Uuid) -> u64 {
        let pending = self.service.pending();
        let found = pending.iter().find(|p| p.host_id == host_id);
        found.map_or(0, |p| p.total_bytes)
    }
}

/// Waits (in virtual time when paused) until `done` holds; panics after `limit`.
pub async fn until(limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < limit,
            "condition not met within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The hints files in `dir`.
pub fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

pub fn keys(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}
