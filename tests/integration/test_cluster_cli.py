"""`helenus cluster`: a local cluster of 3 real nodes on their own loopback addresses, managed
node by node (membership itself is tested in test_cluster.py)."""
import json
import os
import socket
import subprocess

import pytest
from cassandra import ConsistencyLevel
from cassandra.cluster import NoHostAvailable
from cassandra.query import SimpleStatement

from cluster import BIN, ClusterError, LocalCluster


def local_row(session):
    return session.execute(
        "SELECT data_center, rack, listen_address, rpc_address, cluster_name FROM system.local"
    ).one()


def assert_serves(node, dc, rack, cluster_name="Test Cluster"):
    row = local_row(node.session())
    assert (row.data_center, row.rack) == (dc, rack)
    assert str(row.listen_address) == node.address
    assert str(row.rpc_address) == node.address
    assert row.cluster_name == cluster_name


def states(cluster):
    return [(s["state"], s["cql"]) for s in cluster.status()]


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def racks3():
    cluster = LocalCluster(nodes=3, racks=3).start()
    try:
        yield cluster
    finally:
        cluster.clear()


def test_start_writes_each_node_its_own_directory_and_configuration(racks3):
    with open(os.path.join(racks3.dir, "cluster.json")) as f:
        recorded = json.load(f)
    assert [n["address"] for n in recorded["nodes"]] == [n.address for n in racks3.nodes]
    for node in racks3.nodes:
        names = set(os.listdir(node.dir))
        assert {"cassandra.yaml", "cassandra-rackdc.properties", "data", "commitlog", "metadata",
                "hints", "logs", "helenus.pid"} <= names
        with open(os.path.join(node.dir, "cassandra-rackdc.properties")) as f:
            assert f"dc=dc1\nrack=rack{node.number}\n" in f.read()
        with open(os.path.join(node.dir, "cassandra.yaml")) as f:
            yaml = f.read()
        seeds = ",".join(f"{n.address}:7000" for n in racks3.nodes)
        assert f'seeds: "{seeds}"' in yaml
        assert "endpoint_snitch: GossipingPropertyFileSnitch" in yaml
        assert f"admin_address: {node.address}" in yaml


def test_each_node_serves_cql_and_its_admin_api_on_its_own_address(racks3):
    assert states(racks3) == [("running", "up")] * 3
    for node in racks3.nodes:
        assert_serves(node, "dc1", f"rack{node.number}")
        info = node.nodetool("info")
        assert "Data Center            : dc1" in info
        assert f"Rack                   : rack{node.number}" in info
        assert node.address in node.nodetool("-p", 7199, "status")


def test_kill_pause_resume_stop_start_one_node_then_all(racks3):
    node1, node2, node3 = racks3.nodes
    pid3 = node3.status()["pid"]

    node3.kill()
    assert node3.status()["state"] == "stopped"
    assert not pid_alive(pid3)
    with pytest.raises(NoHostAvailable):
        node3.session()
    # every other node marks it down (gossip's failure detector), as drivers are then told
    for other in (node1, node2):
        assert other.await_status(node3.address, "DN", timeout=15) < 15

    node2.pause()
    assert node2.status()["state"] == "paused"
    assert node2.status()["cql"] == "down", "a paused node accepts connections but never answers"
    node2.resume()
    assert node2.status()["cql"] == "up"
    assert_serves(node2, "dc1", "rack2")

    # A session with every node as a contact point finds node3 down; one restricted to node1
    # would count node3 in the schema agreement wait and time out (as against Cassandra).
    everyone = racks3.session()
    # RF 3 on three nodes: node1 holds a replica of every partition (until writes are sent
    # to other replicas, a node answers Unavailable for partitions it holds no replica of)
    everyone.execute("CREATE KEYSPACE ks WITH replication = "
                     "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    everyone.execute("CREATE TABLE ks.t (k int PRIMARY KEY, v int)")
    node1.session().execute("INSERT INTO ks.t (k, v) VALUES (1, 10)")
    node1.stop()
    assert node1.status()["state"] == "stopped"
    node1.start()
    assert node1.session().execute("SELECT v FROM ks.t WHERE k = 1").one().v == 10, \
        "a stopped node keeps its data"

    node3.start()
    assert states(racks3) == [("running", "up")] * 3
    racks3.run("stop")
    assert states(racks3) == [("stopped", "-")] * 3
    out = racks3.run("start")
    assert "is up" in out.stdout and "driver contact points" in out.stdout
    assert states(racks3) == [("running", "up")] * 3
    assert_serves(node3, "dc1", "rack3")


def test_nodes_are_named_by_number_or_address(racks3):
    node2 = racks3.node(2)
    racks3.run("pause", node2.address)
    assert node2.status()["state"] == "paused"
    racks3.run("resume", "node2")
    assert node2.status()["state"] == "running"
    out = racks3.run("kill", "4", check=False)
    assert out.returncode == 1
    assert "no node '4' in this cluster" in out.stderr


def test_clear_kills_every_node_and_deletes_the_directory():
    cluster = LocalCluster(nodes=3).start()
    try:
        pids = [s["pid"] for s in cluster.status()]
        for node in cluster.nodes:
            assert_serves(node, "datacenter1", "rack1")
        cluster.node(2).pause()
        out = cluster.run("clear")
        assert "Deleted" in out.stdout
        assert not os.path.exists(cluster.dir)
        assert not any(pid_alive(pid) for pid in pids)
        assert "No cluster in" in cluster.run("clear").stdout, "clear twice is fine"
    finally:
        cluster.clear()


def test_bad_requests_fail_clearly_and_start_nothing(tmp_path):
    def run(*args):
        return subprocess.run([BIN, "cluster", *args], capture_output=True, text=True,
                              timeout=120)

    missing = run("status", "--dir", str(tmp_path / "none"))
    assert missing.returncode == 1
    assert "no cluster in" in missing.stderr
    bad_yaml = run("start", "--nodes", "1", "--address", "127.0.7.9", "--dir",
                   str(tmp_path / "c"), "--yaml", "no_such_key: 1")
    assert bad_yaml.returncode == 1
    assert "Please remove properties [no_such_key]" in bad_yaml.stderr
    assert not (tmp_path / "c").exists()
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "keep").write_text("x")
    used = run("start", "--dir", str(tmp_path / "used"))
    assert used.returncode == 1
    assert "holds no cluster.json" in used.stderr


