//! A replica's Paxos registers in `system.paxos`, and the table data its decisions apply to.
//!
//! The registers are a row of `system.paxos` as Cassandra lays it out (`row_key` the
//! partition's key, `cf_id` the table; ballots as timeuuids, proposals as blobs), so they go
//! through the commit log like any write and a `kill -9` loses none of what was answered: the
//! replica's handlers write under the partition's lock without waiting for the log's sync
//! ([`Storage::apply_unsynced`]), then wait for it ([`Storage::sync_log`]) before they answer.
//! Each write replaces the whole row, so a superseded proposal or commit is gone at the next
//! compaction. After a repair, a partition's row is deleted on every replica once all agree
//! that every round of it is committed and older than the repair (`paxos_state_purging:
//! repaired`, see [`Local::cleanup`](super::remote::Local::cleanup)); the low bound that then
//! stands in for the purged ballots is a row of its own ([`low_bound_key`]). The store's write timestamps never go back, even when the clock does
//! across a restart: they are seeded from the newest found at start ([`Seed`]).
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use clock::Clock;
use mutation::codec::{put_mutation, Reader};
use mutation::token_in;
use mutation::SourceRows;
use mutation::{
    Cell, ColumnData, ColumnValue, DeletionTime, KeyRange, Mutation, PartitionKey, PartitionUpdate,
    ReadFilter, Row, TableId, TokenRange,
};
use parking_lot::Mutex;
use paxos::{Ballot, Data, PaxosState, PaxosStore, Proposal, StoreError};
use storage::Storage;
use types::{CqlType, NativeType};
use uuid::Uuid;

use super::{Lwt, LwtKey, LwtQuery};

/// The encoding of a proposal blob (`proposal_version`, `most_recent_commit_version`).
const PROPOSAL_VERSION: i32 = 1;

/// The id of `system.paxos`.
pub(crate) fn table_id() -> TableId {
    TableId(schema::system_table_id("system", "paxos"))
}

/// A replica's registers in `system.paxos`.
pub(crate) struct SystemPaxos {
    storage: Arc<Storage>,
    clock: clock::SharedClock,
    /// The last write timestamp used: each write is later than every earlier one.
    last_write: AtomicI64,
    /// The ballot at or below which this replica promises and accepts nothing (state below
    /// it may have been purged), as stored at [`low_bound_key`].
    low_bound: Mutex<Ballot>,
}

/// The row holding the low bound: the nil table's, in a partition on a token no key hashes
/// to (murmur3 never gives `i64::MIN`), so no table's registers share it.
pub(crate) fn low_bound_key() -> LwtKey {
    LwtKey {
        table: TableId(Uuid::nil()),
        key: PartitionKey {
            token: i64::MIN,
            key: Bytes::from_static(b"helenus.paxos_low_bound"),
        },
    }
}

/// What `system.paxos` held at start: the newest ballot (the ballot generator starts above it)
/// and the newest write timestamp.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Seed {
    pub ballot: Ballot,
    pub write_micros: i64,
}

impl SystemPaxos {
    /// The store over `storage`, and what it already holds.
    pub fn open(
        storage: Arc<Storage>,
        clock: clock::SharedClock,
    ) -> Result<(Self, Seed), StoreError> {
        let seed = scan_seed(&storage, seconds(&clock))?;
        let store = SystemPaxos {
            storage,
            clock,
            last_write: AtomicI64::new(seed.write_micros),
            low_bound: Mutex::new(Ballot::ZERO),
        };
        if store.storage.has_table(table_id()) {
            let stored = store.get(&low_bound_key())?.unwrap_or_default();
            *store.low_bound.lock() = stored.promised;
        }
        Ok((store, seed))
    }

    /// The partitions of `table` with registers here whose tokens fall in `ranges`.
    pub fn keys_in(
        &self,
        table: TableId,
        ranges: &[TokenRange],
    ) -> Result<Vec<PartitionKey>, StoreError> {
        let filter = ReadFilter::row(clustering(table));
        let partitions = self
            .storage
            .scan(
                table_id(),
                &KeyRange::all(),
                &filter,
                seconds(&self.clock),
                usize::MAX,
            )
            .map_err(store_error)?;
        Ok(partitions
            .into_iter()
            .filter(|p| !p.rows.is_empty() && ranges.iter().any(|r| token_in(*r, p.key.token)))
            .map(|p| p.key)
            .collect())
    }

    fn next_timestamp(&self) -> i64 {
        let now = self.clock.now_micros();
        let mut last = self.last_write.load(Ordering::Relaxed);
        loop {
            let next = now.max(last + 1);
            match self.last_write.compare_exchange_weak(
                last,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return next,
                Err(seen) => last = seen,
            }
        }
    }

