//! Maps a request's method and path to its handler and the handler's result to JSON.

use std::sync::Arc;

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::api::pools::GcClock;
use crate::api::types::{AutocompactionRequest, TableSelection};
use crate::api::{
    auto_repair, binary, cleanup, cluster, compaction, hints, logging, operations, pools, proxy,
    repair, ring, scrub, settings, snapshots, streams, tables, trace,
};
use crate::error::{ApiError, ApiResult};
use crate::metrics;
use crate::node::AdminNode;

/// The API's state: the node and the `gcstats` interval clock.
pub struct Api {
    pub node: Arc<AdminNode>,
    gc: GcClock,
}

/// A response before it is put on the wire.
#[derive(Debug, PartialEq)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: &'static str,
    pub body: Bytes,
}

const JSON: &str = "application/json";

impl Api {
    pub fn new(node: Arc<AdminNode>) -> Api {
        let gc = GcClock::new(node.started);
        Api { node, gc }
    }

    /// Serves one request; errors become `{"error": ...}` with their status.
    pub async fn handle(&self, method: &Method, path: &str, body: &[u8]) -> Reply {
        match self.route(method, path, body).await {
            Ok(reply) => reply,
            Err(e) => error_reply(e),
        }
    }

    async fn route(&self, method: &Method, path: &str, body: &[u8]) -> ApiResult<Reply> {
        let node = &*self.node;
        let get = method == Method::GET;
        match path {
            "/metrics" if get => Ok(Reply {
                status: StatusCode::OK,
                content_type: crate::exposition::CONTENT_TYPE,
                body: Bytes::from(metrics::render(node)?),
            }),
            "/v1/node" if get => ok(&cluster::node(node)),
            "/v1/cluster" if get => ok(&cluster::cluster(node)),
            "/v1/version" if get => ok(&cluster::version()),
            "/v1/ring" if get => ok(&ring::ring(node, None)?),
            "/v1/gossip" if get => ok(&ring::gossip(node)?),
            "/v1/gossip/status" if get => ok(&ring::gossip_status(node)),
            "/v1/cms" if get => ok(&ring::cms(node)),
            "/v1/operation_mode" if get => ok(&operations::mode(node)),
            "/v1/removenode" if get => ok(&operations::removal_status(node)),
            "/v1/tables" if get => ok(&tables::stats(node)?),
            "/v1/compactions" if get => ok(&compaction::stats(node)?),
            "/v1/compactions/history" if get => ok(&compaction::history(node)),
            "/v1/tpstats" if get => ok(&pools::tpstats(node)),
            "/v1/tpstats/dropped" if get => ok(&pools::dropped(node)),
            "/v1/proxyhistograms" if get => ok(&proxy::histograms(node)),
            "/v1/gcstats" if get => ok(&pools::gcstats(&self.gc)),
            "/v1/snapshots" if get => ok(&snapshots::list(node).await?),
            "/v1/binary" if get => ok(&binary::status(node)),
            "/v1/hints" if get => ok(&hints::status(node)?),
            "/v1/hints/pending" if get => ok(&hints::pending(node)?),
            "/v1/streams" if get => ok(&streams::sessions(node)),
            "/v1/repairs" if get => ok(&repair::statuses(node)),
            "/v1/repair_sessions" if get => ok(&repair::sessions(node)),
            "/v1/autorepair" if get => ok(&auto_repair::status(node)),
            _ => match histograms_path(path) {
                Some((keyspace, table)) if get => {
                    ok(&snapshots::histograms(node, keyspace, table)?)
                }
                _ if get && path.starts_with("/v1/describering/") => ok(&ring::describe_ring(
                    node,
                    &path["/v1/describering/".len()..],
                )?),
                _ if get && path.starts_with("/v1/ring/") => {
                    ok(&ring::ring(node, path.strip_prefix("/v1/ring/"))?)
                }
                _ => self.route_settings(method, path, body).await,
            },
        }
    }

