"""Failed disks and corrupt SSTables against a live node, per `disk_failure_policy` and
`commit_failure_policy` (Cassandra 5.0's defaults: `stop`): clients get errors rather than
hangs, `nodetool` keeps answering, SIGTERM still ends the process, `enablebinary` serves again
once the disk is back; a corrupt chunk answers ReadFailure and is counted; `verify` reports it
and `scrub` drops only what cannot be read."""
import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
import urllib.request

import pytest
from cassandra import ReadFailure, WriteTimeout
from cassandra.cluster import NoHostAvailable

from conftest import connect
from helenus_node import BIN, Node

WRITE_TIMEOUT_S = 1.0
SETUP = [
    "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    "CREATE TABLE ks.t (k int PRIMARY KEY, v text)",
]
# A short write timeout; small memtables (where asked) so that writes need flushes.
YAML = "write_request_timeout: 1000ms\n"
SMALL_MEMTABLES = "memtable_heap_space: 2MiB\n"


def nodetool(node, *args):
    return subprocess.run([BIN, "nodetool", "-p", str(node.admin_port), *args],
                          capture_output=True, text=True, timeout=60)


@contextlib.contextmanager
def running(extra_yaml=SMALL_MEMTABLES, protocol_version=5):
    """A node with table ks.t and a session on it; both gone afterwards."""
    node = Node(extra_yaml=YAML + extra_yaml).start()
    cluster, session = connect(node, protocol_version=protocol_version)
    try:
        for statement in SETUP:
            session.execute(statement)
        yield node, session
    finally:
        cluster.shutdown()
        node.cleanup()


def fill(session, rows, size=200, start=0):
    insert = session.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
    for k in range(start, start + rows):
        session.execute(insert, (k, f"{k:0>{size}}"))


def remove_tree(path):
    """Removes `path` while the node may be writing into it."""
    while os.path.exists(path):
        shutil.rmtree(path, ignore_errors=True)


class Load:
    """Writers that keep inserting and record how long each request took and how it ended."""

    def __init__(self, session, threads=4):
        self.session = session
        self.insert = session.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        self.results = []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(i,)) for i in range(threads)]
        for t in self.threads:
            t.start()

    def run(self, index):
        k = 1_000_000 * (index + 1)
        while not self.stopping.is_set():
            began = time.monotonic()
            try:
                self.session.execute(self.insert, (k, "x" * 1000), timeout=30)
                outcome = "ok"
            except Exception as e:  # every failure kind is recorded, none may hang
                outcome = type(e).__name__
            self.results.append((outcome, time.monotonic() - began))
            k += 1
            if outcome != "ok":
                time.sleep(0.01)

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in self.threads), "a writer hung"


