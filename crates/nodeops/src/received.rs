//! The ranges a join has received so far, kept in a file so that a join resumed after a
//! restart or a failed stream fetches only the others (Cassandra keeps them in
//! `system.available_ranges_v2`). One line per range: `keyspace start end`; written whole and
//! synced after each source's ranges arrive, removed when the join ends or starts afresh.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::mover::Transfer;
use mutation::TokenRange;

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Received {
    ranges: BTreeMap<String, Vec<TokenRange>>,
}

/// The right end of a range as a number that orders the end of the ring last.
fn end_key(end: i64) -> i128 {
    if end == i64::MIN {
        i128::from(i64::MAX) + 1
    } else {
        i128::from(end)
    }
}

impl Received {
    /// The ranges recorded in `path`; none when it is missing, and a line that does not parse
    /// is ignored (its range is fetched again).
    pub fn load(path: &Path) -> Received {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Received::default();
        };
        let mut received = Received::default();
        for line in text.lines() {
            let mut fields = line.split(' ');
            let parsed = (|| {
                let keyspace = fields.next()?;
                let start = fields.next()?.parse().ok()?;
                let end = fields.next()?.parse().ok()?;
                Some((keyspace.to_string(), (start, end)))
            })();
            match parsed {
                Some((keyspace, range)) => received.ranges.entry(keyspace).or_default().push(range),
                None => tracing::warn!("ignoring a bad line of {}: {line:?}", path.display()),
            }
        }
        received
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.values().all(Vec::is_empty)
    }

    /// Adds what `transfers` brought.
    pub fn add(&mut self, transfers: &[Transfer]) {
        for transfer in transfers {
            let ranges = self.ranges.entry(transfer.keyspace.clone()).or_default();
            ranges.extend(transfer.ranges.iter().copied());
        }
    }

    /// Whether `range` of `keyspace` lies within one received range.
    fn has(&self, keyspace: &str, (start, end): TokenRange) -> bool {
        self.ranges.get(keyspace).is_some_and(|ranges| {
            ranges
                .iter()
                .any(|(s, e)| *s <= start && end_key(end) <= end_key(*e))
        })
    }

    /// `transfers` without the ranges already received (and without the transfers left empty).
    pub fn remaining(&self, transfers: Vec<Transfer>) -> Vec<Transfer> {
        transfers
            .into_iter()
            .filter_map(|mut t| {
                t.ranges.retain(|r| !self.has(&t.keyspace, *r));
                (!t.ranges.is_empty()).then_some(t)
            })
            .collect()
    }

    /// Writes the ranges to `path` (a temporary file renamed over it, synced).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut text = String::new();
        for (keyspace, ranges) in &self.ranges {
            for (start, end) in ranges {
                text.push_str(&format!("{keyspace} {start} {end}\n"));
            }
        }
        let temporary = temporary(path);
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    }
}

fn temporary(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::*;

    fn transfer(keyspace: &str, source: u8, ranges: Vec<TokenRange>) -> Transfer {
        Transfer {
            keyspace: keyspace.into(),
            source: IpAddr::from([127, 0, 0, source]),
            target: IpAddr::from([127, 0, 0, 9]),
            ranges,
        }
    }

    #[test]
    fn received_ranges_survive_a_restart_and_are_not_fetched_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("received");
        assert!(Received::load(&path).is_empty());
        let mut received = Received::default();
        received.add(&[transfer("a", 1, vec![(0, 100), (500, i64::MIN)])]);
        received.save(&path).unwrap();
        let loaded = Received::load(&path);
        assert_eq!(loaded, received);
        let planned = vec![
            transfer("a", 2, vec![(0, 50), (100, 200), (600, i64::MIN)]),
            transfer("a", 3, vec![(10, 20)]),
            transfer("b", 1, vec![(0, 100)]),
        ];
        assert_eq!(
            loaded.remaining(planned),
            vec![
                transfer("a", 2, vec![(100, 200)]),
                transfer("b", 1, vec![(0, 100)])
            ]
        );
        std::fs::write(&path, "a 0 100\nnot a line\n").unwrap();
        assert_eq!(
            Received::load(&path).remaining(vec![transfer("a", 1, vec![(0, 100)])]),
            vec![]
        );
    }
}
