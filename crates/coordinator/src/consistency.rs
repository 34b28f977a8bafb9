//! Consistency levels: how many replica answers each level needs, and which levels each
//! kind of request accepts (with Cassandra's messages).
use ring::ReplicationStrategy;
use types::{Consistency, CqlError, CqlResult};

/// Replica answers needed for `cl` under `strategy` (Cassandra's ConsistencyLevel.blockFor).
pub fn block_for(strategy: &ReplicationStrategy, cl: Consistency, local_dc: &str) -> i32 {
    let total = strategy.total_replication_factor() as i32;
    let local = strategy.local_replication_factor(local_dc) as i32;
    match cl {
        Consistency::Any | Consistency::One | Consistency::LocalOne => 1,
        Consistency::Two => 2,
        Consistency::Three => 3,
        Consistency::Quorum | Consistency::Serial => total / 2 + 1,
        Consistency::All => total,
        Consistency::LocalQuorum | Consistency::LocalSerial => local / 2 + 1,
        Consistency::EachQuorum => strategy.each_quorum_block_for() as i32,
    }
}

pub fn validate_for_write(cl: Consistency) -> CqlResult<()> {
    match cl {
        Consistency::Serial | Consistency::LocalSerial => Err(CqlError::invalid(
            "You must use conditional updates for serializable writes",
        )),
        _ => Ok(()),
    }
}

pub fn validate_for_read(cl: Consistency) -> CqlResult<()> {
    match cl {
        Consistency::Any => Err(CqlError::invalid(
            "ANY ConsistencyLevel is only supported for writes",
        )),
        _ => Ok(()),
    }
}
