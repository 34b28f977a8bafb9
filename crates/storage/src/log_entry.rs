//! Binary encoding of commit-log entries (mutations, truncations, drops). Framing and checksums
//! live in the commit log; decoding here validates structure and never panics on bad input.

use bytes::BufMut;
pub use mutation::codec::DecodeError;
use mutation::codec::{put_len, put_mutation, Reader};
use mutation::{Mutation, TableId};

/// One commit-log record's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogEntry {
    /// Mutations applied atomically on replay.
    Mutations(Vec<Mutation>),
    /// Everything logged earlier for the table is void.
    Truncate(TableId),
    /// The table was dropped; everything logged earlier for it is void.
    Drop(TableId),
}

const TAG_MUTATIONS: u8 = 1;
const TAG_TRUNCATE: u8 = 2;
const TAG_DROP: u8 = 3;

pub fn encode(entry: &LogEntry) -> Vec<u8> {
    let mut out = Vec::new();
    match entry {
        LogEntry::Mutations(mutations) => return encode_mutations(mutations),
        LogEntry::Truncate(table) => {
            out.put_u8(TAG_TRUNCATE);
            out.put_slice(table.0.as_bytes());
        }
        LogEntry::Drop(table) => {
            out.put_u8(TAG_DROP);
            out.put_slice(table.0.as_bytes());
        }
    }
    out
}

/// The encoding of `LogEntry::Mutations` without building the entry.
pub fn encode_mutations(mutations: &[Mutation]) -> Vec<u8> {
    let mut out = vec![TAG_MUTATIONS];
    put_len(&mut out, mutations.len());
    for mutation in mutations {
        put_mutation(&mut out, mutation);
    }
    out
}

pub fn decode(bytes: &[u8]) -> Result<LogEntry, DecodeError> {
    let mut reader = Reader { bytes };
    let entry = match reader.u8()? {
        TAG_MUTATIONS => {
            let count = reader.len()?;
            let mut mutations = Vec::new();
            for _ in 0..count {
                mutations.push(reader.mutation()?);
            }
            LogEntry::Mutations(mutations)
        }
        TAG_TRUNCATE => LogEntry::Truncate(reader.table_id()?),
        TAG_DROP => LogEntry::Drop(reader.table_id()?),
        _ => return Err(DecodeError("unknown entry tag")),
    };
    if !reader.bytes.is_empty() {
        return Err(DecodeError("trailing bytes after entry"));
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use std::ops::Bound;

    use bytes::Bytes;
    use mutation::*;
    use uuid::Uuid;

    use super::*;

    /// A small mutation; the mutation crate's own tests cover every part of the model.
    fn sample() -> Mutation {
        let mut update = PartitionUpdate::default();
        update.rows.push(Row::new(Bytes::from_static(b"c1")));
        update.range_tombstones.push(RangeTombstone {
            start: Bound::Excluded(Bytes::from_static(b"a")),
            end: Bound::Unbounded,
            deletion: DeletionTime::new(5, 6),
        });
        Mutation {
            table: TableId(Uuid::from_u128(42)),
            key: PartitionKey {
                token: -7,
                key: Bytes::from_static(b"pk"),
            },
            update,
        }
    }

    #[test]
    fn entries_round_trip() {
        let entries = [
            LogEntry::Mutations(vec![sample(), sample()]),
            LogEntry::Truncate(TableId(Uuid::from_u128(1))),
            LogEntry::Drop(TableId(Uuid::from_u128(2))),
        ];
        for entry in entries {
            assert_eq!(decode(&encode(&entry)), Ok(entry));
        }
    }

    #[test]
    fn truncated_or_garbage_payloads_are_errors() {
        let bytes = encode(&LogEntry::Mutations(vec![sample()]));
        for len in 0..bytes.len() {
            assert!(
                decode(&bytes[..len]).is_err(),
                "prefix of {len} bytes decoded"
            );
        }
        let mut trailing = bytes.clone();
        trailing.push(0);
        assert_eq!(
            decode(&trailing),
            Err(DecodeError("trailing bytes after entry"))
        );
        assert_eq!(decode(&[9]), Err(DecodeError("unknown entry tag")));
    }
}
