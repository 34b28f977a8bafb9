//! The rows of a generated partition, as cassandra-stress's `PartitionGenerator` lays them
//! out: the partition's seed gives the partition key values; each clustering column's
//! `cluster` distribution, seeded from its parent, says how many values it has under that
//! parent, so a partition is a tree whose leaves are its rows. A row is the path of seeds
//! down the tree; the leaf's seed also seeds the regular columns. Everything is a pure
//! function of the partition seed, so a query regenerates exactly the rows an insert wrote.

use scylla::value::CqlValue;

use super::values::ValueGen;
use crate::dist::Sampler;

/// At most this many rows of one partition are generated (a guard against huge trees).
pub const MAX_ROWS: usize = 100_000;

/// A clustering column: its values and its fan-out distribution.
#[derive(Debug, Clone)]
pub struct Clustering {
    pub values: ValueGen,
    pub cluster: Sampler,
}

/// One worker's generator of the table's rows; columns are partition key, clustering,
/// then regular, which is also the order of the insert statement's columns.
#[derive(Debug, Clone)]
pub struct TableGen {
    pub partition: Vec<ValueGen>,
    pub clustering: Vec<Clustering>,
    pub regular: Vec<ValueGen>,
}

/// A row: the seed of each clustering level, root first.
pub type RowPath = Vec<i64>;

/// The seed of child `i` of the node seeded `parent` (a SplitMix64 step).
fn child(parent: i64, i: u64) -> i64 {
    let mut z = (parent as u64) ^ (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as i64
}

impl TableGen {
    pub fn width(&self) -> usize {
        self.partition.len() + self.clustering.len() + self.regular.len()
    }

    /// Every row of the partition of `seed` (at most [`MAX_ROWS`]).
    pub fn rows(&mut self, seed: i64) -> Vec<RowPath> {
        let mut rows = Vec::new();
        let mut path = Vec::with_capacity(self.clustering.len());
        self.descend(seed, &mut path, &mut rows);
        rows
    }

    fn descend(&mut self, parent: i64, path: &mut RowPath, rows: &mut Vec<RowPath>) {
        let level = path.len();
        if level == self.clustering.len() {
            rows.push(path.clone());
            return;
        }
        let c = &mut self.clustering[level];
        c.cluster.set_seed(parent);
        let fan_out = c.cluster.next().max(1) as u64;
        for i in 0..fan_out {
            if rows.len() >= MAX_ROWS {
                return;
            }
            path.push(child(parent, i));
            self.descend(child(parent, i), path, rows);
            path.pop();
        }
    }

    /// The value of column `column` (in insert order) in the row `path` of partition `seed`.
    pub fn value(&mut self, column: usize, seed: i64, path: &[i64]) -> CqlValue {
        let (pk, ck) = (self.partition.len(), self.clustering.len());
        if column < pk {
            self.partition[column].value(seed)
        } else if column < pk + ck {
            self.clustering[column - pk].values.value(path[column - pk])
        } else {
            let leaf = path.last().copied().unwrap_or(seed);
            self.regular[column - pk - ck].value(leaf)
        }
    }

    /// Every column's value in the row `path` of partition `seed`.
    pub fn row(&mut self, seed: i64, path: &[i64]) -> Vec<CqlValue> {
        (0..self.width())
            .map(|c| self.value(c, seed, path))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use scylla::cluster::metadata::{ColumnType, NativeType};

    use super::*;
    use crate::dist::DistSpec;
    use crate::user::profile::ColumnSpec;

    fn gen() -> TableGen {
        let int = ColumnType::Native(NativeType::Int);
        let spec = ColumnSpec::default();
        let clustering = |name: &str, fan: DistSpec| Clustering {
            values: ValueGen::new(name, &int, &spec).expect("int"),
            cluster: Sampler::new(fan, 0),
        };
        TableGen {
            partition: vec![ValueGen::new("k", &int, &spec).expect("int")],
            clustering: vec![
                clustering("a", DistSpec::uniform(2, 5)),
                clustering("b", DistSpec::fixed(3)),
            ],
            regular: vec![ValueGen::new("v", &int, &spec).expect("int")],
        }
    }

    #[test]
    fn partitions_are_trees_regenerated_identically() {
        let mut g = gen();
        let rows = g.rows(42);
        assert!(
            rows.len().is_multiple_of(3) && (6..=15).contains(&rows.len()),
            "{}",
            rows.len()
        );
        assert_eq!(rows, g.rows(42));
        let first = g.row(42, &rows[0]);
        assert_eq!(first.len(), 4);
        assert_eq!(first, g.row(42, &rows[0]));
        // Rows under one parent share the first clustering value.
        assert_eq!(g.value(1, 42, &rows[0]), g.value(1, 42, &rows[1]));
        assert_ne!(g.value(2, 42, &rows[0]), g.value(2, 42, &rows[1]));
        assert_ne!(g.value(0, 42, &rows[0]), g.value(0, 43, &rows[0]));
    }
}
