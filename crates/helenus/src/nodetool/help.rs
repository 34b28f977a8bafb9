//! `nodetool help [command]`: Cassandra's usage text, listing the commands Helenus has.

use super::{unexpected, Output};

/// Commands, their arguments and descriptions (Cassandra 5.0.4's wording).
const COMMANDS: [(&str, &str, &str); 75] = [
    ("autorepairstatus", "", "Print the built-in repair scheduler's status on this node"),
    ("bootstrap", "resume", "Monitor/manage node's bootstrap process"),
    ("cfstats", "[-i] [-H] [<keyspace.table>...]", "Print statistics on tables (alias of tablestats)"),
    ("cleanup", "[(-j <jobs> | --jobs <jobs>)] [<keyspace> <tables>...]", "Triggers the immediate cleanup of keys no longer belonging to a node. By default, clean all keyspaces"),
    ("clearsnapshot", "[(-t <snapshot_name> | --all)] [<keyspaces>...]", "Remove the snapshot with the given name from the given keyspaces"),
    ("cms", "[describe]", "Describe the cluster metadata group: members, leader, epoch (Cassandra 5.1's cms describe)"),
    ("compact", "[<keyspace> <tables>...]", "Force a (major) compaction on one or more tables or user-defined compaction on given SSTables"),
    ("compactionhistory", "", "Print history of compaction"),
    ("compactionstats", "[(-H | --human-readable)]", "Print statistics on compactions"),
    ("decommission", "[(-f | --force)]", "Decommission the *node I am connecting to*"),
    ("describecluster", "", "Print the name, snitch, partitioner and schema version of a cluster"),
    ("describering", "<keyspace>", "Shows the token ranges info of a given keyspace"),
    ("disableautocompaction", "[<keyspace> <tables>...]", "Disable autocompaction for the given keyspace and table"),
    ("disablebinary", "", "Disable native transport (binary protocol)"),
    ("disablegossip", "", "Disable gossip (effectively marking the node down)"),
    ("disablehandoff", "", "Disable storing hinted handoffs"),
    ("disablehintsfordc", "<datacenter>", "Disable hints for a data center"),
    ("drain", "", "Drain the node (stop accepting writes and flush all tables)"),
    ("enableautocompaction", "[<keyspace> <tables>...]", "Enable autocompaction for the given keyspace and table"),
    ("enablebinary", "", "Reenable native transport (binary protocol)"),
    ("enablegossip", "", "Reenable gossip"),
    ("enablehandoff", "", "Reenable future hints storing on the current node"),
    ("enablehintsfordc", "<datacenter>", "Enable hints for a data center that was previsouly disabled"),
    ("flush", "[<keyspace> <tables>...]", "Flush one or more tables"),
    ("garbagecollect", "[(-g <granularity> | --granularity <granularity>)] [(-j <jobs> | --jobs <jobs>)] [<keyspace> <tables>...]", "Remove deleted data from one or more tables"),
    ("gcstats", "", "Print GC Statistics"),
    ("getcompactionthroughput", "", "Print the MiB/s throughput cap for compaction in the system as a rounded number"),
    ("getconcurrentcompactors", "", "Get the number of concurrent compactors in the system."),
    ("getendpoints", "<keyspace> <table> <key>", "Print the end points that owns the key"),
    ("getlogginglevels", "", "Get the runtime logging levels"),
    ("getrangerequesttimeout", "", "Print the range request timeout in ms (gettimeout range)"),
    ("getreadrequesttimeout", "", "Print the read request timeout in ms (gettimeout read)"),
    ("getstreamthroughput", "[-e | -m | -d]", "Print the throughput cap for streaming and entire SSTable streaming in the system"),
    ("gettimeout", "<timeout_type>", "Print the timeout of the given type in ms"),
    ("gettraceprobability", "", "Print the current trace probability value"),
    ("getwriterequesttimeout", "", "Print the write request timeout in ms (gettimeout write)"),
    ("gossipinfo", "[(-r | --resolve-ip)]", "Shows the gossip information for the cluster"),
    ("help", "[<command>]", "Display help information"),
    ("info", "[(-T | --tokens)]", "Print node information (uptime, load, ...)"),
    ("listpendinghints", "", "Print all pending hints that this node has"),
    ("listsnapshots", "", "Lists all the snapshots along with the size on disk and true size."),
    ("move", "<new token>", "Move node on the token ring to a new token"),
    ("netstats", "[(-H | --human-readable)]", "Print network information on provided host (connecting node by default)"),
    ("pausehandoff", "", "Pause hints delivery process"),
    ("proxyhistograms", "", "Print statistic histograms for network operations"),
    ("rebuild", "[(-ks <specific_keyspace> | --keyspace <specific_keyspace>)] <src-dc-name>", "Rebuild data by streaming from other nodes (similarly to bootstrap)"),
    ("refreshsizeestimates", "", "Refresh system.size_estimates"),
    ("removenode", "<status>|<force>|<ID>", "Show status of current node removal, force completion of pending removal or remove provided ID"),
    ("repair", "[(-dc <specific_dc> | --in-dc <specific_dc>)...] [(-et <end_token> | --end-token <end_token>)] [(-full | --full)] [(-hosts <specific_host> | --in-hosts <specific_host>)...] [(-j <job_threads> | --job-threads <job_threads>)] [(-local | --in-local-dc)] [(-pr | --partitioner-range)] [(-prv | --preview)] [(-seq | --sequential)] [(-st <start_token> | --start-token <start_token>)] [(-vd | --validate)] [<keyspace> <tables>...]", "Repair one or more tables"),
    ("repair_admin", "[list [(-a | --all)] | cancel (-s <session> | --session <session>) [(-f | --force)]]", "list and cancel incremental repair sessions"),
    ("replaybatchlog", "", "Kick off batchlog replay and wait for finish"),
    ("resumehandoff", "", "Resume hints delivery process"),
    ("ring", "[<keyspace>]", "Print information about the token ring"),
    ("scrub", "[(-ns | --no-snapshot)] [(-s | --skip-corrupted)] [(-j <jobs> | --jobs <jobs>)] [<keyspace> <tables>...]", "Scrub (rebuild sstables for) one or more tables"),
    ("setautorepairconfig", "enabled (true | false) <keyspace> [<tables>...]", "Turn the built-in repair scheduler on or off for tables"),
    ("setcompactionthroughput", "<value_in_mb>", "Set the MiB/s throughput cap for compaction in the system, or 0 to disable throttling"),
    ("setconcurrentcompactors", "<value>", "Set number of concurrent compactors in the system."),
    ("setlogginglevel", "[<component|class> <level>]", "Set the log level threshold for a given component or class. Will reset to the initial configuration if called with no parameters."),
    ("setrangerequesttimeout", "<timeout_in_ms>", "Set the range request timeout in ms (settimeout range)"),
    ("setreadrequesttimeout", "<timeout_in_ms>", "Set the read request timeout in ms (settimeout read)"),
    ("setstreamthroughput", "[-e | -m] <value_in_mb>", "Set throughput cap for streaming and entire SSTable streaming in the system, or 0 to disable throttling"),
    ("settimeout", "<timeout_type> <timeout_in_ms>", "Set the specified timeout in ms, or 0 to disable timeout"),
    ("settraceprobability", "<value>", "Sets the probability for tracing any given request to value. 0 disables, 1 enables for all requests, 0 is the default"),
    ("setwriterequesttimeout", "<timeout_in_ms>", "Set the write request timeout in ms (settimeout write)"),
    ("snapshot", "[(-t <tag> | --tag <tag>)] [<keyspaces...>]", "Take a snapshot of specified keyspaces or a snapshot of the specified table"),
    ("status", "[<keyspace>]", "Print cluster information (state, load, IDs, ...)"),
    ("statusbinary", "", "Status of native transport (binary protocol)"),
    ("statusgossip", "", "Status of gossip"),
    ("statushandoff", "", "Status of storing future hints on the current node"),
    ("stopdaemon", "", "Stop cassandra daemon"),
    ("tablehistograms", "[<keyspace> <table> | <keyspace.table>]", "Print statistic histograms for a given table"),
    ("tablestats", "[-i] [-H] [<keyspace.table>...]", "Print statistics on tables"),
    ("tpstats", "", "Print usage statistics of thread pools"),
    ("truncatehints", "[endpoint ... ]", "Truncate all hints on the local node, or truncate hints for the endpoint(s) specified."),
    ("verify", "[(-e | --extended-verify)] [(-f | --force)] [(-d | --dfp)] [<keyspace> <tables>...]", "Verify (check data checksum for) one or more tables"),
];

