"""The workloads and their order in one server session, for each mode (full, quick, smoke)."""
import dataclasses
import functools
from dataclasses import dataclass, field

SWEEP_THREADS = (1, 8, 16, 32, 64)

# The fixed-rate write runs (issue 11.10): each at this share of Cassandra's measured (warm) write throughput.
FIXED_LEVELS = (25, 50, 75)

# The clients (issue 32): `helenus stress` (the Rust driver) and bench/javaload (the Java driver 4.x).
# Every client runs the workloads of CLIENT_WORKLOADS; the others (cold load, warm-up, thread sweep,
# YCSB, insanity profile) are `helenus stress`'s alone.
CLIENTS = ("helenus", "java")
CLIENT_WORKLOADS = ("write", "read", "mixed") + tuple(f"fixed_{level}" for level in FIXED_LEVELS)

# Warm-up (issue 15.1): windows of write then read on a keyspace of their own, repeated until two
# consecutive windows' server CPU per operation differ by less than WARMUP_TOLERANCE (or `warmup_max`).
WARMUP_TOLERANCE = 0.05

MODES = {
    # n: operations of write/read/mixed and YCSB records/operations; reps: repetitions (medians);
    # fixed_s / sweep_s / insanity_s: durations; insanity_n: partitions of the insanity insert;
    # timeline_s: the kill-and-restart run of --cluster (killed at a third, restarted at two thirds);
    # warmup_n: operations of each warm-up window's write and of its read; warmup_max: most windows.
    "full": dict(n=200_000, reps=3, fixed_s=60, sweep_s=30, sweep=SWEEP_THREADS, insanity_n=200_000, insanity_s=60,
                 settle_quiet_s=5, timeline_s=60, warmup_n=100_000, warmup_max=16),
    "quick": dict(n=50_000, reps=1, fixed_s=20, sweep_s=8, sweep=SWEEP_THREADS, insanity_n=20_000, insanity_s=20,
                  settle_quiet_s=5, timeline_s=60, warmup_n=25_000, warmup_max=12),
    "smoke": dict(n=2_000, reps=1, fixed_s=1, sweep_s=1, sweep=(8,), insanity_n=500, insanity_s=1,
                  settle_quiet_s=1.5, timeline_s=15, warmup_n=500, warmup_max=2),
}


@dataclass
class Step:
    id: str                 # workload id (the JSON key), or "flush:<keyspace>"
    title: str
    kind: str               # stress | ycsb | flush | warmup | keyspace (created before a cluster's YCSB load)
    args: list = field(default_factory=list)
    timeout: float = 0.0
    keyspace: str = ""      # data the workload reads/writes, for bytes per row
    rows: int = 0           # flush steps: rows in the keyspace (0: those the workload `rows_from` counted)
    rows_from: str = ""
    group: str = "main"     # cold | main | sweep | fixed | ycsb | insanity
    threads: int = 0
    level: int = 0          # fixed-rate runs: percent of Cassandra's measured write throughput
    max_windows: int = 0    # warm-up: the most windows it runs
    optional: bool = False  # skipped, not failed, if the client does not support it
    client: str = "helenus"  # helenus (`helenus stress`) or java (bench/javaload)

    @property
    def base_id(self):
        """The workload this step runs whatever its client: `java_write` is a `write`."""
        return self.id[len(self.client) + 1:] if self.client != "helenus" else self.id

    @property
    def is_workload(self):
        return self.kind in ("stress", "ycsb")


def fixed_id(level):
    return f"fixed_{level}"


def warmup_windows(mode):
    """The client commands of one warm-up window: a write then a read of `warmup_n` rows of keyspace
    bench_warm (no stress warm-up of their own: the window is the warm-up); --smoke's windows only
    write, to keep the pipeline check short."""
    k = MODES[mode]["warmup_n"]
    common = [f"n={k}", "no-warmup", "-rate", "threads=50", "-schema", "keyspace=bench_warm"]
    return [["write", *common]] + ([] if mode == "smoke" else [["read", *common]])


