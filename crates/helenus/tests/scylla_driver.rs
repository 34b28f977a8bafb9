//! Drives a real `helenus server` process on loopback with the Rust `scylla` driver.
//!
//! Covers what the driver itself does on connect (system.local, system.peers, schema
//! metadata from system_schema, schema agreement after DDL), prepared statements with many
//! types, a composite partition key and a DESC clustering column, the partition key indexes
//! the driver uses for token-aware routing (and that its token agrees with `token()`),
//! paging, batches, counters, an error case, and a SIGTERM restart on the same data dir
//! after which everything reads back (also through the session that was connected before
//! the restart, whose prepared statements the new process no longer knows).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::cluster::metadata::{ColumnKind, ColumnType, NativeType, Strategy};
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::response::PagingState;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{Counter, CqlTimestamp};
use uuid::Uuid;

use common::Node;

const KS: &str = "drv";

/// One row of `drv.all_types`, in the column order of `SELECT_ALL`.
type Row = (
    String,       // tenant   (partition key, part 0)
    i32,          // bucket   (partition key, part 1)
    i64,          // seq      (clustering, DESC)
    String,       // t
    Vec<u8>,      // b
    Uuid,         // u
    CqlTimestamp, // ts
    bool,         // flag
    f64,          // d
    Option<i32>,  // i (null for one row)
);

const SELECT_ALL: &str = "SELECT tenant, bucket, seq, t, b, u, ts, flag, d, i FROM drv.all_types";

/// Bind markers deliberately not in primary-key order: bucket is marker 2, tenant marker 9.
const INSERT: &str = "INSERT INTO drv.all_types (seq, t, bucket, b, u, ts, flag, d, i, tenant) \
                      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

fn expected_row(tenant: &str, bucket: i32, n: i64) -> Row {
    (
        tenant.to_string(),
        bucket,
        n,
        format!("row-{bucket}-{n} ✓"),
        vec![n as u8; (n % 5) as usize], // n % 5 == 0 gives an empty (not null) blob
        Uuid::from_u128(0x1234_0000_0000_0000_0000_0000_0000_0000 + n as u128),
        CqlTimestamp(1_700_000_000_000 + n * 1000 + bucket as i64),
        n % 2 == 0,
        n as f64 * 0.5 - 3.25,
        if n == 42 { None } else { Some(-3 * n as i32) },
    )
}

/// (tenant, bucket, seq) of every row written: one big partition and ten small ones.
fn all_keys() -> Vec<(&'static str, i32, i64)> {
    let mut keys: Vec<_> = (0..100).map(|n| ("acme", 1, n)).collect();
    for bucket in 2..12 {
        for n in 0..3 {
            keys.push(("globex", bucket, n));
        }
    }
    keys
}

async fn connect(node: &Node) -> Session {
    SessionBuilder::new()
        .known_node_addr(node.addr())
        .connection_timeout(Duration::from_secs(5))
        .build()
        .await
        .unwrap_or_else(|e| panic!("driver failed to connect: {e:?}\n{}", node.log_tail()))
}

async fn exec(session: &Session, cql: &str) {
    session
        .query_unpaged(cql, ())
        .await
        .unwrap_or_else(|e| panic!("{cql}: {e:?}"));
}

async fn select_rows<T>(session: &Session, cql: &str) -> Vec<T>
where
    T: for<'f, 'm> scylla::deserialize::row::DeserializeRow<'f, 'm>,
{
    session
        .query_unpaged(cql, ())
        .await
        .unwrap_or_else(|e| panic!("{cql}: {e:?}"))
        .into_rows_result()
        .unwrap_or_else(|e| panic!("{cql}: not a rows result: {e:?}"))
        .rows::<T>()
        .unwrap_or_else(|e| panic!("{cql}: type check: {e:?}"))
        .collect::<Result<Vec<T>, _>>()
        .unwrap_or_else(|e| panic!("{cql}: deserialize: {e:?}"))
}

