//! The `/v1/hints` routes on a node without a hints service and on one with a service whose
//! deliveries all fail (the hints stay pending).
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use hints::{BoxFuture, Deliver, DeliveryError, HintsConfig, HintsEnv, HintsService};
use hyper::{Method, StatusCode};
use mutation::{Mutation, PartitionKey, PartitionUpdate, TableId};

use crate::router::tests::{api, json};
use crate::router::Api;

struct Unreachable;

impl Deliver for Unreachable {
    fn deliver(&self, _: SocketAddr, _: Bytes) -> BoxFuture<'static, Result<(), DeliveryError>> {
        Box::pin(async { Err(DeliveryError::Failed("unreachable".into())) })
    }
}

async fn with_hints(dir: &tempfile::TempDir) -> (Api, Arc<HintsService>) {
    let api = api(dir).await;
    let env = HintsEnv {
        deliver: Arc::new(Unreachable),
        gc_grace: Arc::new(|_| Some(864_000)),
        node_count: Arc::new(|| 2),
    };
    let config = HintsConfig::new(dir.path().join("hints"));
    let service = HintsService::open(config, env).await.unwrap();
    api.node.coordinator.attach_hints(service.clone());
    (api, service)
}

async fn post(api: &Api, path: &str, body: &[u8]) -> serde_json::Value {
    let reply = api.handle(&Method::POST, path, body).await;
    assert_eq!(reply.status, StatusCode::OK, "{path}: {:?}", reply.body);
    json(&reply)
}

async fn pending(api: &Api) -> serde_json::Value {
    json(&api.handle(&Method::GET, "/v1/hints/pending", b"").await)
}

#[tokio::test]
async fn a_node_running_alone_answers_that_it_keeps_no_hints() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    for (method, path) in [
        (Method::GET, "/v1/hints"),
        (Method::GET, "/v1/hints/pending"),
        (Method::POST, "/v1/hints/pause"),
        (Method::POST, "/v1/hints/truncate"),
    ] {
        let reply = api.handle(&method, path, b"").await;
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "{path}");
        assert_eq!(
            json(&reply)["error"],
            "this node runs alone (no seed_provider): it keeps no hints"
        );
    }
    let wrong = api.handle(&Method::GET, "/v1/hints/enable", b"").await;
    assert_eq!(wrong.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn switches_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (api, _service) = with_hints(&dir).await;
    let status = json(&api.handle(&Method::GET, "/v1/hints", b"").await);
    let expected =
        serde_json::json!({"enabled": true, "paused": false, "disabled_datacenters": []});
    assert_eq!(status, expected);
    assert_eq!(post(&api, "/v1/hints/disable", b"").await["enabled"], false);
    assert_eq!(post(&api, "/v1/hints/enable", b"").await["enabled"], true);
    assert_eq!(post(&api, "/v1/hints/pause", b"").await["paused"], true);
    assert_eq!(post(&api, "/v1/hints/resume", b"").await["paused"], false);
    let dc = br#"{"datacenter": "dc2"}"#;
    let disabled = post(&api, "/v1/hints/datacenters/disable", dc).await;
    assert_eq!(disabled["disabled_datacenters"], serde_json::json!(["dc2"]));
    let enabled = post(&api, "/v1/hints/datacenters/enable", dc).await;
    assert_eq!(enabled["disabled_datacenters"], serde_json::json!([]));
    let empty = br#"{"datacenter": " "}"#;
    let refused = api
        .handle(&Method::POST, "/v1/hints/datacenters/disable", empty)
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn pending_hints_are_listed_and_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let (api, service) = with_hints(&dir).await;
    assert_eq!(pending(&api).await, serde_json::json!([]));
    let host = uuid::Uuid::from_u128(5);
    let mutation = Mutation {
        table: TableId(uuid::Uuid::from_u128(9)),
        key: PartitionKey {
            token: 1,
            key: Bytes::from_static(b"k"),
        },
        update: PartitionUpdate::default(),
    };
    service.store(host, &mutation).unwrap();
    service.flush().await.unwrap();
    let listed = pending(&api).await;
    let row = &listed[0];
    assert_eq!(row["host_id"], host.to_string());
    assert_eq!(
        (row["address"].clone(), row["status"].clone()),
        (serde_json::Value::Null, "Unknown".into())
    );
    assert_eq!(row["files"], 1);
    let metrics = api.handle(&Method::GET, "/metrics", b"").await;
    let text = String::from_utf8(metrics.body.to_vec()).unwrap();
    assert!(text.contains("helenus_hints_created_total 1\n"), "{text}");
    assert!(text.contains(&format!(
        "helenus_hints_pending_bytes{{host_id=\"{host}\"}}"
    )));
    let pools = json(&api.handle(&Method::GET, "/v1/tpstats", b"").await);
    assert_eq!(pools[5]["name"], "HintsDispatcher");
    assert!(row["total_bytes"].as_u64().unwrap() > 0);
    let unknown = api
        .handle(
            &Method::POST,
            "/v1/hints/truncate",
            br#"{"endpoint": "127.0.0.9"}"#,
        )
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        json(&unknown)["error"],
        "Can't delete hints for unknown address /127.0.0.9:7000"
    );
    post(&api, "/v1/hints/truncate", b"").await;
    assert_eq!(pending(&api).await, serde_json::json!([]));
}
