//! The routes against a real (empty) node: statuses, JSON bodies and errors.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Instant;

use coordinator::{Coordinator, Timeouts};
use hyper::{Method, StatusCode};
use query::NodeInfo;
use storage::{Storage, StorageConfig};

use super::{Api, Reply};
use crate::lifecycle::Lifecycle;
use crate::node::{AdminNode, NativeStats};

const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// Log levels kept in memory: what the routes set is what they list.
#[derive(Default)]
struct RecordedLevels(std::sync::Mutex<Vec<(String, String)>>);

impl crate::LogLevels for RecordedLevels {
    fn levels(&self) -> Vec<(String, String)> {
        let mut levels = vec![("ROOT".to_string(), "INFO".to_string())];
        levels.extend(self.0.lock().unwrap().iter().cloned());
        levels
    }

    fn set(&self, logger: Option<&str>, level: Option<&str>) -> Result<(), String> {
        let mut set = self.0.lock().unwrap();
        match (logger, level) {
            (Some(logger), Some(level)) => set.push((logger.into(), level.into())),
            (None, None) => set.clear(),
            _ => return Err("a level needs a logger name".into()),
        }
        Ok(())
    }
}

pub(crate) async fn api(dir: &tempfile::TempDir) -> Api {
    let config = StorageConfig::new(dir.path().join("data"), dir.path().join("commitlog"));
    let storage = Arc::new(Storage::open(config).unwrap());
    let endpoint = ring::Endpoint {
        addr: LOCAL,
        datacenter: "datacenter1".into(),
        rack: "rack1".into(),
        host_id: [0; 16],
    };
    let coordinator = Arc::new(Coordinator::new(
        storage.clone(),
        endpoint,
        Timeouts::default(),
    ));
    let info = NodeInfo {
        cluster_name: "Test Cluster".into(),
        listen_address: LOCAL,
        rpc_address: LOCAL,
        native_port: 9042,
        storage_port: 7000,
        data_center: "datacenter1".into(),
        rack: "rack1".into(),
        release_version: query::RELEASE_VERSION.into(),
        tokens: vec![-1, 42],
        host_id: uuid::Uuid::nil(),
    };
    let metadata_dir = dir.path().join("m");
    let processor = system::start_alone(coordinator.clone(), storage.clone(), info, metadata_dir)
        .await
        .unwrap();
    let metadata = processor.metadata().cloned().unwrap();
    let nodeops = nodeops::NodeOps::new(
        metadata.clone(),
        processor.clone(),
        None,
        nodeops::Settings::new(std::time::Duration::ZERO),
    );
    Api::new(Arc::new(AdminNode {
        storage,
        coordinator,
        processor,
        config: Arc::new(config::Config::default()),
        clients: Arc::new(transport::Clients::new()),
        native: Arc::new(NativeStats::default()),
        native_limits: Arc::new(transport::Limits::new(&transport::ServerConfig::default())),
        lifecycle: Arc::new(Lifecycle::default()),
        metadata,
        nodeops,
        gossip: None,
        messaging: None,
        streaming: None,
        repair: None,
        auto_repair: crate::api::auto_repair::AutoRepair::open(None),
        logging: Arc::new(RecordedLevels::default()),
        started: Instant::now(),
        generation: 1,
    }))
}

pub(crate) fn json(reply: &Reply) -> serde_json::Value {
    assert_eq!(reply.content_type, "application/json");
    serde_json::from_slice(&reply.body).unwrap()
}

#[tokio::test]
async fn node_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let reply = api.handle(&Method::GET, "/v1/version", b"").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(json(&reply)["release_version"], "5.0.4");
    let node = json(&api.handle(&Method::GET, "/v1/node", b"").await);
    assert_eq!(node["tokens"], serde_json::json!(["-1", "42"]));
    assert_eq!(node["mode"], "NORMAL");
    assert_eq!(node["effective_ownership"], 1.0);
}

