//! The option groups: `-rate`, `-pop`, `-node`, `-port`, `-mode`, `-col`, `-schema`,
//! `-log`, `-graph`, `-errors`, each with cassandra-stress's defaults.

use std::time::Duration;

use super::{key_value, sub_options, CliError, Group};
use crate::dist::{parse_bounds, DistSpec};
use crate::settings::{
    Columns, CommandSettings, Errors, Graph, Limit, Log, Mode, Population, Rate, Schema, Settings,
};

/// Applies the groups to the defaults for `command`.
pub(super) fn build(command: CommandSettings, groups: &[Group]) -> Result<Settings, CliError> {
    let mut s = defaults(command);
    let mut seen: Vec<&str> = Vec::new();
    for g in groups {
        if seen.contains(&g.name.as_str()) {
            return Err(CliError::new(
                format!("{} is given twice", g.name),
                Some(&g.name),
            ));
        }
        seen.push(&g.name);
        apply(&mut s, g).map_err(|m| CliError::new(m, Some(&g.name)))?;
    }
    Ok(s)
}

fn defaults(command: CommandSettings) -> Settings {
    let limit = match command.count() {
        Some(n) if n > 0 => n as i64,
        _ => 1_000_000,
    };
    let seq_default = command.ops.iter().all(|(k, _)| k.is_write()) && !command.ops.is_empty();
    let population = if seq_default {
        Population::Seq {
            start: 1,
            end: limit,
            wrap: true,
        }
    } else {
        Population::Dist(DistSpec::gaussian(1, limit))
    };
    let rate = match (command.count(), seq_default) {
        (Some(n), true) if n > 0 => Rate::Threads {
            threads: 200,
            limit: None,
        },
        _ => Rate::Auto {
            min: 4,
            max: 1000,
            auto: true,
        },
    };
    Settings {
        command,
        rate,
        population,
        nodes: vec!["localhost".into()],
        datacenter: None,
        native_port: 9042,
        jmx_port: 7199,
        mode: Mode {
            protocol_version: 5,
            compression: None,
            user: None,
            password: None,
            max_pending: 128,
            connections_per_host: 8,
        },
        columns: Columns {
            count: DistSpec::fixed(5),
            size: DistSpec::fixed(34),
            names: column_names(5),
        },
        schema: Schema {
            keyspace: "keyspace1".into(),
            strategy: "org.apache.cassandra.locator.SimpleStrategy".into(),
            replication: vec![("replication_factor".into(), "1".into())],
            compaction: None,
            compaction_options: Vec::new(),
            compression: None,
        },
        log: Log {
            interval: Duration::from_secs(1),
            file: None,
            hdr_file: None,
            no_summary: false,
            no_settings: false,
            level: "NORMAL".into(),
        },
        graph: Graph {
            file: None,
            title: None,
            revision: "unknown".into(),
            op: None,
            png: None,
        },
        errors: Errors {
            ignore: false,
            tries: 10,
        },
    }
}

fn column_names(n: i64) -> Vec<String> {
    (0..n).map(|i| format!("C{i}")).collect()
}

fn apply(s: &mut Settings, g: &Group) -> Result<(), String> {
    match g.name.as_str() {
        "-rate" => s.rate = rate(&g.params)?,
        "-pop" => s.population = population(&g.params, &s.population)?,
        "-node" => node(s, &g.params)?,
        "-port" => port(s, &g.params)?,
        "-mode" => mode(&mut s.mode, &g.params)?,
        "-col" => s.columns = columns(&g.params)?,
        "-schema" => schema(&mut s.schema, &g.params)?,
        "-log" => log(&mut s.log, &g.params)?,
        "-graph" => graph(&mut s.graph, &g.params)?,
        "-errors" => errors(&mut s.errors, &g.params)?,
        other => return Err(format!("Unrecognised option {other}")),
    }
    Ok(())
}

fn invalid(group: &str, p: &str) -> String {
    format!("Invalid {group} option: {p}")
}

