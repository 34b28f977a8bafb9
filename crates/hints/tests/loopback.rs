//! Hints delivered over internode messaging to a second node on loopback TCP, whose
//! `Verb::Hint` handler decodes them with `decode_hint`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::*;
use hints::{decode_hint, HintsEnv, HintsService, MessagingDeliver};
use net::{handler_fn, Messaging, NetConfig, RemoteError, TokioNetwork, Verb};
use parking_lot::Mutex;

async fn node(n: u128) -> Arc<Messaging> {
    let config = NetConfig::new("Test Cluster", host(n), "127.0.0.1:0".parse().unwrap());
    Messaging::start(config, Arc::new(TokioNetwork))
        .await
        .unwrap()
}

/// Applies hints like a replica, refusing the first attempt at `k0`.
fn replica(applied: Arc<Mutex<Vec<String>>>) -> Arc<dyn net::Handler> {
    let refused = Arc::new(AtomicBool::new(false));
    handler_fn(move |_, payload: Bytes| {
        let (applied, refused) = (applied.clone(), refused.clone());
        async move {
            let mutation = decode_hint(&payload)
                .map_err(|e| RemoteError::new(RemoteError::SERVER_ERROR, e.to_string()))?;
            let key = key_of(&mutation);
            if key == "k0" && !refused.swap(true, Ordering::SeqCst) {
                return Err(RemoteError::new(0x1000, "not ready"));
            }
            applied.lock().push(key);
            Ok(Bytes::new())
        }
    })
}

fn sorted(mut keys: Vec<String>) -> Vec<String> {
    keys.sort();
    keys
}

#[tokio::test]
async fn hints_reach_another_node_over_messaging() {
    let (a, b) = (node(1).await, node(2).await);
    let applied = Arc::new(Mutex::new(Vec::new()));
    b.register(Verb::Hint, replica(applied.clone()));
    let dir = tempfile::tempdir().unwrap();
    let env = HintsEnv {
        deliver: Arc::new(MessagingDeliver::new(a.clone(), Duration::from_secs(2))),
        gc_grace: Arc::new(|_| Some(GC_GRACE)),
        node_count: Arc::new(|| 2),
    };
    let service = HintsService::open(config(dir.path()), env).await.unwrap();
    for i in 0..20 {
        service
            .store(host(2), &mutation(&format!("k{i}"), 1000))
            .unwrap();
    }
    service.host_alive(host(2), b.local());
    until(Duration::from_secs(10), || service.metrics().failed == 1).await;
    until(Duration::from_secs(10), || applied.lock().len() == 19).await;
    assert!(!files(dir.path()).is_empty(), "k0 is not acknowledged yet");
    until(Duration::from_secs(10), || {
        service.host_alive(host(2), b.local());
        files(dir.path()).is_empty()
    })
    .await;
    let applied = applied.lock().clone();
    assert_eq!(sorted(applied[..19].to_vec()), sorted(keys("k", 1..20)));
    assert_eq!(
        sorted(applied[19..].to_vec()),
        sorted(keys("k", 0..20)),
        "resent from the refused hint on"
    );
    assert_eq!(service.metrics().dispatched, 39);
    service.shutdown().await.unwrap();
    a.shutdown().await;
    b.shutdown().await;
}