def wait_for(condition, timeout=30, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_deleted_data_directory_under_write_load_fails_fast_and_stops_cleanly():
    with running() as (node, session):
        load = Load(session)
        time.sleep(1.0)
        remove_tree(os.path.join(node.data_dir, "data"))
        wait_for(lambda: nodetool(node, "statusbinary").stdout == "not running\n",
                 what="the stop policy to stop the native transport")
        time.sleep(1.0)
        load.stop()
        failed = [(o, d) for o, d in load.results if o != "ok"]
        assert failed, "writes failed once the transport stopped"
        slowest = max(d for _, d in load.results)
        assert slowest < WRITE_TIMEOUT_S + 3, f"a request took {slowest:.1f} s"
        for command in ("status", "info"):
            assert nodetool(node, command).returncode == 0
        assert "Native Transport active: false\n" in nodetool(node, "info").stdout
        began = time.monotonic()
        code = node.stop(timeout=30)
        assert code == 0, node.log()
        assert time.monotonic() - began < 10
        assert "drain failed" in node.log()


def test_ignore_policy_times_writes_out_once_memtables_cannot_flush():
    """With `ignore` nothing stops: writes fill the memtable pool, then wait for a flush that
    cannot happen and answer WriteTimeout after write_request_timeout, as Cassandra's do."""
    with running(SMALL_MEMTABLES + "disk_failure_policy: ignore\n") as (node, session):
        remove_tree(os.path.join(node.data_dir, "data"))
        insert = session.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        began = None
        with pytest.raises(WriteTimeout):
            for k in range(20_000):
                began = time.monotonic()
                session.execute(insert, (k, "z" * 1000), timeout=30)
        assert time.monotonic() - began < WRITE_TIMEOUT_S + 3
        assert nodetool(node, "statusbinary").stdout == "running\n"
        assert node.stop(timeout=30) == 0


@pytest.mark.skipif(not os.environ.get("HELENUS_SLOW_TESTS"), reason="takes over 30 s; set HELENUS_SLOW_TESTS=1")
def test_sigterm_exits_even_when_a_flush_is_stuck():
    """A flush stuck in the kernel (its file is a FIFO nobody reads) is given up after the 30 s
    drain limit: SIGTERM still ends the process, with status 0 and a log line saying so."""
    with running() as (node, session):
        fill(session, 10)
        table_dir = os.path.join(node.data_dir, "data", "ks")
        [table] = os.listdir(table_dir)
        for generation in range(1, 50):
            os.mkfifo(os.path.join(table_dir, table, f"tmp-hb-{generation}-Data.db"))
        flushing = subprocess.Popen([BIN, "nodetool", "-p", str(node.admin_port), "flush", "ks"])
        time.sleep(1.0)
        began = time.monotonic()
        assert node.stop(timeout=60) == 0
        assert time.monotonic() - began < 45
        assert "drain did not finish within" in node.log()
        flushing.kill()
        flushing.wait()


def test_a_restored_directory_flushes_again_and_enablebinary_serves():
    with running() as (node, session):
        fill(session, 50)
        data = os.path.join(node.data_dir, "data")
        remove_tree(data)
        result = nodetool(node, "flush", "ks")
        assert result.returncode == 2, result
        assert nodetool(node, "statusbinary").stdout == "not running\n"
        with pytest.raises(NoHostAvailable):
            session.execute("SELECT * FROM ks.t WHERE k = 1")
        os.makedirs(data)
        assert nodetool(node, "flush").returncode == 0, "flushes work once the directory is back"
        assert nodetool(node, "enablebinary").returncode == 0
        assert nodetool(node, "statusbinary").stdout == "running\n"
        wait_for(lambda: _answers(session), what="the driver to reconnect")
        assert session.execute("SELECT v FROM ks.t WHERE k = 7").one().v == f"{7:0>200}"
        fill(session, 10, start=100)
        assert node.stop() == 0, node.log()


def test_disablebinary_then_enablebinary():
    with running() as (node, session):
        assert nodetool(node, "statusbinary").stdout == "running\n"
        assert nodetool(node, "disablebinary").returncode == 0
        assert nodetool(node, "statusbinary").stdout == "not running\n"
        with pytest.raises(NoHostAvailable):
            session.execute("SELECT * FROM ks.t")
        assert nodetool(node, "enablebinary").returncode == 0
        wait_for(lambda: _answers(session), what="the driver to reconnect")
        assert nodetool(node, "drain").returncode == 0
        refused = nodetool(node, "enablebinary")
        assert refused.returncode == 2 and "drained" in refused.stderr, refused


def _answers(session):
    try:
        session.execute("SELECT * FROM ks.t LIMIT 1")
        return True
    except NoHostAvailable:
        return False


def test_die_policy_exits_with_status_100():
    with running(SMALL_MEMTABLES + "disk_failure_policy: die\n") as (node, session):
        fill(session, 20)
        remove_tree(os.path.join(node.data_dir, "data"))
        nodetool(node, "flush", "ks")
        assert node.proc.wait(timeout=30) == 100
        assert "Exiting with status 100" in node.log()
        node.proc = None


def test_stop_commit_times_writes_out_and_keeps_reads():
    """As Apache Cassandra 5.0.4 (refcass) with its commit log directory removed under
    `commit_failure_policy: stop_commit`: writes wait for a segment that never comes and time
    out (WriteTimeout after write_request_timeout), reads and the native transport go on."""
    with running("commit_failure_policy: stop_commit\ncommitlog_segment_size: 1MiB\n") as (node, session):
        fill(session, 20)
        remove_tree(os.path.join(node.data_dir, "commitlog"))
        insert = session.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
        began = None
        with pytest.raises(WriteTimeout):
            for k in range(1000, 5000):
                began = time.monotonic()
                session.execute(insert, (k, "y" * 1000))
        waited = time.monotonic() - began
        assert WRITE_TIMEOUT_S - 0.2 < waited < WRITE_TIMEOUT_S + 3, waited
        assert session.execute("SELECT v FROM ks.t WHERE k = 3").one().v == f"{3:0>200}"
        assert nodetool(node, "statusbinary").stdout == "running\n"


def metric(node, name, labels):
    text = urllib.request.urlopen(f"http://127.0.0.1:{node.admin_port}/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def corrupt_middle_chunk(node):
    """Flips a byte halfway through the table's (only) Data file."""
    table_dir = os.path.join(node.data_dir, "data", "ks")
    [table] = os.listdir(table_dir)
    [data] = [f for f in os.listdir(os.path.join(table_dir, table)) if f.endswith("-Data.db")]
    path = os.path.join(table_dir, table, data)
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x5A]))
    return path


