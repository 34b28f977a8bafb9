"""Node operations move data (issue 29): a node that joins fetches its ranges, a node that
leaves sends them, a replacement fetches the dead node's, and removenode restores the replica
count from the survivors. Each check reads rows at ONE from nodes left alone (the others
stopped), so a row is found only if that node holds it."""

import json
import os
import subprocess
import threading
import urllib.request

from cassandra import ConsistencyLevel, Unavailable
from cassandra.cluster import NoHostAvailable
from cassandra.concurrent import execute_concurrent_with_args

from cluster import BIN, LocalCluster
from test_lifecycle import host_id, nodetool

YAML = "ring_delay_ms: 1000"


def create_table(session, rf):
    session.execute("CREATE KEYSPACE ks WITH replication = "
                    f"{{'class': 'SimpleStrategy', 'replication_factor': {rf}}}")
    session.execute("CREATE TABLE ks.t (k int PRIMARY KEY, v text)")


def write_rows(session, keys, cl=ConsistencyLevel.ALL):
    insert = session.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
    insert.consistency_level = cl
    results = execute_concurrent_with_args(session, insert, [(k, f"value-{k}") for k in keys],
                                           concurrency=64, raise_on_first_error=True)
    assert all(ok for ok, _ in results)


def read_alone(node, keys):
    """Reads every key at ONE through `node` while the other nodes are stopped: (rows found,
    keys answered Unavailable, keys a replica answered without their row or with a wrong
    value)."""
    session = node.session()
    select = session.prepare("SELECT v FROM ks.t WHERE k = ?")
    select.consistency_level = ConsistencyLevel.ONE
    results = execute_concurrent_with_args(session, select, [(k,) for k in keys],
                                           concurrency=64, raise_on_first_error=False)
    found, unavailable, wrong = 0, 0, []
    for k, (ok, result) in zip(keys, results):
        if not ok:
            assert is_unavailable(result), (k, result)
            unavailable += 1
            continue
        row = result.one()
        if row is None or row.v != f"value-{k}":
            wrong.append(k)
        else:
            found += 1
    return found, unavailable, wrong


def is_unavailable(error):
    """Unavailable, as the server answered it (the driver wraps it in NoHostAvailable)."""
    if isinstance(error, NoHostAvailable):
        return bool(error.errors) and all(is_unavailable(e) for e in error.errors.values())
    return isinstance(error, Unavailable) or "Unavailable" in repr(error)


def stop_all_but(cluster, kept):
    for node in cluster.nodes:
        if node.number != kept.number:
            node.stop()


def streams(node):
    with urllib.request.urlopen(f"http://{node.address}:7199/v1/streams", timeout=10) as r:
        return json.loads(r.read())["sessions"]


class Background:
    """`run` in a thread between `with` and the end of the block, which stops it (`done`)."""

    def __init__(self):
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run)

    def run(self):
        raise NotImplementedError

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


class QuorumLoad(Background):
    """Writes new keys at QUORUM in a thread; keeps the acknowledged ones and the errors."""

    def __init__(self, session, first):
        super().__init__()
        self.session, self.next = session, first
        self.acknowledged, self.errors = [], []

    def run(self):
        insert = self.session.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        insert.consistency_level = ConsistencyLevel.QUORUM
        while not self.done.is_set():
            k = self.next
            self.next += 1
            try:
                self.session.execute(insert, (k, f"value-{k}"))
                self.acknowledged.append(k)
            except Exception as e:  # noqa: BLE001 - every client error counts
                self.errors.append(repr(e))


def test_a_joining_node_fetches_its_ranges_under_a_quorum_load():
    rows = 20_000
    with LocalCluster(nodes=3, yaml=YAML, timeout=120) as cluster:
        session = cluster.session()
        create_table(session, 3)
        write_rows(session, range(rows))
        with QuorumLoad(session, rows) as load:
            cluster.run("add")
            cluster.size = 4
        assert load.errors == [], load.errors[:5]
        assert len(load.acknowledged) > 20
        new = cluster.node(4)
        cluster.node(1).await_status(new.address, "UN")
        # the new node pulled its ranges from the three others, as Bootstrap sessions
        pulled = [s for s in streams(new) if s["description"] == "Bootstrap"]
        assert {s["state"] for s in pulled} == {"complete"}, pulled
        assert {s["direction"] for s in pulled} == {"Receiving"}
        assert len(pulled) == 3 and sum(s["bytes_done"] for s in pulled) > 0, pulled
        assert nodetool(new, "netstats")[1].startswith("Mode: NORMAL\nNot sending any streams.")
        # alone, it answers every key it replicates (3 of 4 nodes: most) with its row, the
        # rows written before it joined and those acknowledged while it joined
        stop_all_but(cluster, new)
        keys = list(range(rows)) + load.acknowledged
        found, unavailable, wrong = read_alone(new, keys)
        assert wrong == [], wrong[:10]
        assert found > len(keys) * 0.6 and found + unavailable == len(keys), (found, unavailable)


