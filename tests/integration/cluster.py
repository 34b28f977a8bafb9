"""Drive `helenus cluster` from tests: a local cluster of real `helenus server` processes on a
random 127.0.N.0/24 (N in 10..19, so parallel runs rarely meet; a taken /24 is skipped), node
handles to kill, pause, resume, stop and start nodes, driver sessions, and a teardown that always
clears the cluster (processes killed, directory deleted), even when the test or the start fails.

    with LocalCluster(nodes=3, racks=3) as cluster:
        cluster.node(2).kill()
        session = cluster.session()

or, in a fixture, `cluster = LocalCluster(...).start()` and `cluster.clear()` in its finally.
"""
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import WhiteListRoundRobinPolicy

from helenus_node import BIN

SUBNETS = range(10, 20)
NATIVE_PORT = 9042
ADMIN_PORT = 7199
STORAGE_PORT = 7000


class ClusterError(RuntimeError):
    pass


def _in_use(address):
    for port in (NATIVE_PORT, STORAGE_PORT, ADMIN_PORT):
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex((address, port)) == 0:
                return True
    return False


def _free_subnet(nodes, exclude=()):
    """A random 127.0.N (N in 10..19) whose first `nodes` addresses serve nothing."""
    candidates = [n for n in SUBNETS if n not in exclude]
    random.shuffle(candidates)
    for n in candidates:
        if not any(_in_use(f"127.0.{n}.{i}") for i in range(1, nodes + 1)):
            return n
    raise ClusterError("no free 127.0.N.0/24 among 127.0.10-19")


class LocalCluster:
    """A `helenus cluster` in a temporary directory. Options are those of `helenus cluster start`."""

    def __init__(self, nodes=3, racks=None, datacenters=None, seeds=None, num_tokens=None,
                 name=None, yaml="", timeout=60):
        self.size = nodes
        self.options = {"--nodes": nodes, "--racks": racks, "--datacenters": datacenters,
                        "--seeds": seeds, "--num-tokens": num_tokens, "--name": name}
        self.yaml = yaml
        self.timeout = timeout
        self.root = tempfile.mkdtemp(prefix="helenus-cluster-")
        self.dir = os.path.join(self.root, "cluster")
        self.subnet = None
        self._drivers = []

    # -- the command line -------------------------------------------------------------------

    def run(self, *args, check=True):
        """Runs `helenus cluster ARGS --dir DIR`; its CompletedProcess (stdout and stderr as text)."""
        command = [BIN, "cluster", *map(str, args), "--dir", self.dir,
                   "--timeout", str(self.timeout)]
        out = subprocess.run(command, capture_output=True, text=True, timeout=self.timeout + 60)
        if check and out.returncode != 0:
            raise ClusterError(f"{' '.join(command)} failed ({out.returncode}):\n"
                               f"{out.stdout}{out.stderr}")
        return out

    def start(self, attempts=3):
        """Creates and starts the cluster on a free /24; clears everything if it cannot."""
        tried = []
        try:
            for _ in range(attempts):
                self.subnet = _free_subnet(self.size, tried)
                tried.append(self.subnet)
                out = self.run("start", *self._start_args(), check=False)
                if out.returncode == 0:
                    return self
                if "already in use" not in out.stdout + out.stderr:
                    raise ClusterError(f"helenus cluster start failed:\n{out.stdout}{out.stderr}")
                self.run("clear")  # another run took an address meanwhile: try another /24
            raise ClusterError(f"every /24 tried was taken: {tried}")
        except BaseException:
            self.clear()
            raise

    def create(self):
        """Writes the cluster's files on a free /24 without starting any node."""
        self.subnet = _free_subnet(self.size)
        try:
            self.run("create", *self._start_args())
        except BaseException:
            self.clear()
            raise
        return self

    def _start_args(self):
        args = ["--address", self.address(1)]
        for option, value in self.options.items():
            if value is not None:
                args += [option, value]
        if self.yaml:
            args += ["--yaml", self.yaml]
        return args

    def status(self):
        """`helenus cluster status` as a list of dicts: node, address, dc, rack, pid, state, cql."""
        lines = self.run("status").stdout.splitlines()
        header = [h.lower() for h in lines[1].split()]
        rows = []
        for line in lines[2:]:
            row = dict(zip(header, line.split(None, len(header) - 1)))
            row["pid"] = None if row["pid"] == "-" else int(row["pid"])
            row["cql"] = row["cql"].split()[0]  # up, down or -
            rows.append(row)
        return rows

    def clear(self):
        """Kills every node and deletes the cluster; safe to call more than once."""
        for driver in self._drivers:
            driver.shutdown()
        self._drivers = []
        if os.environ.get("HELENUS_KEEP_CLUSTER"):
            self.run("stop", check=False)
            print(f"cluster kept in {self.dir} (HELENUS_KEEP_CLUSTER)")
            return
        try:
            if os.path.exists(self.dir):
                self.run("clear")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.clear()

    # -- nodes and sessions -----------------------------------------------------------------

    def address(self, number):
        return f"127.0.{self.subnet}.{number}"

    def node(self, number):
        return NodeHandle(self, number)

    @property
    def nodes(self):
        return [self.node(i) for i in range(1, self.size + 1)]

    def session(self, protocol_version=5, hosts=None, **kw):
        """A driver session to the cluster (all nodes as contact points, or `hosts`); shut down
        with the cluster. The driver waits 30 s for an answer (its default is 10): the server
        answers a timeout of its own after its request timeouts, and a debug cluster on a
        loaded 2-core machine can be slower than 10 s to do so."""
        hosts = hosts or [n.address for n in self.nodes]
        profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy(hosts),
                                   request_timeout=30)
        driver = Cluster(hosts, port=NATIVE_PORT, protocol_version=protocol_version,
                         execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                         connect_timeout=10, **kw)
        self._drivers.append(driver)
        return driver.connect()


