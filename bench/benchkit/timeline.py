"""The timeline run of `bench/run --cluster N`: a fixed-rate mixed workload during which one node
is killed (SIGKILL) and later restarted, with throughput, p99 and client errors per second taken
from the client's interval lines (`total, …` rows, one per second).

Kill and restart follow the client's own clock: the node is killed once the client's run time
reaches `kill_at` seconds, and restarted at `restart_at`; `up_at` is when it answered CQL again."""
import subprocess
import threading
import time

from . import parse
from .servers import ServerError

# Columns of a stress interval row: type, total ops, op/s, pk/s, row/s, mean, med, .95, .99, .999,
# max, time, stderr, errors, …
_OPS_S, _P99, _TIME, _ERRORS = 2, 8, 11, 13


def command(cluster, rate, duration_s, rows):
    """The client's words after `helenus stress`: mixed 1:3 at QUORUM over the rows written before,
    errors counted rather than fatal, one interval row per second."""
    return ["mixed", "ratio(write=1,read=3)", f"duration={duration_s}s", "no-warmup", "cl=QUORUM",
            "-pop", f"dist=uniform(1..{max(1, rows)})", "-rate", "threads=50", f"fixed={rate}/s",
            "-errors", "ignore", "-log", "interval=1", "-node", cluster.addr, "-port", f"native={cluster.port}"]


def interval_row(line):
    """(time s, op/s, p99 ms, errors) of a `total, …` interval row; None for other lines."""
    if not line.startswith("total,"):
        return None
    cols = [c.strip() for c in line.split(",")]
    if len(cols) <= _ERRORS:
        return None
    t, ops, p99, errors = (parse._num(cols[i]) for i in (_TIME, _OPS_S, _P99, _ERRORS))
    if t is None:
        return None
    return t, ops or 0.0, p99, int(errors or 0)


def per_second(rows, duration_s):
    """One [second, op/s, p99 ms, errors] per second from 1 to the run's end; the client prints no
    row for a second without a finished operation, which shows as 0 op/s and no p99."""
    by_second = {int(round(t)): (ops, p99, err) for t, ops, p99, err in rows}
    last = max([int(duration_s)] + list(by_second))
    return [[s, *by_second.get(s, (0.0, None, 0))] for s in range(1, last + 1)]


class _Reader(threading.Thread):
    """Collects the client's standard output, noting when each interval row arrived."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream, self.lines, self.rows = stream, [], []
        self.last = None  # (client run time, time.monotonic() when its row arrived)

    def run(self):
        for line in self.stream:
            self.lines.append(line)
            row = interval_row(line)
            if row:
                self.rows.append(row)
                self.last = (row[0], time.monotonic())

    def client_time(self):
        """The client's run time now (from its latest row), or None before its first row."""
        return None if self.last is None else self.last[0] + time.monotonic() - self.last[1]


class _Restart(threading.Thread):
    def __init__(self, cluster, victim, reader):
        super().__init__(daemon=True)
        self.cluster, self.victim, self.reader = cluster, victim, reader
        self.up_at, self.error = None, None

    def run(self):
        try:
            self.cluster.start_node(self.victim)
            self.up_at = self.reader.client_time()
        except (ServerError, OSError, subprocess.SubprocessError) as e:
            self.error = str(e)


def run(cluster, client, binary, cwd, log_path, rate, duration_s, kill_at, restart_at, victim, rows, log):
    """Runs the timeline against a started cluster; `victim` is the 0-based node to kill. Returns
    the run's record for the JSON (status ok or failed). Every node runs again when it returns,
    unless the restart failed (then `restart_error` says why)."""
    words = command(cluster, rate, duration_s, rows)
    argv = [binary, "stress", *words]
    out = {"command": " ".join(words), "rate": rate, "duration_s": duration_s, "victim": cluster.nodes[victim],
           "kill_at_s": None, "restart_at_s": None, "up_at_s": None, "restart_error": None}
    with open(log_path, "w") as logf:
        logf.write("$ " + " ".join(argv) + "\n")
        logf.flush()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=logf, stdin=subprocess.DEVNULL, text=True,
                             start_new_session=True, cwd=cwd)
        client.current = p
        reader = _Reader(p.stdout)
        reader.start()
        restart = _Restart(cluster, victim, reader)
        try:
            rc = _drive(cluster, p, reader, restart, out, kill_at, restart_at, duration_s + 120, log)
        except BaseException:
            client.kill()
            raise
        finally:
            client.current = None
            if out["kill_at_s"] is not None:  # also when the client ended early: bring the node back
                if out["restart_at_s"] is None:
                    restart.start()
                restart.join()
                out["up_at_s"], out["restart_error"] = restart.up_at, restart.error
            reader.join(timeout=10)
        logf.write("".join(reader.lines))
    return _result(out, rc, "".join(reader.lines), reader.rows, duration_s, log_path)


def _drive(cluster, p, reader, restart, out, kill_at, restart_at, limit_s, log):
    """Kills and restarts the victim at the client's times; the client's exit code (None: it ran
    past `limit_s` and was killed)."""
    deadline = time.monotonic() + limit_s
    if _wait_for(reader, p, kill_at, deadline):
        out["kill_at_s"] = reader.client_time()
        log(f"  timeline: killing {cluster.label} node {out['victim']} at {out['kill_at_s']:.1f}s")
        cluster.kill_node(restart.victim)
        if _wait_for(reader, p, restart_at, deadline):
            out["restart_at_s"] = reader.client_time()
            log(f"  timeline: restarting it at {out['restart_at_s']:.1f}s")
            restart.start()
    try:
        return p.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def _wait_for(reader, p, at, deadline):
    """Waits until the client's run time reaches `at`; False if the client ended or time ran out."""
    while p.poll() is None and time.monotonic() < deadline:
        t = reader.client_time()
        if t is not None and t >= at:
            return True
        time.sleep(0.05)
    return False


def _result(out, rc, text, rows, duration_s, log_path):
    out["seconds"] = per_second(rows, duration_s)
    if rc != 0:
        tail = text.strip().splitlines()[-1:] or ["no output"]
        return {**out, "status": "failed", "error": f"exit {rc}: {tail[0][:300]} (see {log_path})"}
    try:
        figures = parse.parse_stress(text)
    except parse.ParseError as e:
        return {**out, "status": "failed", "error": f"{e} (see {log_path})"}
    out.update({k: figures[k] for k in ("throughput", "p99_ms", "max_ms", "ops", "errors")})
    if out["kill_at_s"] is None:
        return {**out, "status": "failed", "error": "the client ended before the node was killed"}
    out["status"] = "ok"
    out.update(outage(out))
    return out


def outage(run):
    """Figures of the seconds from the kill to 5 s after the node answered again (or the run's end):
    the lowest op/s, the highest p99, and the errors in them."""
    start, up = run.get("kill_at_s"), run.get("up_at_s")
    if start is None:
        return {"outage_min_ops_s": None, "outage_max_p99_ms": None, "outage_errors": None}
    end = (up + 5) if up is not None else float("inf")
    window = [s for s in run["seconds"] if start < s[0] <= end + 1]
    p99s = [s[2] for s in window if s[2] is not None]
    return {"outage_min_ops_s": min((s[1] for s in window), default=None),
            "outage_max_p99_ms": max(p99s, default=None),
            "outage_errors": sum(s[3] for s in window)}
