//! The user profile's operations on prepared statements: `insert` writes the selected rows
//! of one or more generated partitions (one statement, or a LOGGED/UNLOGGED batch), and each
//! named query binds its markers from a generated row of the partition (`samerow`) or from
//! any of its rows, one per marker (`multirow`). With `visits`, an insert writes each
//! partition's next slice of rows instead of all of them.

use std::sync::Arc;

use scylla::client::session::Session;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;

use super::profile::{BatchKind, Ratio, INSERT};
use super::rows::TableGen;
use super::visits::{Draws, Pool, Visit};
use crate::dist::{DistSpec, Sampler};
use crate::javarand::JavaRandom;
use crate::runner::{Done, OpFuture, OpWorker, Workload};

/// A prepared query and, per bind marker, the column (in insert order) it takes.
pub struct Query {
    pub statement: PreparedStatement,
    pub columns: Vec<usize>,
    pub multirow: bool,
}

/// Everything workers share.
pub struct UserWorkload {
    pub session: Arc<Session>,
    pub table: TableGen,
    pub insert: PreparedStatement,
    pub batch: BatchKind,
    pub partitions: DistSpec,
    pub select: Ratio,
    pub pool: Pool,
    pub queries: Vec<Query>,
}

impl Workload for Arc<UserWorkload> {
    fn worker(&self, seed: i64) -> Box<dyn OpWorker> {
        Box::new(UserWorker {
            shared: Arc::clone(self),
            table: self.table.clone(),
            rng: JavaRandom::new(seed),
            partitions: Sampler::new(self.partitions.clone(), seed ^ 0x5EED),
            select: Sampler::new(self.select.dist.clone(), !seed),
            draws: Draws::new(&self.pool, seed),
            revisits: Vec::new(),
        })
    }
}

struct UserWorker {
    shared: Arc<UserWorkload>,
    table: TableGen,
    rng: JavaRandom,
    partitions: Sampler,
    select: Sampler,
    draws: Draws,
    /// Part-written partitions the next insert continues (chosen by `seeds_wanted`).
    revisits: Vec<Visit>,
}

impl OpWorker for UserWorker {
    /// For an insert, each partition wanted is first offered to the pool of part-written
    /// partitions; only the rest are new partitions from the population.
    fn seeds_wanted(&mut self, op: usize) -> usize {
        if op != INSERT {
            return 1;
        }
        let wanted = usize::try_from(self.partitions.next()).unwrap_or(1);
        self.revisits.clear();
        for _ in 0..wanted {
            if let Some(v) = self.draws.revisit(&self.shared.pool) {
                self.revisits.push(v);
            }
        }
        wanted - self.revisits.len()
    }

    fn execute<'a>(&'a mut self, op: usize, seeds: &'a [i64]) -> OpFuture<'a> {
        Box::pin(async move {
            if op == INSERT {
                let mut visits = std::mem::take(&mut self.revisits);
                visits.extend(seeds.iter().map(|&s| self.draws.first(s)));
                self.insert(&visits).await
            } else {
                let seed = *seeds.first().ok_or("no partition chosen")?;
                self.query(op - 1, seed).await
            }
        })
    }

    fn keys(&mut self, seeds: &[i64]) -> String {
        let keys: Vec<String> = seeds
            .iter()
            .map(|&s| {
                let values: Vec<String> = (0..self.table.partition.len())
                    .map(|c| format!("{:?}", self.table.value(c, s, &[])))
                    .collect();
                values.join(":")
            })
            .collect();
        keys.join(", ")
    }
}

impl UserWorker {
    /// The rows an insert writes: each row of the visit's slice of its partition with the
    /// partition's select chance, and at least one row per partition; each visit is then
    /// handed back to the pool.
    fn selected_rows(&mut self, visits: &[Visit]) -> Vec<Vec<CqlValue>> {
        let mut out = Vec::new();
        for visit in visits {
            let seed = visit.seed;
            let chance = self.select.next() as f64 / self.shared.select.divisor;
            let rows = self.table.rows(seed);
            let slice = &rows[visit.slice(rows.len())];
            let before = out.len();
            for path in slice {
                if self.rng.next_double() < chance {
                    out.push(self.table.row(seed, path));
                }
            }
            if out.len() == before {
                let pick = (self.rng.next_double() * slice.len() as f64) as usize;
                if let Some(path) = slice.get(pick.min(slice.len().saturating_sub(1))) {
                    out.push(self.table.row(seed, path));
                }
            }
            if self.shared.pool.active() {
                self.shared.pool.visited(*visit, rows.len());
            }
        }
        out
    }

    async fn insert(&mut self, visits: &[Visit]) -> Result<Done, String> {
        let rows = self.selected_rows(visits);
        let shared = &self.shared;
        if let [row] = rows.as_slice() {
            shared
                .session
                .execute_unpaged(&shared.insert, row)
                .await
                .map_err(|e| e.to_string())?;
        } else {
            let mut batch = Batch::new(match shared.batch {
                BatchKind::Logged => BatchType::Logged,
                BatchKind::Unlogged => BatchType::Unlogged,
            });
            if let Some(cl) = shared.insert.get_consistency() {
                batch.set_consistency(cl);
            }
            for _ in &rows {
                batch.append_statement(shared.insert.clone());
            }
            shared
                .session
                .batch(&batch, &rows)
                .await
                .map_err(|e| e.to_string())?;
        }
        Ok(Done {
            partitions: visits.len() as u64,
            rows: rows.len() as u64,
        })
    }

    async fn query(&mut self, index: usize, seed: i64) -> Result<Done, String> {
        let shared = Arc::clone(&self.shared);
        let q = shared.queries.get(index).ok_or("no such query")?;
        let rows = self.table.rows(seed);
        let mut pick = || {
            let i = (self.rng.next_double() * rows.len() as f64) as usize;
            i.min(rows.len().saturating_sub(1))
        };
        let same = pick();
        let choices: Vec<usize> = q
            .columns
            .iter()
            .map(|_| if q.multirow { pick() } else { same })
            .collect();
        let empty = Vec::new();
        let values: Vec<CqlValue> = q
            .columns
            .iter()
            .zip(choices)
            .map(|(&c, r)| self.table.value(c, seed, rows.get(r).unwrap_or(&empty)))
            .collect();
        let result = shared
            .session
            .execute_unpaged(&q.statement, &values)
            .await
            .map_err(|e| e.to_string())?;
        let found = result
            .into_rows_result()
            .map_err(|e| e.to_string())?
            .rows_num();
        Ok(Done {
            partitions: 1,
            rows: found as u64,
        })
    }
}