#[tokio::test]
async fn unknown_paths_and_methods() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let missing = api.handle(&Method::GET, "/v1/nope", b"").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(json(&missing)["error"], "no endpoint /v1/nope");
    let wrong = api.handle(&Method::DELETE, "/v1/node", b"").await;
    assert_eq!(wrong.status, StatusCode::METHOD_NOT_ALLOWED);
    let get_flush = api.handle(&Method::GET, "/v1/flush", b"").await;
    assert_eq!(get_flush.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn flush_selects_tables() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let all = api.handle(&Method::POST, "/v1/flush", b"").await;
    assert_eq!(all.status, StatusCode::OK);
    assert!(json(&all)["tables"].as_array().unwrap().len() > 10);
    let local = api
        .handle(
            &Method::POST,
            "/v1/flush",
            br#"{"keyspace":"system","tables":["local"]}"#,
        )
        .await;
    assert_eq!(json(&local)["tables"], serde_json::json!(["system.local"]));
    let missing = api
        .handle(&Method::POST, "/v1/flush", br#"{"keyspace":"nosuch"}"#)
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(json(&missing)["error"], "Keyspace [nosuch] does not exist.");
    let bad = api.handle(&Method::POST, "/v1/flush", b"{not json").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn settings_change_at_run_time() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let path = "/v1/settings/compaction_throughput";
    let set = api
        .handle(&Method::PUT, path, br#"{"mib_per_second":16}"#)
        .await;
    assert_eq!(json(&set)["mib_per_second"], 16);
    assert_eq!(
        json(&api.handle(&Method::GET, path, b"").await)["mib_per_second"],
        16
    );
    let timeout = "/v1/settings/timeouts/write";
    api.handle(&Method::PUT, timeout, br#"{"millis":8000}"#)
        .await;
    assert_eq!(
        json(&api.handle(&Method::GET, timeout, b"").await)["millis"],
        8000
    );
    let bogus = api
        .handle(&Method::GET, "/v1/settings/timeouts/bogus", b"")
        .await;
    assert_eq!(bogus.status, StatusCode::NOT_FOUND);
    let zero = api
        .handle(
            &Method::PUT,
            "/v1/settings/concurrent_compactors",
            br#"{"value":0}"#,
        )
        .await;
    assert_eq!(zero.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn stats_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let tables = json(&api.handle(&Method::GET, "/v1/tables", b"").await);
    assert!(tables
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["table"] == "local"));
    let compactions = json(&api.handle(&Method::GET, "/v1/compactions", b"").await);
    assert_eq!(compactions["concurrent_compactors"], 2);
    let pools = json(&api.handle(&Method::GET, "/v1/tpstats", b"").await);
    assert_eq!(pools[4]["name"], "Native-Transport-Requests");
    assert_eq!(pools[4]["blocked"], 0);
    let dropped = json(&api.handle(&Method::GET, "/v1/tpstats/dropped", b"").await);
    let dropped = dropped.as_array().unwrap();
    assert_eq!(dropped.len(), net::Verb::ALL.len());
    assert_eq!(dropped[7]["message_type"], "MUTATION_REQ");
    assert_eq!(dropped[7]["dropped"], 0, "a node alone drops nothing");
    assert_eq!(dropped[7]["queue_wait_micros"]["max"], 0);
    let gc = json(&api.handle(&Method::GET, "/v1/gcstats", b"").await);
    assert_eq!(gc["collections"], 0);
    let metrics = api.handle(&Method::GET, "/metrics", b"").await;
    assert_eq!(
        metrics.content_type,
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = String::from_utf8(metrics.body.to_vec()).unwrap();
    assert!(text.contains("# TYPE helenus_commitlog_bytes gauge\n"));
    assert!(text.contains("helenus_table_live_sstables{keyspace=\"system\",table=\"local\"}"));
    assert!(text.contains("helenus_native_request_bytes_in_flight 0\n"));
    assert!(text.contains("helenus_native_request_bytes_announced 0\n"));
    assert!(text.contains("helenus_native_request_bytes_limit 107374182\n"));
    assert!(text.contains("helenus_native_paused_connections 0\n"));
    assert!(text.contains("# TYPE helenus_messages_dropped_total counter\n"));
    assert!(text.contains("helenus_messages_dropped_total{verb=\"MUTATION_REQ\"} 0\n"));
    assert!(
        !text.contains("helenus_message_queue_wait_micros"),
        "no message received"
    );
    assert!(text.contains("# TYPE helenus_table_sstables_per_read summary\n"));
}

#[tokio::test]
async fn stopdaemon_asks_the_node_to_stop() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let reply = api.handle(&Method::POST, "/v1/stopdaemon", b"").await;
    assert_eq!(reply.status, StatusCode::OK);
    api.node.lifecycle.stop_requested().await;
    assert_eq!(api.node.lifecycle.mode(), crate::Mode::Draining);
}

#[tokio::test]
async fn logging_levels_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let body = br#"{"logger": "storage", "level": "DEBUG"}"#;
    let set = api.handle(&Method::PUT, "/v1/logging", body).await;
    assert_eq!(set.status, StatusCode::OK);
    let listed = json(&api.handle(&Method::GET, "/v1/logging", b"").await);
    assert_eq!(
        listed["levels"],
        serde_json::json!([
            {"logger": "ROOT", "level": "INFO"},
            {"logger": "storage", "level": "DEBUG"}
        ])
    );
    let refused = api
        .handle(&Method::PUT, "/v1/logging", br#"{"level": "DEBUG"}"#)
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let reset = api.handle(&Method::PUT, "/v1/logging", b"").await;
    assert_eq!(json(&reset)["levels"].as_array().unwrap().len(), 1);
    let wrong = api.handle(&Method::POST, "/v1/logging", b"").await;
    assert_eq!(wrong.status, StatusCode::METHOD_NOT_ALLOWED);
}

/// Plays the server's part: runs the native transport whenever it is wanted.
fn follow_transport(lifecycle: Arc<Lifecycle>) {
    lifecycle.set_transport_running(true);
    tokio::spawn(async move {
        loop {
            lifecycle.transport_stop_requested().await;
            lifecycle.set_transport_running(false);
            lifecycle.transport_start_requested().await;
            lifecycle.set_transport_running(true);
        }
    });
}

#[tokio::test]
async fn binary_stops_and_starts_the_native_transport() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    follow_transport(api.node.lifecycle.clone());
    let status = |reply: &Reply| json(reply)["running"].clone();
    let running = api.handle(&Method::GET, "/v1/binary", b"").await;
    assert_eq!(status(&running), true);
    let disabled = api.handle(&Method::POST, "/v1/binary/disable", b"").await;
    assert_eq!(status(&disabled), false);
    let node = json(&api.handle(&Method::GET, "/v1/node", b"").await);
    assert_eq!(node["native_transport_active"], false);
    let enabled = api.handle(&Method::POST, "/v1/binary/enable", b"").await;
    assert_eq!(status(&enabled), true);
    api.node.lifecycle.request_drain();
    let drained = api.handle(&Method::POST, "/v1/binary/enable", b"").await;
    assert_eq!(drained.status, StatusCode::SERVICE_UNAVAILABLE);
    let wrong = api.handle(&Method::GET, "/v1/binary/enable", b"").await;
    assert_eq!(wrong.status, StatusCode::METHOD_NOT_ALLOWED);
}
