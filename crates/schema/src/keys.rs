//! Partition keys (composite bytes + Murmur3 token) and byte-comparable clustering keys and
//! bounds for one table.
use std::sync::Arc;

use crate::TableMetadata;
use bytes::Bytes;
use mutation::PartitionKey;
use types::comparable::{decode_clustering, encode_bound, encode_clustering, BoundKind};
use types::{CqlError, CqlResult, CqlType};

/// What the query layer needs about a table's primary key, computed once per plan.
#[derive(Clone, Debug)]
pub struct KeyLayout {
    pub table: Arc<TableMetadata>,
    pub partition_types: Vec<CqlType>,
    /// Clustering column types with their `reversed` (DESC) flag.
    pub clustering_types: Vec<(CqlType, bool)>,
}

impl KeyLayout {
    pub fn new(table: Arc<TableMetadata>) -> KeyLayout {
        let partition_types = table
            .partition_key_columns()
            .map(|c| c.ty.clone())
            .collect();
        let clustering_types = table
            .clustering_columns()
            .map(|c| (c.ty.clone(), crate::keys::is_reversed(c)))
            .collect();
        KeyLayout {
            table,
            partition_types,
            clustering_types,
        }
    }

    pub fn partition_key(&self, components: &[Bytes]) -> PartitionKey {
        partition_key(components)
    }

    /// Splits a stored partition key back into its component values.
    pub fn split_partition_key(&self, key: &[u8]) -> CqlResult<Vec<Bytes>> {
        if self.partition_types.len() == 1 {
            return Ok(vec![Bytes::copy_from_slice(key)]);
        }
        ring::split_partition_key(key, self.partition_types.len())
            .map_err(|e| CqlError::Server(format!("corrupt partition key: {e}")))
    }

    pub fn clustering(&self, values: &[Bytes]) -> Bytes {
        let refs: Vec<Option<&[u8]>> = values.iter().map(|v| Some(v.as_ref())).collect();
        let mut out = Vec::with_capacity(values.iter().map(|v| v.len() + 2).sum::<usize>() + 1);
        encode_clustering(&self.clustering_types, &refs, &mut out);
        Bytes::from(out)
    }

    pub fn bound(&self, prefix: &[Bytes], kind: BoundKind) -> Bytes {
        let refs: Vec<Option<&[u8]>> = prefix.iter().map(|v| Some(v.as_ref())).collect();
        let mut out = Vec::with_capacity(prefix.iter().map(|v| v.len() + 2).sum::<usize>() + 1);
        encode_bound(&self.clustering_types, &refs, kind, &mut out);
        Bytes::from(out)
    }

    /// The clustering column values of a stored row.
    pub fn decode_clustering(&self, encoded: &[u8]) -> CqlResult<Vec<Option<Bytes>>> {
        if self.clustering_types.is_empty() {
            return Ok(Vec::new());
        }
        decode_clustering(&self.clustering_types, encoded)
            .map_err(|e| CqlError::Server(format!("corrupt clustering key: {e}")))
    }
}

/// The largest key Cassandra writes (its length is an unsigned short on disk).
pub const MAX_KEY_LENGTH: usize = 65_535;

/// Cassandra's checks of a partition key sent by a client: the values together, then the key
/// they compose (a composite key adds 3 bytes per component), must fit `MAX_KEY_LENGTH`, and
/// the key must not be empty.
pub fn check_partition_key(components: &[Bytes]) -> CqlResult<()> {
    let values = check_key_length(components)?;
    let composed = match components.len() {
        1 => values,
        n => values + 3 * n,
    };
    if composed == 0 {
        return Err(CqlError::invalid("Key may not be empty"));
    }
    key_length(composed)
}

/// The total length of key values (a partition key's or a clustering's), refused past
/// `MAX_KEY_LENGTH` as Cassandra refuses them.
pub fn check_key_length(values: &[Bytes]) -> CqlResult<usize> {
    let total = values.iter().map(Bytes::len).sum();
    key_length(total)?;
    Ok(total)
}

fn key_length(length: usize) -> CqlResult<()> {
    if length > MAX_KEY_LENGTH {
        return Err(CqlError::invalid(format!(
            "Key length of {length} is longer than maximum of {MAX_KEY_LENGTH}"
        )));
    }
    Ok(())
}

/// A partition key from its component values.
pub fn partition_key(components: &[Bytes]) -> PartitionKey {
    let key = if components.len() == 1 {
        components[0].clone()
    } else {
        let refs: Vec<&[u8]> = components.iter().map(|c| c.as_ref()).collect();
        ring::compose_partition_key(&refs)
    };
    PartitionKey {
        token: ring::murmur3_token(&key),
        key,
    }
}

/// Whether a clustering column is stored in descending order.
pub fn is_reversed(col: &crate::ColumnMetadata) -> bool {
    col.order == crate::ClusteringOrder::Desc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: usize) -> Bytes {
        Bytes::from(vec![b'x'; n])
    }

    fn message(result: CqlResult<()>) -> String {
        match result {
            Err(CqlError::Invalid(m)) => m,
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn partition_keys_must_be_neither_empty_nor_past_64_kib() {
        assert_eq!(
            message(check_partition_key(&[text(0)])),
            "Key may not be empty"
        );
        assert!(check_partition_key(&[text(0), text(0)]).is_ok());
        assert!(check_partition_key(&[text(65_535)]).is_ok());
        assert_eq!(
            message(check_partition_key(&[text(65_536)])),
            "Key length of 65536 is longer than maximum of 65535"
        );
        // The values fit, the composed key (3 bytes more per component) does not.
        assert_eq!(
            message(check_partition_key(&[text(30_000), text(35_535)])),
            "Key length of 65541 is longer than maximum of 65535"
        );
        assert_eq!(
            message(check_partition_key(&[text(40_000), text(40_000)])),
            "Key length of 80000 is longer than maximum of 65535"
        );
    }
}