    fn write(&self, key: &LwtKey, row: impl FnOnce(i64, i32) -> Row) -> Result<(), StoreError> {
        let ts = self.next_timestamp();
        let now = seconds(&self.clock);
        let mutation = Mutation {
            table: table_id(),
            key: row_key(&key.key),
            update: PartitionUpdate {
                rows: vec![row(ts, now)],
                ..PartitionUpdate::default()
            },
        };
        self.storage
            .apply_unsynced(vec![mutation])
            .map_err(store_error)
    }
}

impl PaxosStore<Lwt> for SystemPaxos {
    fn get(&self, key: &LwtKey) -> Result<Option<PaxosState<Lwt>>, StoreError> {
        let filter = ReadFilter::row(clustering(key.table));
        let now = seconds(&self.clock);
        let partition = self
            .storage
            .read(table_id(), &row_key(&key.key), &filter, now)
            .map_err(store_error)?;
        match partition.as_ref().and_then(|p| p.rows.first()) {
            Some(row) => decode_state(row, now).map(Some),
            None => Ok(None),
        }
    }

    fn put(&self, key: &LwtKey, state: &PaxosState<Lwt>) -> Result<(), StoreError> {
        self.write(key, |ts, now| encode_state(key.table, state, ts, now))
    }

    fn remove(&self, key: &LwtKey) -> Result<(), StoreError> {
        self.write(key, |ts, now| {
            let mut row = Row::new(clustering(key.table));
            row.deletion = DeletionTime::new(ts, now);
            row
        })
    }

    fn low_bound(&self) -> Result<Ballot, StoreError> {
        Ok(*self.low_bound.lock())
    }

    /// Written (unsynced, as every write here) before it is used: a caller that answers
    /// waits for the log's sync first.
    fn raise_low_bound(&self, ballot: Ballot) -> Result<(), StoreError> {
        let mut low = self.low_bound.lock();
        if ballot <= *low {
            return Ok(());
        }
        let state = PaxosState {
            promised: ballot,
            promised_write: ballot,
            ..PaxosState::default()
        };
        self.put(&low_bound_key(), &state)?;
        *low = ballot;
        Ok(())
    }
}

/// The table data on this replica: decisions go through the local write path, reads through
/// the local read path (unresolved, for the proposer to reconcile).
pub(crate) struct LocalData {
    pub storage: Arc<Storage>,
}

impl Data<Lwt> for LocalData {
    fn read(&self, key: &LwtKey, query: &LwtQuery) -> Result<Option<SourceRows>, StoreError> {
        self.storage
            .read_source(key.table, &key.key, &query.filter, usize::MAX)
            .map_err(store_error)
    }

    fn apply(&self, _key: &LwtKey, update: &Mutation) -> Result<(), StoreError> {
        self.storage
            .apply_unsynced(vec![update.clone()])
            .map_err(store_error)
    }
}

/// The clock's seconds (deletion and expiry times).
fn seconds(clock: &impl Clock) -> i32 {
    i32::try_from(clock.now_micros().div_euclid(1_000_000)).unwrap_or(i32::MAX)
}

fn store_error(e: storage::StorageError) -> StoreError {
    StoreError(e.to_string())
}

/// The partition of `system.paxos` holding a partition's registers: its key, on its token.
fn row_key(key: &PartitionKey) -> PartitionKey {
    key.clone()
}

/// The clustering of a table's row (`cf_id`).
fn clustering(table: TableId) -> Bytes {
    let mut out = Vec::with_capacity(20);
    let uuid = [(CqlType::Native(NativeType::Uuid), false)];
    types::comparable::encode_clustering(&uuid, &[Some(table.0.as_bytes())], &mut out);
    Bytes::from(out)
}

/// 100-ns intervals between the Gregorian calendar's start and the Unix epoch.
const UUID_EPOCH_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// A ballot as a version-1 (time) UUID: its microseconds as the time, its counter as the clock
/// sequence (14 bits), its node as the node (48 bits). Ballots are issued within those bits.
pub(crate) fn ballot_uuid(ballot: Ballot) -> Uuid {
    let t = ballot
        .micros
        .wrapping_mul(10)
        .wrapping_add(UUID_EPOCH_OFFSET);
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&(t as u32).to_be_bytes());
    b[4..6].copy_from_slice(&((t >> 32) as u16).to_be_bytes());
    b[6..8].copy_from_slice(&((((t >> 48) as u16) & 0x0fff) | 0x1000).to_be_bytes());
    b[8] = ((ballot.counter >> 8) as u8 & 0x3f) | 0x80;
    b[9] = ballot.counter as u8;
    b[10..16].copy_from_slice(&ballot.node.to_be_bytes()[2..8]);
    Uuid::from_bytes(b)
}

