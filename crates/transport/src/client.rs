//! Per-connection client state and the registry of live connections (for
//! `system_views.clients`).
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// What a connection's client announced in STARTUP.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverInfo {
    pub driver_name: Option<String>,
    pub driver_version: Option<String>,
    pub client_id: Option<String>,
    /// Every option of the STARTUP message, as sent.
    pub options: Vec<(String, String)>,
}

/// The state of one client connection, shared with the query handler.
#[derive(Debug)]
pub struct ClientState {
    peer: SocketAddr,
    version: AtomicU8,
    keyspace: Mutex<Option<String>>,
    driver: OnceLock<DriverInfo>,
    requests: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ClientState {
    pub fn new(peer: SocketAddr) -> ClientState {
        ClientState {
            peer,
            version: AtomicU8::new(0),
            keyspace: Mutex::new(None),
            driver: OnceLock::new(),
            requests: AtomicU64::new(0),
        }
    }

    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// 0 until STARTUP fixes the connection's version.
    pub fn protocol_version(&self) -> u8 {
        self.version.load(Ordering::Relaxed)
    }

    pub fn keyspace(&self) -> Option<String> {
        lock(&self.keyspace).clone()
    }

    pub fn driver_name(&self) -> Option<String> {
        self.driver.get().and_then(|d| d.driver_name.clone())
    }

    pub fn driver_version(&self) -> Option<String> {
        self.driver.get().and_then(|d| d.driver_version.clone())
    }

    pub fn client_id(&self) -> Option<String> {
        self.driver.get().and_then(|d| d.client_id.clone())
    }

    /// Requests (QUERY/PREPARE/EXECUTE/BATCH) received so far.
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub(crate) fn set_keyspace(&self, keyspace: String) {
        *lock(&self.keyspace) = Some(keyspace);
    }

    pub(crate) fn start(&self, version: u8, driver: DriverInfo) {
        self.version.store(version, Ordering::Relaxed);
        // STARTUP is accepted once per connection, so this is the only set.
        let _ = self.driver.set(driver);
    }

    pub(crate) fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub fn info(&self) -> ClientInfo {
        ClientInfo {
            peer: self.peer,
            protocol_version: self.protocol_version(),
            keyspace: self.keyspace(),
            driver: self.driver.get().cloned().unwrap_or_default(),
            request_count: self.request_count(),
        }
    }
}

/// A point-in-time copy of one connection's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientInfo {
    pub peer: SocketAddr,
    pub protocol_version: u8,
    pub keyspace: Option<String>,
    pub driver: DriverInfo,
    pub request_count: u64,
}

/// The live connections of a server.
#[derive(Debug, Default)]
pub struct Clients {
    next_id: AtomicU64,
    live: Mutex<HashMap<u64, Arc<ClientState>>>,
}

impl Clients {
    pub fn new() -> Clients {
        Clients::default()
    }

    pub fn snapshot(&self) -> Vec<ClientInfo> {
        let mut all: Vec<ClientInfo> = lock(&self.live).values().map(|c| c.info()).collect();
        all.sort_by_key(|c| c.peer);
        all
    }

    pub fn len(&self) -> usize {
        lock(&self.live).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lists `state` until the returned guard is dropped.
    pub(crate) fn register(self: &Arc<Self>, state: Arc<ClientState>) -> Registration {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.live).insert(id, state);
        Registration {
            clients: Arc::clone(self),
            id,
        }
    }
}

/// Removes a connection from [`Clients`] when dropped.
pub(crate) struct Registration {
    clients: Arc<Clients>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&self.clients.live).remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_lists_live_connections() {
        let clients = Arc::new(Clients::new());
        let state = Arc::new(ClientState::new("10.0.0.1:5000".parse().unwrap()));
        let reg = clients.register(Arc::clone(&state));
        state.start(
            5,
            DriverInfo {
                driver_name: Some("d".into()),
                ..DriverInfo::default()
            },
        );
        state.set_keyspace("ks".into());
        state.count_request();
        let snap = clients.snapshot();
        assert_eq!(snap.len(), 1);
        assert_eq!(snap[0].protocol_version, 5);
        assert_eq!(snap[0].keyspace.as_deref(), Some("ks"));
        assert_eq!(snap[0].driver.driver_name.as_deref(), Some("d"));
        assert_eq!(snap[0].request_count, 1);
        assert_eq!(state.driver_name().as_deref(), Some("d"));
        drop(reg);
        assert!(clients.is_empty());
    }
}
