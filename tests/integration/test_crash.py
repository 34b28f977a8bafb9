"""kill -9 while writes, flushes and compactions are running: every acknowledged write is read
back after the restart, through several crash/restart cycles on the same data directory."""
import threading
import time

from conftest import connect
from helenus_node import Node

PAYLOAD = "y" * 900
CYCLES = 3
WRITE_SECONDS = 2.5


class Writer:
    """Writes increasing keys with up to `window` requests in flight; records the keys whose
    write was acknowledged."""

    def __init__(self, session, first_key, window=64):
        self.insert = session.prepare("INSERT INTO crash.t (k, v) VALUES (?, ?)")
        self.session = session
        self.next_key = first_key
        self.acked = set()
        self.slots = threading.Semaphore(window)
        self.lock = threading.Lock()
        self.stopped = False

    def run_until(self, deadline):
        while time.time() < deadline and not self.stopped:
            self.slots.acquire()
            key = self.next_key
            self.next_key += 1
            future = self.session.execute_async(self.insert, (key, f"{PAYLOAD}-{key}"))
            future.add_callbacks(self._acked, self._failed, callback_args=(key,))

    def _acked(self, _rows, key):
        with self.lock:
            self.acked.add(key)
        self.slots.release()

    def _failed(self, _error):
        self.slots.release()


def test_acknowledged_writes_survive_kill9_during_flush_and_compaction():
    node = Node(extra_yaml="memtable_heap_space: 1MiB\n").start()
    acked = set()
    next_key = 0
    try:
        cluster, s = connect(node)
        s.execute("CREATE KEYSPACE crash WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE crash.t (k int PRIMARY KEY, v text) WITH compaction = "
                  "{'class': 'SizeTieredCompactionStrategy', 'min_threshold': 2}")
        for _ in range(CYCLES):
            writer = Writer(s, next_key)
            writer.run_until(time.time() + WRITE_SECONDS)
            # Requests are still in flight and the node is flushing and compacting.
            node.kill9()
            writer.stopped = True
            cluster.shutdown()
            acked |= writer.acked
            next_key = writer.next_key
            assert len(writer.acked) > 500, "the writer made too little progress to test"
            node.start()
            cluster, s = connect(node)
            assert_readable(s, acked)
        with open(node.log_path, encoding="utf-8", errors="replace") as f:
            log = f.read()
        assert log.count("flushed crash.t") >= CYCLES, "too few flushes ran to test"
        assert "compacted crash.t" in log, "no compaction ran"
        cluster.shutdown()
    finally:
        node.cleanup()


def assert_readable(session, acked):
    rows = {r.k: r.v for r in session.execute("SELECT k, v FROM crash.t")}
    missing = sorted(k for k in acked if k not in rows)
    assert not missing, f"{len(missing)} acknowledged writes lost, first {missing[:10]}"
    wrong = [k for k in acked if rows[k] != f"{PAYLOAD}-{k}"]
    assert not wrong, f"{len(wrong)} rows read back with the wrong value"
