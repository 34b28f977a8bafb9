"""Topology changes refuse before changing anything, and a stopped one is finished or given up
(issue 29 point 5): a bootstrap whose range giver is down is refused unless
-Dcassandra.consistent.rangemovement=false, one without the disk room for its ranges is
refused naming the bytes, a joining node killed mid-stream finishes on restart without
fetching again what it had, and a stopped join is given up with removenode."""

import os
import subprocess
import time

from cassandra import ConsistencyLevel
from cassandra.concurrent import execute_concurrent_with_args

from cluster import BIN, LocalCluster
from test_lifecycle import host_id, nodetool
from test_moving_data import QuorumLoad, create_table, read_alone, stop_all_but, streams, \
    write_rows

YAML = "ring_delay_ms: 1000"


def add(cluster, env_opts="", timeout=60):
    """`helenus cluster add` with JVM_EXTRA_OPTS; the finished process."""
    return subprocess.run([BIN, "cluster", "add", "--dir", cluster.dir, "--timeout", str(timeout)],
                          capture_output=True, text=True, timeout=timeout + 60,
                          env={**os.environ, "JVM_EXTRA_OPTS": env_opts})


def start(cluster, number, env_opts="", check=True, timeout=60):
    out = subprocess.run([BIN, "cluster", "start", str(number), "--dir", cluster.dir,
                          "--timeout", str(timeout)], capture_output=True, text=True,
                         timeout=timeout + 60, env={**os.environ, "JVM_EXTRA_OPTS": env_opts})
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def small_disk(path, size):
    """Mounts a tmpfs of `size` over `path`; False where this process may not mount."""
    if os.geteuid() != 0:
        return False
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                         capture_output=True, text=True)
    return out.returncode == 0


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what()
        time.sleep(0.2)


def full_log(node):
    with open(os.path.join(node.dir, "logs", "system.log"), "rb") as f:
        return f.read().decode(errors="replace")


def write_blobs(session, rows):
    """`rows` rows of 1 KiB in ks.big, so that a throttled stream takes seconds."""
    session.execute("CREATE TABLE ks.big (k int PRIMARY KEY, b blob)")
    insert = session.prepare("INSERT INTO ks.big (k, b) VALUES (?, ?)")
    insert.consistency_level = ConsistencyLevel.ALL
    execute_concurrent_with_args(session, insert, [(k, os.urandom(1024)) for k in range(rows)],
                                 concurrency=64, raise_on_first_error=True)


def throttle(nodes, mib):
    for node in nodes:
        node.nodetool("setstreamthroughput", str(mib * 8))
        node.nodetool("setstreamthroughput", "-e", str(mib))


