//! `status`, `info`, `ring`, `describecluster` and `version`, printed as Cassandra 5.0.4 does.

use admin::types::{CacheFigures, ClusterInfo, NodeInfo, Version};

use super::client::Client;
use super::format::{file_size, percent, TableBuilder};
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
            Ok(describecluster(
                &client.get("/v1/cluster").map_err(node_error)?,
            ))
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
            let node = node(client)?;
            Ok(if command == "status" {
                status(&node)
            } else {
                ring(&node)
            })
        }
        _ => Err(unexpected(&[command.to_string()])),
    }
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

fn ownership_header(node: &NodeInfo) -> &'static str {
    if node.effective_ownership.is_some() {
        "Owns (effective)"
    } else {
        "Owns"
    }
}

fn note(node: &NodeInfo) -> String {
    node.ownership_note
        .as_ref()
        .map(|n| format!("Note: {n}\n"))
        .unwrap_or_default()
}

pub fn status(node: &NodeInfo) -> String {
    let header = format!("Datacenter: {}", node.data_center);
    let mut out = format!("{header}\n{}\n", "=".repeat(header.len()));
    out.push_str("Status=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n");
    let owns = node
        .effective_ownership
        .map_or("?".to_string(), |o| percent(o, 1));
    let load = file_size(node.load_bytes);
    let mut table = TableBuilder::new("  ");
    if node.tokens.len() == 1 {
        table.add([
            "--",
            "Address",
            "Load",
            ownership_header(node),
            "Host ID",
            "Token",
            "Rack",
        ]);
        table.add([
            "UN",
            &node.address,
            &load,
            &owns,
            &node.host_id,
            &node.tokens[0],
            &node.rack,
        ]);
    } else {
        let tokens = node.tokens.len().to_string();
        table.add([
            "--",
            "Address",
            "Load",
            "Tokens",
            ownership_header(node),
            "Host ID",
            "Rack",
        ]);
        table.add([
            "UN",
            &node.address,
            &load,
            &tokens,
            &owns,
            &node.host_id,
            &node.rack,
        ]);
    }
    out.push_str(&table.render());
    out.push('\n');
    out.push_str(&note(node));
    out
}

pub fn ring(node: &NodeInfo) -> String {
    let width = format!("{}:{}", node.address, node.storage_port).len();
    let row = |cells: [&str; 7]| {
        format!(
            "{:<width$}  {:<12}{:<7}{:<8}{:<16}{:<20}{:<44}\n",
            cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]
        )
    };
    let mut out = format!("\nDatacenter: {}\n==========\n", node.data_center);
    out.push_str(&row([
        "Address", "Rack", "Status", "State", "Load", "Owns", "Token",
    ]));
    match node.tokens.last() {
        Some(last) if node.tokens.len() > 1 => out.push_str(&row(["", "", "", "", "", "", last])),
        _ => out.push('\n'),
    }
    let owns = node
        .effective_ownership
        .map_or("?".to_string(), |o| percent(o, 2));
    let load = file_size(node.load_bytes);
    for token in &node.tokens {
        out.push_str(&row([
            &node.address,
            &node.rack,
            "Up",
            "Normal",
            &load,
            &owns,
            token,
        ]));
    }
    out.push('\n');
    if node.tokens.len() > 1 {
        out.push_str("  Warning: \"nodetool ring\" is used to output all the tokens of a node.\n");
        out.push_str(
            "  To view status related info of a node use \"nodetool status\" instead.\n\n",
        );
    }
    out.push_str("\n  ");
    out.push_str(&note(node));
    out
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

