//! Requests as the simulations send them: one cell per partition, whose timestamp is also
//! its value, so a read tells which write it returns.
use bytes::Bytes;
use coordinator::{Coordinator, ReadPolicy, ReadScope};
use mutation::{
    Cell, ColumnData, ColumnValue, Mutation, Partition, PartitionKey, PartitionUpdate, ReadFilter,
    ReadStats, Row,
};
use ring::ReplicationStrategy;
use types::{Consistency, CqlError};

use crate::common::{token_of, KEYSPACE, TABLE};

pub const STRATEGY: ReplicationStrategy = ReplicationStrategy::Simple { rf: 3 };
const NOW: i32 = 1_700_000_000;

pub fn key_bytes(key: u64) -> PartitionKey {
    let key = Bytes::from(format!("k{key}"));
    PartitionKey {
        token: token_of(&key),
        key,
    }
}

pub fn mutation(key: u64, ts: i64) -> Mutation {
    let mut row = Row::new(Bytes::new());
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(ts, Bytes::from(ts.to_be_bytes().to_vec())),
    )];
    Mutation {
        table: TABLE,
        key: key_bytes(key),
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

pub async fn read(
    coordinator: &Coordinator,
    key: u64,
    cl: Consistency,
    policy: &ReadPolicy,
) -> Result<Option<i64>, CqlError> {
    let mut stats = ReadStats::default();
    let partition = coordinator
        .read(
            &ReadScope {
                now: NOW,
                ..scope(KEYSPACE, cl, policy)
            },
            &key_bytes(key),
            &ReadFilter::all(),
            &mut stats,
        )
        .await?;
    Ok(partition.and_then(|p| value_of(&p)))
}

/// Reads of the test table of `keyspace` at `cl` and time 0, untraced.
pub fn scope<'a>(keyspace: &'a str, cl: Consistency, policy: &'a ReadPolicy) -> ReadScope<'a> {
    ReadScope {
        keyspace,
        table: TABLE,
        cl,
        now: 0,
        trace: None,
        policy,
    }
}

/// The timestamp of the partition's value, checked against the value (both are the write's).
fn value_of(partition: &Partition) -> Option<i64> {
    let row = partition.rows.first()?;
    let ColumnValue::Simple(cell) = &row.column(b"v")?.value else {
        panic!("a simple column reads back as a collection: {partition:?}");
    };
    let value = cell.value.as_ref()?;
    assert_eq!(
        value.as_ref(),
        cell.timestamp.to_be_bytes(),
        "a cell's value is not the one written with its timestamp"
    );
    Some(cell.timestamp)
}

/// The figures of a ReadTimeout: (consistency, received, block_for, data_present).
pub fn read_timeout<T: std::fmt::Debug>(
    result: Result<T, CqlError>,
) -> (Consistency, i32, i32, bool) {
    match result {
        Err(CqlError::ReadTimeout {
            consistency,
            received,
            block_for,
            data_present,
            ..
        }) => (consistency, received, block_for, data_present),
        other => panic!("expected a ReadTimeout, got {other:?}"),
    }
}
