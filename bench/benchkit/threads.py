"""Server CPU by thread group: every thread of one or more server processes (a cluster's nodes) read from
/proc/PID/task/*/stat and status, and grouped into what its CPU pays for.

Helenus runs one tokio runtime for the CQL transport, the coordinator, the replica verbs and internode
messaging: its workers (`helenus-worker`) serve all four, so their CPU is one group, "requests", which
thread names cannot split further. Its storage threads are named: `commitlog` (the commit log),
`flush`, `compaction`, `compactor` and the runtime's blocking pool `helenus-blocking` (flushes, drops,
streaming: "background"). Cassandra names a thread per stage: Native-Transport-Requests (the CQL
transport and the coordinator: "coordinator"), MutationStage and ReadStage ("replica"), Messaging-* and
RequestResponseStage ("internode"), COMMIT-LOG-* ("commit log"), CompactionExecutor and Memtable*
("background"), the JVM's GC and compiler threads ("jvm"), and its periodic tasks ("idle/timers").
Names in /proc are cut to 15 characters; the patterns match their starts."""
import collections
import os
import re

TICK = os.sysconf("SC_CLK_TCK")

GROUPS = ("requests", "coordinator", "replica", "internode", "commit log", "background", "jvm", "idle/timers",
          "other")
_RULES = [
    # tokio-rt-worker (tokio-runtime-worker before tokio 1.4x): tokio's default name, in builds before
    # the runtime's threads were named (its blocking pool then counts with the workers).
    ("requests", r"helenus-worker|tokio-rt-worker|tokio-runtime-w"),
    ("background", r"helenus-blocking|flush|compaction|compactor|CompactionExec|Memtable|PerDiskMemtable|"
                   r"ValidationExec|CacheCleanup|SecondaryIndex|Sampler|AntiCompaction"),
    ("commit log", r"commitlog|COMMIT-LOG"),
    ("coordinator", r"Native-Transpor|nioEventLoop|epollEventLoop|NativePool"),
    ("replica", r"MutationStage|ReadStage|CounterMutation|ViewMutation|PaxosStage"),
    ("internode", r"Messaging|RequestResponse|InternalRespons"),
    ("jvm", r"GC Thread|G1 |C1 CompilerThre|C2 CompilerThre|VM Thread|VM Periodic|Sweeper|Common-Cleaner|"
            r"Signal Dispatch|Finalizer|Reference Handl|Notification Th|Service Thread|Monitor Deflati"),
    ("idle/timers", r"ScheduledTasks|OptionalTasks|NonPeriodicTask|GossipTasks|GossipStage|ScheduledFastTa|"
                    r"BatchlogTasks|PendingRangeCa|HintsDispatcher|MigrationStage|PerfDiskSample|"
                    r"SlabPoolCleaner|Strong-Referen|CompactionLogger|IndexSummaryMan"),
]
_COMPILED = [(group, re.compile(pattern)) for group, pattern in _RULES]


def group_of(name):
    for group, pattern in _COMPILED:
        if pattern.match(name):
            return group
    return "other"


def snapshot(pids):
    """{(pid, tid): (thread name, user s, system s, voluntary switches, involuntary switches)}"""
    out = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # the process ended
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    stat = f.read()
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    status = f.read()
            except OSError:
                continue  # the thread ended meanwhile
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            switches = [int(line.split()[1]) for line in status.splitlines() if "ctxt_switches" in line]
            out[(pid, tid)] = (name, int(fields[11]) / TICK, int(fields[12]) / TICK, *switches)
    return out


def delta(before, after, key=lambda name: group_of(name)):
    """{group: [user s, system s, voluntary switches, involuntary switches]} between two snapshots;
    `key` maps a thread name to its group (by default its GROUPS entry)."""
    groups = collections.defaultdict(lambda: [0.0, 0.0, 0, 0])
    for tid, (name, *now) in after.items():
        then = before.get(tid, (name, 0.0, 0.0, 0, 0))[1:]
        for i, (a, b) in enumerate(zip(now, then)):
            groups[key(name)][i] += a - b
    return dict(groups)


def split_per_op(before, after, ops):
    """{group: server CPU µs per operation}, the groups with any CPU, for the report."""
    if not ops:
        return {}
    return {g: (v[0] + v[1]) * 1e6 / ops for g, v in delta(before, after).items() if v[0] + v[1] > 0}