def kill_while_streaming(cluster, number, sources):
    """Starts `helenus cluster add` and kills the new node once a source sends it data."""
    adding = subprocess.Popen([BIN, "cluster", "add", "--dir", cluster.dir, "--timeout", "120"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cluster.size = number
    kill_once_streaming(cluster, number, sources)
    adding.kill()
    adding.wait(timeout=10)


def await_joining_down(node, address):
    try:
        node.await_status(address, "DJ", timeout=30)
    except Exception as e:
        raise AssertionError(node.nodetool("status")) from e


def kill_once_streaming(cluster, number, sources):
    new = cluster.node(number).address

    def sending():
        return any(s["description"] == "Bootstrap" and s["peer"].rsplit(":", 1)[0] == new and
                   s["bytes_done"] > 0 and s["state"] != "complete"
                   for n in sources for s in streams(n))
    wait_for(sending, 60, lambda: sources[0].nodetool("status"))
    cluster.run("kill", number)


def test_a_bootstrap_refuses_a_down_source_and_a_small_disk_before_changing_anything():
    rows = 2_000
    with LocalCluster(nodes=3, yaml=YAML) as cluster:
        n1, n3 = cluster.node(1), cluster.node(3)
        session = n1.session()
        create_table(session, 3)
        write_rows(session, range(rows))
        write_blobs(session, 1_000)
        for node in cluster.nodes:
            node.nodetool("flush", "ks")
        n3.kill()
        n1.await_status(n3.address, "DN", timeout=30)
        new = f"127.0.{cluster.subnet}.4"
        # node 3 gives up ranges to the new node: consistent range movement refuses the join
        out = add(cluster)
        assert out.returncode != 0, out.stdout
        cluster.size = 4
        log = full_log(cluster.node(4))
        assert f"A node required to move the data consistently is down (/{n3.address})" in log
        assert n1.status_of(new) is None, n1.nodetool("status")
        # the disk check: a data directory of 64 KiB cannot take the rows
        data = os.path.join(cluster.node(4).dir, "data")
        if small_disk(data, "64k"):
            try:
                out = start(cluster, 4, "-Dcassandra.consistent.rangemovement=false", check=False)
                log = full_log(cluster.node(4))
                assert out.returncode != 0, out.stdout + log[-3000:]
                assert "Not enough disk space to bootstrap: the ranges this node would take " \
                       "hold about " in log, log[-3000:]
                assert "bytes free" in log
                assert n1.status_of(new) is None, n1.nodetool("status")
            finally:
                cluster.run("kill", 4, check=False)
                subprocess.run(["umount", data], check=True)
        # with the override it streams node 3's ranges from the other live replicas
        start(cluster, 4, "-Dcassandra.consistent.rangemovement=false")
        n1.await_status(new, "UN", timeout=60)
        new_node = cluster.node(4)
        stop_all_but(cluster, new_node)
        found, unavailable, wrong = read_alone(new_node, list(range(rows)))
        assert wrong == [], wrong[:10]
        assert found > rows * 0.6 and found + unavailable == rows, (found, unavailable)


def test_a_join_killed_mid_stream_finishes_on_restart_and_another_is_given_up_with_removenode():
    rows, blobs = 2_000, 6_000
    with LocalCluster(nodes=3, yaml=YAML) as cluster:
        n1 = cluster.node(1)
        sources = cluster.nodes[:3]
        session = cluster.session(hosts=[n.address for n in sources])
        create_table(session, 3)
        write_rows(session, range(rows))
        write_blobs(session, blobs)
        for node in sources:
            node.nodetool("flush", "ks")
        throttle(sources, 1)
        with QuorumLoad(session, rows) as load:
            # node 4, killed while streaming, then restarted: it goes on with its join
            kill_while_streaming(cluster, 4, sources)
            n4 = cluster.node(4)
            await_joining_down(n1, n4.address)
            start(cluster, 4, timeout=120)
            n1.await_status(n4.address, "UN", timeout=30)
            assert "finishing the join" in full_log(n4)
            # node 5, killed while streaming: the stopped join is given up from another node
            kill_while_streaming(cluster, 5, sources)
            n5 = cluster.node(5)
            await_joining_down(n1, n5.address)
            code, out, err = nodetool(n1, "removenode", host_id(n1, n5.address))
            assert (code, out) == (0, ""), err
            assert n1.status_of(n5.address) is None
            # no other change is blocked: a decommission passes the one-change-at-a-time
            # check (and is refused only for a keyspace of RF 5)
            session.execute("CREATE KEYSPACE big WITH replication = "
                            "{'class': 'SimpleStrategy', 'replication_factor': 5}")
            code, _, err = nodetool(n4, "decommission")
            assert "Not enough live nodes to maintain replication factor in keyspace big" \
                in err, err
        assert load.errors == [], load.errors[:5]
        assert len(load.acknowledged) > 20
        # node 4 alone holds every row it replicates (3 of 4 nodes: most): those written
        # before it joined and those acknowledged while it joined
        cluster.size = 4
        stop_all_but(cluster, n4)
        keys = list(range(rows)) + load.acknowledged
        found, unavailable, wrong = read_alone(n4, keys)
        assert wrong == [], wrong[:10]
        assert found > len(keys) * 0.6 and found + unavailable == len(keys), (found, unavailable)