def client_id(client, wid):
    """The id of workload `wid` run by `client`: `write` for `helenus stress`, `java_write` for javaload."""
    return wid if client == "helenus" else f"{client}_{wid}"


def with_clients(steps, clients):
    """`steps` with each workload of CLIENT_WORKLOADS run by every client of `clients`, one after the
    other on the same data (the Java client's right after `helenus stress`'s); without "helenus",
    those workloads run with the other clients only, and a flush counts the rows of their load."""
    out = []
    for step in steps:
        if step.id not in CLIENT_WORKLOADS:
            if step.kind == "flush" and step.rows_from in CLIENT_WORKLOADS and "helenus" not in clients:
                step = dataclasses.replace(step, rows_from=client_id(clients[0], step.rows_from))
            out.append(step)
            continue
        for c in clients:
            if c == "helenus":
                out.append(step)
            else:
                out.append(dataclasses.replace(step, id=client_id(c, step.id), client=c,
                                               title=f"{step.title} — Java driver (bench/javaload)",
                                               timeout=step.timeout + 120))  # the JVM's start-up
    return out


def steps(mode, fixed_rate_fn, profile_path, clients=("helenus",)):
    """The session's steps. `fixed_rate_fn(level)` gives the op/s of the fixed-rate run at `level`
    percent when it is reached; the workloads of CLIENT_WORKLOADS run with each of `clients`."""
    return with_clients(_steps(mode, fixed_rate_fn, profile_path), clients)


def _steps(mode, fixed_rate_fn, profile_path):
    m = MODES[mode]
    n = m["n"]
    t_n = 120 + n / 100  # at least 100 op/s, plus the client's start-up and warm-up
    out = [
        # The first load on a just-started server, into a keyspace of its own: Cassandra's JVM is still
        # compiling (its CPU per op is about twice its warm figure), so the workloads compared below run after it.
        Step("cold_write", f"write n={n}, 50 threads, first load after start-up (own keyspace)", "stress",
             ["write", f"n={n}", "-rate", "threads=50", "-schema", "keyspace=bench_cold"], t_n, "bench_cold",
             group="cold"),
        # Then warm the server up: the compared workloads below run against a warm JVM / warm caches.
        Step("warmup", f"write then read n={m['warmup_n']} (keyspace bench_warm) per window, until two "
             f"windows' CPU/op differ by < {WARMUP_TOLERANCE:.0%} (at most {m['warmup_max']} windows)", "warmup",
             warmup_windows(mode), t_n, "bench_warm", group="warmup", max_windows=m["warmup_max"]),
        Step("write", f"write n={n}, 50 threads", "stress", ["write", f"n={n}", "-rate", "threads=50"], t_n,
             "keyspace1"),
        Step("flush:keyspace1", "flush keyspace1", "flush", keyspace="keyspace1", rows_from="write"),
        Step("read", f"read n={n}, 50 threads", "stress", ["read", f"n={n}", "-rate", "threads=50"], t_n,
             "keyspace1"),
        Step("mixed", f"mixed write:read 1:3 n={n}, 50 threads", "stress",
             ["mixed", "ratio(write=1,read=3)", f"n={n}", "-rate", "threads=50"], t_n, "keyspace1"),
    ]
    for level in FIXED_LEVELS:
        out.append(Step(fixed_id(level), f"write at {level}% of Cassandra's write throughput, 50 threads "
                        "(latency from intended start)", "stress",
                        functools.partial(_fixed_args, m["fixed_s"], fixed_rate_fn, level), m["fixed_s"] + 120,
                        "keyspace1", group="fixed", level=level))
    for t in m["sweep"]:
        out.append(Step(f"sweep_t{t}", f"write for {m['sweep_s']}s, {t} threads", "stress",
                        ["write", f"duration={m['sweep_s']}s", "no-warmup", "-rate", f"threads={t}"],
                        m["sweep_s"] + 120, "keyspace1", group="sweep", threads=t))
    ycsb = ["-p", f"recordcount={n}", "-p", f"operationcount={n}", "-threads", "50"]
    out += [
        Step("ycsb_load", f"YCSB load {n} records, 50 threads", "ycsb", ["load", "-P", "workloada", *ycsb], t_n,
             "ycsb", group="ycsb"),
        Step("flush:ycsb", "flush ycsb", "flush", keyspace="ycsb", rows_from="ycsb_load", group="ycsb"),
        Step("ycsb_a", f"YCSB A (50% read, 50% update) {n} ops", "ycsb", ["run", "-P", "workloada", *ycsb], t_n,
             "ycsb", group="ycsb"),
        Step("ycsb_f", f"YCSB F (50% read, 50% read-modify-write) {n} ops", "ycsb",
             ["run", "-P", "workloadf", *ycsb], t_n, "ycsb", group="ycsb"),
    ]
    k, profile = m["insanity_n"], f"profile={profile_path}"
    out += [
        Step("insanity_insert", f"insanity profile insert, {k} partitions", "stress",
             ["user", profile, "ops(insert=1)", "no-warmup", "cl=ONE", f"n={k}", "-pop", f"seq=1..{k}",
              "-rate", "threads=50"], 120 + k / 50, "stresscql", group="insanity", optional=True),
        Step("flush:stresscql", "flush stresscql", "flush", keyspace="stresscql", rows_from="insanity_insert", group="insanity",
             optional=True),
        Step("insanity", f"insanity profile insert:simple1 20:80 for {m['insanity_s']}s", "stress",
             ["user", profile, "ops(insert=20,simple1=80)", "no-warmup", "cl=ONE", f"duration={m['insanity_s']}s",
              "-pop", f"dist=uniform(1..{k})", "-rate", "threads=50"], m["insanity_s"] + 120, "stresscql",
             group="insanity", optional=True),
    ]
    return out