def test_a_decommissioned_node_sends_its_ranges_to_the_new_replicas():
    rows = 3_000
    with LocalCluster(nodes=4, yaml=YAML) as cluster:
        session = cluster.session()
        create_table(session, 3)
        write_rows(session, range(rows))
        leaving, kept = cluster.node(4), cluster.node(3)
        code, out, err = nodetool(leaving, "decommission")
        assert (code, out) == (0, ""), err
        sent = [s for s in streams(leaving) if s["description"] == "Unbootstrap"]
        assert sent and {s["state"] for s in sent} == {"complete"}, sent
        assert {s["direction"] for s in sent} == {"Sending"}
        assert cluster.node(1).status_of(leaving.address) is None
        # started again, a decommissioned node refuses to rejoin, as Cassandra's does
        leaving.stop()
        out = cluster.run("start", 4, check=False)
        assert out.returncode != 0
        assert "This node was decommissioned and will not rejoin the ring" in \
            out.stdout + out.stderr, out.stdout + out.stderr
        # RF 3 on the three nodes left: each holds every row, also node 3 alone
        cluster.size = 3
        stop_all_but(cluster, kept)
        assert read_alone(kept, list(range(rows))) == (rows, 0, [])


def test_a_replacement_fetches_the_dead_nodes_ranges():
    rows = 3_000
    with LocalCluster(nodes=3, yaml=YAML) as cluster:
        session = cluster.session()
        create_table(session, 3)
        write_rows(session, range(rows))
        dead = cluster.node(3)
        dead.kill()
        cluster.node(1).await_status(dead.address, "DN", timeout=30)
        env_opts = f"-Dcassandra.replace_address_first_boot={dead.address}"
        out = subprocess.run([BIN, "cluster", "add", "--dir", cluster.dir, "--timeout", "120"],
                             capture_output=True, text=True, timeout=180,
                             env={**os.environ, "JVM_EXTRA_OPTS": env_opts})
        assert out.returncode == 0, out.stdout + out.stderr
        cluster.size = 4
        new = cluster.node(4)
        cluster.node(1).await_status(new.address, "UN", timeout=30)
        assert cluster.node(1).status_of(dead.address) is None
        for node in cluster.nodes[:2]:
            node.stop()
        assert read_alone(new, list(range(rows))) == (rows, 0, [])


def test_removenode_restores_the_replica_count_from_the_survivors():
    rows = 3_000
    with LocalCluster(nodes=4, yaml=YAML) as cluster:
        n1, n4 = cluster.node(1), cluster.node(4)
        session = n1.session()
        create_table(session, 2)
        write_rows(session, range(rows))
        host4 = host_id(n1, n4.address)
        n4.kill()
        n1.await_status(n4.address, "DN", timeout=30)
        code, out, err = nodetool(n1, "removenode", host4)
        assert (code, out) == (0, ""), err
        assert n1.status_of(n4.address) is None
        restored = [s for n in cluster.nodes[:3] for s in streams(n)
                    if s["description"] == "Restore replica count"]
        assert restored and {s["state"] for s in restored} == {"complete"}, restored
        # RF 2 on three nodes: with node 1 stopped, every row has one live replica, which
        # must hold it (a range node 4 held with node 1 is now on a node that fetched it)
        cluster.size = 3
        n1.stop()
        session = cluster.session(hosts=[cluster.node(2).address, cluster.node(3).address])
        select = session.prepare("SELECT v FROM ks.t WHERE k = ?")
        select.consistency_level = ConsistencyLevel.ONE
        results = execute_concurrent_with_args(session, select, [(k,) for k in range(rows)],
                                               concurrency=64)
        missing = [k for k, (ok, r) in zip(range(rows), results) if not ok or r.one() is None]
        assert missing == [], missing[:10]