    async fn route_settings(&self, method: &Method, path: &str, body: &[u8]) -> ApiResult<Reply> {
        let node = &*self.node;
        let (get, put) = (method == Method::GET, method == Method::PUT);
        match path {
            "/v1/settings/compaction_throughput" if get => ok(&compaction::throughput(node)),
            "/v1/settings/compaction_throughput" if put => {
                ok(&compaction::set_throughput(node, &parse(body)?)?)
            }
            "/v1/settings/stream_throughput" if get => ok(&streams::throughput(node)?),
            "/v1/settings/stream_throughput" if put => {
                ok(&streams::set_throughput(node, &parse(body)?)?)
            }
            "/v1/logging" if get => ok(&logging::levels(node)),
            "/v1/logging" if put => ok(&logging::set(node, &selection_or_default(body)?)?),
            "/v1/settings/concurrent_compactors" if get => ok(&compaction::compactors(node)),
            "/v1/settings/concurrent_compactors" if put => {
                ok(&compaction::set_compactors(node, &parse(body)?)?)
            }
            "/v1/settings/trace_probability" if get => ok(&trace::probability(node)),
            "/v1/settings/trace_probability" if put => {
                ok(&trace::set_probability(node, &parse(body)?)?)
            }
            _ => match path.strip_prefix("/v1/settings/timeouts/") {
                Some(kind) if get => ok(&settings::timeout(node, kind)?),
                Some(kind) if put => ok(&settings::set_timeout(node, kind, &parse(body)?)?),
                _ => self.route_commands(method, path, body).await,
            },
        }
    }

    async fn route_commands(&self, method: &Method, path: &str, body: &[u8]) -> ApiResult<Reply> {
        let node = &*self.node;
        if method != Method::POST {
            return Err(unknown(method, path));
        }
        match path {
            "/v1/flush" => ok(&tables::flush(node, &selection(body)?).await?),
            "/v1/compact" => ok(&tables::compact(node, &selection(body)?).await?),
            "/v1/garbagecollect" => {
                ok(&tables::garbage_collect(node, &selection_or_default(body)?).await?)
            }
            "/v1/autocompaction" => {
                let request: AutocompactionRequest = parse(body)?;
                ok(&tables::autocompaction(
                    node,
                    &request.selection,
                    request.enabled,
                )?)
            }
            "/v1/snapshots" => ok(&snapshots::create(node, &parse(body)?).await?),
            "/v1/snapshots/clear" => {
                ok(&snapshots::clear(node, &selection_or_default(body)?).await?)
            }
            "/v1/drain" => {
                node.lifecycle.request_drain();
                node.lifecycle.drained().await;
                ok(&serde_json::json!({ "mode": node.lifecycle.mode().name() }))
            }
            "/v1/stopdaemon" => {
                node.lifecycle.request_stop();
                ok(&serde_json::json!({ "stopping": true }))
            }
            "/v1/scrub" => ok(&scrub::scrub(node, &selection_or_default(body)?).await?),
            "/v1/rebuild" => ok(&streams::rebuild(node, &selection_or_default(body)?).await?),
            "/v1/repair" => ok(&repair::repair(node, &selection_or_default(body)?).await?),
            "/v1/repair_sessions/cancel" => ok(&repair::cancel(node, &parse(body)?).await?),
            "/v1/autorepair/config" => ok(&auto_repair::configure(node, &parse(body)?)?),
            "/v1/cleanup" => ok(&cleanup::cleanup(node, &selection_or_default(body)?).await?),
            "/v1/decommission" => {
                ok(&operations::decommission(node, &selection_or_default(body)?).await?)
            }
            "/v1/removenode" => ok(&operations::removenode(node, &parse(body)?).await?),
            "/v1/move" => ok(&operations::move_token(node)?),
            "/v1/bootstrap/resume" => ok(&operations::resume_bootstrap(node).await?),
            "/v1/verify" => ok(&scrub::verify(node, &selection_or_default(body)?).await?),
            "/v1/endpoints" => ok(&ring::endpoints(node, &parse(body)?)?),
            "/v1/gossip/enable" => ok(&ring::set_gossip(node, true)?),
            "/v1/gossip/disable" => ok(&ring::set_gossip(node, false)?),
            "/v1/binary/enable" => ok(&binary::enable(node).await?),
            "/v1/binary/disable" => ok(&binary::disable(node).await?),
            "/v1/hints/enable" => ok(&hints::set_enabled(node, true)?),
            "/v1/hints/disable" => ok(&hints::set_enabled(node, false)?),
            "/v1/hints/pause" => ok(&hints::set_paused(node, true)?),
            "/v1/hints/resume" => ok(&hints::set_paused(node, false)?),
            "/v1/hints/datacenters/enable" => {
                ok(&hints::set_datacenter(node, &parse(body)?, true)?)
            }
            "/v1/hints/datacenters/disable" => {
                ok(&hints::set_datacenter(node, &parse(body)?, false)?)
            }
            "/v1/hints/truncate" => ok(&hints::truncate(node, &selection_or_default(body)?).await?),
            "/v1/batchlog/replay" => {
                let replayed = node.coordinator.replay_batchlog().await;
                let replayed = replayed.map_err(|e| ApiError::internal(e.to_string()))?;
                ok(&serde_json::json!({ "replayed": replayed }))
            }
            "/v1/size_estimates/refresh" => {
                let schema = node.processor.schema().schema.clone();
                let recorded =
                    system::size_estimates::record(&node.coordinator, &node.storage, &schema).await;
                recorded.map_err(|e| ApiError::internal(e.to_string()))?;
                ok(&serde_json::json!({}))
            }
            _ => Err(unknown(method, path)),
        }
    }
}