fn rate(params: &[String]) -> Result<Rate, String> {
    let (mut threads, mut min, mut max, mut auto, mut limit) = (None, None, None, false, None);
    for p in params {
        let bad = || invalid("-rate", p);
        if let Some(v) = key_value(p, "threads>=") {
            min = Some(v.parse::<u32>().map_err(|_| bad())?);
        } else if let Some(v) = key_value(p, "threads<=") {
            max = Some(v.parse::<u32>().map_err(|_| bad())?);
        } else if let Some(v) = key_value(p, "threads=") {
            threads = Some(v.parse::<u32>().map_err(|_| bad())?);
        } else if let Some(v) = key_value(p, "fixed=") {
            limit = Some(Limit {
                per_second: per_second(v).ok_or_else(bad)?,
                fixed: true,
            });
        } else if let Some(v) = key_value(p, "throttle=") {
            limit = Some(Limit {
                per_second: per_second(v).ok_or_else(bad)?,
                fixed: false,
            });
        } else if p.eq_ignore_ascii_case("auto") {
            auto = true;
        } else {
            return Err(bad());
        }
    }
    match threads {
        Some(t) if t > 0 && min.is_none() && max.is_none() && !auto => {
            Ok(Rate::Threads { threads: t, limit })
        }
        None if limit.is_none() => {
            let (min, max) = (min.unwrap_or(4), max.unwrap_or(1000));
            if min == 0 || min > max {
                return Err("-rate needs 0 < threads>= <= threads<=".into());
            }
            Ok(Rate::Auto { min, max, auto })
        }
        _ => Err(
            "-rate takes threads=N [fixed=|throttle=N/s], or [auto] threads>=A threads<=B".into(),
        ),
    }
}

/// `200/s`, `200` (per second), `12000/m`.
fn per_second(v: &str) -> Option<u64> {
    let (n, unit) = v.split_once('/').unwrap_or((v, "s"));
    let n: u64 = n.trim().parse().ok()?;
    let per = match unit.trim().to_ascii_lowercase().as_str() {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return None,
    };
    (n >= per).then_some(n / per)
}

fn population(params: &[String], current: &Population) -> Result<Population, String> {
    let mut pop = current.clone();
    let mut wrap = None;
    for p in params {
        let bad = || invalid("-pop", p);
        if let Some(v) = key_value(p, "seq=") {
            let (start, end) = parse_bounds(v).ok_or_else(bad)?;
            pop = Population::Seq {
                start,
                end,
                wrap: true,
            };
        } else if let Some(v) = key_value(p, "dist=") {
            pop = Population::Dist(DistSpec::parse(v)?);
        } else if p.eq_ignore_ascii_case("no-wrap") {
            wrap = Some(false);
        } else {
            return Err(bad());
        }
    }
    if let (Some(w), Population::Seq { wrap, .. }) = (wrap, &mut pop) {
        *wrap = w;
    }
    Ok(pop)
}

fn node(s: &mut Settings, params: &[String]) -> Result<(), String> {
    for p in params {
        if let Some(v) = key_value(p, "datacenter=") {
            s.datacenter = Some(v.to_string());
        } else if p.eq_ignore_ascii_case("whitelist") || p.contains('=') {
            return Err(invalid("-node", p));
        } else {
            s.nodes = p
                .split(',')
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
        }
    }
    if s.nodes.is_empty() {
        return Err("-node needs at least one host".into());
    }
    Ok(())
}

fn port(s: &mut Settings, params: &[String]) -> Result<(), String> {
    for p in params {
        let bad = || invalid("-port", p);
        if let Some(v) = key_value(p, "native=") {
            s.native_port = v.parse().map_err(|_| bad())?;
        } else if let Some(v) = key_value(p, "jmx=") {
            s.jmx_port = v.parse().map_err(|_| bad())?;
        } else {
            return Err(bad());
        }
    }
    Ok(())
}

fn mode(m: &mut Mode, params: &[String]) -> Result<(), String> {
    for p in params {
        let bad = || invalid("-mode", p);
        let lower = p.to_ascii_lowercase();
        if lower == "native" || lower == "cql3" || lower == "prepared" {
            continue;
        }
        if let Some(v) = key_value(p, "protocolVersion=") {
            m.protocol_version = v
                .trim_start_matches(['v', 'V'])
                .parse()
                .map_err(|_| bad())?;
            if !(4..=5).contains(&m.protocol_version) {
                return Err(format!("Protocol version {v} is not supported (4 or 5)"));
            }
        } else if let Some(v) = key_value(p, "compression=") {
            m.compression = match v.to_ascii_lowercase().as_str() {
                "none" => None,
                "lz4" | "snappy" => Some(v.to_ascii_lowercase()),
                _ => return Err(bad()),
            };
        } else if let Some(v) = key_value(p, "user=") {
            m.user = Some(v.to_string());
        } else if let Some(v) = key_value(p, "password=") {
            m.password = Some(v.to_string());
        } else if let Some(v) = key_value(p, "maxPending=") {
            m.max_pending = v.parse().map_err(|_| bad())?;
        } else if let Some(v) = key_value(p, "connectionsPerHost=") {
            m.connections_per_host = v.parse().map_err(|_| bad())?;
        } else {
            return Err(bad());
        }
    }
    Ok(())
}

