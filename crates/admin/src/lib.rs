//! The node's admin API: HTTP/1.1 with JSON bodies on `admin_address:admin_port`, the only
//! interface `helenus nodetool` uses, plus Prometheus metrics on `/metrics`. Every endpoint is
//! described in `docs/admin-api.md`.

mod access;
mod api;
mod auto_repair;
mod error;
mod exposition;
mod http;
mod lifecycle;
mod metrics;
mod node;
mod proxy_metrics;
mod router;

pub use access::{read_token, Access};
pub use api::auto_repair::{start as start_auto_repair, AutoRepair};
pub use api::cluster::generation_now;
pub use api::logging::LogLevels;
pub use api::pools::tpstats;
pub use api::trace::TraceProbability;
pub use api::types;
pub use http::serve;
pub use lifecycle::{Lifecycle, Mode, Transport};
pub use node::{AdminNode, NativeStats};