/// 404 for an unknown path, 405 for a known path with the wrong method.
fn unknown(method: &Method, path: &str) -> ApiError {
    const PATHS: [&str; 64] = [
        "/metrics",
        "/v1/garbagecollect",
        "/v1/logging",
        "/v1/proxyhistograms",
        "/v1/node",
        "/v1/cluster",
        "/v1/version",
        "/v1/tables",
        "/v1/compactions",
        "/v1/compactions/history",
        "/v1/tpstats",
        "/v1/tpstats/dropped",
        "/v1/gcstats",
        "/v1/settings/compaction_throughput",
        "/v1/settings/concurrent_compactors",
        "/v1/settings/trace_probability",
        "/v1/flush",
        "/v1/compact",
        "/v1/autocompaction",
        "/v1/drain",
        "/v1/stopdaemon",
        "/v1/settings/timeouts/",
        "/v1/snapshots",
        "/v1/snapshots/clear",
        "/v1/ring",
        "/v1/ring/",
        "/v1/gossip",
        "/v1/gossip/status",
        "/v1/gossip/enable",
        "/v1/gossip/disable",
        "/v1/cms",
        "/v1/endpoints",
        "/v1/describering/",
        "/v1/binary",
        "/v1/binary/enable",
        "/v1/binary/disable",
        "/v1/batchlog/replay",
        "/v1/size_estimates/refresh",
        "/v1/scrub",
        "/v1/cleanup",
        "/v1/decommission",
        "/v1/removenode",
        "/v1/move",
        "/v1/bootstrap/resume",
        "/v1/operation_mode",
        "/v1/verify",
        "/v1/hints",
        "/v1/hints/pending",
        "/v1/hints/enable",
        "/v1/hints/disable",
        "/v1/hints/pause",
        "/v1/hints/resume",
        "/v1/hints/datacenters/enable",
        "/v1/hints/datacenters/disable",
        "/v1/hints/truncate",
        "/v1/streams",
        "/v1/settings/stream_throughput",
        "/v1/rebuild",
        "/v1/repair",
        "/v1/repairs",
        "/v1/repair_sessions",
        "/v1/repair_sessions/cancel",
        "/v1/autorepair",
        "/v1/autorepair/config",
    ];
    let known = histograms_path(path).is_some()
        || PATHS
            .iter()
            .any(|p| path == *p || (p.ends_with('/') && path.starts_with(p)));
    if known {
        ApiError::method_not_allowed(method, path)
    } else {
        ApiError::not_found(format!("no endpoint {path}"))
    }
}

/// `/v1/tables/{keyspace}/{table}/histograms`: the keyspace and table.
fn histograms_path(path: &str) -> Option<(&str, &str)> {
    let rest = path
        .strip_prefix("/v1/tables/")?
        .strip_suffix("/histograms")?;
    let (keyspace, table) = rest.split_once('/')?;
    let valid = |s: &str| !s.is_empty() && !s.contains('/');
    (valid(keyspace) && valid(table)).then_some((keyspace, table))
}

/// A body that may be empty (every field defaulted).
fn selection_or_default<T: DeserializeOwned + Default>(body: &[u8]) -> ApiResult<T> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    parse(body)
}

/// The table selection of a command; an empty body selects every table.
fn selection(body: &[u8]) -> ApiResult<TableSelection> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(TableSelection::default());
    }
    parse(body)
}

fn parse<T: DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
}

/// An error as `{"error": ...}` with its status.
pub fn error_reply(e: ApiError) -> Reply {
    json_reply(e.status, &crate::api::types::ErrorBody { error: e.message })
}

fn ok<T: Serialize>(value: &T) -> ApiResult<Reply> {
    Ok(json_reply(StatusCode::OK, value))
}

fn json_reply<T: Serialize>(status: StatusCode, value: &T) -> Reply {
    match serde_json::to_vec(value) {
        Ok(body) => Reply {
            status,
            content_type: JSON,
            body: Bytes::from(body),
        },
        Err(e) => Reply {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            content_type: JSON,
            body: Bytes::from(format!("{{\"error\":\"cannot encode the response: {e}\"}}")),
        },
    }
}

#[cfg(test)]
#[path = "router_tests.rs"]
pub(crate) mod tests;
