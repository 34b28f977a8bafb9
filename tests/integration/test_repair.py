"""Repair on a 3-node `helenus cluster` (RF=3): a replica that was down while rows were
written, updated and deleted (hints disabled) holds exactly the others' rows after `nodetool
repair` (incremental, the default), read alone; every replica's data is then repaired
(tablestats' Percent repaired), a second incremental repair validates and sends nothing, and a
full repair finds nothing out of sync; the output is Cassandra 5.0.4's; a repair with a replica
down fails with Cassandra's message and exit status."""
import json
import re
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from cluster import all_up

ADMIN_PORT = 7199
ROWS = 1000
STAMP = r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] "
OPTIONS = ("repair options (parallelism: parallel, primary range: false, incremental: true, "
           "job threads: 1, ColumnFamilies: [], dataCenters: [], hosts: [], previewKind: NONE, "
           "# of ranges: 48, pull repair: false, force repair: false, optimise streams: false, "
           "ignore unreplicated keyspaces: false, repairPaxos: true, paxosOnly: false)")


@pytest.fixture(scope="module")
def cluster(trio):
    return trio


def nodetool(node, *args):
    return node.run_nodetool(*args, timeout=600)


def repairs(node):
    url = f"http://{node.address}:{ADMIN_PORT}/v1/repairs"
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def rows_alone(node):
    """Every row as `node` alone answers it at ONE."""
    select = SimpleStatement("SELECT k, v FROM rp.kv", consistency_level=ConsistencyLevel.ONE,
                             fetch_size=500)
    return {r.k: r.v for r in node.session().execute(select)}


def expected_rows():
    rows = {k: f"v{k}" for k in range(ROWS + 200)}
    rows.update({k: f"updated{k}" for k in range(0, 100)})
    for k in range(500, 600):
        del rows[k]
    return rows


