"""The LSM storage engine through a real node: a tiny memtable limit forces flushes to SSTables,
and everything reads back after a clean (SIGTERM) or a kill -9 restart."""
import glob
import os
import re

import pytest
from cassandra.concurrent import execute_concurrent_with_args

from conftest import connect
from helenus_node import Node

ROWS = 3000
PAYLOAD = "x" * 900


def sstables(node, keyspace):
    return glob.glob(os.path.join(node.data_dir, "data", keyspace, "t-*", "h?-*-Data.db"))


def last_replay(node):
    found = re.findall(r"commit log replayed: (\d+) mutations applied", node.log())
    return int(found[-1]) if found else None


@pytest.mark.parametrize("how", ["sigterm", "kill9"])
def test_flushes_to_sstables_and_restarts(how):
    node = Node(extra_yaml="memtable_heap_space: 1MiB\n").start()
    try:
        cluster, s = connect(node)
        s.execute("CREATE KEYSPACE lsm WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE lsm.t (k int PRIMARY KEY, v text)")
        insert = s.prepare("INSERT INTO lsm.t (k, v) VALUES (?, ?)")
        args = [(k, "%s-%d" % (PAYLOAD, k)) for k in range(ROWS)]
        results = execute_concurrent_with_args(s, insert, args, concurrency=32)
        assert all(ok for ok, _ in results)
        cluster.shutdown()
        assert len(sstables(node, "lsm")) >= 1, node.log()
        if how == "kill9":
            node.kill9()
        else:
            assert node.stop() == 0
        node.start()
        if how == "sigterm":
            assert last_replay(node) == 0, "a drained node leaves nothing to replay"
        cluster, s = connect(node)
        rows = {r.k: r.v for r in s.execute("SELECT k, v FROM lsm.t")}
        assert len(rows) == ROWS
        assert rows == dict(args)
        cluster.shutdown()
    finally:
        node.cleanup()
