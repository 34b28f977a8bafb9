//! The `******************** Stress Settings ********************` dump cassandra-stress
//! prints before a run, section by section, from our settings.

use crate::report::grouped_int;
use crate::settings::{Population, Rate, Settings, Stop};

/// The dump's lines.
pub fn lines(s: &Settings) -> Vec<String> {
    let mut out = vec!["******************** Stress Settings ********************".to_string()];
    command(s, &mut out);
    rate(s, &mut out);
    population(s, &mut out);
    columns(s, &mut out);
    rest(s, &mut out);
    out
}

fn push(out: &mut Vec<String>, section: &str, items: &[(&str, String)]) {
    out.push(format!("{section}:"));
    out.extend(items.iter().map(|(k, v)| format!("  {k}: {v}")));
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "null".into())
}

fn command(s: &Settings, out: &mut Vec<String>) {
    let c = &s.command;
    let mut items = vec![("Type", c.name.to_string())];
    match &c.stop {
        Stop::Count(n) => items.push(("Count", grouped_int(*n))),
        Stop::Duration { amount, unit, .. } => {
            items.push(("Duration", format!("{amount} {}", unit.to_uppercase())))
        }
        Stop::Uncertainty { .. } => items.push(("Count", "-1".into())),
    }
    items.push(("No Warmup", c.no_warmup.to_string()));
    items.push(("Consistency Level", c.consistency.clone()));
    items.push((
        "Target Uncertainty",
        match c.stop {
            Stop::Uncertainty { target, min, max } => {
                format!("{target} (min {min}, max {max} measurements)")
            }
            _ => "not applicable".into(),
        },
    ));
    if c.name == "mixed" {
        let ratio: Vec<String> = c
            .ops
            .iter()
            .map(|(k, w)| format!("{}={w}", k.name()))
            .collect();
        items.push(("Command Ratios", format!("{{{}}}", ratio.join(", "))));
    }
    items.push(("Key Size (bytes)", crate::keys::KEY_SIZE.to_string()));
    items.push((
        "Counter Increment Distibution",
        format!("add={}", spec_short(&c.add.to_string())),
    ));
    push(out, "Command", &items);
}

/// `Fixed:  key=1` → `fixed(1)`, as cassandra-stress echoes its `add=` default.
fn spec_short(display: &str) -> String {
    display
        .strip_prefix("Fixed:  key=")
        .map_or_else(|| display.to_string(), |v| format!("fixed({v})"))
}

fn rate(s: &Settings, out: &mut Vec<String>) {
    let items = match &s.rate {
        Rate::Threads { threads, limit } => vec![
            ("Auto", "false".into()),
            ("Thread Count", threads.to_string()),
            ("OpsPer Sec", limit.map_or(0, |l| l.per_second).to_string()),
        ],
        Rate::Auto { min, max, auto } => vec![
            ("Auto", auto.to_string()),
            ("Min Threads", min.to_string()),
            ("Max Threads", max.to_string()),
        ],
    };
    push(out, "Rate", &items);
}

fn population(s: &Settings, out: &mut Vec<String>) {
    let items = match &s.population {
        Population::Seq { start, end, wrap } => vec![
            ("Sequence", format!("{start}..{end}")),
            ("Order", "ARBITRARY".into()),
            ("Wrap", wrap.to_string()),
        ],
        Population::Dist(d) => vec![
            ("Distribution", d.to_string()),
            ("Order", "ARBITRARY".into()),
            ("Wrap", "false".into()),
        ],
    };
    push(out, "Population", &items);
    push(
        out,
        "Insert",
        &[
            ("Revisits", "Uniform:  min=1,max=1000000".into()),
            ("Visits", "Fixed:  key=1".into()),
            (
                "Row Population Ratio",
                "Ratio: divisor=1.000000;delegate=Fixed:  key=1".into(),
            ),
            ("Batch Type", "not batching".into()),
        ],
    );
}

fn columns(s: &Settings, out: &mut Vec<String>) {
    let c = &s.columns;
    push(
        out,
        "Columns",
        &[
            ("Max Columns Per Key", c.names.len().to_string()),
            ("Column Names", format!("[{}]", c.names.join(", "))),
            ("Comparator", "AsciiType".into()),
            ("Timestamp", "null".into()),
            ("Variable Column Count", (!c.count.is_fixed()).to_string()),
            ("Slice", "false".into()),
            ("Size Distribution", c.size.to_string()),
            ("Count Distribution", c.count.to_string()),
        ],
    );
    push(
        out,
        "Errors",
        &[
            ("Ignore", s.errors.ignore.to_string()),
            ("Tries", s.errors.tries.to_string()),
        ],
    );
    push(
        out,
        "Log",
        &[
            ("No Summary", s.log.no_summary.to_string()),
            ("No Settings", s.log.no_settings.to_string()),
            ("File", opt(&s.log.file)),
            ("Interval Millis", s.log.interval.as_millis().to_string()),
            ("Level", s.log.level.clone()),
        ],
    );
}

fn rest(s: &Settings, out: &mut Vec<String>) {
    let m = &s.mode;
    push(
        out,
        "Mode",
        &[
            ("API", "JAVA_DRIVER_NATIVE".into()),
            ("Connection Style", "CQL_PREPARED".into()),
            ("Protocol Version", format!("V{}", m.protocol_version)),
            ("Username", opt(&m.user)),
            (
                "Password",
                m.password
                    .as_ref()
                    .map_or("null", |_| "*suppressed*")
                    .into(),
            ),
            ("Auth Provide Class", "null".into()),
            ("Max Pending Per Connection", m.max_pending.to_string()),
            ("Connections Per Host", m.connections_per_host.to_string()),
            (
                "Compression",
                m.compression.as_deref().unwrap_or("none").to_uppercase(),
            ),
        ],
    );
    push(
        out,
        "Node",
        &[
            ("Nodes", format!("[{}]", s.nodes.join(", "))),
            ("Is White List", "false".into()),
            ("Datacenter", opt(&s.datacenter)),
        ],
    );
    let sc = &s.schema;
    let map = |kv: &[(String, String)]| {
        let items: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{{{}}}", items.join(", "))
    };
    push(
        out,
        "Schema",
        &[
            ("Keyspace", sc.keyspace.clone()),
            ("Replication Strategy", sc.strategy.clone()),
            ("Replication Strategy Options", map(&sc.replication)),
            ("Table Compression", opt(&sc.compression)),
            ("Table Compaction Strategy", opt(&sc.compaction)),
            (
                "Table Compaction Strategy Options",
                map(&sc.compaction_options),
            ),
        ],
    );
    push(
        out,
        "Port",
        &[
            ("Native Port", s.native_port.to_string()),
            ("JMX Port", s.jmx_port.to_string()),
        ],
    );
    let op = s.command.ops.first().map_or("USER", |(k, _)| k.name());
    push(
        out,
        "Graph",
        &[
            ("File", opt(&s.graph.file)),
            ("Revision", s.graph.revision.clone()),
            ("Title", opt(&s.graph.title)),
            (
                "Operation",
                s.graph.op.clone().unwrap_or_else(|| op.to_string()),
            ),
        ],
    );
    push(
        out,
        "Reporting",
        &[
            (
                "Output frequency",
                format!("{}s", s.log.interval.as_secs().max(1)),
            ),
            ("Header frequency", "*not set*".into()),
        ],
    );
    out.push(String::new());
}
