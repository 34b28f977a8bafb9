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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn block_for_follows_cassandra() {
        let rf3 = ReplicationStrategy::Simple { rf: 3 };
        assert_eq!(block_for(&rf3, Consistency::One, "dc1"), 1);
        assert_eq!(block_for(&rf3, Consistency::Quorum, "dc1"), 2);
        assert_eq!(block_for(&rf3, Consistency::All, "dc1"), 3);
        assert_eq!(block_for(&rf3, Consistency::LocalQuorum, "dc1"), 2);
        let nts = ReplicationStrategy::NetworkTopology {
            dc_rf: BTreeMap::from([("dc1".to_string(), 3), ("dc2".to_string(), 5)]),
        };
        assert_eq!(block_for(&nts, Consistency::Quorum, "dc1"), 5);
        assert_eq!(block_for(&nts, Consistency::LocalQuorum, "dc2"), 3);
        assert_eq!(block_for(&nts, Consistency::EachQuorum, "dc1"), 5);
    }

    #[test]
    fn level_checks_match_cassandra() {
        assert!(validate_for_read(Consistency::Any).is_err());
        assert!(validate_for_write(Consistency::Serial).is_err());
        assert!(validate_for_write(Consistency::Any).is_ok());
    }
}
