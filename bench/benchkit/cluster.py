"""The two clusters under test (`bench/run --cluster N`): N `helenus server` nodes run by
`helenus cluster`, and N Apache Cassandra nodes run by refcass that form one ring.

Both offer the interface of servers.py's single servers — start() (fresh data; the seconds until
every node answers CQL), pids (every running node), addr (the contact points, comma-separated),
flush(keyspace) (and a major compaction) on every node, data_components(keyspace) and peak_rss() summed
over the nodes, stop() —
plus what the timeline run needs: nodes (their addresses), kill_node(i) (SIGKILL) and start_node(i)
(back with its data, waiting until it answers CQL)."""
import ipaddress
import os
import subprocess
import time

from . import proc
from .servers import Cassandra, ServerError, _settle_by_compactionstats, _tail

NATIVE_PORT = 9042  # `helenus cluster` gives every node the same ports on its own address
ADMIN_PORT = 7199


def addresses(first, n):
    """`first` and the n-1 addresses after it."""
    base = ipaddress.IPv4Address(first)
    return [str(base + i) for i in range(n)]


def create_keyspace(addr, port, keyspace, rf, nodes, timeout=60):
    """CREATE KEYSPACE IF NOT EXISTS with SimpleStrategy and `rf`, then waits until every node's
    schema shows it (so a client's own CREATE … IF NOT EXISTS on any node finds it)."""
    proc.cql_query(addr, port, f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
                   f"{{'class': 'SimpleStrategy', 'replication_factor': {rf}}}", timeout=timeout)
    query = f"SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = '{keyspace}'"
    deadline = time.monotonic() + timeout
    for node in nodes:
        while True:
            try:
                if proc.cql_query(node, port, query, timeout=5):
                    break
            except (OSError, proc.ProbeError):
                pass
            if time.monotonic() > deadline:
                raise ServerError(f"keyspace {keyspace} did not reach {node} within {timeout}s")
            time.sleep(0.2)


