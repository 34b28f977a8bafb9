//! The predefined operations (`WRITE`, `READ`, `COUNTER_WRITE`, `COUNTER_READ`) on
//! prepared statements: each worker owns its generators and value buffers, so an operation
//! allocates only what the driver needs for the request. [`Predefined`] is their
//! [`Workload`]: operation ids are positions in the command's operation list.

use std::sync::Arc;

use scylla::client::session::Session;
use scylla::deserialize::row::ColumnIterator;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{Counter, CqlValue};

use crate::client::consistency;
use crate::cql;
use crate::dist::Sampler;
use crate::keys::RowGen;
use crate::runner::{Done, OpFuture, OpWorker, Workload};
use crate::settings::{OpKind, Settings};

/// The predefined commands' workload.
pub struct Predefined {
    pub settings: Arc<Settings>,
    pub statements: Arc<Statements>,
}

impl Workload for Predefined {
    fn worker(&self, seed: i64) -> Box<dyn OpWorker> {
        Box::new(PredefinedWorker {
            kinds: self.settings.command.ops.iter().map(|(k, _)| *k).collect(),
            statements: Arc::clone(&self.statements),
            inner: Worker::new(&self.settings, seed),
        })
    }
}

struct PredefinedWorker {
    kinds: Vec<OpKind>,
    statements: Arc<Statements>,
    inner: Worker,
}

impl OpWorker for PredefinedWorker {
    fn execute<'a>(&'a mut self, op: usize, seeds: &'a [i64]) -> OpFuture<'a> {
        Box::pin(async move {
            let kind = *self.kinds.get(op).ok_or("no such operation")?;
            let seed = *seeds.first().ok_or("no partition chosen")?;
            let rows = self.inner.execute(&self.statements, kind, seed).await?;
            Ok(Done {
                partitions: 1,
                rows,
            })
        })
    }

    fn keys(&mut self, seeds: &[i64]) -> String {
        let keys: Vec<String> = seeds
            .iter()
            .map(|&s| String::from_utf8_lossy(&self.inner.key(s)).into_owned())
            .collect();
        keys.join(", ")
    }
}

/// The prepared statements a run needs.
pub struct Statements {
    session: Arc<Session>,
    /// `insert[i]` writes the first `i + 1` columns (prepared for the counts `-col n=` allows).
    insert: Vec<Option<PreparedStatement>>,
    select: Option<PreparedStatement>,
    counter_add: Option<PreparedStatement>,
    counter_select: Option<PreparedStatement>,
}

impl Statements {
    pub async fn prepare(session: Arc<Session>, s: &Settings) -> Result<Statements, String> {
        let ks = &s.schema.keyspace;
        let names = &s.columns.names;
        let kinds: Vec<OpKind> = s.command.ops.iter().map(|(k, _)| *k).collect();
        let cl = consistency(&s.command.consistency);
        let prep = |q: String| {
            let session = Arc::clone(&session);
            async move {
                let mut p = session
                    .prepare(q.as_str())
                    .await
                    .map_err(|e| format!("Failed to prepare {q}: {e}"))?;
                p.set_consistency(cl);
                // As the Java driver cassandra-stress uses: results are decoded with the
                // metadata from PREPARE, so the server need not send it with every row set.
                p.set_use_cached_result_metadata(true);
                Ok::<_, String>(p)
            }
        };
        let mut insert: Vec<Option<PreparedStatement>> = vec![None; names.len()];
        if kinds.contains(&OpKind::Write) {
            let min = usize::try_from(s.columns.count.min()).unwrap_or(1).max(1);
            for n in min..=names.len() {
                insert[n - 1] = Some(prep(cql::insert(ks, &names[..n])).await?);
            }
        }
        let select = if kinds.contains(&OpKind::Read) {
            Some(prep(cql::select(ks, "standard1", names)).await?)
        } else {
            None
        };
        let counter_add = if kinds.contains(&OpKind::CounterWrite) {
            Some(prep(cql::counter_add(ks, names)).await?)
        } else {
            None
        };
        let counter_select = if kinds.contains(&OpKind::CounterRead) {
            Some(prep(cql::select(ks, "counter1", names)).await?)
        } else {
            None
        };
        Ok(Statements {
            session,
            insert,
            select,
            counter_add,
            counter_select,
        })
    }
}

