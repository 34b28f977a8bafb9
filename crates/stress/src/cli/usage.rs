//! Help texts: the command list (`help`), and the options of each command and group
//! (`help write`, `help -rate`, and after a command-line error).

/// The help text for `topic` (a command or `-group`), or the command list for `""`.
pub fn text(topic: &str) -> String {
    match topic.to_ascii_lowercase().as_str() {
        "write" | "read" | "counter_write" | "counter_read" => command_help(topic, ""),
        "mixed" => command_help("mixed", "ratio(read=?,write=?,…)   Ratios of operations to perform\n"),
        "user" => command_help("user", "profile=FILE ops(insert=?,query=?)  The YAML profile and its operation ratios\n"),
        "print" => "Usage: print dist=DIST\n".into(),
        "-rate" => "Usage: -rate threads=N [fixed=N/s | throttle=N/s]\n OR   -rate [auto] [threads>=N] [threads<=N]\n".into(),
        "-pop" => "Usage: -pop seq=min..max [no-wrap]\n OR   -pop dist=DIST\n".into(),
        "-node" => "Usage: -node [datacenter=?] host1,host2,…\n".into(),
        "-port" => "Usage: -port [native=?] [jmx=?]\n".into(),
        "-mode" => "Usage: -mode native cql3 [protocolVersion=?] [compression=lz4] [user=?] [password=?] [maxPending=?] [connectionsPerHost=?]\n".into(),
        "-col" => "Usage: -col [n=DIST] [size=DIST] [names=a,b,…]\n".into(),
        "-schema" => "Usage: -schema [replication(strategy=?,factor=?,…)] [keyspace=?] [compaction(strategy=?,…)] [compression=?]\n".into(),
        "-log" => "Usage: -log [interval=?] [file=?] [hdrfile=?] [level=?] [no-summary] [no-settings]\n".into(),
        "-graph" => "Usage: -graph file=? [title=?] [revision=?] [op=?]\n".into(),
        "-errors" => "Usage: -errors [ignore] [retries=?]\n".into(),
        _ => COMMANDS.into(),
    }
}

fn command_help(command: &str, extra: &str) -> String {
    format!(
        "Usage: {command} [err<?] [n>?] [n<?] [no-warmup] [cl=?] [n=?] [duration=?] …\n\
         \x20 err<?                 Run until the standard error of the mean is below this fraction\n\
         \x20 n>?                   Run at least this many iterations before accepting uncertainty convergence\n\
         \x20 n<?                   Run at most this many iterations before accepting uncertainty convergence\n\
         \x20 no-warmup             Do not warmup the process\n\
         \x20 cl=?                  Consistency level to use\n\
         \x20 n=?                   Number of operations to perform\n\
         \x20 duration=?            Time to run in (in seconds, minutes or hours: 30s, 5m, 1h)\n\
         \x20 {extra}"
    )
}

const COMMANDS: &str = "Usage:      helenus stress <command> [options]
Help usage: helenus stress help <command>

---Commands---
read                 : Multiple concurrent reads - the cluster must first be populated by a write test
write                : Multiple concurrent writes against the cluster
mixed                : Interleaving of any basic commands, with configurable ratio and distribution - the cluster must first be populated by a write test
counter_write        : Multiple concurrent updates of counters.
counter_read         : Multiple concurrent reads of counters. The cluster must first be populated by a counterwrite test.
user                 : Interleaving of user provided queries, with configurable ratio and distribution
help                 : Print help for a command or option
print                : Inspect the output of a distribution definition
version              : Print the version of cassandra stress
ycsb                 : YCSB core workloads: ycsb load|run -P workloada [-p key=value …] [-threads N] [-target N]
lwt                  : Lightweight transactions: lwt uncontended|contended [-node A,B…] [-threads N] [-duration S] [-rf N]

---Options---
-pop                 : Population distribution and intra-partition visit order
-col                 : Column details such as size and count distribution, data generator, names, comparator and if super columns should be used
-rate                : Thread count, rate limit or automatic mode (default is auto)
-mode                : Thrift or CQL with options
-errors              : How to handle errors when encountered during stress
-schema              : Replication settings, compression, compaction, etc.
-node                : Nodes to connect to
-log                 : Where to log progress to, and the interval at which to do it
-port                : The port to connect to cassandra nodes on
-graph               : Graph recorded metrics
";