def test_added_node_gets_the_next_address_and_the_emptiest_rack():
    cluster = LocalCluster(nodes=2, racks=2, seeds=1).start()
    try:
        out = cluster.run("add")
        assert f"Added node3 on {cluster.address(3)} in dc1/rack1" in out.stdout
        cluster.size = 3
        assert states(cluster) == [("running", "up")] * 3
        assert_serves(cluster.node(3), "dc1", "rack1")
        with open(os.path.join(cluster.node(3).dir, "cassandra.yaml")) as f:
            assert f'seeds: "{cluster.address(1)}:7000"' in f.read()
    finally:
        cluster.clear()


def test_start_refuses_options_for_an_existing_cluster(racks3):
    with pytest.raises(ClusterError, match="a cluster already exists"):
        racks3.run("start", "--nodes", "5")


def test_a_taken_address_is_refused_not_mistaken_for_the_node(tmp_path):
    with socket.socket() as squatter:
        squatter.bind(("127.0.7.8", 9042))
        squatter.listen()
        out = subprocess.run([BIN, "cluster", "start", "--nodes", "1", "--address", "127.0.7.8",
                              "--dir", str(tmp_path / "c")],
                             capture_output=True, text=True, timeout=120)
        try:
            assert out.returncode == 1
            assert "cannot start node1 (127.0.7.8): 127.0.7.8:9042 is already in use" in out.stderr
            assert "stopped" in subprocess.run(
                [BIN, "cluster", "status", "--dir", str(tmp_path / "c")],
                capture_output=True, text=True, timeout=60).stdout
        finally:
            subprocess.run([BIN, "cluster", "clear", "--dir", str(tmp_path / "c")],
                           capture_output=True, timeout=120)


def test_a_new_cluster_forms_with_a_seed_down_and_the_seed_joins_when_it_starts():
    """Issue 12 point 8: three seeds, node 1 never started: nodes 2 and 3 (a majority of the
    seeds) still form the ring and take DDL and writes; node 1 joins when it starts."""
    cluster = LocalCluster(nodes=3).create()
    try:
        command = [BIN, "cluster", "start", "--dir", cluster.dir, "--timeout", "60"]
        starts = [subprocess.Popen(command[:3] + [str(n)] + command[3:], text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                  for n in (2, 3)]
        for start in starts:
            out, _ = start.communicate(timeout=120)
            assert start.returncode == 0, out
        two, three = cluster.node(2), cluster.node(3)
        two.await_status(three.address, "UN")
        assert two.status_of(cluster.address(1)) is None  # never started: not in the ring
        session = two.session()
        session.execute("CREATE KEYSPACE formed WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 2}")
        session.execute("CREATE TABLE formed.t (k int PRIMARY KEY, v text)")
        session.execute("INSERT INTO formed.t (k, v) VALUES (1, 'before node 1')")

        cluster.node(1).start()
        one = cluster.node(1)
        for node in (one, two, three):
            for other in (one, two, three):
                node.await_status(other.address, "UN")
        # QUORUM: node 1 may now own k = 1 without its data (joining streams nothing yet).
        read = SimpleStatement("SELECT v FROM formed.t WHERE k = 1",
                               consistency_level=ConsistencyLevel.QUORUM)
        row = one.session().execute(read).one()
        assert row.v == "before node 1"
    finally:
        cluster.clear()