/// The ballot [`ballot_uuid`] encoded.
pub(crate) fn uuid_ballot(uuid: &[u8]) -> Result<Ballot, StoreError> {
    let b: [u8; 16] = uuid
        .try_into()
        .map_err(|_| StoreError("a ballot is not 16 bytes".into()))?;
    let low = u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let mid = u64::from(u16::from_be_bytes([b[4], b[5]]));
    let high = u64::from(u16::from_be_bytes([b[6], b[7]]) & 0x0fff);
    let t = (high << 48) | (mid << 32) | low;
    let mut node = [0u8; 8];
    node[2..].copy_from_slice(&b[10..16]);
    Ok(Ballot {
        micros: t.wrapping_sub(UUID_EPOCH_OFFSET) / 10,
        counter: (u16::from(b[8] & 0x3f) << 8) | u16::from(b[9]),
        node: u64::from_be_bytes(node),
    })
}

/// The row of a partition's registers, every column written at `ts` (an absent register as
/// a tombstone, so the row replaces the previous one whole).
fn encode_state(table: TableId, state: &PaxosState<Lwt>, ts: i64, now: i32) -> Row {
    let cell = |value: Option<Bytes>| match value {
        Some(v) => Cell::live(ts, v),
        None => Cell::tombstone(ts, now),
    };
    let ballot = |b: Ballot| (b != Ballot::ZERO).then(|| uuid_bytes(b));
    let mut row = Row::new(clustering(table));
    row.liveness = Some(mutation::LivenessInfo::new(ts));
    let mut columns = vec![
        ColumnData::simple("in_progress_ballot", cell(ballot(state.promised_write))),
        ColumnData::simple("in_progress_read_ballot", cell(ballot(state.promised))),
    ];
    for (prefix, ballot_column, proposal) in [
        ("proposal", "proposal_ballot", &state.accepted),
        (
            "most_recent_commit",
            "most_recent_commit_at",
            &state.committed,
        ),
    ] {
        let blob = proposal.as_ref().map(|p| {
            let mut out = Vec::new();
            put_mutation(&mut out, &p.update);
            Bytes::from(out)
        });
        let version = proposal
            .as_ref()
            .map(|_| Bytes::copy_from_slice(&PROPOSAL_VERSION.to_be_bytes()));
        columns.push(ColumnData::simple(prefix, cell(blob)));
        columns.push(ColumnData::simple(
            ballot_column,
            cell(proposal.as_ref().map(|p| uuid_bytes(p.ballot))),
        ));
        columns.push(ColumnData::simple(
            format!("{prefix}_version"),
            cell(version),
        ));
    }
    // Columns in name order, as a row keeps them.
    columns.sort_by(|a, b| a.name.cmp(&b.name));
    row.columns = columns;
    row
}

fn uuid_bytes(ballot: Ballot) -> Bytes {
    Bytes::copy_from_slice(ballot_uuid(ballot).as_bytes())
}

/// The live value of a simple column of `row`.
fn value<'a>(row: &'a mutation::Row, name: &str, now: i32) -> Option<&'a Bytes> {
    match row.column(name.as_bytes()).map(|c| &c.value) {
        Some(ColumnValue::Simple(cell)) if cell.is_live(now) => cell.value.as_ref(),
        _ => None,
    }
}

fn decode_state(row: &mutation::Row, now: i32) -> Result<PaxosState<Lwt>, StoreError> {
    let ballot = |name: &str| value(row, name, now).map_or(Ok(Ballot::ZERO), |b| uuid_ballot(b));
    let proposal = |blob: &str, at: &str| -> Result<Option<Proposal<Mutation>>, StoreError> {
        let (Some(blob), Some(at)) = (value(row, blob, now), value(row, at, now)) else {
            return Ok(None);
        };
        let mut reader = Reader { bytes: blob };
        let update = reader
            .mutation()
            .map_err(|e| StoreError(format!("a stored Paxos proposal: {e:?}")))?;
        Ok(Some(Proposal::new(uuid_ballot(at)?, update)))
    };
    Ok(PaxosState {
        promised_write: ballot("in_progress_ballot")?,
        promised: ballot("in_progress_read_ballot")?,
        accepted: proposal("proposal", "proposal_ballot")?,
        committed: proposal("most_recent_commit", "most_recent_commit_at")?,
    })
}

/// The newest ballot and write timestamp in `system.paxos` (nothing when the table is absent,
/// as in a test storage without the system keyspace).
fn scan_seed(storage: &Storage, now: i32) -> Result<Seed, StoreError> {
    if !storage.has_table(table_id()) {
        return Ok(Seed::default());
    }
    let partitions = storage
        .scan(
            table_id(),
            &KeyRange::all(),
            &ReadFilter::all(),
            now,
            usize::MAX,
        )
        .map_err(store_error)?;
    let mut seed = Seed::default();
    for row in partitions.iter().flat_map(|p| &p.rows) {
        let state = decode_state(row, now)?;
        seed.ballot = seed.ballot.max(state.latest(Ballot::ZERO));
        for column in &row.columns {
            if let ColumnValue::Simple(cell) = &column.value {
                seed.write_micros = seed.write_micros.max(cell.timestamp);
            }
        }
    }
    Ok(seed)
}

#[cfg(test)]
mod tests;
