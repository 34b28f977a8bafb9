//! Where data lives, as this node's ring and schema say: the replicas of a partition key given
//! as text (`nodetool getendpoints`) and every token range with its replicas (`describering`).

use std::net::IpAddr;

use bytes::Bytes;
use ring::{Endpoint, Token};
use types::literal::{parse_literal, LiteralKind};
use types::{CqlError, CqlResult, CqlType};

use crate::keys::partition_key;
use crate::processor::QueryProcessor;

/// One token range (start exclusive, end inclusive) and its replicas, primary first.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeReplicas {
    pub start: i64,
    pub end: i64,
    pub replicas: Vec<Endpoint>,
}

/// The literal kinds a key component may be written as, tried in order (Cassandra's
/// `AbstractType.fromString` reads each type's usual text form).
const KINDS: [LiteralKind; 6] = [
    LiteralKind::Integer,
    LiteralKind::Float,
    LiteralKind::Boolean,
    LiteralKind::Uuid,
    LiteralKind::Duration,
    LiteralKind::String,
];

impl QueryProcessor {
    /// The replicas of the partition `key` of `keyspace.table`: its components separated by
    /// `:` when the partition key has several columns, as nodetool takes them.
    pub fn endpoints(&self, keyspace: &str, table: &str, key: &str) -> CqlResult<Vec<IpAddr>> {
        let state = self.schema();
        let meta = state.schema.table(keyspace, table).ok_or_else(|| {
            CqlError::invalid(format!(
                "Table '{table}' in keyspace '{keyspace}' does not exist"
            ))
        })?;
        let types: Vec<&CqlType> = meta.partition_key_columns().map(|c| &c.ty).collect();
        let texts: Vec<&str> = if types.len() == 1 {
            vec![key]
        } else {
            key.split(':').collect()
        };
        if texts.len() != types.len() {
            return Err(CqlError::invalid(format!(
                "The key '{key}' has {} components; the partition key of {keyspace}.{table} has {}",
                texts.len(),
                types.len()
            )));
        }
        let components = types
            .iter()
            .zip(texts)
            .map(|(ty, text)| component(ty, text))
            .collect::<CqlResult<Vec<Bytes>>>()?;
        let token = partition_key(&components).token;
        let ring = self.coordinator.topology().ring();
        let replicas = self.strategy(keyspace).replicas(Token(token), &ring);
        Ok(replicas.into_iter().map(|e| e.addr).collect())
    }

    /// Every token range of the ring with its replicas under `keyspace`'s replication.
    pub fn ranges(&self, keyspace: &str) -> CqlResult<Vec<RangeReplicas>> {
        let state = self.schema();
        if state.schema.keyspace(keyspace).is_none() {
            return Err(CqlError::invalid(format!(
                "The keyspace {keyspace}, does not exist"
            )));
        }
        let strategy = self.strategy(keyspace);
        let ring = self.coordinator.topology().ring();
        Ok(ring
            .ranges()
            .into_iter()
            .map(|(start, end)| RangeReplicas {
                start: start.0,
                end: end.0,
                replicas: strategy.replicas(end, &ring),
            })
            .collect())
    }
}

/// One key component's serialized value, from its text.
fn component(ty: &CqlType, text: &str) -> CqlResult<Bytes> {
    let parsed = if matches!(ty, CqlType::Native(types::NativeType::Blob)) {
        parse_literal(ty, LiteralKind::Hex, &format!("0x{text}"))
    } else {
        KINDS
            .iter()
            .map(|kind| parse_literal(ty, *kind, text))
            .find(Result::is_ok)
            .unwrap_or_else(|| parse_literal(ty, LiteralKind::String, text))
    };
    parsed
        .map(|value| value.to_bytes())
        .map_err(|e| CqlError::invalid(format!("cannot read '{text}' as {}: {e}", ty.cql_name())))
}
