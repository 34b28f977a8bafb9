//! Whether this node has the disk space for the ranges a join would take: the bytes are
//! estimated from the sources' loads (what gossip says each holds on disk) and the share of
//! each source's ranges it would send; the free bytes are those of the file systems of the
//! data directories. Cassandra makes no such check before a bootstrap (it checks the disk only
//! for the streams of incremental repair); Helenus refuses before the join changes anything.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use crate::mover::{TokenRange, Transfer};

/// How many tokens `(start, end]` covers (an end of `i64::MIN` is the end of the ring).
pub fn width((start, end): TokenRange) -> u128 {
    let end = if end == i64::MIN {
        i128::from(i64::MAX) + 1
    } else {
        i128::from(end)
    };
    u128::try_from(end - i128::from(start)).unwrap_or(0)
}

fn total_width(ranges: &[TokenRange]) -> u128 {
    ranges.iter().map(|r| width(*r)).sum()
}

/// A source's part in the estimate: its load and, per keyspace, the ranges it replicates.
pub struct Source {
    pub load: u64,
    pub owned: BTreeMap<String, Vec<TokenRange>>,
}

/// The bytes `transfers` would bring: for each source, its load times the largest share of
/// a keyspace's ranges it replicates that it would send (the load is not split by keyspace,
/// so the largest share stands for all).
pub fn estimated_bytes(transfers: &[Transfer], sources: &BTreeMap<IpAddr, Source>) -> u64 {
    let mut share: BTreeMap<IpAddr, f64> = BTreeMap::new();
    for transfer in transfers {
        let Some(source) = sources.get(&transfer.source) else {
            continue;
        };
        let owned = source
            .owned
            .get(&transfer.keyspace)
            .map_or(0, |r| total_width(r));
        if owned == 0 {
            continue;
        }
        let part = (total_width(&transfer.ranges) as f64 / owned as f64).min(1.0);
        let best = share.entry(transfer.source).or_default();
        *best = best.max(part);
    }
    share
        .iter()
        .map(|(addr, part)| (sources[addr].load as f64 * part) as u64)
        .sum()
}

/// The free bytes of the file systems holding `dirs` (each file system counted once); `None`
/// when none can be read.
pub fn free_bytes(dirs: &[PathBuf]) -> Option<u64> {
    let mut seen = BTreeSet::new();
    let mut free = None;
    for dir in dirs {
        let Ok(meta) = std::fs::metadata(dir) else {
            continue;
        };
        if !seen.insert(meta.dev()) {
            continue;
        }
        if let Some(space) = storage::disk_space(dir) {
            free = Some(free.unwrap_or(0) + space.available);
        }
    }
    free
}

/// Refuses a `doing` (bootstrap, replace) that would bring more bytes than are free.
pub fn check_room(doing: &str, needed: u64, free: u64) -> Result<(), String> {
    if needed <= free {
        return Ok(());
    }
    Err(format!(
        "Not enough disk space to {doing}: the ranges this node would take hold about \
         {needed} bytes on their sources and its data directories have {free} bytes free"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    fn transfer(keyspace: &str, source: u8, ranges: Vec<TokenRange>) -> Transfer {
        Transfer {
            keyspace: keyspace.into(),
            source: ip(source),
            target: ip(9),
            ranges,
        }
    }

    #[test]
    fn widths_count_the_end_of_the_ring() {
        assert_eq!(width((0, 10)), 10);
        assert_eq!(width((i64::MAX - 1, i64::MIN)), 2);
        // from the start of the ring to its end: all of it
        assert_eq!(width((i64::MIN, i64::MIN)), 1 << 64);
    }

    #[test]
    fn the_estimate_is_each_sources_load_times_the_share_it_sends() {
        let owned = |ranges: Vec<TokenRange>| BTreeMap::from([("a".to_string(), ranges)]);
        let sources = BTreeMap::from([
            (
                ip(1),
                Source {
                    load: 1000,
                    owned: owned(vec![(0, 100), (200, 300)]),
                },
            ),
            (
                ip(2),
                Source {
                    load: 600,
                    owned: owned(vec![(100, 200)]),
                },
            ),
        ]);
        // a quarter of node 1's ranges, all of node 2's; a keyspace no source replicates
        // counts nothing
        let transfers = vec![
            transfer("a", 1, vec![(0, 50)]),
            transfer("a", 2, vec![(100, 200)]),
            transfer("b", 1, vec![(0, 100)]),
        ];
        assert_eq!(estimated_bytes(&transfers, &sources), 250 + 600);
        assert_eq!(estimated_bytes(&[], &sources), 0);
    }

    #[test]
    fn a_join_is_refused_when_the_estimate_exceeds_the_free_bytes() {
        assert!(check_room("bootstrap", 10, 10).is_ok());
        let refused = check_room("bootstrap", 11, 10).unwrap_err();
        assert!(refused.contains("about 11 bytes"), "{refused}");
        assert!(refused.contains("10 bytes free"), "{refused}");
        let dir = tempfile::tempdir().unwrap();
        let dirs = vec![dir.path().to_path_buf(), dir.path().join(".")];
        let free = free_bytes(&dirs).expect("a readable directory");
        assert!(free > 0);
        assert!(free_bytes(&[dir.path().join("missing")]).is_none());
    }
}
