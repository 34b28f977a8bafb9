"""Node lifecycle on `helenus cluster` (issue 29), for what works without data streaming:
nodetool cleanup after the RF is lowered, decommission under a QUORUM load, removenode of a
killed node, the refusals, and a node killed while joining that finishes its join on restart."""

import os
import re
import subprocess
import threading
import time

import pytest
from cassandra import ConsistencyLevel

from cluster import BIN, ClusterError, LocalCluster, at

ROWS = 300


def nodetool(node, *args):
    """`helenus nodetool ARGS` on `node`: (exit code, stdout, stderr)."""
    out = node.run_nodetool(*args, timeout=300)
    return out.returncode, out.stdout, out.stderr


def live_bytes(node, table):
    text = node.nodetool("tablestats", table)
    return int(re.search(r"Space used \(live\): (\d+)", text).group(1))


def write_rows(session, cl, rows=ROWS):
    insert = session.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
    insert.consistency_level = cl
    for k in range(rows):
        session.execute(insert, (k, f"value-{k}"))


def read_all(session, cl, rows=ROWS):
    select = session.prepare("SELECT v FROM ks.t WHERE k = ?")
    select.consistency_level = cl
    missing = [k for k in range(rows) if session.execute(select, (k,)).one() is None]
    return missing


def test_cleanup_drops_what_a_node_no_longer_owns():
    with LocalCluster(nodes=3) as cluster:
        session = cluster.node(1).session()
        session.execute("CREATE KEYSPACE ks WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}")
        session.execute("CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
        write_rows(session, ConsistencyLevel.ALL)
        for node in cluster.nodes:
            node.nodetool("flush", "ks")
        before = [live_bytes(node, "ks.t") for node in cluster.nodes]
        session.execute("ALTER KEYSPACE ks WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        # cleanup is silent when done
        for node in cluster.nodes:
            assert node.nodetool("cleanup", "ks") == ""
        after = [live_bytes(node, "ks.t") for node in cluster.nodes]
        # each node keeps about a third of what it held (its primary ranges at RF 1)
        assert all(a < b * 0.7 for a, b in zip(after, before)), (before, after)
        assert sum(after) < sum(before) * 0.6, (before, after)
        assert read_all(session, ConsistencyLevel.ONE) == []
        history = cluster.node(1).nodetool("compactionhistory")
        assert "ks" in history
        # a second cleanup finds nothing more to drop
        cluster.node(2).nodetool("cleanup")
        assert live_bytes(cluster.node(2), "ks.t") == after[1]
        code, _, err = nodetool(cluster.node(1), "cleanup", "nosuch")
        assert code != 0 and "nosuch" in err


def test_a_topology_change_runs_alone_and_decommission_keeps_the_rf():
    # node 4 bootstraps (it is no seed): Joining, then Normal after the ring delay
    with LocalCluster(nodes=4) as cluster:
        n1 = cluster.node(1)
        session = n1.session()
        session.execute("CREATE KEYSPACE ks WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}")
        for node in cluster.nodes:
            node.await_status(cluster.node(4).address, "UN")
        # a removenode of a live node is refused, naming it
        host4 = host_id(n1, cluster.node(4).address)
        code, _, err = nodetool(n1, "removenode", host4)
        assert code == 2 and "is alive and owns this ID" in err, err
        code, out, _ = nodetool(n1, "removenode", "status")
        assert (code, out) == (0, "RemovalStatus: No removals in process.\n")
        # move is refused with vnodes, as Cassandra refuses it
        code, _, err = nodetool(n1, "move", "42")
        assert code == 2 and "more than one token and cannot be moved thusly" in err, err
        # RF 3 on 3 nodes after one leaves is fine; RF 4 is not
        session.execute("CREATE KEYSPACE big WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 4}")
        code, _, err = nodetool(cluster.node(4), "decommission")
        assert code == 2, err
        assert ("Not enough live nodes to maintain replication factor in keyspace big "
                "(RF = 4, N = 4). Perform a forceful decommission to ignore.") in err, err
        assert n1.status_of(cluster.node(4).address) == "UN"
        session.execute("DROP KEYSPACE big")


def host_id(node, address):
    for line in node.nodetool("status").splitlines():
        fields = line.split()
        if len(fields) > 1 and fields[1] == address:
            return next(f for f in fields if re.fullmatch(r"[0-9a-f-]{36}", f))
    raise AssertionError(f"{address} not in nodetool status")


def test_decommission_under_a_quorum_load():
    with LocalCluster(nodes=4, yaml="ring_delay_ms: 1000") as cluster:
        n1, n4 = cluster.node(1), cluster.node(4)
        session = cluster.session(hosts=[n.address for n in cluster.nodes[:3]])
        session.execute("CREATE KEYSPACE ks WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}")
        session.execute("CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
        write_rows(session, ConsistencyLevel.QUORUM)
        errors, done, written = [], threading.Event(), []

        def load():
            insert = session.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            insert.consistency_level = ConsistencyLevel.QUORUM
            select = session.prepare("SELECT v FROM ks.t WHERE k = ?")
            select.consistency_level = ConsistencyLevel.QUORUM
            k = ROWS
            while not done.is_set():
                try:
                    session.execute(insert, (k, f"value-{k}"))
                    written.append(k)
                    session.execute(select, (k % ROWS,))
                except Exception as e:  # noqa: BLE001 - every client error counts
                    errors.append(repr(e))
                k += 1

        worker = threading.Thread(target=load)
        worker.start()
        try:
            time.sleep(1)
            code, out, err = nodetool(n4, "decommission")
            time.sleep(1)
        finally:
            done.set()
            worker.join()
        assert (code, out) == (0, ""), err
        assert errors == [], errors[:5]
        assert len(written) > 20
        assert n1.status_of(n4.address) is None
        assert n4.address not in [r.peer for r in session.execute(
            "SELECT peer FROM system.peers_v2")]
        # every row written before and during the leave is read at QUORUM
        select = session.prepare("SELECT v FROM ks.t WHERE k = ?")
        select.consistency_level = ConsistencyLevel.QUORUM
        missing = [k for k in list(range(ROWS)) + written
                   if session.execute(select, (k,)).one() is None]
        assert missing == []
        # the decommissioned node serves no more clients
        assert "DECOMMISSIONED" in n4_mode(n4)


def n4_mode(node):
    import json
    import urllib.request
    with urllib.request.urlopen(f"http://{node.address}:7199/v1/operation_mode", timeout=5) as r:
        return json.loads(r.read())["mode"]


def test_removenode_of_a_killed_node_and_one_change_at_a_time():
    with LocalCluster(nodes=4) as cluster:
        n1, n3, n4 = cluster.node(1), cluster.node(3), cluster.node(4)
        session = n1.session()
        session.execute("CREATE KEYSPACE ks WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 2}")
        host4 = host_id(n1, n4.address)
        n4.kill()
        n1.await_status(n4.address, "DN", timeout=30)
        code, out, err = nodetool(n1, "removenode", host4)
        assert (code, out) == (0, ""), err
        assert n1.status_of(n4.address) is None
        assert nodetool(n1, "removenode", "status")[1] == \
            "RemovalStatus: No removals in process.\n"
        code, _, err = nodetool(n1, "removenode", host4)
        assert code == 2 and "Host ID not found." in err, err
        code, _, err = nodetool(n1, "removenode", host_id(n1, n1.address))
        assert code == 2 and "Cannot remove self" in err, err
        # three nodes left: system_distributed (RF 3) keeps a decommission from going on,
        # as in Cassandra, unless forced
        code, _, err = nodetool(n3, "decommission")
        assert code == 2 and "keyspace system_distributed (RF = 3, N = 3)" in err, err
        assert n1.status_of(n3.address) == "UN"


def test_a_node_killed_while_joining_finishes_its_join_on_restart():
    yaml = "ring_delay_ms: 8000"
    with LocalCluster(nodes=3, yaml=yaml) as cluster:
        n1 = cluster.node(1)
        out = subprocess.Popen([BIN, "cluster", "add", "--dir", cluster.dir, "--timeout", "60"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        new = f"127.0.{cluster.subnet}.4"
        deadline = time.monotonic() + 30
        while n1.status_of(new) != "UJ":
            assert time.monotonic() < deadline, n1.nodetool("status")
            time.sleep(0.2)
        # no other change may start meanwhile
        code, _, err = nodetool(cluster.node(3), "decommission")
        assert code == 2, err
        assert f"another topology change is in progress: node {new}" in err, err
        # the joining node is killed in the middle and restarted
        cluster.run("kill", 4)
        out.kill()
        out.wait(timeout=10)
        n1.await_status(new, "DJ", timeout=30)
        cluster.run("start", 4)
        cluster.size = 4
        n1.await_status(new, "UN", timeout=40)
        assert cluster.node(4).session().execute(
            "SELECT host_id FROM system.local").one() is not None


def test_a_new_node_replaces_a_dead_one_and_takes_its_tokens():
    with LocalCluster(nodes=3) as cluster:
        n1, n3 = cluster.node(1), cluster.node(3)
        tokens = ring_tokens(n1, n3.address)
        assert len(tokens) == 16
        n3.kill()
        n1.await_status(n3.address, "DN", timeout=30)
        env = dict(os.environ,
                   JVM_EXTRA_OPTS=f"-Dcassandra.replace_address_first_boot={n3.address}")
        out = subprocess.run([BIN, "cluster", "add", "--dir", cluster.dir, "--timeout", "60"],
                             capture_output=True, text=True, timeout=120, env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        new = f"127.0.{cluster.subnet}.4"
        n1.await_status(new, "UN", timeout=30)
        assert n1.status_of(n3.address) is None
        assert ring_tokens(n1, new) == tokens


def ring_tokens(node, address):
    """The tokens `nodetool ring` gives `address`."""
    found = set()
    for line in node.nodetool("ring").splitlines():
        fields = line.split()
        if fields and fields[0] == address:
            found.add(fields[-1])
    return found