@pytest.mark.parametrize("protocol_version", [4, 5])
def test_a_corrupt_chunk_answers_read_failure_and_scrub_drops_only_it(protocol_version):
    with running("", protocol_version=protocol_version) as (node, session):
        fill(session, 2000)
        assert nodetool(node, "flush", "ks").returncode == 0
        corrupt_middle_chunk(node)
        with pytest.raises(ReadFailure) as failure:
            list(session.execute("SELECT * FROM ks.t"))
        assert failure.value.failures == 1
        assert "UNKNOWN from /" in str(failure.value)
        assert metric(node, "helenus_table_corrupt_reads_total", {"keyspace": "ks", "table": "t"}) >= 1
        assert nodetool(node, "statusbinary").stdout == "running\n", "stop does not act on corruption"

        refused = nodetool(node, "verify", "ks", "t")
        assert refused.returncode == 1 and "verify is disabled unless a [-f|--force]" in refused.stderr
        verify = nodetool(node, "verify", "-f", "ks", "t")
        assert verify.returncode == 2, verify
        assert "Corrupt SSTable" in verify.stderr and "checksum mismatch" in verify.stderr
        assert "Aborted verifying at least one table in keyspace ks" in verify.stderr

        scrub = nodetool(node, "scrub", "ks", "t")
        assert scrub.returncode == 0, scrub
        first = scrub.stdout.splitlines()[0]
        assert first.startswith("Scrubbed ks.t: ") and "unreadable partitions dropped" in first, scrub.stdout
        kept = int(first.split(": ")[1].split(" ")[0])
        assert 1500 < kept < 2000
        assert "pre-scrub-" in nodetool(node, "listsnapshots").stdout
        assert nodetool(node, "verify", "-f", "-e", "ks", "t").returncode == 0
        assert len(list(session.execute("SELECT k FROM ks.t"))) == kept


def test_stop_paranoid_stops_serving_on_corruption():
    with running("disk_failure_policy: stop_paranoid\n") as (node, session):
        fill(session, 2000)
        assert nodetool(node, "flush", "ks").returncode == 0
        corrupt_middle_chunk(node)
        with pytest.raises((ReadFailure, NoHostAvailable)):
            list(session.execute("SELECT * FROM ks.t"))
        wait_for(lambda: nodetool(node, "statusbinary").stdout == "not running\n",
                 what="stop_paranoid to stop the native transport")
        assert node.stop() == 0
