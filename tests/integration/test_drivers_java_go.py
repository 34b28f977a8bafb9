"""The Java 4.x driver and gocql against a 3-node cluster (issue 12, point 6): the programs in
tests/drivers/java and tests/drivers/go connect, print what the driver sees as JSON, and this
module compares it with what the servers say (`nodetool status`, `ring`, `getendpoints`).

Each program: the hosts (datacenter, rack, host id, tokens), the replicas the driver computes for
ten keys of an RF=2 (SimpleStrategy) and an RF=3 (NetworkTopologyStrategy) keyspace, schema
agreement after each CREATE, prepared INSERT/SELECT at QUORUM through the token-aware policy
(coordinator among the key's replicas; also with a composite partition key bound out of order),
a 500-row scan in pages of 37, an InvalidQuery; then, with a node killed, the node DOWN in the
driver and a write at ALL failing as Unavailable (ALL, required 3, alive 2); with the node
restarted, the driver seeing it UP within seconds (the STATUS_CHANGE UP event; the drivers' own
reconnection attempts are set 30 s or more apart).
Last, both drivers see a fourth node join (TOPOLOGY_CHANGE NEW_NODE) and its tokens.

A test is skipped when its toolchain (`java` and `mvn`, or `go`) is missing or its dependencies
cannot be resolved (no registry and nothing cached in ~/.m2 or the Go module cache).
"""
import json
import os
import shutil
import subprocess
import threading
import time

import pytest

from cluster import LocalCluster, all_up

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JAVA_DIR = os.path.join(ROOT, "drivers", "java")
GO_DIR = os.path.join(ROOT, "drivers", "go")
KEYS = ["a", "b", "c", "key-1", "key-2", "key-3", "key-42", "helenus", "zebra", "0"]


@pytest.fixture(scope="module")
def cluster():
    cluster = LocalCluster(nodes=3, racks=3).start()
    try:
        yield cluster
    finally:
        cluster.clear()


# -- building the programs --------------------------------------------------------------------

def _run(command, cwd, timeout):
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _fetch(command, cwd, timeout):
    """A dependency download: its CompletedProcess, a failed one if it timed out."""
    try:
        return _run(command, cwd, timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, 1, "", f"timed out after {timeout} s")


def _newer(path, *sources):
    return os.path.exists(path) and all(os.path.getmtime(path) >= os.path.getmtime(source)
                                        for source in sources)


@pytest.fixture(scope="module")
def java_program():
    """The command that runs DriverCheck: the classpath Maven resolves and the class javac makes,
    both kept in tests/drivers/java/target/ until pom.xml or the source changes."""
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    pom = os.path.join(JAVA_DIR, "pom.xml")
    source = os.path.join(JAVA_DIR, "src", "DriverCheck.java")
    target = os.path.join(JAVA_DIR, "target")
    classpath_file = os.path.join(target, "classpath.txt")
    classpath = None
    if _newer(classpath_file, pom):
        with open(classpath_file) as f:
            classpath = f.read().strip()
        if not all(os.path.exists(jar) for jar in classpath.split(os.pathsep)):
            classpath = None
    if classpath is None:
        resolve = ["mvn", "-q", "-B", "dependency:build-classpath",
                   f"-Dmdep.outputFile={classpath_file}"]
        # Offline first (everything in ~/.m2 already), then online (Maven Central).
        result = _fetch(resolve[:1] + ["-o"] + resolve[1:], JAVA_DIR, 120)
        if result.returncode != 0:
            result = _fetch(resolve, JAVA_DIR, 300)
        if result.returncode != 0:
            pytest.skip("maven could not resolve the Java driver (registry unreachable?):\n"
                        + (result.stdout + result.stderr)[-2000:])
        with open(classpath_file) as f:
            classpath = f.read().strip()
    classes = os.path.join(target, "classes")
    if not _newer(os.path.join(classes, "DriverCheck.class"), source, classpath_file):
        compiled = _run(["javac", "-d", classes, "-cp", classpath, source], JAVA_DIR, 300)
        assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return ["java", "-cp", f"{classes}{os.pathsep}{classpath}", "DriverCheck"]


@pytest.fixture(scope="module")
def go_program(tmp_path_factory):
    """The command that runs the gocql check (modules from the Go module cache or proxy)."""
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    downloaded = _fetch(["go", "mod", "download"], GO_DIR, 300)
    if downloaded.returncode != 0:
        pytest.skip("go could not download gocql (module proxy unreachable?):\n"
                    + (downloaded.stdout + downloaded.stderr)[-2000:])
    binary = tmp_path_factory.mktemp("go") / "drivercheck"
    built = _run(["go", "build", "-o", str(binary), "."], GO_DIR, 600)
    assert built.returncode == 0, built.stdout + built.stderr
    return [str(binary)]


# -- what the servers say ---------------------------------------------------------------------

