"""`bench/run --recovery` and `bench/run --scale` (issue 29 point 6): the disk-loss scenario and the
addition of a fourth node, for Helenus (`helenus cluster`) and Cassandra 5.0.4 (refcass), 3 nodes at
RF 3, one cluster at a time, the same data.

--recovery: load `--rows` rows (1 KiB each) at QUORUM, flush, start a steady fixed-rate read/update
load at QUORUM (one interval row per second: op/s, p99, errors), kill the last node (SIGKILL) and
delete its directories, then once the others see it down start a new node on the next address with
replace_address_first_boot (Helenus: `-Dcassandra.replace_address_first_boot=` in JVM_EXTRA_OPTS;
Cassandra: the same flag in REFCASS_JVM_OPTS), and record until the client's throughput is back to
its level before the kill. Times are from the kill:
- time_to_first_serve_s: the replacement answers CQL;
- time_to_full_replication_s: the first node's `nodetool status` shows the replacement UN;
- time_to_prefailure_throughput_s: the first second, once replicated, ending a 5-second window whose
  mean op/s is at least 95% of the mean before the kill;
- min_throughput_fraction: the lowest op/s from the kill to then over the mean before the kill;
- stream_mb_s: the replacement's keyspace data (MB, 10^6 bytes) once UN over the seconds from its
  start to UN; cpu_s_per_mb: the replacement process's CPU seconds (user + system, start-up
  included) at UN per MB received.

--scale: load and flush the same way, then add a fourth node (auto_bootstrap) with no client load;
time_to_join_s is from its start until the first node shows it UN.

Writes bench/results/<date>-<sha>-recovery.md/.json (or -scale) and PNG timelines."""
import argparse
import contextlib
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from . import charts, cluster, proc, timeline
from .servers import Cassandra, ServerError

KEYSPACE = "keyspace1"
COLUMNS = ["-col", "n=FIXED(4)", "size=FIXED(256)"]  # 4 columns of 256 bytes: 1 KiB a row
MODES = {
    # full: 2,000,000 rows, about 2 GB a replica, 6 GB for the cluster
    "full": dict(rows=2_000_000, rate=2000, steady_s=60, limit_s=7200),
    "quick": dict(rows=200_000, rate=1000, steady_s=30, limit_s=1800),
    "smoke": dict(rows=20_000, rate=200, steady_s=12, limit_s=600),
}
WINDOW_S, BACK_FRACTION = 5, 0.95
VICTIM = 2  # the last of the three nodes (not the first contact point)
START_LIMIT_S = 7200  # how long a fourth node may take to answer CQL


def log(msg):
    print(f"[recovery {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --- the two systems: start, status, the fourth node ----------------------------------------------

class HelenusSide:
    def __init__(self, binary, first, workdir, port):
        self.binary = binary
        self.c = cluster.HelenusCluster(binary, first, 3, workdir, log, port=port)
        self.new_addr = cluster.addresses(first, 4)[3]
        self.new_pid = None

    def status(self):
        r = self.c.nodetool(self.c.nodes[0], "status", timeout=60)
        return r.stdout

    def wipe(self, i):
        """Deletes every directory of node i (0-based) but its configuration and logs."""
        home = os.path.join(self.c.dir, f"node{i + 1}")
        for sub in ("data", "commitlog", "metadata", "hints", "saved_caches"):
            shutil.rmtree(os.path.join(home, sub), ignore_errors=True)

    def add(self, replaces=None):
        """`helenus cluster add` (node 4), replacing `replaces` when given; returns once it answers
        CQL."""
        opts = f"-Dcassandra.replace_address_first_boot={replaces}" if replaces else ""
        cmd = [self.binary, "cluster", "add", "--dir", self.c.dir, "--timeout", str(START_LIMIT_S)]
        r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           timeout=START_LIMIT_S + 60, env={**os.environ, "JVM_EXTRA_OPTS": opts})
        if r.returncode != 0:
            raise ServerError(f"{' '.join(cmd)} failed: {(r.stderr or r.stdout).strip()[-600:]}")

    def pid_of_new(self):
        self.c.n = 4  # the cluster's pids and stop() include node 4 from now on
        return self.c._pid(4)

    def new_data_dir(self):
        return os.path.join(self.c.dir, "node4", "data", KEYSPACE)