/// Commands beyond the table (listed in help, described by their own entries above).
const MORE: [(&str, &str, &str); 1] = [("version", "", "Print cassandra version")];

const USAGE: &str = "usage: nodetool [(-p <port> | --port <port>)] [(-h <host> | --host <host>)]
        [(-u <username> | --username <username>)]
        [(-pw <password> | --password <password>)]
        [(-pwf <passwordFilePath> | --password-file <passwordFilePath>)]
        [(-pp | --print-port)] [--token-file <tokenFilePath>] <command> [<args>]
";

pub fn help(args: &[String]) -> Output {
    match args {
        [] => Ok(overview()),
        [command] => detail(command),
        [_, extra @ ..] => Err(unexpected(extra)),
    }
}

fn all() -> impl Iterator<Item = &'static (&'static str, &'static str, &'static str)> {
    COMMANDS.iter().chain(MORE.iter())
}

fn overview() -> String {
    let mut out = format!("{USAGE}\nThe most commonly used nodetool commands are:\n");
    let mut commands: Vec<_> = all().collect();
    commands.sort_by_key(|(name, _, _)| *name);
    for (name, _, description) in commands {
        out.push_str(&format!("    {name:<35} {description}\n"));
    }
    out.push_str("\nSee 'nodetool help <command>' for more information on a specific command.\n\n");
    out
}

fn detail(command: &str) -> Output {
    let Some((name, arguments, description)) = all().find(|(name, _, _)| *name == command) else {
        return Err(unexpected(&[command.to_string()]));
    };
    let synopsis = format!(
        "nodetool [(-h <host> | --host <host>)] [(-p <port> | --port <port>)] {name} {arguments}"
    );
    Ok(format!(
        "NAME\n        nodetool {name} - {description}\n\nSYNOPSIS\n        {}\n\n",
        synopsis.trim_end()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overview_lists_commands_like_nodetool() {
        // matches Cassandra 5.0.4 (`refcass nodetool help`): usage, then 4-space-indented rows
        let text = overview();
        assert!(text.starts_with(
            "usage: nodetool [(-p <port> | --port <port>)] [(-h <host> | --host <host>)]\n"
        ));
        assert!(
            text.contains("\n    flush                               Flush one or more tables\n")
        );
        assert!(text.ends_with(
            "See 'nodetool help <command>' for more information on a specific command.\n\n"
        ));
    }

    #[test]
    fn detail_of_a_command() {
        let text = help(&["flush".into()]).unwrap();
        assert!(text.starts_with("NAME\n        nodetool flush - Flush one or more tables\n"));
        assert!(help(&["bogus".into()]).is_err());
    }
}
