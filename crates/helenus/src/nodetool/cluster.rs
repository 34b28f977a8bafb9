//! `status`, `info`, `ring`, `describecluster`, `gossipinfo`, `cms` and `version`, printed as
//! Cassandra does (the cluster-wide views are in [`ring`]).

use admin::types::{CacheFigures, EndpointsRequest, GossipEndpoint, NodeInfo, RingInfo, Version};

use super::checks::switch;
use super::client::Client;
use super::format::file_size;
use super::ring;
use super::{no_args, node_error, unexpected, Failure, Output};

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    let (flags, words): (Vec<String>, Vec<String>) =
        args.iter().cloned().partition(|a| a.starts_with('-'));
    match command {
        "version" => {
            no_args(args)?;
            let v: Version = client.get("/v1/version").map_err(node_error)?;
            Ok(format!("ReleaseVersion: {}\n", v.release_version))
        }
        "describecluster" => {
            no_args(args)?;
            let cluster = client.get("/v1/cluster").map_err(node_error)?;
            Ok(ring::describecluster(&cluster, &ring_of(client, None)?))
        }
        "gossipinfo" => {
            only_flags(&flags, &["-r", "--resolve-ip"])?;
            no_args(&words)?;
            let endpoints: Vec<GossipEndpoint> = client.get("/v1/gossip").map_err(node_error)?;
            Ok(ring::gossipinfo(&endpoints))
        }
        "statusgossip" | "enablegossip" | "disablegossip" => {
            switch(client, command, args, "/v1/gossip", "/v1/gossip/status")
        }
        "getendpoints" => {
            let [keyspace, table, key] = words.as_slice() else {
                return Err(Failure::Usage(
                    "getendpoints requires keyspace, table and partition key arguments".into(),
                ));
            };
            let request = EndpointsRequest {
                keyspace: keyspace.clone(),
                table: table.clone(),
                key: key.clone(),
            };
            let found: Vec<String> = client.post("/v1/endpoints", &request).map_err(node_error)?;
            Ok(found.iter().map(|a| format!("{a}\n")).collect())
        }
        "describering" => {
            let [keyspace] = words.as_slice() else {
                return Err(Failure::Usage(
                    "describering requires a keyspace argument".into(),
                ));
            };
            let ranges = client
                .get(&format!("/v1/describering/{keyspace}"))
                .map_err(node_error)?;
            Ok(ring::describering(&ranges))
        }
        "cms" => {
            if words.iter().any(|w| w != "describe") || !flags.is_empty() {
                return Err(unexpected(args));
            }
            Ok(ring::cms(&client.get("/v1/cms").map_err(node_error)?))
        }
        "info" => {
            only_flags(&flags, &["-T", "--tokens"])?;
            no_args(&words)?;
            Ok(info(&node(client)?, !flags.is_empty()))
        }
        "status" | "ring" => {
            only_flags(&flags, &["-r", "--resolve-ip"])?;
            if words.len() > 1 {
                return Err(unexpected(&words[1..]));
            }
            let ring = ring_of(client, words.first().map(String::as_str))?;
            Ok(if command == "status" {
                ring::status(&ring)
            } else {
                ring::ring(&ring)
            })
        }
        _ => Err(unexpected(&[command.to_string()])),
    }
}

/// The ring, with ownership under `keyspace`'s replication when one is named.
fn ring_of(client: &Client, keyspace: Option<&str>) -> Result<RingInfo, Failure> {
    let path = keyspace.map_or("/v1/ring".to_string(), |ks| format!("/v1/ring/{ks}"));
    client.get(&path).map_err(node_error)
}

fn node(client: &Client) -> Result<NodeInfo, Failure> {
    client.get("/v1/node").map_err(node_error)
}

fn only_flags(flags: &[String], allowed: &[&str]) -> Result<(), Failure> {
    let unknown: Vec<String> = flags
        .iter()
        .filter(|f| !allowed.contains(&f.as_str()))
        .cloned()
        .collect();
    no_args(&unknown)
}

const NO_CACHE: &str = "entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, NaN recent hit rate, 0 save period in seconds";

/// The `Key Cache` line. Helenus never saves the key cache, so its save period is 0.
fn key_cache(c: &CacheFigures) -> String {
    format!(
        "entries {}, size {}, capacity {}, {} hits, {} requests, {:.3} recent hit rate, 0 save period in seconds",
        c.entries,
        file_size(c.size_bytes),
        file_size(c.capacity_bytes),
        c.hits,
        c.requests(),
        c.hit_rate()
    )
}

/// The `Chunk Cache` line (printed only when the chunk cache is enabled, as Cassandra does).
fn chunk_cache(c: &CacheFigures) -> String {
    format!(
        "entries {}, size {}, capacity {}, {} misses, {} requests, {:.3} recent hit rate, {:.3} microseconds miss latency",
        c.entries,
        file_size(c.size_bytes),
        file_size(c.capacity_bytes),
        c.misses,
        c.requests(),
        c.hit_rate(),
        c.miss_latency_micros.unwrap_or(f64::NAN)
    )
}