class CassandraSide:
    def __init__(self, refcass, first, workdir, port, heap):
        self.c = cluster.CassandraCluster(refcass, first, 3, heap, workdir, log, port=port)
        self.new_addr = cluster.addresses(first, 4)[3]
        self.new = Cassandra(refcass, self.new_addr, port, heap, os.path.join(self.c.dir, "node4"), log,
                             yaml=cluster.cassandra_yaml(self.c.nodes[0]), start_timeout=START_LIMIT_S)

    def status(self):
        r = self.c.members[0]._refcass("nodetool", "--addr", self.c.nodes[0], "status", timeout=120)
        return r.stdout

    def wipe(self, i):
        shutil.rmtree(self.c.members[i].dir, ignore_errors=True)

    def add(self, replaces=None):
        opts = f"-Dcassandra.replace_address_first_boot={replaces}" if replaces else None
        # a replacing or bootstrapping node answers CQL only once it has its ranges
        with env_var("REFCASS_JVM_OPTS", opts), env_var("REFCASS_START_TIMEOUT", str(START_LIMIT_S)):
            self.new.start(fresh=True)
        self.c.members.append(self.new)  # stopped with the others

    def pid_of_new(self):
        return self.new.pid

    def new_data_dir(self):
        return self.new.data_path(KEYSPACE)


@contextlib.contextmanager
def env_var(name, value):
    """`name` set to `value` (unless None) in this process's environment, for the children started
    meanwhile."""
    before = os.environ.get(name)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def status_of(side, addr):
    """The two-letter state the first node gives `addr` ('UN', 'DN', …), or None."""
    for line in side.status().splitlines():
        fields = line.split()
        if len(fields) > 1 and fields[1] == addr:
            return fields[0]
    return None


def wait_status(side, addr, code, limit_s):
    deadline = time.monotonic() + limit_s
    while status_of(side, addr) != code:
        if time.monotonic() > deadline:
            raise ServerError(f"{addr} not {code} after {limit_s}s:\n{side.status()[-800:]}")
        time.sleep(1)


class Adder(threading.Thread):
    """Starts the fourth node in the background; notes when it answered CQL."""

    def __init__(self, side, replaces):
        super().__init__(daemon=True)
        self.side, self.replaces = side, replaces
        self.started = time.monotonic()
        self.serving, self.error = None, None

    def run(self):
        try:
            self.side.add(self.replaces)
            self.serving = time.monotonic()
        except (ServerError, OSError, subprocess.SubprocessError) as e:
            self.error = str(e)


# --- the client --------------------------------------------------------------------------------

def load(binary, side, rows, logdir):
    """Writes `rows` rows at QUORUM; the seconds it took."""
    c = side.c
    cluster.create_keyspace(c.nodes[0], c.port, KEYSPACE, 3, c.nodes)
    argv = [binary, "stress", "write", f"n={rows}", "no-warmup", "cl=QUORUM", "-rate", "threads=50", *COLUMNS,
            "-node", c.addr, "-port", f"native={c.port}"]
    t0 = time.monotonic()
    with open(os.path.join(logdir, f"{c.name}-load.log"), "w") as out:
        r = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise ServerError(f"the load failed (exit {r.returncode}); see {logdir}/{c.name}-load.log")
    return time.monotonic() - t0


class Steady:
    """The fixed-rate read/update load (1:1, QUORUM, errors counted) with one row per second."""

    def __init__(self, binary, c, rate, rows, limit_s, log_path):
        self.words = ["mixed", "ratio(write=1,read=1)", f"duration={limit_s}s", "no-warmup", "cl=QUORUM",
                      "-pop", f"dist=uniform(1..{rows})", "-rate", "threads=50", f"fixed={rate}/s", *COLUMNS,
                      "-errors", "ignore", "-log", "interval=1", "-node", c.addr, "-port", f"native={c.port}"]
        self.logf = open(log_path, "w")
        self.p = subprocess.Popen([binary, "stress", *self.words], stdout=subprocess.PIPE, stderr=self.logf,
                                  stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        self.reader = timeline._Reader(self.p.stdout)
        self.reader.start()

    def now(self):
        return self.reader.client_time()

    def wait_until(self, at, limit_s=600):
        deadline = time.monotonic() + limit_s
        while (self.now() or 0) < at:
            if self.p.poll() is not None or time.monotonic() > deadline:
                raise ServerError(f"the steady load ended or stalled before {at}s")
            time.sleep(0.1)

    def seconds(self):
        return timeline.per_second(list(self.reader.rows), int(self.now() or 0))

    def stop(self):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.p.pid, 9)
        self.p.wait()
        self.reader.join(timeout=10)
        self.logf.write("".join(self.reader.lines))
        self.logf.close()


