"""A three-node cluster as drivers and operators see it: membership and failure detection,
schema through the metadata log, token ownership, restarts. Replication of data between nodes
is tested in test_replication.py."""
import concurrent.futures
import time

import pytest
from cassandra import AlreadyExists, Unavailable
from cassandra.cluster import Cluster, NoHostAvailable

from cluster import NATIVE_PORT


def driver(cluster):
    """A driver with its default policies (token-aware), as applications use it."""
    d = Cluster([n.address for n in cluster.nodes], port=NATIVE_PORT, protocol_version=5,
                connect_timeout=10)
    cluster._drivers.append(d)
    return d, d.connect()


def schema_versions(cluster):
    return {n.address: n.session().execute("SELECT schema_version FROM system.local").one()
            .schema_version for n in cluster.nodes}


def test_every_node_sees_the_whole_ring(trio):
    for node in trio.nodes:
        for other in trio.nodes:
            # gossip marks a peer up after hearing its heartbeats for a moment
            assert node.await_status(other.address, "UN", timeout=15) < 15
        peers = node.session().execute("SELECT peer, host_id, tokens FROM system.peers").all()
        assert sorted(str(p.peer) for p in peers) == sorted(
            o.address for o in trio.nodes if o.address != node.address)
        assert all(len(p.tokens) == 16 for p in peers)
    described = trio.nodes[0].nodetool("describecluster")
    assert "\tLive: 3\n" in described and "\tUnreachable: 0\n" in described


def test_drivers_see_three_hosts_and_48_tokens(trio):
    d, session = driver(trio)
    hosts = d.metadata.all_hosts()
    assert sorted(h.address for h in hosts) == sorted(n.address for n in trio.nodes)
    assert all(h.is_up for h in hosts)
    assert len(d.metadata.token_map.ring) == 48
    session.execute("CREATE KEYSPACE IF NOT EXISTS rf3 WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    replicas = d.metadata.get_replicas("rf3", b"\x00\x00\x00\x01")
    assert len(replicas) == 3


def test_schema_changes_reach_every_node_and_agree_quickly(trio):
    d, session = driver(trio)
    started = time.monotonic()
    result = session.execute("CREATE KEYSPACE agree WITH replication = "
                             "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    session.execute("CREATE TABLE agree.t (k int PRIMARY KEY, v text)")
    elapsed = time.monotonic() - started
    assert result.response_future.is_schema_agreed
    assert elapsed < 5, f"two schema changes with agreement took {elapsed:.2f} s"
    versions = schema_versions(trio)
    assert len(set(versions.values())) == 1, versions
    for node in trio.nodes:
        columns = node.session().execute(
            "SELECT column_name FROM system_schema.columns "
            "WHERE keyspace_name = 'agree' AND table_name = 't'").all()
        assert sorted(c.column_name for c in columns) == ["k", "v"]


def test_a_schema_change_is_answered_once_every_live_node_has_applied_it(trio):
    # The drivers' own agreement wait is off: only the server's wait makes the next statement,
    # sent at once to another node, find the table there.
    sessions = [node.session(max_schema_agreement_wait=0) for node in trio.nodes]
    sessions[0].execute("CREATE KEYSPACE applied WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    for i in range(12):
        sessions[i % 3].execute(f"CREATE TABLE applied.t{i} (k int PRIMARY KEY, v int)")
        for session in sessions:
            session.execute(f"INSERT INTO applied.t{i} (k, v) VALUES (1, {i})")
    assert len(set(schema_versions(trio).values())) == 1


def test_concurrent_creates_on_two_nodes_give_one_success_and_one_already_exists(trio):
    first, second = trio.nodes[0].session(), trio.nodes[1].session()
    first.execute("CREATE KEYSPACE IF NOT EXISTS race WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    statement = "CREATE TABLE race.t (k int PRIMARY KEY)"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(s.execute, statement) for s in (first, second)]
        outcomes = []
        for f in futures:
            try:
                f.result()
                outcomes.append("ok")
            except AlreadyExists:
                outcomes.append("exists")
    assert sorted(outcomes) == ["exists", "ok"]


def test_a_node_down_during_schema_changes_catches_up_and_keeps_its_identity(trio):
    node1, _, node3 = trio.nodes
    before = node3.session().execute("SELECT host_id, tokens FROM system.local").one()
    node3.kill()
    assert node1.await_status(node3.address, "DN", timeout=15) < 15
    _, session = driver(trio)
    session.execute("CREATE KEYSPACE late WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    node3.start()
    after = node3.session().execute("SELECT host_id, tokens FROM system.local").one()
    assert (after.host_id, set(after.tokens)) == (before.host_id, set(before.tokens))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if node3.session().execute(
                "SELECT keyspace_name FROM system_schema.keyspaces "
                "WHERE keyspace_name = 'late'").one():
            break
        time.sleep(0.2)
    else:
        pytest.fail("the returning node never caught up with the schema")
    node1.await_status(node3.address, "UN", timeout=15)
    assert len(set(schema_versions(trio).values())) == 1


def test_a_paused_node_is_marked_down_then_up_again(trio):
    node1, node2, _ = trio.nodes
    node2.pause()
    try:
        took = node1.await_status(node2.address, "DN", timeout=15)
    finally:
        node2.resume()
    assert took < 15
    assert node1.await_status(node2.address, "UN", timeout=10) < 10


def test_schema_changes_need_a_majority_of_the_metadata_group(trio):
    node1, node2, node3 = trio.nodes
    node2.kill()
    node3.kill()
    try:
        node1.await_status(node2.address, "DN", timeout=15)
        node1.await_status(node3.address, "DN", timeout=15)
        with pytest.raises((Unavailable, NoHostAvailable)) as failure:
            node1.session().execute("CREATE KEYSPACE lonely WITH replication = "
                                    "{'class': 'SimpleStrategy', 'replication_factor': 1}",
                                    timeout=30)
        assert "QUORUM" in str(failure.value)
    finally:
        node2.start()
        node3.start()


def test_server_and_driver_agree_on_the_replicas_of_every_key(trio):
    import struct
    d, session = driver(trio)
    session.execute("CREATE KEYSPACE IF NOT EXISTS rf2 WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 2}")
    session.execute("CREATE TABLE IF NOT EXISTS rf2.t (k int PRIMARY KEY)")
    d.refresh_schema_metadata()
    node = trio.nodes[0]
    for k in range(0, 400, 37):
        server = node.nodetool("getendpoints", "rf2", "t", k).split()
        client = [h.address for h in d.metadata.get_replicas("rf2", struct.pack(">i", k))]
        assert server == client, k
    ring = node.nodetool("describering", "rf2")
    assert ring.startswith("Schema Version:") and ring.count("TokenRange(start_token:") == 48