def test_repair_brings_a_replica_that_missed_writes_and_deletes_level(cluster):
    node1, node2, node3 = cluster.nodes
    session = cluster.session()
    session.execute("CREATE KEYSPACE rp WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    session.execute("CREATE TABLE rp.kv (k int PRIMARY KEY, v text)")
    insert = session.prepare("INSERT INTO rp.kv (k, v) VALUES (?, ?)")
    insert.consistency_level = ConsistencyLevel.ALL
    for k in range(ROWS):
        session.execute(insert, (k, f"v{k}"))
    for node in cluster.nodes:
        assert nodetool(node, "disablehandoff").returncode == 0

    node3.stop()
    node1.await_status(node3.address, "DN", timeout=30)
    quorum = cluster.session(hosts=[node1.address, node2.address])
    insert = quorum.prepare("INSERT INTO rp.kv (k, v) VALUES (?, ?)")
    insert.consistency_level = ConsistencyLevel.QUORUM
    for k in range(ROWS, ROWS + 200):
        quorum.execute(insert, (k, f"v{k}"))
    for k in range(0, 100):
        quorum.execute(insert, (k, f"updated{k}"))
    delete = quorum.prepare("DELETE FROM rp.kv WHERE k = ?")
    delete.consistency_level = ConsistencyLevel.QUORUM
    for k in range(500, 600):
        quorum.execute(delete, (k,))
    node3.start()
    all_up(cluster)

    preview = nodetool(node1, "repair", "--preview", "rp")
    assert preview.returncode == 0, preview.stderr
    text = re.sub(STAMP, "", preview.stdout)
    assert "previewKind: UNREPAIRED" in text, text
    assert "\nPreview complete\nTotal estimated streaming: " in text, text
    assert re.search(r"\nrp\.kv - \d+ ranges, \d+ partitions, [\d.]+[KMG]?i?B bytes\n", text), text
    assert re.search(rf"/{re.escape(node3.address)}:7000 -> /[\d.]+:7000: [1-9]\d* ranges, ", text), text
    assert "Repair preview completed successfully; Preview complete" in text, text
    validate = nodetool(node1, "repair", "--validate", "rp")
    assert validate.returncode == 0, validate.stderr
    assert "previewKind: REPAIRED" in validate.stdout
    assert "] Repaired data is in sync\n" in validate.stdout, validate.stdout
    for previewed in repairs(node1)[-2:]:
        assert previewed["state"] == "success" and previewed["bytes_streamed"] == 0, previewed
    assert repairs(node1)[-2]["ranges_out_of_sync"] > 0
    for node in cluster.nodes:
        stats = nodetool(node, "tablestats", "rp.kv").stdout
        assert "\t\tBytes repaired: 0B\n" in stats, stats
        assert "\t\tBytes pending repair: 0B\n" in stats, stats

    result = nodetool(node1, "repair", "rp")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(re.match(STAMP, line) for line in lines), lines
    text = [re.sub(STAMP, "", line) for line in lines]
    assert re.fullmatch(r"Starting repair command #3 \([0-9a-f-]{36}\), repairing keyspace rp "
                        r"with " + re.escape(OPTIONS), text[0]), text[0]
    sessions = text[1:-2]
    assert sessions and all(re.fullmatch(r"Repair session [0-9a-f-]{36} for range \[.*\] "
                                         r"finished \(progress: 57%\)", s) for s in sessions)
    assert text[-2] == "Repair completed successfully"
    assert re.fullmatch(r"Repair command #3 finished in \d+ seconds?", text[-1]), text[-1]
    first = repairs(node1)[-1]
    assert (first["command"], first["state"], first["keyspace"]) == (3, "success", "rp")
    views = node1.session().execute(
        "SELECT command_id, type, status, options_preview_kind, sessions FROM system_views.repairs")
    kinds = sorted((r.command_id, r.type, r.status, r.options_preview_kind) for r in views)
    assert kinds == [(1, "preview unrepaired", "success", "UNREPAIRED"),
                     (2, "preview repaired", "success", "REPAIRED"),
                     (3, "incremental", "success", "NONE")], kinds
    assert first["ranges_out_of_sync"] > 0 and first["bytes_streamed"] > 0, first

    for node in cluster.nodes:
        stats = nodetool(node, "tablestats", "rp.kv").stdout
        assert "\t\tPercent repaired: 100.0\n" in stats, stats
        assert "\t\tBytes unrepaired: 0B\n\t\tBytes pending repair: 0B\n" in stats, stats

    assert nodetool(node2, "repair_admin", "list").stdout == "no sessions\n"
    listed = nodetool(node2, "repair_admin", "list", "--all").stdout.splitlines()
    assert re.fullmatch(r"id +\| state +\| last activity +\| coordinator +\| participants +"
                        r"\| participants_wp *", listed[0]), listed
    assert len(listed) == 1 + len(sessions) and all(" | FINALIZED | " in line for line in listed[1:]), listed
    assert f"| /{node1.address}:7000 " in listed[1], listed
    unknown = nodetool(node2, "repair_admin", "cancel", "--session",
                       "00000000-0000-1000-8000-000000000000")
    assert unknown.returncode != 0 and "does not exist" in unknown.stderr + unknown.stdout

    incremental = nodetool(node1, "repair", "rp")
    assert incremental.returncode == 0, incremental.stderr
    nothing = repairs(node1)[-1]
    assert nothing["state"] == "success"
    assert (nothing["partitions_validated"], nothing["bytes_streamed"]) == (0, 0), nothing

    again = nodetool(node2, "repair", "-full", "rp", "kv")
    assert again.returncode == 0, again.stderr
    assert "incremental: false" in again.stdout
    assert "ColumnFamilies: [kv]" in again.stdout
    second = repairs(node2)[-1]
    assert second["state"] == "success"
    assert (second["ranges_out_of_sync"], second["bytes_streamed"]) == (0, 0), second

    expected = expected_rows()
    node1.stop()
    node2.stop()
    assert rows_alone(node3) == expected
    node2.start()
    node3.stop()
    assert rows_alone(node2) == expected
    node1.start()
    node3.start()
    all_up(cluster)


def test_repair_with_a_replica_down_fails_as_cassandra(cluster):
    node1, node2, _ = cluster.nodes
    node2.stop()
    node1.await_status(node2.address, "DN", timeout=30)
    try:
        result = nodetool(node1, "repair", "-full", "rp")
        assert result.returncode == 2
        lines = [re.sub(STAMP, "", line) for line in result.stdout.splitlines()]
        assert lines[0].startswith("Starting repair command #")
        failure = f"failed with error Endpoint not alive: /{node2.address}:7000"
        assert re.fullmatch(r"Repair command #\d+ " + re.escape(failure), lines[1]), lines
        assert re.fullmatch(r"Repair command #\d+ finished with error", lines[2]), lines
        assert result.stderr.startswith("error: Repair job has failed with the error message: "
                                        "Repair command #")
        assert result.stderr.rstrip().endswith(
            ". Check the logs on the repair participants for further details")
        assert repairs(node1)[-1]["state"] == "failed"
    finally:
        node2.start()
        all_up(cluster)


def test_repair_options_are_checked(cluster):
    node = cluster.node(1)
    missing = nodetool(node, "repair", "nosuch")
    assert missing.returncode == 2
    assert "Keyspace [nosuch] does not exist." in missing.stderr
    table = nodetool(node, "repair", "rp", "nosuch")
    assert table.returncode == 2 and "Unknown keyspace/cf pair (rp.nosuch)" in table.stderr
    both = nodetool(node, "repair", "-dc", "datacenter1", "-hosts", node.address, "rp")
    assert both.returncode == 2 and "Cannot combine -dc and -hosts options." in both.stderr
    cluster.session().execute("CREATE KEYSPACE IF NOT EXISTS one WITH replication = "
                              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    single = nodetool(node, "repair", "-full", "one")
    assert single.returncode == 0
    assert re.sub(STAMP, "", single.stdout) == \
        "Replication factor is 1. No repair is needed for keyspace 'one'\n"
    pr = nodetool(node, "repair", "-full", "-pr", "-st", "0", "-et", "1000000000000000000", "rp")
    assert pr.returncode == 0, pr.stderr
    assert "primary range: true" in pr.stdout and "Repair completed successfully" in pr.stdout


def test_a_replica_that_missed_deletes_past_gc_grace_does_not_bring_rows_back(cluster):
    """The reference documents' scenario: gc_grace_seconds passed and the others compacted
    while a replica that missed the deletes was down; their tombstones are unrepaired, so
    compaction keeps them (only_purge_repaired_tombstones, on by default) and repair sends
    them to the replica instead of taking the rows back from it."""
    node1, node2, node3 = cluster.nodes
    session = cluster.session()
    session.execute("CREATE KEYSPACE gc WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    session.execute("CREATE TABLE gc.kv (k int PRIMARY KEY, v text) WITH gc_grace_seconds = 1")
    insert = session.prepare("INSERT INTO gc.kv (k, v) VALUES (?, 'v')")
    insert.consistency_level = ConsistencyLevel.ALL
    for k in range(200):
        session.execute(insert, (k,))
    for node in cluster.nodes:
        assert nodetool(node, "disablehandoff").returncode == 0
        assert nodetool(node, "flush", "gc").returncode == 0
    node3.stop()
    node1.await_status(node3.address, "DN", timeout=30)
    quorum = cluster.session(hosts=[node1.address, node2.address])
    delete = quorum.prepare("DELETE FROM gc.kv WHERE k = ?")
    delete.consistency_level = ConsistencyLevel.QUORUM
    for k in range(100):
        quorum.execute(delete, (k,))
    time.sleep(2)
    for node in (node1, node2):
        assert nodetool(node, "flush", "gc").returncode == 0
        assert nodetool(node, "compact", "gc").returncode == 0
    node3.start()
    all_up(cluster)

    result = nodetool(node1, "repair", "gc")
    assert result.returncode == 0, result.stderr
    expected = set(range(100, 200))
    select = SimpleStatement("SELECT k FROM gc.kv", consistency_level=ConsistencyLevel.ALL)
    assert {r.k for r in cluster.session().execute(select)} == expected
    one = SimpleStatement("SELECT k FROM gc.kv", consistency_level=ConsistencyLevel.ONE)
    node1.stop()
    node2.stop()
    assert {r.k for r in node3.session().execute(one)} == expected, "the replica that missed them"
    node2.start()
    node3.stop()
    assert {r.k for r in node2.session().execute(one)} == expected
    node1.start()
    node3.start()
    all_up(cluster)