def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def back_at(seconds, after, baseline):
    """The first second at or after `after` ending a WINDOW_S window whose mean op/s is at least
    BACK_FRACTION of `baseline`; None if none."""
    ops = {s[0]: s[1] for s in seconds}
    for end in sorted(ops):
        if end < after or end - WINDOW_S + 1 < 1:
            continue
        window = [ops.get(t, 0.0) for t in range(end - WINDOW_S + 1, end + 1)]
        if mean(window) >= BACK_FRACTION * baseline:
            return end
    return None


# --- the scenarios -----------------------------------------------------------------------------

def prepare(side, binary, rows, logdir):
    """Starts the cluster, loads and flushes; (load seconds, data bytes on the three nodes)."""
    side.c.start()
    log(f"{side.c.label}: loading {rows} rows")
    took = load(binary, side, rows, logdir)
    side.c.flush(KEYSPACE)
    data = sum(side.c.data_components(KEYSPACE).values())
    log(f"{side.c.label}: loaded in {took:.0f}s, {data / 1e6:.0f} MB on the three nodes")
    return took, data


def recovery(side, binary, m, logdir):
    c = side.c
    load_s, data = prepare(side, binary, m["rows"], logdir)
    steady = Steady(binary, c, m["rate"], m["rows"], m["limit_s"], os.path.join(logdir, f"{c.name}-recovery.log"))
    try:
        steady.wait_until(m["steady_s"])
        victim = c.nodes[VICTIM]
        kill_at = steady.now()
        kill_mono = time.monotonic()
        log(f"{c.label}: killing {victim} at {kill_at:.1f}s and deleting its directories")
        c.kill_node(VICTIM)
        side.wipe(VICTIM)
        wait_status(side, victim, "DN", 120)
        since = lambda: kill_at + time.monotonic() - kill_mono  # noqa: E731 - the client's clock
        replace_at = since()
        log(f"{c.label}: {victim} down; replacing it with {side.new_addr} at {replace_at:.1f}s")
        adder = Adder(side, victim)
        adder.start()
        pid, full_at, cpu = None, None, None
        while full_at is None:
            if adder.error:
                raise ServerError(f"the replacement failed: {adder.error}")
            pid = pid or side.pid_of_new()
            if status_of(side, side.new_addr) == "UN":
                full_at = since()
                cpu = proc.cpu_seconds(pid) if pid and proc.alive(pid) else None
            elif since() > m["limit_s"]:
                raise ServerError(f"the replacement was not UN within {m['limit_s']}s")
            time.sleep(0.5)
        adder.join(timeout=600)
        if adder.error:
            raise ServerError(f"the replacement failed: {adder.error}")
        serve_at = kill_at + adder.serving - kill_mono if adder.serving else None
        received = proc.dir_bytes(side.new_data_dir())
        log(f"{c.label}: {side.new_addr} UN at {full_at:.1f}s; waiting for the throughput")
        before = [s[1] for s in steady.seconds() if WINDOW_S <= s[0] <= kill_at]
        baseline = mean(before)
        back = None
        while back is None and (steady.now() or 0) < m["limit_s"] - 1:
            time.sleep(1)
            back = back_at(steady.seconds(), full_at, baseline)
        seconds = steady.seconds()
    finally:
        steady.stop()
    during = [s[1] for s in seconds if kill_at < s[0] <= (back or seconds[-1][0])]
    stream_s = full_at - replace_at
    mb = received / 1e6
    return {
        "status": "ok", "rows": m["rows"], "load_s": round(load_s, 1), "data_bytes": data,
        "rate": m["rate"], "command": " ".join(steady.words), "victim": victim, "replacement": side.new_addr,
        "kill_at_s": round(kill_at, 1), "replace_at_s": round(replace_at, 1),
        "serve_at_s": round(serve_at, 1) if serve_at else None, "full_at_s": round(full_at, 1),
        "back_at_s": back, "baseline_ops_s": round(baseline, 1) if baseline else None,
        "time_to_first_serve_s": round(serve_at - kill_at, 1) if serve_at else None,
        "time_to_full_replication_s": round(full_at - kill_at, 1),
        "time_to_prefailure_throughput_s": round(back - kill_at, 1) if back else None,
        "min_throughput_fraction": round(min(during) / baseline, 3) if during and baseline else None,
        "stream_bytes": received, "stream_mb_s": round(mb / stream_s, 2) if stream_s > 0 else None,
        "cpu_s_per_mb": round(cpu / mb, 3) if cpu is not None and mb > 0 else None,
        "errors": sum(s[3] for s in seconds), "seconds": seconds,
    }


