//! A hint: what a record of a hints file holds (before compression) and what `Verb::Hint`
//! carries to the replica: `[version u8][creation time, ms i64][gc grace, s u32][mutation]`,
//! the mutation in `mutation::codec`'s form. The gc grace is the table's at creation, so that
//! raising it later cannot make an old hint live again (Cassandra's `Hint`).
use mutation::codec::{self, Reader};
use mutation::{Mutation, TableId};

pub const HINT_VERSION: u8 = 1;

/// version, creation time, gc grace.
const HEADER_LEN: usize = 13;

/// Why a hint payload cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HintError {
    #[error("unsupported hint version {0}")]
    Version(u8),
    #[error("malformed hint: {0}")]
    Malformed(&'static str),
}

pub fn encode(mutation: &Mutation, creation_ms: i64, gc_grace: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + 128);
    out.push(HINT_VERSION);
    out.extend_from_slice(&creation_ms.to_be_bytes());
    out.extend_from_slice(&gc_grace.to_be_bytes());
    codec::put_mutation(&mut out, mutation);
    out
}

/// What the dispatcher needs to decide whether a hint is still safe to deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HintHeader {
    pub creation_ms: i64,
    pub gc_grace: u32,
    pub table: TableId,
}

impl HintHeader {
    /// Reads the header and the mutation's table without decoding the rest.
    pub fn read(payload: &[u8]) -> Result<HintHeader, HintError> {
        let (creation_ms, gc_grace, mut reader) = open(payload)?;
        let table = reader.table_id().map_err(|e| HintError::Malformed(e.0))?;
        Ok(HintHeader {
            creation_ms,
            gc_grace,
            table,
        })
    }

    /// Whether delivering the hint at `now_ms` cannot resurrect deleted data: it is younger
    /// than the smaller of the gc grace it was written with and the table's current one.
    pub fn is_live(&self, current_gc_grace: u32, now_ms: i64) -> bool {
        let grace_ms = i64::from(self.gc_grace.min(current_gc_grace)) * 1000;
        self.creation_ms.saturating_add(grace_ms) > now_ms
    }
}

/// The mutation of a hint received from another node (the `Verb::Hint` handler's decoder).
pub fn decode_hint(payload: &[u8]) -> Result<Mutation, HintError> {
    let (_, _, mut reader) = open(payload)?;
    let mutation = reader.mutation().map_err(|e| HintError::Malformed(e.0))?;
    if !reader.bytes.is_empty() {
        return Err(HintError::Malformed("trailing bytes after the mutation"));
    }
    Ok(mutation)
}

fn open(payload: &[u8]) -> Result<(i64, u32, Reader<'_>), HintError> {
    let mut reader = Reader { bytes: payload };
    let malformed = |e: codec::DecodeError| HintError::Malformed(e.0);
    let version = reader.u8().map_err(malformed)?;
    if version != HINT_VERSION {
        return Err(HintError::Version(version));
    }
    let creation_ms = reader.i64().map_err(malformed)?;
    let gc_grace = reader.i32().map_err(malformed)? as u32;
    Ok((creation_ms, gc_grace, reader))
}

#[cfg(test)]
pub(crate) mod tests {
    use bytes::Bytes;
    use mutation::{Cell, ColumnData, PartitionKey, PartitionUpdate, Row};
    use uuid::Uuid;

    use super::*;

    pub fn mutation(table: u128, key: &str, value_len: usize) -> Mutation {
        let mut row = Row::new(Bytes::from_static(b"c"));
        let value = Bytes::from(vec![b'v'; value_len]);
        row.columns = vec![ColumnData::simple("v", Cell::live(1, value))];
        Mutation {
            table: TableId(Uuid::from_u128(table)),
            key: PartitionKey {
                token: 3,
                key: Bytes::copy_from_slice(key.as_bytes()),
            },
            update: PartitionUpdate {
                rows: vec![row],
                ..PartitionUpdate::default()
            },
        }
    }

    #[test]
    fn hints_round_trip_and_every_prefix_is_an_error() {
        let m = mutation(9, "k", 10);
        let payload = encode(&m, 1_000, 864_000);
        assert_eq!(decode_hint(&payload), Ok(m.clone()));
        let header = HintHeader::read(&payload).unwrap();
        assert_eq!(
            header,
            HintHeader {
                creation_ms: 1_000,
                gc_grace: 864_000,
                table: m.table
            }
        );
        for len in 0..payload.len() {
            assert!(decode_hint(&payload[..len]).is_err(), "{len}");
        }
        let mut longer = payload.clone();
        longer.push(0);
        assert!(decode_hint(&longer).is_err());
        let mut future = payload;
        future[0] = 2;
        assert_eq!(decode_hint(&future), Err(HintError::Version(2)));
    }

    #[test]
    fn a_hint_expires_with_the_smaller_gc_grace() {
        let header = HintHeader {
            creation_ms: 10_000,
            gc_grace: 10,
            table: TableId(Uuid::nil()),
        };
        assert!(header.is_live(10, 19_999));
        assert!(!header.is_live(10, 20_000));
        assert!(
            !header.is_live(100, 20_000),
            "raised since: the recorded grace holds"
        );
        assert!(
            !header.is_live(5, 15_000),
            "lowered since: the current grace holds"
        );
        assert!(
            !header.is_live(0, 10_000),
            "gc_grace_seconds = 0: never delivered"
        );
    }
}