# The loads whose bytes per row are measured (--disk runs only these and their flushes).
DISK_LOADS = ("write", "ycsb_load", "insanity_insert")


def disk_only(steps):
    """The steps of `--disk`: the loads of DISK_LOADS, each followed by its flush and major
    compaction and the count of its bytes (and, on a cluster, the keyspace created first)."""
    return [s for s in steps if s.id in DISK_LOADS or s.kind in ("flush", "keyspace")]


def _fixed_args(seconds, rate_fn, level):
    return ["write", f"duration={seconds}s", "no-warmup", "-rate", "threads=50", f"fixed={rate_fn(level)}/s"]


def cluster_steps(mode, fixed_rate_fn, rf, clients=("helenus",)):
    """The session of `--cluster`: the single-node workloads without the thread sweep and the
    insanity profile, keyspaces at replication factor `rf` (the YCSB keyspace created by the
    harness first), every request at QUORUM."""
    out = []
    for step in steps(mode, fixed_rate_fn, "", clients):
        if step.group in ("sweep", "insanity"):
            continue
        if step.kind == "stress":
            step.args = _quorum_stress(step.args, rf)
        elif step.kind == "warmup":
            step.args = [_quorum_stress(w, rf) for w in step.args]
        elif step.kind == "ycsb":
            if step.id == "ycsb_load":
                out.append(Step(f"keyspace:{step.keyspace}", f"create keyspace {step.keyspace}, RF {rf}",
                                "keyspace", keyspace=step.keyspace, group=step.group))
            step.args = step.args + ["-p", "cassandra.readconsistencylevel=QUORUM",
                                     "-p", "cassandra.writeconsistencylevel=QUORUM"]
        out.append(step)
    return out


def _quorum_stress(args, rf):
    """cassandra-stress words with `cl=QUORUM` and `-schema replication(factor=rf)` added."""
    if callable(args):
        return lambda: _quorum_stress(args(), rf)
    words = [args[0], "cl=QUORUM", *args[1:]]
    if "-schema" in words:
        i = words.index("-schema") + 1
        return words[:i] + [f"replication(factor={rf})"] + words[i:]
    return words + ["-schema", f"replication(factor={rf})"]