def scale(side, binary, m, logdir):
    load_s, data = prepare(side, binary, m["rows"], logdir)
    log(f"{side.c.label}: adding {side.new_addr}")
    adder = Adder(side, None)
    adder.start()
    while status_of(side, side.new_addr) != "UN":
        if adder.error:
            raise ServerError(f"the new node failed: {adder.error}")
        if time.monotonic() - adder.started > m["limit_s"]:
            raise ServerError(f"the new node was not UN within {m['limit_s']}s")
        time.sleep(0.5)
    joined = time.monotonic() - adder.started
    adder.join(timeout=600)
    if adder.error:
        raise ServerError(f"the new node failed: {adder.error}")
    side.pid_of_new()
    received = proc.dir_bytes(side.new_data_dir())
    return {"status": "ok", "rows": m["rows"], "load_s": round(load_s, 1), "data_bytes": data,
            "time_to_join_s": round(joined, 1), "stream_bytes": received,
            "stream_mb_s": round(received / 1e6 / joined, 2) if joined > 0 else None}


# --- the report --------------------------------------------------------------------------------

def chart_specs(runs, prefix):
    runs = {s: r for s, r in runs.items() if r.get("seconds")}
    markers = []
    for s, r in runs.items():
        for key, what in (("kill_at_s", "kill"), ("replace_at_s", "replace"), ("full_at_s", "UN"),
                          ("back_at_s", "back")):
            if r.get(key) is not None:
                markers.append({"x": r[key], "label": f"{s} {what}", "series": s})
    if not runs:
        return []
    return [{"file": f"{prefix}-{what}.png", "type": "timeline", "categories": [], "markers": markers,
             "title": f"{title} per second: one node killed, its disk lost, a replacement", "ylabel": unit,
             "xlabel": "seconds", "series": {s: [[p[0], p[col]] for p in r["seconds"]] for s, r in runs.items()}}
            for what, title, unit, col in (("throughput", "Op/s", "op/s", 1), ("p99", "p99 (ms)", "ms", 2))]


FIELDS = [("data_bytes", "data loaded (bytes, 3 replicas)"), ("load_s", "load time (s)"),
          ("time_to_first_serve_s", "time to first serve (s)"),
          ("time_to_full_replication_s", "time to full replication (s)"),
          ("time_to_prefailure_throughput_s", "time back to the earlier throughput (s)"),
          ("min_throughput_fraction", "lowest throughput / earlier"), ("stream_mb_s", "streaming (MB/s)"),
          ("cpu_s_per_mb", "replacement CPU s per MB"), ("errors", "client errors"),
          ("time_to_join_s", "time to add a 4th node (s)")]


def markdown(doc, chart_files):
    lines = [f"# {doc['title']}", "", f"{doc['date']} · commit {doc['git']['short']} · "
             f"{doc['machine'].get('cores')} cores · mode {doc['mode']}", ""]
    for key in ("recovery", "scale"):
        runs = doc.get(key)
        if not runs:
            continue
        systems = list(runs)
        lines += [f"## {key}", "", "| | " + " | ".join(systems) + " |", "|---" * (len(systems) + 1) + "|"]
        for field, label in FIELDS:
            if any(field in runs[s] for s in systems):
                lines.append(f"| {label} | " + " | ".join(str(runs[s].get(field, "")) for s in systems) + " |")
        for s in systems:
            if runs[s].get("status") != "ok":
                lines.append(f"\n{s} failed: {runs[s].get('error')}")
        lines.append("")
    lines += [f"![{c['title']}]({c['file']})" for c in chart_files]
    lines += ["", "## How", "", *[f"- {n}" for n in doc["notes"]], ""]
    return "\n".join(lines)


