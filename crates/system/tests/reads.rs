//! The query processor in process over a real storage: its request futures stay small, paged
//! reads keep static values and resume after their last row, counter deletions are written,
//! bound frozen sets are stored in their canonical order, and prepared statements naming a
//! dropped table are unprepared.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::sync::Arc;

use bytes::Bytes;
use query::QueryProcessor;
use types::request::{BoundValue, QueryOptions, Values};
use types::result::QueryResult;
use types::CqlError;

struct Node {
    qp: Arc<QueryProcessor>,
    _dir: tempfile::TempDir,
}

type Row = Vec<Option<Bytes>>;

impl Node {
    async fn start() -> Node {
        let dir = tempfile::tempdir().expect("tempdir");
        let qp = system::testing::local_processor(dir.path())
            .await
            .expect("start");
        let node = Node { qp, _dir: dir };
        node.run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
            .await;
        node
    }

    async fn run(&self, text: &str) -> Vec<Row> {
        self.page(text, None, None).await.0
    }

    /// One page of `text`: its rows and the paging state of the next one.
    async fn page(
        &self,
        text: &str,
        page_size: Option<i32>,
        paging_state: Option<Bytes>,
    ) -> (Vec<Row>, Option<Bytes>) {
        let options = QueryOptions {
            page_size,
            paging_state,
            ..QueryOptions::default()
        };
        let outcome = self.qp.query(Some("ks"), text, options).await;
        match outcome.expect(text).result {
            QueryResult::Rows(rows) => (decode(&rows), rows.paging_state),
            _ => (Vec::new(), None),
        }
    }

    /// Every row of `text` read in pages of `page_size`.
    async fn paged(&self, text: &str, page_size: i32) -> Vec<Row> {
        let mut out = Vec::new();
        let mut state = None;
        loop {
            let (rows, next) = self.page(text, Some(page_size), state).await;
            assert!(rows.len() <= page_size as usize);
            out.extend(rows);
            match next {
                Some(next) => state = Some(next),
                None => return out,
            }
        }
    }

    async fn prepare(&self, text: &str) -> Bytes {
        match self.qp.prepare(Some("ks"), text).await.expect(text).result {
            QueryResult::Prepared(p) => p.id,
            other => panic!("{text}: {other:?}"),
        }
    }

    async fn execute(&self, id: &Bytes, values: Vec<Bytes>) -> Result<Vec<Row>, CqlError> {
        let options = QueryOptions {
            values: Values::Positional(values.into_iter().map(BoundValue::Set).collect()),
            ..QueryOptions::default()
        };
        Ok(match self.qp.execute(id, None, options).await?.result {
            QueryResult::Rows(rows) => decode(&rows),
            _ => Vec::new(),
        })
    }
}

/// The cells of a Rows result (`[int length][bytes]`, -1 for null).
fn decode(rows: &types::result::Rows) -> Vec<Row> {
    let mut buf = &rows.content[..];
    let mut out = Vec::new();
    for _ in 0..rows.row_count {
        let mut row = Vec::new();
        for _ in 0..rows.columns.len() {
            let len = i32::from_be_bytes(buf[..4].try_into().expect("length"));
            buf = &buf[4..];
            let Ok(len) = usize::try_from(len) else {
                row.push(None);
                continue;
            };
            row.push(Some(Bytes::copy_from_slice(&buf[..len])));
            buf = &buf[len..];
        }
        out.push(row);
    }
    out
}

fn int(n: i32) -> Bytes {
    Bytes::copy_from_slice(&n.to_be_bytes())
}

fn ints(row: &Row) -> Vec<Option<i32>> {
    row.iter()
        .map(|c| {
            c.as_ref()
                .map(|b| i32::from_be_bytes(b[..].try_into().expect("int")))
        })
        .collect()
}

