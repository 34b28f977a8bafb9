"""A network partition between real nodes on loopback, cut by nftables rules this test makes
and always removes (outbound internode sockets are bound to each node's listen address, so a
rule on source and destination addresses cuts exactly the links named): the majority side
keeps changing the schema and serving QUORUM, the minority node refuses schema changes with
Unavailable, and once healed it is seen up again and catches up without manual steps.
Skipped where nftables cannot be used (not root, or `nft` missing: .ci/run installs it)."""
import os
import shutil
import subprocess
import time

import pytest
from cassandra import ConsistencyLevel, Unavailable

from cluster import LocalCluster, at


def nft(*args):
    return subprocess.run(["nft", *args], capture_output=True, text=True, timeout=10)


def nft_usable():
    if shutil.which("nft") is None or os.geteuid() != 0:
        return False
    probe = "helenus_test_probe"
    made = nft("add", "table", "inet", probe).returncode == 0
    nft("delete", "table", "inet", probe)
    return made


pytestmark = pytest.mark.skipif(not nft_usable(), reason="nftables not usable here (root and nft)")


class Partition:
    """Drops every packet between two groups of addresses, both ways, in a table of its own."""

    def __init__(self, name):
        self.table = name

    def cut(self, side_a, side_b):
        self.heal()
        for args in (("add", "table", "inet", self.table),
                     ("add", "chain", "inet", self.table, "input",
                      "{ type filter hook input priority 0; policy accept; }")):
            out = nft(*args)
            assert out.returncode == 0, out.stderr
        for a in side_a:
            for b in side_b:
                for src, dst in ((a, b), (b, a)):
                    out = nft("add", "rule", "inet", self.table, "input",
                              "ip", "saddr", src, "ip", "daddr", dst, "drop")
                    assert out.returncode == 0, out.stderr

    def heal(self):
        nft("delete", "table", "inet", self.table)


@pytest.fixture
def cut_trio():
    cluster = LocalCluster(nodes=3).start()
    partition = Partition(f"helenus_test_{cluster.subnet}")
    try:
        yield cluster, partition
    finally:
        partition.heal()
        cluster.clear()


def ddl(statement):
    """A schema statement whose error reaches the test as the server sent it."""
    return at(ConsistencyLevel.ONE, statement)


def tables_of(session, keyspace):
    rows = session.execute("SELECT table_name FROM system_schema.tables "
                           f"WHERE keyspace_name = '{keyspace}'")
    return sorted(r.table_name for r in rows)


def test_the_majority_keeps_schema_and_quorum_the_minority_refuses_ddl_and_heals(cut_trio):
    cluster, partition = cut_trio
    node1, node2, node3 = cluster.nodes
    majority, minority = node1.session(), node3.session()
    majority.execute("CREATE KEYSPACE part WITH replication = "
                     "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    majority.execute("CREATE TABLE part.t (k int PRIMARY KEY, v int)")
    majority.execute(at(ConsistencyLevel.ALL, "INSERT INTO part.t (k, v) VALUES (1, 1)"))
    partition.cut([node3.address], [node1.address, node2.address])
    node1.await_status(node3.address, "DN", timeout=20)
    node3.await_status(node1.address, "DN", timeout=20)
    node3.await_status(node2.address, "DN", timeout=20)

    majority.execute("CREATE TABLE part.added (k int PRIMARY KEY)")
    majority.execute(at(ConsistencyLevel.QUORUM, "INSERT INTO part.t (k, v) VALUES (1, 2)"))
    started = time.monotonic()
    with pytest.raises(Unavailable, match="for a schema change"):
        minority.execute(ddl("CREATE TABLE part.refused (k int PRIMARY KEY)"))
    assert time.monotonic() - started < 8  # a clear error within the driver's timeout
    with pytest.raises(Unavailable):
        minority.execute(at(ConsistencyLevel.QUORUM, "SELECT v FROM part.t WHERE k = 1"))
    assert minority.execute(at(ConsistencyLevel.ONE, "SELECT v FROM part.t WHERE k = 1")).one().v == 1
    assert tables_of(minority, "part") == ["t"]

    partition.heal()
    all_up_within(cluster, 40)
    deadline = time.monotonic() + 20
    while tables_of(minority, "part") != ["added", "t"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert tables_of(minority, "part") == ["added", "t"]
    row = minority.execute(at(ConsistencyLevel.QUORUM, "SELECT v FROM part.t WHERE k = 1")).one()
    assert row.v == 2
    minority.execute(ddl("CREATE TABLE part.after (k int PRIMARY KEY)"))
    assert tables_of(majority, "part") == ["added", "after", "t"]


def all_up_within(cluster, timeout):
    """Every node sees every node up; after a partition, connections may first have to notice
    the silence and reconnect."""
    deadline = time.monotonic() + timeout
    for node in cluster.nodes:
        for other in cluster.nodes:
            node.await_status(other.address, "UN", timeout=max(1, deadline - time.monotonic()))