def server_hosts(cluster):
    """address -> {datacenter, rack, host_id, tokens} from node 1's `nodetool status` and
    `ring`."""
    hosts = {}
    status = cluster.node(1).nodetool("status")
    datacenter = None
    for line in status.splitlines():
        if line.startswith("Datacenter:"):
            datacenter = line.split(":", 1)[1].strip()
        fields = line.split()
        if len(fields) >= 5 and len(fields[0]) == 2 and fields[0][0] in "UD":
            hosts[fields[1]] = {"datacenter": datacenter, "rack": fields[-1],
                                "host_id": fields[-2], "tokens": set()}
    for line in cluster.node(1).nodetool("ring").splitlines():
        fields = line.split()
        if fields and fields[0] in hosts:
            hosts[fields[0]]["tokens"].add(fields[-1])
    return hosts


def server_replicas(cluster, keyspace):
    return {key: sorted(cluster.node(1).nodetool("getendpoints", keyspace, "kv", key).split())
            for key in KEYS}


# -- running a program ------------------------------------------------------------------------

class Program:
    """A running check program: one JSON line per part (`line`), the next part started by a line
    on its stdin (`tell`); its stderr kept for failure messages."""

    def __init__(self, command, cluster, prefix):
        dc = cluster.status()[0]["dc"]
        self.stderr = []
        self.process = subprocess.Popen(
            command + [dc, prefix] + [n.address for n in cluster.nodes],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr),
                         daemon=True).start()

    def line(self, timeout=90):
        result = []
        reader = threading.Thread(target=lambda: result.append(self.process.stdout.readline()))
        reader.start()
        reader.join(timeout)
        if not result or not result[0]:
            self.process.kill()
            pytest.fail(f"no output within {timeout} s; stderr:\n" + "".join(self.stderr)[-4000:])
        return json.loads(result[0])

    def tell(self, text):
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


def check_hosts(seen, expected, count):
    """The hosts a driver saw are the servers' nodes, all up, with the servers' datacenter, rack,
    host id and tokens; by address."""
    assert len(expected) == count, sorted(expected)
    hosts = {h["address"]: h for h in seen}
    assert sorted(hosts) == sorted(expected)
    for address, host in hosts.items():
        want = expected[address]
        assert (host["datacenter"], host["rack"], host["host_id"]) == \
            (want["datacenter"], want["rack"], want["host_id"]), address
        assert host["state"] == "UP", host
        assert set(host["tokens"]) == want["tokens"], address
        assert len(host["tokens"]) == 16
    return hosts