pub fn info(node: &NodeInfo, all_tokens: bool) -> String {
    let mb = |bytes: u64| format!("{:.2}", bytes as f64 / (1024.0 * 1024.0));
    let repaired = if node.load_bytes == 0 {
        "100.0%"
    } else {
        "0.0%"
    };
    let mut lines: Vec<(&str, String)> = vec![
        ("ID", node.host_id.clone()),
        ("Gossip active", node.gossip_active.to_string()),
        (
            "Native Transport active",
            node.native_transport_active.to_string(),
        ),
        ("Load", file_size(node.load_bytes)),
        ("Uncompressed load", file_size(node.uncompressed_load_bytes)),
        ("Generation No", node.generation.to_string()),
        ("Uptime (seconds)", node.uptime_seconds.to_string()),
        (
            "Heap Memory (MB)",
            format!(
                "{} / {}",
                mb(node.memory_used_bytes),
                mb(node.memory_total_bytes)
            ),
        ),
        ("Off Heap Memory (MB)", "0.00".into()),
        ("Data Center", node.data_center.clone()),
        ("Rack", node.rack.clone()),
        ("Exceptions", "0".into()),
        ("Key Cache", key_cache(&node.key_cache)),
        ("Row Cache", NO_CACHE.into()),
        ("Counter Cache", NO_CACHE.into()),
    ];
    if let Some(chunks) = &node.chunk_cache {
        lines.push(("Chunk Cache", chunk_cache(chunks)));
    }
    lines.extend([
        (
            "Network Cache",
            "size 0 bytes, overflow size: 0 bytes, capacity 0 bytes".into(),
        ),
        ("Percent Repaired", repaired.into()),
    ]);
    if all_tokens || node.tokens.len() == 1 {
        lines.extend(node.tokens.iter().map(|t| ("Token", t.clone())));
    } else {
        let hint = format!(
            "(invoke with -T/--tokens to see all {} tokens)",
            node.tokens.len()
        );
        lines.push(("Token", hint));
    }
    lines.extend([
        ("Bootstrap state", "COMPLETED".to_string()),
        ("Bootstrap failed", "false".into()),
        ("Decommissioning", "false".into()),
        ("Decommission failed", "false".into()),
    ]);
    lines
        .iter()
        .map(|(k, v)| format!("{k:<23}: {v}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(tokens: &[&str], owns: Option<f64>) -> NodeInfo {
        NodeInfo {
            host_id: "e0be2bdb-e194-4014-ab11-156f4ff3bc07".into(),
            address: "127.0.0.2".into(),
            storage_port: 7000,
            data_center: "datacenter1".into(),
            rack: "rack1".into(),
            mode: "NORMAL".into(),
            gossip_active: false,
            native_transport_active: true,
            load_bytes: 316_621,
            uncompressed_load_bytes: 511_467,
            generation: 1_795_355_008,
            uptime_seconds: 3664,
            memory_used_bytes: 0,
            memory_total_bytes: 0,
            tokens: tokens.iter().map(|t| t.to_string()).collect(),
            effective_ownership: owns,
            ownership_note: owns.is_none().then(|| "Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless".into()),
            key_cache: CacheFigures::default(),
            chunk_cache: None,
        }
    }

    #[test]
    fn info_lines() {
        // matches Cassandra 5.0.4 (`refcass nodetool info`) for the figures Helenus has
        let tokens: Vec<String> = (0..16).map(|i| i.to_string()).collect();
        let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
        let text = info(&node(&tokens, Some(1.0)), false);
        assert!(text.starts_with("ID                     : e0be2bdb-e194-4014-ab11-156f4ff3bc07\nGossip active          : false\nNative Transport active: true\nLoad                   : 309.2 KiB\nUncompressed load      : 499.48 KiB\nGeneration No          : 1795355008\nUptime (seconds)       : 3664\n"));
        assert!(text.contains("Token                  : (invoke with -T/--tokens to see all 16 tokens)\nBootstrap state        : COMPLETED\n"));
        assert!(text.ends_with("Decommission failed    : false\n"));
        assert!(!text.contains("Chunk Cache"), "disabled");
    }

    #[test]
    fn info_cache_lines() {
        // the Key Cache figures of `refcass nodetool info`; Chunk Cache as Cassandra 5.0's Info
        // prints it when the chunk cache is enabled
        let mut n = node(&["1"], Some(1.0));
        n.key_cache = CacheFigures {
            entries: 50,
            size_bytes: 4280,
            capacity_bytes: 100 << 20,
            hits: 141,
            misses: 33,
            miss_latency_micros: None,
        };
        n.chunk_cache = Some(CacheFigures {
            entries: 2,
            size_bytes: 128 << 10,
            capacity_bytes: 480 << 20,
            hits: 18,
            misses: 4,
            miss_latency_micros: None,
        });
        let text = info(&n, false);
        assert!(text.contains("Key Cache              : entries 50, size 4.18 KiB, capacity 100 MiB, 141 hits, 174 requests, 0.810 recent hit rate, 0 save period in seconds\n"), "{text}");
        assert!(text.contains("Counter Cache          : entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, NaN recent hit rate, 0 save period in seconds\nChunk Cache            : entries 2, size 128 KiB, capacity 480 MiB, 4 misses, 22 requests, 0.818 recent hit rate, NaN microseconds miss latency\nNetwork Cache          : "), "{text}");
        n.chunk_cache = n.chunk_cache.map(|c| CacheFigures {
            miss_latency_micros: Some(12.34567),
            ..c
        });
        assert!(info(&n, false).contains(", 12.346 microseconds miss latency\n"));
    }
}