def main(argv, bench_dir, repo, git_info, find_refcass, build):
    ap = argparse.ArgumentParser(prog="bench/run --recovery|--scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--recovery", action="store_true")
    what.add_argument("--scale", action="store_true")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="200,000 rows (about 600 MB for the cluster)")
    mode.add_argument("--smoke", action="store_true", help="20,000 rows (about 60 MB): a pipeline check")
    ap.add_argument("--rows", type=int, help="rows of 1 KiB to load (default 2,000,000: 6 GB for the cluster)")
    ap.add_argument("--rate", type=int, help="op/s of the steady load (default 2000, --quick 1000, --smoke 200)")
    ap.add_argument("--servers", default="helenus,cassandra", help="comma-separated: helenus,cassandra")
    ap.add_argument("--helenus-bin", help="helenus binary (default target/release/helenus)")
    ap.add_argument("--helenus-addr", default="127.0.3.10", help="Helenus's first address (4 from it)")
    ap.add_argument("--cassandra-addr", default="127.0.3.20", help="Cassandra's first address (4 from it)")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--heap", default="1G", help="Cassandra heap per node")
    ap.add_argument("--refcass", help="path of the refcass tool")
    ap.add_argument("--out", help="directory for the report (default bench/results, --smoke: bench/results/smoke)")
    ap.add_argument("--workdir", help="where the data goes (default: a new directory under $TMPDIR, removed)")
    ap.add_argument("--charts", choices=("auto", "matplotlib", "builtin", "none"), default="auto")
    ap.add_argument("--no-build", action="store_true", help="do not run cargo build --release")
    ap.add_argument("--build-timeout", type=int, default=3600)
    args = ap.parse_args(argv)
    build(args)
    mode_name = "smoke" if args.smoke else "quick" if args.quick else "full"
    m = dict(MODES[mode_name])
    if args.rows:
        m["rows"] = args.rows
    if args.rate:
        m["rate"] = args.rate
    binary = os.path.abspath(args.helenus_bin or os.path.join(repo, "target", "release", "helenus"))
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    refcass = find_refcass(args.refcass) if "cassandra" in servers else None
    if "cassandra" in servers and not refcass:
        ap.error("Cassandra needs refcass (--refcass PATH); or run --servers helenus")
    key = "recovery" if args.recovery else "scale"
    workdir = args.workdir or tempfile.mkdtemp(prefix="helenus-recovery-")
    logdir = os.path.join(workdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    runs = {}
    for name in servers:
        side = (HelenusSide(binary, args.helenus_addr, os.path.join(workdir, name), args.port) if name == "helenus"
                else CassandraSide(refcass, args.cassandra_addr, os.path.join(workdir, name), args.port, args.heap))
        t0 = time.monotonic()
        try:
            runs[name] = (recovery if args.recovery else scale)(side, binary, m, logdir)
        except (ServerError, OSError, subprocess.SubprocessError) as e:
            log(f"{name}: failed: {e}")
            runs[name] = {"status": "failed", "error": str(e)}
        finally:
            side.c.stop()
            if name == "cassandra" and side.new not in side.c.members:
                side.new.stop()
        runs[name]["wall_s"] = round(time.monotonic() - t0, 1)
    git = git_info()
    date = datetime.datetime.now(datetime.timezone.utc)
    out_dir = os.path.abspath(args.out or os.path.join(bench_dir, "results", "smoke" if args.smoke else ""))
    os.makedirs(out_dir, exist_ok=True)
    prefix = f"{date:%Y-%m-%d}-{git['short']}-{key}"
    doc = {"title": f"Helenus vs Cassandra 5.0.4: {'a lost disk replaced' if args.recovery else 'a 4th node added'}"
                    f" (3 nodes, RF 3)", "date": date.isoformat(timespec="seconds"), "mode": mode_name, "git": git,
           "machine": proc.machine(), "command": "bench/run " + " ".join(argv), key: runs,
           "notes": [line.strip() for line in __doc__.split("\n\n")[1:3]]}
    files = []
    if args.recovery and args.charts != "none":
        files, _ = charts.render_specs(chart_specs(runs, prefix), out_dir, args.charts, bench_dir, log)
    with open(os.path.join(out_dir, prefix + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out_dir, prefix + ".md"), "w") as f:
        f.write(markdown(doc, files))
    log(f"report: {os.path.join(out_dir, prefix + '.md')}")
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if all(r["status"] == "ok" for r in runs.values()) else 2
