"""The built-in repair scheduler (`auto_repair` in cassandra.yaml, `nodetool
setautorepairconfig` / `autorepairstatus`, the tables' `auto_repair` option) on 3 nodes: with a
table turned on by nodetool or by its option, each node repairs its primary ranges by itself
every half gc_grace_seconds, one scheduled repair at a time across the cluster; a table whose
option turns both kinds off is left alone; the status shows every range repaired,
system_views.repairs lists the scheduled incremental repairs, and a restarted node still knows
what was repaired (the history is in the metadata log)."""
import json
import re
import time
import urllib.request

from cassandra import ConsistencyLevel

from cluster import LocalCluster, all_up

ADMIN_PORT = 7199
YAML = ("auto_repair:\n  enabled: true\n  repair_check_interval: 1s\n"
        "  min_repair_interval: 1s\n")


def status(node):
    url = f"http://{node.address}:{ADMIN_PORT}/v1/autorepair"
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def table(node_status, keyspace, name):
    return next((t for t in node_status["tables"]
                 if (t["keyspace"], t["table"]) == (keyspace, name)), None)


def wait_repaired(cluster, names, timeout=90):
    """Every node's status, once each shows every range of the tables `names` repaired."""
    deadline = time.monotonic() + timeout
    while True:
        statuses = [status(node) for node in cluster.nodes]
        tables = [table(s, *name) for s in statuses for name in names]
        if all(t and t["ranges"] > 0 and t["repaired_ranges"] == t["ranges"] for t in tables):
            return statuses
        assert time.monotonic() < deadline, statuses
        time.sleep(1)


def scheduled_repairs(cluster):
    """(start, end) of every scheduled repair of every node, by its admin API."""
    spans = []
    for node in cluster.nodes:
        url = f"http://{node.address}:{ADMIN_PORT}/v1/repairs"
        with urllib.request.urlopen(url, timeout=10) as r:
            for x in json.loads(r.read()):
                if x["keyspace"] in ("ar", "ar2") and x["state"] == "success":
                    spans.append((x["started_ms"], x["started_ms"] + x["elapsed_ms"]))
    return sorted(spans)


def test_the_scheduler_repairs_a_table_by_itself_and_remembers_it():
    with LocalCluster(nodes=3, num_tokens=4, yaml=YAML) as cluster:
        node1, node2, node3 = cluster.nodes
        session = cluster.session()
        session.execute("CREATE KEYSPACE ar WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}")
        session.execute("CREATE TABLE ar.kv (k int PRIMARY KEY, v text) "
                        "WITH gc_grace_seconds = 4")
        before = node1.run_nodetool("autorepairstatus")
        assert before.returncode == 0, before.stderr
        assert before.stdout.startswith("Auto-repair is enabled: checks every 1 s")
        assert "No tables" in before.stdout
        session.execute("CREATE TABLE ar.off (k int PRIMARY KEY) WITH auto_repair = "
                        "{'full_enabled': 'false', 'incremental_enabled': 'false'}")
        session.execute("CREATE KEYSPACE ar2 WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 2}")
        # the default gc_grace_seconds: repaired once, first (its priority), then not due
        session.execute("CREATE TABLE ar2.pri (k int PRIMARY KEY) "
                        "WITH auto_repair = {'priority': '1'}")
        described = session.execute("DESCRIBE TABLE ar2.pri").one().create_statement
        assert ("AND auto_repair = {'full_enabled': 'true', 'incremental_enabled': 'true', "
                "'preview_repaired_enabled': 'true', 'priority': '1'}") in described, described
        row = session.execute("SELECT auto_repair FROM system_schema.tables "
                              "WHERE keyspace_name = 'ar' AND table_name = 'off'").one()
        assert row.auto_repair["incremental_enabled"] == "false", row

        for node in cluster.nodes:
            assert node.run_nodetool("disablehandoff").returncode == 0
        node3.stop()
        node1.await_status(node3.address, "DN", timeout=30)
        quorum = cluster.session(hosts=[node1.address, node2.address])
        insert = quorum.prepare("INSERT INTO ar.kv (k, v) VALUES (?, 'v')")
        insert.consistency_level = ConsistencyLevel.QUORUM
        for k in range(200):
            quorum.execute(insert, (k,))
        node3.start()
        all_up(cluster)

        for node in cluster.nodes:
            on = node.run_nodetool("setautorepairconfig", "enabled", "true", "ar")
            assert on.returncode == 0, on.stderr
        wrong = node1.run_nodetool("setautorepairconfig", "enabled", "true", "nosuch")
        assert wrong.returncode != 0 and "Keyspace [nosuch] does not exist." in wrong.stderr

        statuses = wait_repaired(cluster, [("ar", "kv"), ("ar2", "pri")])
        for s in statuses:
            assert table(s, "ar", "kv")["last_full_repair_ms"] > 0, s
            assert table(s, "ar", "off") is None, s
        spans = scheduled_repairs(cluster)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
        text = node1.run_nodetool("autorepairstatus").stdout
        assert re.search(r"\nKeyspace +Table +Ranges +Repaired +Last full repair +Next due *\n"
                         r"ar +kv +\d+ +\d+ +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", text), text

        streamed = 0
        for node in cluster.nodes:
            rows = node.session().execute(
                "SELECT type, status, table_names FROM system_views.repairs")
            scheduled = [r for r in rows if r.table_names == ["kv"]]
            assert scheduled and all(r.type == "incremental" for r in scheduled), scheduled
            url = f"http://{node.address}:{ADMIN_PORT}/v1/repairs"
            with urllib.request.urlopen(url, timeout=10) as r:
                streamed += sum(x["bytes_streamed"] for x in json.loads(r.read()))
        assert streamed > 0, "the replica that missed the writes got them from a scheduled repair"
        stats = node3.run_nodetool("tablestats", "ar.kv").stdout
        assert "\t\tBytes unrepaired: 0B\n" in stats or "Percent repaired: 100.0" in stats, stats

        remembered = table(status(node1), "ar", "kv")
        node1.stop()
        node1.start()
        all_up(cluster)
        after = table(status(node1), "ar", "kv")
        assert after["repaired_ranges"] == remembered["ranges"], (remembered, after)
        assert after["last_full_repair_ms"] >= remembered["last_full_repair_ms"]
