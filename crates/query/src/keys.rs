//! Partition keys (composite bytes + Murmur3 token) and byte-comparable clustering keys and
//! bounds for one table.
use std::sync::Arc;

use bytes::Bytes;
use schema::TableMetadata;
use storage::PartitionKey;
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
pub fn is_reversed(col: &schema::ColumnMetadata) -> bool {
    col.order == schema::ClusteringOrder::Desc
}