fn set_of(items: &[i32]) -> Bytes {
    let mut out = (items.len() as i32).to_be_bytes().to_vec();
    for i in items {
        out.extend_from_slice(&4i32.to_be_bytes());
        out.extend_from_slice(&i.to_be_bytes());
    }
    Bytes::from(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_values_and_every_row_once_on_every_page() {
    let node = Node::start().await;
    node.run("CREATE TABLE t (k int, c int, s int STATIC, v int, PRIMARY KEY (k, c))")
        .await;
    for k in 0..3 {
        node.run(&format!("UPDATE t SET s = {} WHERE k = {k}", 100 + k))
            .await;
        for c in 0..20 {
            node.run(&format!("INSERT INTO t (k, c, v) VALUES ({k}, {c}, {c})"))
                .await;
        }
    }
    node.run("DELETE FROM t WHERE k = 1 AND c >= 5 AND c < 15")
        .await;
    let whole = node.run("SELECT k, c, s FROM t WHERE k = 1").await;
    assert_eq!(whole.len(), 10);
    for page_size in [1, 3, 7, 50] {
        let rows = node
            .paged("SELECT k, c, s FROM t WHERE k = 1", page_size)
            .await;
        assert_eq!(rows, whole, "pages of {page_size}");
        let reversed = node
            .paged(
                "SELECT k, c, s FROM t WHERE k = 1 ORDER BY c DESC",
                page_size,
            )
            .await;
        assert_eq!(reversed, whole.iter().rev().cloned().collect::<Vec<_>>());
        let scan = node.paged("SELECT k, c, s FROM t", page_size).await;
        assert_eq!(scan.len(), 50);
        assert!(scan
            .iter()
            .all(|r| ints(r)[2] == ints(r)[0].map(|k| 100 + k)));
        let limited = node
            .paged("SELECT k, c, s FROM t PER PARTITION LIMIT 4", page_size)
            .await;
        assert_eq!(limited.len(), 12);
        assert!(limited.iter().all(|r| r[2].is_some()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counter_deletions_are_written() {
    let node = Node::start().await;
    node.run("CREATE TABLE c (k int PRIMARY KEY, n counter)")
        .await;
    node.run("UPDATE c SET n = n - 15 WHERE k = 1").await;
    node.run("DELETE FROM c WHERE k = 1").await;
    assert!(node.run("SELECT n FROM c WHERE k = 1").await.is_empty());
    node.run("UPDATE c SET n = n + 3 WHERE k = 1").await;
    let total = node.run("SELECT n FROM c WHERE k = 1").await;
    assert_eq!(
        total,
        vec![vec![Some(Bytes::copy_from_slice(&(-12i64).to_be_bytes()))]]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bound_frozen_sets_are_stored_in_element_order() {
    let node = Node::start().await;
    node.run("CREATE TABLE f (k frozen<set<int>> PRIMARY KEY, v int)")
        .await;
    let insert = node.prepare("INSERT INTO f (k, v) VALUES (?, ?)").await;
    node.execute(&insert, vec![set_of(&[3, 1, 2, 3]), int(7)])
        .await
        .expect("insert");
    let found = node.run("SELECT k, v FROM f WHERE k = {1, 2, 3}").await;
    assert_eq!(found, vec![vec![Some(set_of(&[1, 2, 3])), Some(int(7))]]);
    let lookup = node.prepare("SELECT v FROM f WHERE k = ?").await;
    let found = node.execute(&lookup, vec![set_of(&[2, 3, 1])]).await;
    assert_eq!(found.expect("select"), vec![vec![Some(int(7))]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_naming_a_dropped_table_are_unprepared() {
    let node = Node::start().await;
    node.run("CREATE TABLE r (k int PRIMARY KEY, v int)").await;
    let text = "BEGIN BATCH INSERT INTO r (k, v) VALUES (?, ?); APPLY BATCH";
    let batch = node.prepare(text).await;
    let truncate = node.prepare("TRUNCATE r").await;
    node.run("DROP TABLE r").await;
    node.run("CREATE TABLE r (k int PRIMARY KEY, v int)").await;
    let stale = node.execute(&batch, vec![int(1), int(1)]).await;
    assert!(
        matches!(stale, Err(CqlError::Unprepared { .. })),
        "{stale:?}"
    );
    assert!(matches!(
        node.execute(&truncate, vec![]).await,
        Err(CqlError::Unprepared { .. })
    ));
    assert_eq!(node.prepare(text).await, batch, "same text, same id");
    node.execute(&batch, vec![int(1), int(1)])
        .await
        .expect("written to the new table");
    assert_eq!(node.run("SELECT k FROM r").await, vec![vec![Some(int(1))]]);
}

/// The request futures the transport boxes stay small. A future is as large as the largest
/// path it can take, and the transport moves it into each request's allocation, so one large
/// path inline costs every request a copy: the Paxos rounds inline made every query copy about
/// 20 KB (found with bench/ab's callgrind profiles, issue 28). The LWT and counter paths are
/// boxed where they start. The bound is for a debug build, whose futures are larger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_futures_stay_small() {
    let node = Node::start().await;
    let query = node
        .qp
        .query(Some("ks"), "SELECT * FROM t", QueryOptions::default());
    let execute = node.qp.execute(b"id", None, QueryOptions::default());
    let sizes = [
        ("query", std::mem::size_of_val(&query)),
        ("execute", std::mem::size_of_val(&execute)),
    ];
    for (what, size) in sizes {
        assert!(size <= 8 * 1024, "{what}'s future is {size} bytes");
    }
}
