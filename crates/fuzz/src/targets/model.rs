//! Random values of the data model (`mutation` crate), for the codec target and for the
//! data the storage targets write before corrupting it.

use std::ops::Bound;

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, ColumnValue, ComplexColumn, DeletionTime, LivenessInfo, Mutation,
    PartitionKey, PartitionUpdate, RangeTombstone, Row, TableId,
};
use uuid::Uuid;

use crate::rng::Rng;

pub fn bytes(rng: &mut Rng, max: usize) -> Bytes {
    Bytes::from(rng.blob(max))
}

fn deletion(rng: &mut Rng) -> DeletionTime {
    match rng.one_in(2) {
        true => DeletionTime::LIVE,
        false => DeletionTime {
            marked_for_delete_at: rng.edgy_i64(),
            local_deletion_time: rng.edgy_i64() as i32,
        },
    }
}

pub fn cell(rng: &mut Rng, with_path: bool) -> Cell {
    Cell {
        timestamp: rng.edgy_i64(),
        ttl: rng.edgy_i64() as i32,
        local_deletion_time: rng.edgy_i64() as i32,
        value: (!rng.one_in(4)).then(|| bytes(rng, 300)),
        path: with_path.then(|| bytes(rng, 20)),
        counter: false,
    }
}

fn column(rng: &mut Rng) -> ColumnData {
    let name = bytes(rng, 12);
    let value = match rng.one_in(3) {
        true => ColumnValue::Complex(ComplexColumn {
            deletion: deletion(rng),
            cells: (0..rng.below(5)).map(|_| cell(rng, true)).collect(),
        }),
        false => {
            let with_path = rng.one_in(8);
            ColumnValue::Simple(cell(rng, with_path))
        }
    };
    ColumnData { name, value }
}

pub fn row(rng: &mut Rng, clustering: Bytes) -> Row {
    Row {
        clustering,
        liveness: rng.one_in(2).then(|| LivenessInfo {
            timestamp: rng.edgy_i64(),
            ttl: rng.edgy_i64() as i32,
            local_expiration_time: rng.edgy_i64() as i32,
        }),
        deletion: deletion(rng),
        columns: (0..rng.below(5)).map(|_| column(rng)).collect(),
    }
}

fn bound(rng: &mut Rng) -> Bound<Bytes> {
    match rng.below(3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(bytes(rng, 16)),
        _ => Bound::Excluded(bytes(rng, 16)),
    }
}

/// Any mutation the codec can carry, sorted or not, live or not.
pub fn mutation(rng: &mut Rng) -> Mutation {
    let static_row = rng.one_in(3).then(|| row(rng, Bytes::new()));
    let update = PartitionUpdate {
        partition_deletion: deletion(rng),
        static_row,
        rows: (0..rng.below(6))
            .map(|_| {
                let clustering = bytes(rng, 24);
                row(rng, clustering)
            })
            .collect(),
        range_tombstones: (0..rng.below(3))
            .map(|_| RangeTombstone {
                start: bound(rng),
                end: bound(rng),
                deletion: deletion(rng),
            })
            .collect(),
    };
    Mutation {
        table: TableId(Uuid::from_u128(u128::from(rng.next_u64()))),
        key: PartitionKey {
            token: rng.edgy_i64(),
            key: bytes(rng, 40),
        },
        update,
    }
}
