//! Validation, as Cassandra's `Validator`: the Merkle tree of one table's token range built from
//! this node's data — memtables and SSTables merged and purged as a compaction would
//! ([`Storage::validation_page`]), tombstones included — a page of partitions at a time.

use std::ops::Bound;

use mutation::{KeyRange, PartitionPosition, TokenRange};
use storage::{Storage, StorageError};

use crate::digest;
use crate::merkle::MerkleTree;
use crate::messages::ValidationRequest;

/// Partitions read per page.
const PAGE: usize = 512;

/// The tree a validation request asks for: its table's data of its scope over its range, at
/// its depth, as of its `now` (seconds). Blocking: run it off the async threads.
pub fn build(storage: &Storage, request: &ValidationRequest) -> Result<MerkleTree, StorageError> {
    let mut tree = MerkleTree::new(request.range, request.depth);
    for mut keys in key_ranges(request.range) {
        loop {
            let page =
                storage.validation_page(request.table, &keys, request.scope, request.now, PAGE)?;
            for (key, data) in &page.partitions {
                tree.add(key.token, &digest::partition(key, data));
            }
            match page.stopped_at {
                Some(last) => keys.start = Bound::Excluded(PartitionPosition::Key(last)),
                None => break,
            }
        }
    }
    Ok(tree)
}

/// The partitions of the token range (left, right], as one or two key ranges (a range
/// wrapping past the end of the ring is cut there).
pub fn key_ranges((left, right): TokenRange) -> Vec<KeyRange> {
    let after = |t: i64| Bound::Excluded(PartitionPosition::Token(t));
    let upto = |t: i64| Bound::Included(PartitionPosition::Token(t));
    let to_end = KeyRange {
        start: after(left),
        end: Bound::Unbounded,
    };
    if right == i64::MIN {
        return vec![to_end];
    }
    if left < right {
        return vec![KeyRange {
            start: after(left),
            end: upto(right),
        }];
    }
    let from_start = KeyRange {
        start: Bound::Unbounded,
        end: upto(right),
    };
    vec![to_end, from_start]
}