pub fn describecluster(c: &ClusterInfo) -> String {
    let mut out = String::from("Cluster Information:\n");
    out.push_str(&format!("\tName: {}\n\tSnitch: {}\n", c.name, c.snitch));
    out.push_str("\tDynamicEndPointSnitch: disabled\n");
    out.push_str(&format!(
        "\tPartitioner: {}\n\tSchema versions:\n",
        c.partitioner
    ));
    out.push_str(&format!("\t\t{}: [{}]\n\n", c.schema_version, c.address));
    out.push_str("Stats for all nodes:\n\tLive: 1\n\tJoining: 0\n\tMoving: 0\n\tLeaving: 0\n\tUnreachable: 0\n\n");
    out.push_str(&format!(
        "Data Centers: \n\t{} #Nodes: 1 #Down: 0\n\n",
        c.data_center
    ));
    out.push_str(&format!(
        "Database versions:\n\t{}: [{}:{}]\n\n",
        c.release_version, c.address, c.storage_port
    ));
    out.push_str("Keyspaces:\n");
    for ks in &c.keyspaces {
        let options: Vec<String> = ks.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!(
            "\t{} -> Replication class: {} {{{}}}\n",
            ks.name,
            ks.class,
            options.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::types::KeyspaceReplication;

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
    fn status_with_effective_ownership() {
        // matches Cassandra 5.0.4 (`refcass nodetool status nt_helper`)
        let tokens: Vec<String> = (0..16).map(|i| i.to_string()).collect();
        let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
        assert_eq!(
            status(&node(&tokens, Some(1.0))),
            "Datacenter: datacenter1\n=======================\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n\
--  Address    Load       Tokens  Owns (effective)  Host ID                               Rack \n\
UN  127.0.0.2  309.2 KiB  16      100.0%            e0be2bdb-e194-4014-ab11-156f4ff3bc07  rack1\n\n"
        );
    }

    #[test]
    fn status_without_effective_ownership() {
        // matches Cassandra 5.0.4 (`refcass nodetool status`)
        let mut n = node(&["1", "2"], None);
        n.load_bytes = 300_165;
        let text = status(&n);
        assert!(text.contains("--  Address    Load        Tokens  Owns  Host ID                               Rack \n"));
        assert!(text.contains("UN  127.0.0.2  293.13 KiB  2       ?     e0be2bdb-e194-4014-ab11-156f4ff3bc07  rack1\n"));
        assert!(text.ends_with("rack1\n\nNote: Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless\n"));
    }

    #[test]
    fn ring_lists_every_token() {
        // matches Cassandra 5.0.4 (`refcass nodetool ring`)
        let mut n = node(&["-8537504946695191133", "8468970897111777244"], None);
        n.load_bytes = 300_165;
        let text = ring(&n);
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], "");
        assert_eq!(lines[1], "Datacenter: datacenter1");
        assert_eq!(lines[2], "==========");
        assert_eq!(lines[3], "Address         Rack        Status State   Load            Owns                Token                                       ");
        assert_eq!(lines[4], "                                                                               8468970897111777244                         ");
        assert_eq!(lines[5], "127.0.0.2       rack1       Up     Normal  293.13 KiB      ?                   -8537504946695191133                        ");
        assert!(text.ends_with("\n\n  Warning: \"nodetool ring\" is used to output all the tokens of a node.\n  To view status related info of a node use \"nodetool status\" instead.\n\n\n  Note: Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless\n"));
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

    #[test]
    fn describecluster_layout() {
        // matches Cassandra 5.0.4 (`refcass nodetool describecluster`)
        let c = ClusterInfo {
            name: "refcass".into(),
            snitch: "org.apache.cassandra.locator.SimpleSnitch".into(),
            partitioner: "org.apache.cassandra.dht.Murmur3Partitioner".into(),
            schema_version: "5f68869d-2066-3466-a2d2-4dd2d04fc092".into(),
            address: "127.0.0.2".into(),
            storage_port: 7000,
            data_center: "datacenter1".into(),
            release_version: "5.0.4".into(),
            keyspaces: vec![KeyspaceReplication {
                name: "x".into(),
                class: "SimpleStrategy".into(),
                options: vec![("replication_factor".into(), "1".into())],
            }],
        };
        let text = describecluster(&c);
        assert!(text.starts_with("Cluster Information:\n\tName: refcass\n\tSnitch: org.apache.cassandra.locator.SimpleSnitch\n"));
        assert!(text.contains("\tSchema versions:\n\t\t5f68869d-2066-3466-a2d2-4dd2d04fc092: [127.0.0.2]\n\nStats for all nodes:\n\tLive: 1\n"));
        assert!(text.contains("Data Centers: \n\tdatacenter1 #Nodes: 1 #Down: 0\n\nDatabase versions:\n\t5.0.4: [127.0.0.2:7000]\n\nKeyspaces:\n\tx -> Replication class: SimpleStrategy {replication_factor=1}\n"));
    }
}
