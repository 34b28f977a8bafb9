"""Two data_file_directories and offheap memtable accounting through a real node: tiny memtable
pools force flushes (writers wait for them instead of growing memory), the SSTables land in both
directories, and every row reads back after a restart."""
import glob
import os

from cassandra.concurrent import execute_concurrent_with_args

from conftest import connect
from helenus_node import Node

ROWS = 3000
PAYLOAD = "y" * 900


class TwoDirectoryNode(Node):
    """A node whose data lives in `data1` and `data2` of its directory."""

    def data_dirs(self):
        return [os.path.join(self.data_dir, name) for name in ("data1", "data2")]

    def config_path(self):
        path = super().config_path()
        with open(path) as f:
            lines = f.read().splitlines()
        listed = "data_file_directories: [%s]" % ", ".join(self.data_dirs())
        lines = [listed if line.startswith("data_file_directories:") else line for line in lines]
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path


def sstables(node, data_dir):
    return glob.glob(os.path.join(data_dir, "dirs", "t-*", "h?-*-Data.db"))


def test_sstables_spread_over_two_directories_and_read_back_after_restart():
    pools = (
        "memtable_heap_space: 1MiB\n"
        "memtable_offheap_space: 1MiB\n"
        "memtable_allocation_type: offheap_buffers\n"
    )
    node = TwoDirectoryNode(extra_yaml=pools).start()
    try:
        cluster, s = connect(node)
        s.execute("CREATE KEYSPACE dirs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE dirs.t (k int PRIMARY KEY, v text) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'enabled': 'false'}")
        insert = s.prepare("INSERT INTO dirs.t (k, v) VALUES (?, ?)")
        args = [(k, "%s-%d" % (PAYLOAD, k)) for k in range(ROWS)]
        results = execute_concurrent_with_args(s, insert, args, concurrency=32)
        assert all(ok for ok, _ in results)
        cluster.shutdown()
        assert node.stop() == 0
        counts = [len(sstables(node, d)) for d in node.data_dirs()]
        assert all(c >= 1 for c in counts), (counts, node.log())

        node.start()
        cluster, s = connect(node)
        rows = {r.k: r.v for r in s.execute("SELECT k, v FROM dirs.t")}
        assert rows == dict(args)
        cluster.shutdown()
    finally:
        node.cleanup()