/// Every row of the big partition, fetched page by page with `execute_single_page`.
/// Returns the rows and the number of rows in each page.
async fn read_partition_paged(
    session: &Session,
    select: &PreparedStatement,
    tenant: &str,
    bucket: i32,
) -> (Vec<Row>, Vec<usize>) {
    let mut rows = Vec::new();
    let mut pages = Vec::new();
    let mut state = PagingState::start();
    loop {
        let (result, response) = session
            .execute_single_page(select, (tenant, bucket), state)
            .await
            .unwrap_or_else(|e| panic!("page {}: {e:?}", pages.len()));
        let result = result.into_rows_result().expect("rows result");
        pages.push(result.rows_num());
        for row in result.rows::<Row>().expect("type check") {
            rows.push(row.expect("deserialize"));
        }
        match response.into_paging_control_flow() {
            ControlFlow::Break(()) => break,
            ControlFlow::Continue(next) => state = next,
        }
        assert!(pages.len() < 100, "paging does not end");
    }
    (rows, pages)
}

/// Checks everything the test wrote, through `session`.
async fn verify_everything(session: &Session, what: &str) {
    // The big partition, paged by 7: 14 full pages and one of 2, newest seq first.
    let mut select = session
        .prepare(format!("{SELECT_ALL} WHERE tenant = ? AND bucket = ?"))
        .await
        .expect("prepare select");
    select.set_page_size(7);
    let (rows, pages) = read_partition_paged(session, &select, "acme", 1).await;
    let expected: Vec<Row> = (0..100).rev().map(|n| expected_row("acme", 1, n)).collect();
    assert_eq!(
        rows.len(),
        100,
        "{what}: rows in partition (pages {pages:?})"
    );
    assert_eq!(rows, expected, "{what}: partition contents / DESC order");
    assert!(
        pages.iter().all(|&p| p <= 7),
        "{what}: a page larger than page size 7: {pages:?}"
    );
    assert_eq!(pages.iter().sum::<usize>(), 100, "{what}: pages {pages:?}");
    assert!(
        pages.len() >= 15,
        "{what}: expected >= 15 pages, got {pages:?}"
    );

    // The whole table through the driver's pager (query_iter, page size 7): 130 rows, each
    // partition contiguous and in DESC clustering order, partitions in token order.
    let mut stmt = scylla::statement::Statement::new(format!(
        "SELECT token(tenant, bucket), tenant, bucket, seq FROM {KS}.all_types"
    ));
    stmt.set_page_size(7);
    let mut stream = session
        .query_iter(stmt, ())
        .await
        .expect("query_iter")
        .rows_stream::<(i64, String, i32, i64)>()
        .expect("rows_stream type check");
    let mut scanned = Vec::new();
    while let Some(row) = stream.try_next().await.expect("next row") {
        scanned.push(row);
    }
    assert_eq!(scanned.len(), 130, "{what}: full-table scan row count");
    assert!(
        scanned.windows(2).all(|w| w[0].0 <= w[1].0),
        "{what}: full scan not in token order"
    );
    let mut by_partition: BTreeMap<(String, i32), Vec<i64>> = BTreeMap::new();
    for (_, tenant, bucket, seq) in &scanned {
        by_partition
            .entry((tenant.clone(), *bucket))
            .or_default()
            .push(*seq);
    }
    assert_eq!(by_partition.len(), 11, "{what}: partitions in full scan");
    for ((tenant, bucket), seqs) in &by_partition {
        let n = if tenant == "acme" { 100 } else { 3 };
        let want: Vec<i64> = (0..n).rev().collect();
        assert_eq!(
            seqs, &want,
            "{what}: partition ({tenant}, {bucket}) in scan"
        );
    }
    // One small partition read back in full, all types.
    let small = select_rows::<Row>(
        session,
        &format!("{SELECT_ALL} WHERE tenant = 'globex' AND bucket = 7"),
    )
    .await;
    let want: Vec<Row> = (0..3).rev().map(|n| expected_row("globex", 7, n)).collect();
    assert_eq!(small, want, "{what}: small partition");

    // The batch.
    let kv = select_rows::<(i32, String)>(session, &format!("SELECT k, v FROM {KS}.kv")).await;
    let kv: BTreeMap<i32, String> = kv.into_iter().collect();
    let want: BTreeMap<i32, String> = [(1, "one"), (2, "two"), (3, "three"), (4, "four")]
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
    assert_eq!(kv, want, "{what}: rows written by the batch");

    // The counters.
    let counters =
        select_rows::<(String, Counter)>(session, &format!("SELECT k, c FROM {KS}.counters")).await;
    let counters: BTreeMap<String, i64> = counters.into_iter().map(|(k, c)| (k, c.0)).collect();
    let want: BTreeMap<String, i64> = [("hits", 13), ("misses", -2), ("other", 100)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(counters, want, "{what}: counters");
}

/// Deviations from Cassandra that the test works around so that it can go on covering the
/// rest; the test fails at the end if there were any.
#[derive(Default)]
struct Bugs(Vec<String>);

impl Bugs {
    fn report(&mut self, what: String) {
        eprintln!("HELENUS BUG: {what}");
        self.0.push(what);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn scylla_driver_end_to_end() {
    let started = Instant::now();
    let mut bugs = Bugs::default();
    // The driver logs what it could not make sense of (system tables, schema rows) as warnings.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("scylla=warn")),
        )
        .with_test_writer()
        .try_init();
    let dir = tempfile::Builder::new()
        .prefix("helenus-scylla-")
        .tempdir()
        .expect("tempdir");
    let mut node = Node::new(dir.path());
    node.start();

    // ---- connect: the driver reads system.local, system.peers and system_schema.* ----
    let session = connect(&node).await;
    let state = session.get_cluster_state();
    let nodes = state.get_nodes_info();
    assert_eq!(nodes.len(), 1, "driver sees one node: {nodes:?}");
    assert_eq!(
        nodes[0].address.ip().to_string(),
        "127.0.0.1",
        "node address"
    );
    assert_eq!(nodes[0].address.port(), node.port, "node port");
    assert!(
        nodes[0].datacenter.is_some(),
        "system.local data_center is read by the driver: {:?}",
        nodes[0]
    );
    assert!(
        nodes[0].is_connected(),
        "driver has a connection pool to the node"
    );
    for ks in ["system", "system_schema"] {
        assert!(
            state.get_keyspace(ks).is_some(),
            "driver's schema metadata lacks keyspace {ks}; has {:?}",
            state.keyspaces_iter().map(|(k, _)| k).collect::<Vec<_>>()
        );
    }
    let version = session
        .check_schema_agreement()
        .await
        .expect("check_schema_agreement");
    assert!(version.is_some(), "single node must be in schema agreement");

    // ---- schema (the driver awaits schema agreement after each DDL) ----
    exec(
        &session,
        "CREATE KEYSPACE drv WITH replication = \
         {'class': 'SimpleStrategy', 'replication_factor': 1}",
    )
    .await;
    exec(
        &session,
        "CREATE TABLE drv.all_types (
            tenant text, bucket int, seq bigint,
            t text, b blob, u uuid, ts timestamp, flag boolean, d double, i int,
            PRIMARY KEY ((tenant, bucket), seq)
         ) WITH CLUSTERING ORDER BY (seq DESC)",
    )
    .await;
    exec(&session, "CREATE TABLE drv.kv (k int PRIMARY KEY, v text)").await;
    exec(
        &session,
        "CREATE TABLE drv.counters (k text PRIMARY KEY, c counter)",
    )
    .await;

    // The driver's metadata view of the new schema (from system_schema.*).
    session.refresh_metadata().await.expect("refresh_metadata");
    let state = session.get_cluster_state();
    let ks = state
        .get_keyspace(KS)
        .unwrap_or_else(|| panic!("driver metadata lacks keyspace {KS}"));
    match &ks.strategy {
        Strategy::SimpleStrategy { replication_factor } => {
            assert_eq!(*replication_factor, 1, "replication factor")
        }
        other => panic!("keyspace strategy read as {other:?}"),
    }
    let table = ks.tables.get("all_types").unwrap_or_else(|| {
        panic!(
            "driver metadata lacks table all_types: {:?}",
            ks.tables.keys()
        )
    });
    assert_eq!(table.partition_key, ["tenant", "bucket"], "partition key");
    assert_eq!(table.clustering_key, ["seq"], "clustering key");
    assert_eq!(
        table.columns.len(),
        10,
        "columns: {:?}",
        table.columns.keys()
    );
    for (name, typ) in [
        ("tenant", NativeType::Text),
        ("bucket", NativeType::Int),
        ("seq", NativeType::BigInt),
        ("t", NativeType::Text),
        ("b", NativeType::Blob),
        ("u", NativeType::Uuid),
        ("ts", NativeType::Timestamp),
        ("flag", NativeType::Boolean),
        ("d", NativeType::Double),
        ("i", NativeType::Int),
    ] {
        let col = &table.columns[name];
        assert_eq!(col.typ, ColumnType::Native(typ), "type of column {name}");
    }
    assert_eq!(
        table.columns["seq"].kind,
        ColumnKind::Clustering,
        "seq kind"
    );
    assert_eq!(
        table.columns["tenant"].kind,
        ColumnKind::PartitionKey,
        "tenant kind"
    );
    assert_eq!(table.columns["t"].kind, ColumnKind::Regular, "t kind");
    let counters_table = &ks.tables["counters"];
    assert_eq!(
        counters_table.columns["c"].typ,
        ColumnType::Native(NativeType::Counter),
        "counter column type"
    );

    // ---- prepared INSERT: partition key indexes for token-aware routing ----
    let insert = session.prepare(INSERT).await.expect("prepare insert");
    let pk: Vec<(u16, u16)> = insert
        .get_variable_pk_indexes()
        .iter()
        .map(|p| (p.index, p.sequence))
        .collect();
    // Sorted by bind index: marker 2 (bucket) is pk part 1, marker 9 (tenant) is pk part 0.
    assert_eq!(
        pk,
        [(2, 1), (9, 0)],
        "prepared pk indexes (index, sequence)"
    );
    assert!(insert.is_token_aware(), "insert must be token aware");
    assert_eq!(insert.get_keyspace_name(), Some(KS), "prepared keyspace");
    assert_eq!(insert.get_table_name(), Some("all_types"), "prepared table");
    let specs: Vec<String> = insert
        .get_variable_col_specs()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(
        specs,
        ["seq", "t", "bucket", "b", "u", "ts", "flag", "d", "i", "tenant"],
        "bind marker column specs"
    );

    // Result metadata of a prepared SELECT: names and types in select order.
    let select = session
        .prepare(format!("{SELECT_ALL} WHERE tenant = ? AND bucket = ?"))
        .await
        .expect("prepare select");
    let result_specs: Vec<(String, ColumnType)> = select
        .get_current_result_set_col_specs()
        .get()
        .iter()
        .map(|c| (c.name().to_string(), c.typ().clone()))
        .collect();
    let want: Vec<(String, ColumnType)> = [
        ("tenant", NativeType::Text),
        ("bucket", NativeType::Int),
        ("seq", NativeType::BigInt),
        ("t", NativeType::Text),
        ("b", NativeType::Blob),
        ("u", NativeType::Uuid),
        ("ts", NativeType::Timestamp),
        ("flag", NativeType::Boolean),
        ("d", NativeType::Double),
        ("i", NativeType::Int),
    ]
    .into_iter()
    .map(|(n, t)| (n.to_string(), ColumnType::Native(t)))
    .collect();
    assert_eq!(result_specs, want, "prepared SELECT result metadata");
    let select_pk: Vec<(u16, u16)> = select
        .get_variable_pk_indexes()
        .iter()
        .map(|p| (p.index, p.sequence))
        .collect();
    assert_eq!(select_pk, [(0, 0), (1, 1)], "prepared SELECT pk indexes");

    for (tenant, bucket, n) in all_keys() {
        let r = expected_row(tenant, bucket, n);
        session
            .execute_unpaged(&insert, (r.2, r.3, r.1, r.4, r.5, r.6, r.7, r.8, r.9, r.0))
            .await
            .unwrap_or_else(|e| panic!("insert ({tenant}, {bucket}, {n}): {e:?}"));
    }

    // The driver's token (Murmur3 of the serialized composite key) equals the server's token(),
    // and the replica it routes to is our node.
    let sample = expected_row("globex", 5, 1);
    let driver_token = insert
        .calculate_token(&(
            sample.2, &sample.3, sample.1, &sample.4, sample.5, sample.6, sample.7, sample.8,
            sample.9, &sample.0,
        ))
        .expect("calculate_token")
        .expect("token-aware statement has a token");
    let server_token = select_rows::<(i64,)>(
        &session,
        "SELECT token(tenant, bucket) FROM drv.all_types WHERE tenant = 'globex' AND bucket = 5 LIMIT 1",
    )
    .await;
    assert_eq!(
        server_token,
        [(driver_token.value(),)],
        "driver token vs server token()"
    );
    let state = session.get_cluster_state();
    let replicas = state.get_token_endpoints(KS, "all_types", driver_token);
    assert_eq!(replicas.len(), 1, "replicas for the token: {replicas:?}");
    assert_eq!(
        replicas[0].0.address.port(),
        node.port,
        "replica is our node"
    );

    // ---- BATCH: logged, prepared + simple statements, with and without values ----
    let mut batch = Batch::new(BatchType::Logged);
    batch.append_statement("INSERT INTO drv.kv (k, v) VALUES (1, 'one')");
    let kv_insert = session
        .prepare("INSERT INTO drv.kv (k, v) VALUES (?, ?)")
        .await
        .expect("prepare kv insert");
    batch.append_statement(kv_insert.clone());
    batch.append_statement("INSERT INTO drv.kv (k, v) VALUES (?, ?)");
    batch.append_statement("UPDATE drv.kv SET v = ? WHERE k = ?");
    session
        .batch(&batch, ((), (2, "two"), (3, "three"), ("four", 4)))
        .await
        .expect("logged batch");
    // Unlogged batch that deletes and re-inserts.
    let mut unlogged = Batch::new(BatchType::Unlogged);
    unlogged.append_statement("INSERT INTO drv.kv (k, v) VALUES (5, 'five')");
    unlogged.append_statement("DELETE FROM drv.kv WHERE k = 5");
    session
        .batch(&unlogged, ((), ()))
        .await
        .expect("unlogged batch");

    // ---- USE keyspace on every pooled connection, unqualified names, a query with values
    // (which the driver prepares before executing) ----
    session.use_keyspace(KS, false).await.expect("USE drv");
    assert_eq!(
        session.get_keyspace().as_deref().map(String::as_str),
        Some(KS),
        "session keyspace after USE"
    );
    let v = session
        .query_unpaged("SELECT v FROM kv WHERE k = ?", (2,))
        .await
        .expect("unqualified query with values")
        .into_rows_result()
        .expect("rows result")
        .single_row::<(String,)>()
        .expect("one row");
    assert_eq!(v, ("two".to_string(),), "kv[2] via USE + query with values");
    // Cassandra 4.0.2+ (CASSANDRA-15252) gives a fully qualified statement the id MD5(query)
    // whatever keyspace the connection USEs, so re-preparing it after USE (as the driver does
    // on UNPREPARED) yields the id the session already holds.
    let insert_after_use = session.prepare(INSERT).await.expect("re-prepare after USE");
    if insert_after_use.get_id() != insert.get_id() {
        bugs.report(format!(
            "the id of a fully qualified prepared statement depends on the connection's USE \
             keyspace: {:02x?} before `USE drv`, {:02x?} after (Cassandra: MD5(query) for \
             fully qualified statements); after a restart the driver re-prepares on UNPREPARED \
             and fails with RepreparedIdChanged",
            &insert.get_id()[..],
            &insert_after_use.get_id()[..]
        ));
    }
    let five = select_rows::<(i32,)>(&session, "SELECT k FROM kv WHERE k = 5").await;
    assert!(
        five.is_empty(),
        "row deleted in the unlogged batch: {five:?}"
    );

    // ---- counters: prepared, simple and a COUNTER batch ----
    let incr = session
        .prepare("UPDATE drv.counters SET c = c + ? WHERE k = ?")
        .await
        .expect("prepare counter update");
    // Cassandra prepares the marker of `c = c + ?` against the counter column itself, so its
    // type is `counter` (the driver then only accepts `Counter` for it).
    let marker_type = incr
        .get_variable_col_specs()
        .iter()
        .next()
        .map(|c| c.typ().clone());
    let counter_marker = marker_type == Some(ColumnType::Native(NativeType::Counter));
    if !counter_marker {
        bugs.report(format!(
            "prepared `UPDATE .. SET c = c + ? ..` on a counter column: bind marker 0 has \
             type {marker_type:?}, Cassandra reports counter; the driver rejects Counter values \
             for it (test falls back to binding a bigint)"
        ));
    }
    for _ in 0..3 {
        let result = if counter_marker {
            session.execute_unpaged(&incr, (Counter(5), "hits")).await
        } else {
            session.execute_unpaged(&incr, (5i64, "hits")).await
        };
        result.expect("counter increment");
    }
    exec(
        &session,
        "UPDATE drv.counters SET c = c - 2 WHERE k = 'hits'",
    )
    .await;
    exec(
        &session,
        "UPDATE drv.counters SET c = c - 2 WHERE k = 'misses'",
    )
    .await;
    let mut counter_batch = Batch::new(BatchType::Counter);
    counter_batch.append_statement(incr.clone());
    counter_batch.append_statement("UPDATE drv.counters SET c = c + 100 WHERE k = 'other'");
    let result = if counter_marker {
        session
            .batch(&counter_batch, ((Counter(0), "hits"), ()))
            .await
    } else {
        session.batch(&counter_batch, ((0i64, "hits"), ())).await
    };
    result.expect("counter batch");
    let hits =
        select_rows::<(Counter,)>(&session, "SELECT c FROM drv.counters WHERE k = 'hits'").await;
    assert_eq!(hits, [(Counter(13),)], "counter after 3 x +5, -2, +0");

    // ---- error: unknown keyspace is an Invalid error with a message ----
    match session.query_unpaged("SELECT * FROM missing.t", ()).await {
        Err(ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::Invalid,
            msg,
        ))) => assert!(
            msg.contains("missing"),
            "Invalid error message should name the keyspace: {msg:?}"
        ),
        other => panic!("SELECT * FROM missing.t: expected DbError::Invalid, got {other:?}"),
    }
    match session.prepare("SELECT * FROM drv.nope").await {
        Err(e) => {
            let text = format!("{e:?}");
            assert!(text.contains("Invalid"), "prepare of unknown table: {text}");
        }
        Ok(_) => panic!("prepare of an unknown table succeeded"),
    }
    // The session is still usable after errors.
    verify_everything(&session, "before restart").await;

    // ---- restart: SIGTERM, start again on the same data directory ----
    let status = node.stop();
    assert!(
        status.success(),
        "helenus exit status after SIGTERM: {status}"
    );
    node.start();

    let fresh = connect(&node).await;
    verify_everything(&fresh, "after restart (new session)").await;
    let state = fresh.get_cluster_state();
    let table = &state
        .get_keyspace(KS)
        .expect("keyspace after restart")
        .tables["all_types"];
    assert_eq!(
        table.partition_key,
        ["tenant", "bucket"],
        "pk after restart"
    );

    // The session connected before the restart reconnects by itself; its prepared statement
    // is unknown to the new process (UNPREPARED), which the driver answers by re-preparing.
    let deadline = Instant::now() + Duration::from_secs(10);
    let extra = expected_row("acme", 1, 100);
    let mut insert = insert;
    loop {
        let values = (
            extra.2, &extra.3, extra.1, &extra.4, extra.5, extra.6, extra.7, extra.8, extra.9,
            &extra.0,
        );
        match session.execute_unpaged(&insert, values).await {
            Ok(_) => break,
            Err(ExecutionError::LastAttemptError(RequestAttemptError::RepreparedIdChanged {
                expected_id,
                reprepared_id,
                ..
            })) => {
                bugs.report(format!(
                    "after restart the old session's EXECUTE got UNPREPARED and re-preparing \
                     (on a connection that had `USE drv`) returned id {reprepared_id:02x?} \
                     instead of {expected_id:02x?}: driver error RepreparedIdChanged \
                     (test re-prepares explicitly)"
                ));
                insert = session.prepare(INSERT).await.expect("prepare again");
            }
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("old session did not recover after restart: {e:?}"),
        }
    }
    let back = select_rows::<Row>(
        &fresh,
        &format!("{SELECT_ALL} WHERE tenant = 'acme' AND bucket = 1 AND seq = 100"),
    )
    .await;
    assert_eq!(
        back,
        [extra],
        "row written through the old session after restart"
    );

    drop(session);
    drop(fresh);
    let status = node.stop();
    assert!(status.success(), "final exit status: {status}");
    eprintln!("scylla driver test took {:?}", started.elapsed());
    assert!(
        bugs.0.is_empty(),
        "Helenus deviated from Cassandra {} time(s):\n- {}",
        bugs.0.len(),
        bugs.0.join("\n- ")
    );
}