class NodeHandle:
    """One node of a LocalCluster, by number."""

    def __init__(self, cluster, number):
        self.cluster = cluster
        self.number = number
        self.address = cluster.address(number)
        self.dir = os.path.join(cluster.dir, f"node{number}")

    def __repr__(self):
        return f"node{self.number} ({self.address})"

    def kill(self):
        return self.cluster.run("kill", self.number)

    def stop(self):
        return self.cluster.run("stop", self.number)

    def start(self):
        return self.cluster.run("start", self.number)

    def pause(self):
        return self.cluster.run("pause", self.number)

    def resume(self):
        return self.cluster.run("resume", self.number)

    def status(self):
        return next(s for s in self.cluster.status() if s["node"] == f"node{self.number}")

    def session(self, **kw):
        """A session that talks to this node only."""
        return self.cluster.session(hosts=[self.address], **kw)

    def run_nodetool(self, *args, timeout=60):
        """`helenus nodetool ARGS` on this node, whatever its exit status."""
        return subprocess.run([BIN, "nodetool", "-h", self.address, *map(str, args)],
                              capture_output=True, text=True, timeout=timeout)

    def nodetool(self, *args, timeout=60):
        """`helenus nodetool ARGS` on this node: its output; fails unless it succeeded."""
        out = self.run_nodetool(*args, timeout=timeout)
        if out.returncode != 0:
            raise ClusterError(f"nodetool {' '.join(map(str, args))} on {self}: {out.stderr}")
        return out.stdout

    def status_of(self, address):
        """The two-letter code (UN, DN, ...) this node's `nodetool status` gives `address`."""
        for line in self.nodetool("status").splitlines():
            fields = line.split()
            if len(fields) > 1 and fields[1] == str(address):
                return fields[0]
        return None

    def await_status(self, address, code, timeout=20):
        """Waits until this node's `nodetool status` shows `address` as `code`; the seconds it
        took."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self.status_of(address) == code:
                return time.monotonic() - started
            time.sleep(0.2)
        raise ClusterError(f"{self} never saw {address} as {code} within {timeout} s")

    def log(self):
        """The end of the node's system.log."""
        try:
            with open(os.path.join(self.dir, "logs", "system.log"), "rb") as f:
                return f.read().decode(errors="replace")[-4000:]
        except OSError:
            return ""


def at(cl, query):
    """`query` at consistency level `cl`, its errors given to the test as the server sent them
    (the driver's default policy retries some on another host)."""
    from cassandra.policies import FallthroughRetryPolicy
    from cassandra.query import SimpleStatement
    return SimpleStatement(query, consistency_level=cl, retry_policy=FallthroughRetryPolicy())


def all_up(cluster):
    """Waits until every node sees every node up (a restarted node must hear the others)."""
    for node in cluster.nodes:
        for other in cluster.nodes:
            node.await_status(other.address, "UN", timeout=20)


def running(statements, nodes=3):
    """A started cluster on which `statements` (schema) have run; cleared when the generator
    closes. For module fixtures: `yield from running([...])`."""
    cluster = LocalCluster(nodes=nodes).start()
    try:
        # One node runs them all: another node may not have applied the previous change yet
        # when the driver's agreement check read only versions gossip had not updated.
        session = cluster.node(1).session()
        for statement in statements:
            session.execute(statement)
        yield cluster
    finally:
        cluster.clear()
