"""Repair under faults on 3 real nodes: a repair whose participant is killed (kill -9) ends
failed with Cassandra's words and leaves nothing claimed, a rerun once the node is back levels
the replicas, and a second repair of overlapping ranges started on another node while the first
runs is refused (the lease in the metadata log)."""
import json
import subprocess
import time
import urllib.request

from cassandra import ConsistencyLevel

from cluster import BIN, LocalCluster, all_up, at

ADMIN_PORT = 7199
ROWS = 300


def repairs(node):
    url = f"http://{node.address}:{ADMIN_PORT}/v1/repairs"
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def wait_running(node, timeout=20):
    deadline = time.monotonic() + timeout
    while not any(r["state"] == "running" for r in repairs(node)):
        assert time.monotonic() < deadline, repairs(node)
        time.sleep(0.1)


def metadata_leader(node):
    url = f"http://{node.address}:{ADMIN_PORT}/v1/cms"
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())["leader"] or ""


def test_a_killed_participant_fails_the_repair_and_a_rerun_levels_the_replicas():
    with LocalCluster(nodes=3) as cluster:
        node1, node2, node3 = cluster.nodes
        session = cluster.session()
        session.execute("CREATE KEYSPACE rf WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}")
        session.execute("CREATE TABLE rf.kv (k int PRIMARY KEY, v text)")
        for node in cluster.nodes:
            node.nodetool("disablehandoff")
        node3.stop()
        node1.await_status(node3.address, "DN", timeout=30)
        quorum = cluster.session(hosts=[node1.address, node2.address])
        insert = quorum.prepare("INSERT INTO rf.kv (k, v) VALUES (?, 'v')")
        insert.consistency_level = ConsistencyLevel.QUORUM
        for k in range(ROWS):
            quorum.execute(insert, (k,))
        node3.start()
        all_up(cluster)

        # node1 coordinates; a participant stops answering (SIGSTOP) while the repair waits on
        # it, then is killed: not the metadata log's leader, whose pause would hold the
        # repair's lease up for an election
        victim, other = node3, node2
        if metadata_leader(node1).split(":")[0] == node3.address:
            victim, other = node2, node3
        victim.pause()
        started = time.monotonic()
        first = subprocess.Popen([BIN, "nodetool", "-h", node1.address, "repair", "rf", "kv"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_running(node1)
            # the same ranges of the same table from another node (-hosts leaves the paused
            # node out, so only the running repair stands in the way)
            second = other.run_nodetool("repair", "-hosts", node1.address,
                                        "-hosts", other.address, "rf", "kv")
            assert second.returncode != 0, second.stdout
            assert "Cannot start multiple repair sessions over the same sstables" in (
                second.stdout + second.stderr), (second.stdout, second.stderr)

            victim.kill()
            out, err = first.communicate(timeout=90)
        finally:
            if first.poll() is None:
                first.kill()
        took = time.monotonic() - started
        assert first.returncode != 0, out
        assert "Repair command #1 failed with error" in out + err, (out, err)
        assert "finished with error" in out + err, (out, err)
        assert took < 60, took
        for node in (node1, other):
            claimed = node.run_nodetool("repair_admin", "list")
            assert claimed.returncode == 0, claimed.stderr
            assert claimed.stdout == "no sessions\n", claimed.stdout

        victim.start()
        all_up(cluster)
        rerun = node1.run_nodetool("repair", "rf", "kv", timeout=90)
        assert rerun.returncode == 0, (rerun.stdout, rerun.stderr)
        assert "Repair completed successfully" in rerun.stdout, rerun.stdout
        for node in cluster.nodes:
            alone = node.session()
            rows = alone.execute(at(ConsistencyLevel.ONE, "SELECT k FROM rf.kv"))
            assert len(list(rows)) == ROWS, node