fn columns(params: &[String]) -> Result<Columns, String> {
    let (mut count, mut size, mut names) = (DistSpec::fixed(5), DistSpec::fixed(34), None);
    for p in params {
        if let Some(v) = key_value(p, "n=") {
            count = DistSpec::parse(v)?;
        } else if let Some(v) = key_value(p, "size=") {
            size = DistSpec::parse(v)?;
        } else if let Some(v) = key_value(p, "names=") {
            names = Some(v.split(',').map(str::to_string).collect::<Vec<_>>());
        } else {
            return Err(invalid("-col", p));
        }
    }
    if count.min() < 1 || size.min() < 0 || count.max() > 1000 {
        return Err("-col n= must be within 1..1000 and size= non-negative".into());
    }
    let names = names.unwrap_or_else(|| column_names(count.max()));
    if names.len() as i64 != count.max() {
        return Err(format!(
            "-col names= has {} names but n= allows {}",
            names.len(),
            count.max()
        ));
    }
    Ok(Columns { count, size, names })
}

fn schema(s: &mut Schema, params: &[String]) -> Result<(), String> {
    for p in params {
        if let Some(parts) = sub_options(p, "replication") {
            replication(s, &parts).ok_or_else(|| invalid("-schema", p))?;
        } else if let Some(parts) = sub_options(p, "compaction") {
            let opts = pairs(&parts).ok_or_else(|| invalid("-schema", p))?;
            let (strategy, rest): (Vec<_>, Vec<_>) =
                opts.into_iter().partition(|(k, _)| k == "strategy");
            s.compaction = strategy.into_iter().next().map(|(_, v)| v);
            s.compaction_options = rest;
        } else if let Some(v) = key_value(p, "keyspace=") {
            s.keyspace = v.to_string();
        } else if let Some(v) = key_value(p, "compression=") {
            s.compression = Some(v.to_string());
        } else {
            return Err(invalid("-schema", p));
        }
    }
    Ok(())
}

fn replication(s: &mut Schema, parts: &[&str]) -> Option<()> {
    let mut options = Vec::new();
    for (k, v) in pairs(parts)? {
        match k.as_str() {
            "strategy" => s.strategy = full_strategy_name(&v),
            "factor" => options.push(("replication_factor".to_string(), v)),
            _ => options.push((k, v)),
        }
    }
    s.replication = options;
    Some(())
}

fn full_strategy_name(v: &str) -> String {
    if v.contains('.') {
        v.to_string()
    } else {
        format!("org.apache.cassandra.locator.{v}")
    }
}

fn pairs(parts: &[&str]) -> Option<Vec<(String, String)>> {
    parts
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

fn log(l: &mut Log, params: &[String]) -> Result<(), String> {
    for p in params {
        let bad = || invalid("-log", p);
        if let Some(v) = key_value(p, "interval=") {
            l.interval = log_interval(v).ok_or_else(bad)?;
        } else if let Some(v) = key_value(p, "hdrfile=") {
            l.hdr_file = Some(v.to_string());
        } else if let Some(v) = key_value(p, "file=") {
            l.file = Some(v.to_string());
        } else if let Some(v) = key_value(p, "level=") {
            l.level = v.to_ascii_uppercase();
        } else if p.eq_ignore_ascii_case("no-summary") {
            l.no_summary = true;
        } else if p.eq_ignore_ascii_case("no-settings") {
            l.no_settings = true;
        } else {
            return Err(bad());
        }
    }
    Ok(())
}

/// `interval=` in seconds (`1`, `1s`) or milliseconds (`500ms`).
fn log_interval(v: &str) -> Option<Duration> {
    let d = if let Some(ms) = v.strip_suffix("ms") {
        Duration::from_millis(ms.parse().ok()?)
    } else {
        Duration::from_secs(v.strip_suffix('s').unwrap_or(v).parse().ok()?)
    };
    (!d.is_zero()).then_some(d)
}

fn graph(g: &mut Graph, params: &[String]) -> Result<(), String> {
    for p in params {
        if let Some(v) = key_value(p, "file=") {
            g.file = Some(v.to_string());
        } else if let Some(v) = key_value(p, "title=") {
            g.title = Some(v.to_string());
        } else if let Some(v) = key_value(p, "revision=") {
            g.revision = v.to_string();
        } else if let Some(v) = key_value(p, "op=") {
            g.op = Some(v.to_string());
        } else if let Some(v) = key_value(p, "png=") {
            g.png = Some(v.to_string());
        } else {
            return Err(invalid("-graph", p));
        }
    }
    Ok(())
}

fn errors(e: &mut Errors, params: &[String]) -> Result<(), String> {
    for p in params {
        if p.eq_ignore_ascii_case("ignore") {
            e.ignore = true;
        } else if let Some(v) = key_value(p, "retries=") {
            let retries: u32 = v.parse().map_err(|_| invalid("-errors", p))?;
            e.tries = retries.saturating_add(1);
        } else {
            return Err(invalid("-errors", p));
        }
    }
    Ok(())
}