class HelenusCluster:
    name = "helenus"
    label = "Helenus"

    def __init__(self, binary, first_addr, n, workdir, log, port=NATIVE_PORT, start_timeout=120):
        self.binary, self.n, self.log = binary, n, log
        self.nodes = addresses(first_addr, n)
        self.addr, self.port = ",".join(self.nodes), port
        self.dir = os.path.join(workdir, "helenus-cluster")
        self.log_path = os.path.join(self.dir, "node1", "logs", "system.log")
        self.start_timeout = start_timeout
        self.version = None
        self.peaks = {}  # node number -> the highest VmHWM seen (restarts included)
        self.started = False

    def _cluster(self, *args, timeout=None):
        cmd = [self.binary, "cluster", *map(str, args), "--dir", self.dir, "--timeout", str(self.start_timeout)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                               timeout=timeout or self.start_timeout * (self.n + 1))
        except subprocess.TimeoutExpired:
            raise ServerError(f"{' '.join(cmd)} did not finish in time")
        if r.returncode != 0:
            raise ServerError(f"{' '.join(cmd)} failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-600:]}")
        return r.stdout

    def _pid(self, number):
        try:
            with open(os.path.join(self.dir, f"node{number}", "helenus.pid")) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        return pid if proc.alive(pid) else None

    @property
    def pids(self):
        return [p for p in (self._pid(i) for i in range(1, self.n + 1)) if p]

    def start(self, fresh=True):
        for a in self.nodes:
            if proc.port_open(a, self.port):
                raise ServerError(f"something already listens on {a}:{self.port}; pick another --helenus-addr")
        if fresh and os.path.exists(os.path.join(self.dir, "cluster.json")):
            self._cluster("clear")
        t0 = time.monotonic()
        self.started = True
        yaml = [] if self.port == NATIVE_PORT else ["--yaml", f"native_transport_port: {self.port}"]
        self._cluster("start", "--nodes", self.n, "--address", self.nodes[0], *yaml)
        took = time.monotonic() - t0
        self.version = proc.cql_probe(self.nodes[0], self.port)
        return took

    def kill_node(self, i):
        """SIGKILL node i (0-based)."""
        self._sample_peak()
        self._cluster("kill", i + 1)

    def start_node(self, i):
        self._cluster("start", i + 1, timeout=self.start_timeout + 30)

    def _sample_peak(self):
        for i in range(1, self.n + 1):
            pid = self._pid(i)
            if pid:
                self.peaks[i] = max(self.peaks.get(i, 0), proc.status_kib(pid, "VmHWM") or 0)

    def peak_rss(self):
        self._sample_peak()
        return sum(self.peaks.values())

    def stop(self):
        """SIGTERM every node (they flush), then `helenus cluster clear` kills what is left."""
        if not self.started:
            return
        self._sample_peak()
        try:
            self._cluster("stop")
        except ServerError as e:
            self.log(f"helenus cluster stop: {e}; clearing")
            self.clear()
        self.started = False

    def clear(self):
        if os.path.exists(os.path.join(self.dir, "cluster.json")):
            self._cluster("clear")

    def nodetool(self, addr, *args, timeout=180):
        cmd = [self.binary, "nodetool", "-h", addr, "-p", str(ADMIN_PORT), *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def flush(self, keyspace, settle_timeout=180):
        """`nodetool flush` on every node, compactions settled, then a major compaction on every node
        (one after the other; `nodetool compact` returns when done) and compactions settled again."""
        for a in self.nodes:
            r = self.nodetool(a, "flush", keyspace)
            if r.returncode != 0:
                raise ServerError(f"helenus nodetool -h {a} flush failed: {r.stderr.strip()[:300]}")
        settled = self._settle(settle_timeout)
        for a in self.nodes:
            r = self.nodetool(a, "compact", keyspace, timeout=settle_timeout * 5)
            if r.returncode != 0:
                raise ServerError(f"helenus nodetool -h {a} compact failed: {r.stderr.strip()[:300]}")
        return f"nodetool flush; {settled}; nodetool compact; {self._settle(settle_timeout)} (every node)"

    def _settle(self, timeout):
        done = [_settle_by_compactionstats(lambda a=a: self.nodetool(a, "compactionstats"), timeout)
                for a in self.nodes]
        return ", ".join(sorted(set(d or "compactionstats failed" for d in done)))

    def data_components(self, keyspace):
        """Bytes by SSTable component, summed over the nodes."""
        return sum_components(proc.dir_components(os.path.join(self.dir, f"node{i}", "data", keyspace))
                              for i in range(1, self.n + 1))


def sum_components(parts):
    out = {}
    for part in parts:
        for key, size in part.items():
            out[key] = out.get(key, 0) + size
    return out


def cassandra_yaml(seed):
    """refcass's extra cassandra.yaml lines for a node of a cluster whose seed is `seed`
    (refcass writes the node's own address as the seed; a later key wins)."""
    return ("seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n"
            f"    parameters:\n      - seeds: \"{seed}:7000\"")


class CassandraCluster:
    name = "cassandra"
    label = "Cassandra"

    def __init__(self, refcass, first_addr, n, heap, workdir, log, port=NATIVE_PORT, jmx_port=None):
        self.refcass, self.n, self.heap, self.log = refcass, n, heap, log
        self.nodes = addresses(first_addr, n)
        self.addr, self.port = ",".join(self.nodes), port
        self.dir = os.path.join(workdir, "cassandra-cluster")
        yaml = cassandra_yaml(self.nodes[0])
        self.members = [Cassandra(refcass, a, port, heap, os.path.join(self.dir, f"node{i + 1}"), log, yaml=yaml,
                                  jmx_port=jmx_port + i if jmx_port else None)
                        for i, a in enumerate(self.nodes)]
        self.log_path = os.path.join(self.dir, "node1", "refcass-start.log")
        self.version = None

    @property
    def pids(self):
        return [m.pid for m in self.members if m.pid]

    def start(self, fresh=True):
        """One node after the other (each joins the ring before the next starts), then waits until
        `nodetool status` on the seed shows every node up and normal."""
        t0 = time.monotonic()
        try:
            for m in self.members:
                m.start(fresh=fresh)
                self.log(f"  cassandra {m.addr} answered CQL ({time.monotonic() - t0:.0f}s)")
            self._wait_ring(deadline=time.monotonic() + 120)
        except BaseException:
            self.stop()
            raise
        self.version = self.members[0].version
        return time.monotonic() - t0

    def _wait_ring(self, deadline):
        while True:
            r = self.members[0]._refcass("nodetool", "--addr", self.nodes[0], "status", timeout=120)
            up = [line.split()[1] for line in r.stdout.splitlines() if line.startswith("UN ")]
            if set(up) >= set(self.nodes):
                return
            if time.monotonic() > deadline:
                raise ServerError(f"nodetool status shows {up} up and normal, not all of {self.nodes}:\n"
                                  f"{r.stdout[-800:]}{r.stderr[-400:]}")
            time.sleep(2)

    def kill_node(self, i):
        self.members[i].kill()

    def start_node(self, i):
        self.members[i].start(fresh=False)

    def peak_rss(self):
        return sum(m.peak_rss() for m in self.members)

    def stop(self):
        for m in reversed(self.members):
            try:
                m.stop()
            except (OSError, subprocess.SubprocessError) as e:  # keep stopping the others
                self.log(f"could not stop cassandra {m.addr}: {e}; {_tail(getattr(m, 'log_path', ''), 5)}")

    def flush(self, keyspace, settle_timeout=180):
        methods = {m.flush(keyspace, settle_timeout) for m in self.members}
        return ", ".join(sorted(methods)) + " (every node)"

    def data_components(self, keyspace):
        return sum_components(m.data_components(keyspace) for m in self.members)


# --- the report's parts that differ from one node's ----------------------------------------------

def server_info(servers, results, args, binary, binary_version, refcass):
    """The report's `servers` object for the two clusters."""
    n, info = args.cluster, {}
    for s in servers:
        first = args.helenus_addr if s == "helenus" else args.cassandra_addr
        nodes = ", ".join(f"{a}:{args.port}" for a in addresses(first, n))
        if s == "helenus":
            info[s] = {"label": "Helenus", "address": nodes, "nodes": n, "binary": binary,
                       "version": binary_version, "release_version": results[s]["version"],
                       "setup": f"`helenus cluster start --nodes {n} --address {first}`: release build, fresh "
                                "directories, default configuration apart from addresses and directories "
                                "(num_tokens 16, SimpleSnitch)"}
        else:
            info[s] = {"label": "Apache Cassandra", "address": nodes, "nodes": n, "version": results[s]["version"],
                       "refcass": refcass,
                       "setup": f"refcass start --heap {args.heap} --fresh on each node, one after the other, "
                                f"seed {first} (refcass's cassandra.yaml: num_tokens 16, "
                                "allocate_tokens_for_local_replication_factor 3, SimpleSnitch, AllowAll auth)"}
    return info


def missing_timeline(runs):
    """The timeline record of a server whose session ended before its timeline ran."""
    errors = [e for r in runs for e in r.get("errors", [])]
    return {"status": "failed", "error": "; ".join(errors) or "not run", "command": None, "rate": None,
            "duration_s": None, "victim": None, "kill_at_s": None, "restart_at_s": None, "up_at_s": None,
            "seconds": []}


NOTES = [
    "One cluster runs at a time, all its nodes and the client (`helenus stress`, same binary for both) on this "
    "machine: the nodes and the client share its cores.",
    "Every keyspace has SimpleStrategy with replication_factor = the node count, every request is at QUORUM "
    "(YCSB: cassandra.readconsistencylevel and cassandra.writeconsistencylevel), every node is a contact point "
    "and the driver routes by token.",
    "Server CPU is utime+stime of every node's process from /proc/PID/stat, summed, before and after each "
    "client command, divided by the operations the client issued (measured plus warm-up).",
    "Start-up is the wall time to start the nodes one after the other until each answers CQL (Cassandra: and "
    "`nodetool status` shows every node UN); RSS is the sum of the nodes' peak RSS (VmHWM).",
    "Bytes per row: the keyspace's data directories on all nodes (so replication_factor copies), after a "
    "flush on every node, compactions settled, a major compaction (`nodetool compact`) on every node and "
    "compactions settled again, divided by the rows the load wrote (the client's count).",
    "Timeline: a fixed-rate mixed run (write:read 1:3, QUORUM, `-errors ignore`) during which the last node "
    "(not the first contact point) is killed with SIGKILL at a third of the run and restarted at two thirds; "
    "op/s, p99 and errors per second come from the client's one-second interval rows, a second without a "
    "finished operation shows 0 op/s.",
]