def check(cluster, command, prefix, driver):
    started = time.monotonic()
    program = Program(command, cluster, prefix)
    try:
        seen = program.line()
        report = {"driver": seen["driver"], "connect_ms": seen["connect_ms"],
                  "agreement_ms": [a["ms"] for a in seen["schema_agreement"]]}

        # Every node, with the datacenter, rack, host id and tokens the servers give it.
        hosts = check_hosts(seen["hosts"], server_hosts(cluster), 3)
        report["tokens_per_host"] = {a: len(h["tokens"]) for a, h in hosts.items()}

        # The driver's token map: the replicas of each key are the server's.
        for suffix in ("rf2", "rf3"):
            keyspace = f"{prefix}_{suffix}"
            assert seen["replicas"][keyspace] == server_replicas(cluster, keyspace), keyspace

        # The tables as the driver parsed them from system_schema.
        for name, (pk, ck, columns) in {
                f"{prefix}_rf2.kv": (["k"], [], {"k", "v"}),
                f"{prefix}_rf3.kv": (["k"], [], {"k", "v"}),
                f"{prefix}_rf3.rows": (["p"], ["c"], {"p", "c", "v"})}.items():
            table = seen["tables"][name]
            assert table is not None, name
            assert (table["partition_key"], table["clustering"], set(table["columns"])) == \
                (pk, ck, columns), (name, table)
        if driver == "java":
            assert seen["tables"][f"{prefix}_rf3.rows"]["columns"] == \
                {"p": "int", "c": "int", "v": "text"}

        # Schema agreement after each CREATE.
        for agreement in seen["schema_agreement"]:
            if driver == "java":
                assert agreement["execution_info_agreement"], agreement
                assert agreement["check_schema_agreement"], agreement
            else:
                assert agreement["agreed"], agreement
        if driver == "go":
            # the keyspaces' SCHEMA_CHANGE events reached the policy (its token-aware replicas)
            assert seen["keyspace_events"], seen["events"]

        # Prepared statements at QUORUM: rows round-trip, each served by a replica of its key.
        for keyspace, prepared in seen["prepared"].items():
            assert prepared["round_trips"] == len(KEYS), (keyspace, prepared)
            assert prepared["coordinator_is_replica"] == len(KEYS), (keyspace, prepared)
            if driver == "java":
                assert prepared["insert_pk_indices"] == [0]
                assert prepared["select_pk_indices"] == [0]
            else:
                assert prepared["routing_key_a"] == "61"  # "a" from the partition key index

        # A composite partition key ((a, b), c) bound as (c, b, a, v): the routing key the driver
        # builds from the prepared metadata's indexes lands on the servers' replicas.
        composite = seen["composite"]
        assert composite["round_trips"] == 5, composite
        assert composite["coordinator_is_replica"] == 5, composite
        assert composite["replicas"] == {
            key: sorted(cluster.node(1).nodetool("getendpoints", f"{prefix}_rf2", "composite",
                                                 key).split())
            for key in (f"{i}:x{i}" for i in range(5))}, composite
        if driver == "java":
            assert composite["insert_pk_indices"] == [2, 1], composite
            assert composite["select_pk_indices"] == [1, 0], composite

        # Paging: 500 rows in pages of 37, each row once.
        paging = seen["paging"]
        assert paging["rows"] == 500 and paging["distinct"] == 500, paging
        assert paging["duplicates"] == 0, paging
        assert all(n <= 37 for n in paging["pages"]), paging
        assert len(paging["pages"]) >= 14, paging
        assert "missing" in (seen["invalid_query"] or ""), seen["invalid_query"]

        # A node killed (node 3, or node 2 when the Java driver's control connection, the one
        # registered for events, is on node 3): the driver marks it down; a write at ALL is
        # Unavailable.
        down = cluster.node(3)
        if seen.get("control_host") == down.address:
            down = cluster.node(2)
        down.kill()
        for node in cluster.nodes:
            if node.number != down.number:
                node.await_status(down.address, "DN", timeout=30)
        program.tell(down.address)
        after = program.line(timeout=60)
        assert after["down_node_state"] == "DOWN", after
        assert after["unavailable"] == {"consistency": "ALL", "required": 3, "alive": 2}, after
        assert after["quorum_read_with_node_down"], after
        report["killed"] = down.address
        report["down_seen_ms"] = after["down_seen_ms"]

        # The node back: the driver sees it up through the STATUS_CHANGE UP event (its own
        # reconnection attempts are 30 s (Java) or 60 s (gocql) apart). gocql 1.7.0 waits 10 s
        # before it acts on the event of a node whose release_version has a minor below 2
        # (cassVersion.nodeUpDelay, meant for Cassandra < 2.2; 5.0.4 falls in it too).
        down.start()
        program.tell("up")
        back = program.line(timeout=60)
        assert back["state"] == "UP", back
        assert back["up_seen_ms"] < (15000 if driver == "java" else 25000), back
        report["up_seen_ms"] = back["up_seen_ms"]

        # Nothing the driver found wrong in system.local / system.peers rows.
        warnings = "".join(program.stderr).lower()
        assert "invalid row" not in warnings and "invalid peer" not in warnings, warnings
        report["seconds"] = round(time.monotonic() - started, 1)
        print(f"\n{driver}: {json.dumps(report)}")
    finally:
        program.close()
        stopped = [n for n in cluster.nodes if n.status()["state"] != "running"]
        for node in stopped:
            node.start()
        if stopped:
            all_up(cluster)


def test_java_driver(java_program, cluster):
    check(cluster, java_program, "java", "java")


def test_gocql(go_program, cluster):
    check(cluster, go_program, "gocql", "go")


def test_new_node(request, cluster):
    """TOPOLOGY_CHANGE NEW_NODE: both drivers, connected to three nodes, see a fourth one join
    (`helenus cluster add`) with its datacenter, rack, host id and tokens, and their token maps
    give the servers' replicas again (rack-aware: two of the four nodes share a rack). Last in the module: the cluster keeps four nodes."""
    commands = {}
    for driver, fixture in (("java", "java_program"), ("go", "go_program")):
        try:
            commands[driver] = request.getfixturevalue(fixture)
        except pytest.skip.Exception:
            pass
    if not commands:
        pytest.skip("neither the Java nor the Go toolchain is usable")
    # NetworkTopologyStrategy, 2 replicas in three racks: the fourth node goes to rack1, which
    # then holds two nodes, and a key's second replica is the next node of another rack.
    keyspace = "joined_nts2"
    dc = cluster.status()[0]["dc"]
    session = cluster.node(1).session()
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
                    f"{{'class': 'NetworkTopologyStrategy', '{dc}': 2}}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.kv (k text PRIMARY KEY, v int)")
    programs = {driver: Program(command + ["--watch", keyspace], cluster, "unused")
                for driver, command in commands.items()}
    try:
        before = server_hosts(cluster)
        for program in programs.values():
            check_hosts(program.line()["hosts"], before, 3)
        assert "rack1" in cluster.run("add").stdout
        for node in cluster.nodes:
            node.await_status(cluster.address(4), "UN", timeout=30)
        expected = server_hosts(cluster)
        replicas = server_replicas(cluster, keyspace)
        for driver, program in programs.items():
            program.tell("4")
            seen = program.line(timeout=60)
            check_hosts(seen["hosts"], expected, 4)
            assert seen["replicas"] == replicas, driver
            print(f"\n{driver}: a fourth node seen up with its tokens after {seen['seen_ms']} ms")
    finally:
        for program in programs.values():
            program.close()