/// One worker's generators and buffers.
pub struct Worker {
    gen: RowGen,
    values: Vec<Vec<u8>>,
    column_count: Sampler,
    add: Sampler,
}

impl Worker {
    pub fn new(s: &Settings, seed: i64) -> Worker {
        Worker {
            gen: RowGen::new(&s.columns.names, s.columns.size.clone()),
            values: vec![Vec::new(); s.columns.names.len()],
            column_count: Sampler::new(s.columns.count.clone(), seed),
            add: Sampler::new(s.command.add.clone(), seed ^ 0x5EED),
        }
    }

    /// The key of population seed `seed`, for error messages.
    pub fn key(&mut self, seed: i64) -> [u8; crate::keys::KEY_SIZE] {
        self.gen.key(seed)
    }

    /// Runs one operation once; `Ok(rows)` or a description of what went wrong.
    pub async fn execute(
        &mut self,
        st: &Statements,
        kind: OpKind,
        seed: i64,
    ) -> Result<u64, String> {
        let key = self.gen.key(seed);
        match kind {
            OpKind::Write => self.write(st, &key).await,
            OpKind::Read => self.read(st, &key).await,
            OpKind::CounterWrite => self.counter_write(st, &key).await,
            OpKind::CounterRead => counter_read(st, &key).await,
        }
    }

    async fn write(&mut self, st: &Statements, key: &[u8]) -> Result<u64, String> {
        let n = usize::try_from(self.column_count.next())
            .unwrap_or(1)
            .clamp(1, self.values.len());
        for c in 0..n {
            self.gen.value(key, c, &mut self.values[c]);
        }
        let mut params: Vec<&[u8]> = Vec::with_capacity(n + 1);
        params.push(key);
        params.extend(self.values[..n].iter().map(Vec::as_slice));
        let stmt = st
            .insert
            .get(n - 1)
            .and_then(Option::as_ref)
            .ok_or("no insert statement prepared")?;
        st.session
            .execute_unpaged(stmt, &params[..])
            .await
            .map_err(|e| e.to_string())?;
        Ok(1)
    }

    /// Reads the row and checks every returned column against the value a write gives it.
    async fn read(&mut self, st: &Statements, key: &[u8]) -> Result<u64, String> {
        let stmt = st.select.as_ref().ok_or("no select statement prepared")?;
        let result = st
            .session
            .execute_unpaged(stmt, (key,))
            .await
            .map_err(|e| e.to_string())?;
        let rows = result.into_rows_result().map_err(|e| e.to_string())?;
        let mut found = 0;
        for row in rows.rows::<ColumnIterator>().map_err(|e| e.to_string())? {
            found += 1;
            for (c, column) in row.map_err(|e| e.to_string())?.enumerate() {
                let column = column.map_err(|e| e.to_string())?;
                if let Some(actual) = column.slice.map(|s| s.as_slice()) {
                    self.gen.value(key, c, &mut self.values[c]);
                    if actual != self.values[c].as_slice() {
                        return Err(format!(
                            "column {} does not hold the value written",
                            column.spec.name()
                        ));
                    }
                }
            }
        }
        if found == 0 {
            return Err("row not found".into());
        }
        Ok(found)
    }

    async fn counter_write(&mut self, st: &Statements, key: &[u8]) -> Result<u64, String> {
        let stmt = st
            .counter_add
            .as_ref()
            .ok_or("no counter statement prepared")?;
        let mut params: Vec<CqlValue> = (0..self.values.len())
            .map(|_| CqlValue::Counter(Counter(self.add.next())))
            .collect();
        params.push(CqlValue::Blob(key.to_vec()));
        st.session
            .execute_unpaged(stmt, &params)
            .await
            .map_err(|e| e.to_string())?;
        Ok(1)
    }
}

async fn counter_read(st: &Statements, key: &[u8]) -> Result<u64, String> {
    let stmt = st
        .counter_select
        .as_ref()
        .ok_or("no counter select prepared")?;
    let result = st
        .session
        .execute_unpaged(stmt, (key,))
        .await
        .map_err(|e| e.to_string())?;
    let rows = result
        .into_rows_result()
        .map_err(|e| e.to_string())?
        .rows_num();
    if rows == 0 {
        return Err("row not found".into());
    }
    Ok(rows as u64)
}
