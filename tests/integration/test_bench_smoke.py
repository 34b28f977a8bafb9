"""The benchmark harness (bench/run): its output parsers, the report of --cluster, and the --smoke
variant end to end against Helenus alone (the full comparison with Cassandra is not part of the test
suite; `HELENUS_BENCH_CLUSTER=1` adds `--cluster 3 --smoke` against a Helenus cluster)."""
import glob
import json
import os
import subprocess
import sys

import pytest

from helenus_node import BIN, Node, free_port

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchkit import charts, javaload, parse, plan, png, report, threads, timeline  # noqa: E402

STRESS = """Running WRITE with 4 threads for 2000 iteration
type                                               total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,   time,   stderr, errors,  gc: #,  max ms,  sum ms,  sdv ms,      mb
total,                                                  1500,    1500,    1500,    1500,     0.2,     0.2,     0.4,     0.5,     1.3,     1.8,    1.0,  0.00000,      0,      0,       0,       0,       0,       0
total,                                                  2000,   16477,   16477,   16477,     0.2,     0.2,     0.4,     0.5,     1.3,     1.8,    1.5,  0.00000,      0,      0,       0,       0,       0,       0


Results:
Op rate                   :   16,382 op/s  [WRITE: 16,382 op/s]
Partition rate            :   16,382 pk/s  [WRITE: 16,382 pk/s]
Row rate                  :   16,382 row/s [WRITE: 16,382 row/s]
Latency mean              :    0.2 ms [WRITE: 0.2 ms]
Latency median            :    0.2 ms [WRITE: 0.2 ms]
Latency 95th percentile   :    0.4 ms [WRITE: 0.4 ms]
Latency 99th percentile   :    0.5 ms [WRITE: 0.5 ms]
Latency 99.9th percentile :    1.3 ms [WRITE: 1.3 ms]
Latency max               :    1,201.8 ms [WRITE: 1,201.8 ms]
Total partitions          :      2,000 [WRITE: 2,000]
Total errors              :          3 [WRITE: 3]
"""

YCSB = """[OVERALL], RunTime(ms), 175
[OVERALL], Throughput(ops/sec), 11428.57142857143
[READ], Operations, 1000
[READ], AverageLatency(us), 350.0
[READ], MaxLatency(us), 3487
[READ], 95thPercentileLatency(us), 665
[READ], 99thPercentileLatency(us), 942
[READ], Return=OK, 1000
[READ-MODIFY-WRITE], Operations, 1000
[READ-MODIFY-WRITE], AverageLatency(us), 950.0
[READ-MODIFY-WRITE], MaxLatency(us), 9967
[READ-MODIFY-WRITE], 95thPercentileLatency(us), 2004
[READ-MODIFY-WRITE], 99thPercentileLatency(us), 4131
[READ-MODIFY-WRITE], Return=OK, 998
[READ-MODIFY-WRITE], Return=ERROR, 2
"""


def test_parse_stress_results_block():
    r = parse.parse_stress("Warming up WRITE with 500 iterations...\n" + STRESS)
    assert r["throughput"] == 16382
    assert (r["mean_ms"], r["p50_ms"], r["p95_ms"], r["p99_ms"], r["p999_ms"]) == (0.2, 0.2, 0.4, 0.5, 1.3)
    assert r["max_ms"] == 1201.8
    assert (r["ops"], r["errors"], r["warmup_ops"], r["elapsed_s"]) == (2000, 3, 500, 1.5)


def test_parse_stress_takes_the_rows_the_client_counted():
    assert parse.parse_stress(STRESS)["rows"] == round(16382 * 1.5)  # no count: rate × elapsed
    counted = STRESS.replace("Total errors", "Total rows                :      1,999 [WRITE: 1,999]\nTotal errors")
    assert parse.parse_stress(counted)["rows"] == 1999


def test_disk_runs_only_the_loads_each_with_its_flush():
    steps = plan.disk_only(plan.steps("smoke", lambda level: 100, "p.yaml"))
    assert [s.id for s in steps] == ["write", "flush:keyspace1", "ycsb_load", "flush:ycsb", "insanity_insert",
                                     "flush:stresscql"]
    assert [s.rows_from for s in steps if s.kind == "flush"] == ["write", "ycsb_load", "insanity_insert"]
    cluster = plan.disk_only(plan.cluster_steps("smoke", lambda level: 100, 3))
    assert [s.id for s in cluster] == ["write", "flush:keyspace1", "keyspace:ycsb", "ycsb_load", "flush:ycsb"]


def test_parse_stress_reads_the_pacing_lateness_of_fixed_rate_runs():
    line = "Pacing lateness           : median 0.012 ms, .99 0.085 ms, max 1.204 ms (39,871 ops whose worker waited)\n"
    r = parse.parse_stress(STRESS + line)
    assert (r["pacing_p50_ms"], r["pacing_p99_ms"], r["pacing_max_ms"]) == (0.012, 0.085, 1.204)
    assert parse.parse_stress(STRESS)["pacing_p99_ms"] is None


def test_targets_of_issue_11_ask_fixed_rate_p99_and_p999_below_cassandra():
    ids = ["write", "fixed_25", "fixed_50", "fixed_75"]

    def session(p99, p999):
        w = {"status": "ok", "throughput": 100, "p99_ms": p99, "p999_ms": p999}
        return {"startup_s": 1.0, "workloads": {i: dict(w) for i in ids}}
    sessions = {"helenus": [session(2.0, 8.0), session(4.0, 11.0)], "cassandra": [session(3.0, 10.0)]}
    results = report.aggregate(sessions, ids)
    assert results["helenus"]["workloads"]["fixed_25"]["spread"]["p99_ms"] == [2.0, 4.0]
    rat = report.ratios(results, ids)
    # p99: 3.0 (median of 2 and 4) equals Cassandra's, which is not below it; p99.9: 9.5 < 10
    got = {t["name"]: t["met"] for t in report.targets(results, rat) if t["issue"] == 11}
    assert got == {f"{p} at {lvl}% of Cassandra's write throughput (H/C)": met
                   for lvl in (25, 50, 75) for p, met in (("p99", False), ("p99.9", True))}


def test_parse_stress_without_results_is_an_error():
    with pytest.raises(parse.ParseError):
        parse.parse_stress("Connected to cluster\nsomething went wrong\n")


def test_parse_ycsb_combines_operation_types():
    r = parse.parse_ycsb(YCSB)
    assert r["throughput"] == pytest.approx(11428.57, rel=1e-4)
    assert r["ops"] == 2000 and r["errors"] == 2
    assert r["mean_ms"] == pytest.approx(0.65)
    assert (r["p95_ms"], r["p99_ms"], r["max_ms"]) == (2.004, 4.131, 9.967)
    assert r["p50_ms"] is None and r["p999_ms"] is None


def test_ratios_are_helenus_over_cassandra():
    def server(tp, cpu, p99, rss, disk, startup):
        return {"startup_s": startup, "peak_rss_bytes": rss, "workloads": {"write": {
            "throughput": tp, "cpu_s_per_1k_ops": cpu, "p99_ms": p99, "rss_bytes": rss, "disk_bytes_per_row": disk}}}
    results = {"helenus": server(30000, 0.1, 1.0, 100, 200, 0.1), "cassandra": server(10000, 0.4, 0.0, 400, 100, 10)}
    r = report.ratios(results, ["write"])["write"]
    assert r == {"throughput": 3.0, "cpu_per_op": 0.25, "p99": None, "p999": None, "rss": 0.25,
                 "disk_per_row": 2.0, "startup": 0.01}


TIMELINE = """type                                               total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,   time,   stderr, errors,  gc: #,  max ms,  sum ms,  sdv ms,      mb
READ,                                                    150,     150,     150,     150,     0.4,     0.3,     0.9,     1.2,     2.0,     2.5,    1.0,  0.00000,      0,      0,       0,       0,       0,       0
total,                                                   200,     200,     200,     200,     0.4,     0.3,     0.9,     1.2,     2.0,     2.5,    1.0,  0.00000,      0,      0,       0,       0,       0,       0
total,                                                   390,     190,     190,     190,     0.4,     0.3,     0.9,    41.7,    50.0,    52.1,    2.0,  0.01000,      3,      0,       0,       0,       0,       0
total,                                                   600,     210,     210,     210,     0.4,     0.3,     0.9,     1.3,     2.0,     2.5,    4.0,  0.01000,      0,      0,       0,       0,       0,       0
"""


def test_timeline_rows_per_second_fill_the_silent_seconds():
    rows = [timeline.interval_row(line) for line in TIMELINE.splitlines()]
    rows = [r for r in rows if r]
    assert rows == [(1.0, 200.0, 1.2, 0), (2.0, 190.0, 41.7, 3), (4.0, 210.0, 1.3, 0)]
    seconds = timeline.per_second(rows, 5)
    assert seconds == [[1, 200.0, 1.2, 0], [2, 190.0, 41.7, 3], [3, 0.0, None, 0], [4, 210.0, 1.3, 0],
                       [5, 0.0, None, 0]]
    o = timeline.outage({"kill_at_s": 1.5, "up_at_s": None, "seconds": seconds})
    assert o == {"outage_min_ops_s": 0.0, "outage_max_p99_ms": 41.7, "outage_errors": 3}


def test_cluster_steps_run_at_quorum_on_keyspaces_of_the_node_count():
    steps = plan.cluster_steps("smoke", lambda level: 14 * level, 3)
    ids = [s.id for s in steps if s.is_workload]
    assert ids == ["cold_write", "write", "read", "mixed", "fixed_25", "fixed_50", "fixed_75", "ycsb_load",
                   "ycsb_a", "ycsb_f"]
    for s in steps:
        words = s.args() if callable(s.args) else s.args
        for w in (words if s.kind == "warmup" else [words] if s.kind == "stress" else []):
            assert "cl=QUORUM" in w and "replication(factor=3)" in w, w
        if s.kind == "ycsb":
            assert "cassandra.readconsistencylevel=QUORUM" in words, words
    assert "fixed=700/s" in next(s for s in steps if s.id == "fixed_50").args()
    assert "fixed=1050/s" in next(s for s in steps if s.id == "fixed_75").args()
    kinds = [s.kind for s in steps]
    assert kinds.index("keyspace") == kinds.index("ycsb") - 1  # the YCSB keyspace exists before the load


def cluster_doc():
    """A --cluster 3 report as bench/run builds it, from made-up sessions."""
    ids = ["write", "fixed_50"]

    def session(tp, cpu, p99):
        w = {"status": "ok", "throughput": tp, "cpu_s_per_1k_ops": cpu, "p99_ms": p99, "rss_bytes": 300}
        return {"startup_s": 2.0, "peak_rss_bytes": 300, "version": "5.0.4", "workloads": {i: w for i in ids}}
    sessions = {"helenus": [session(9000, 0.1, 1.0)], "cassandra": [session(3000, 0.6, 6.0)]}
    results = report.aggregate(sessions, ids)
    rat = report.ratios(results, ids)
    seconds = [[s, 500.0 if s != 3 else 0.0, 1.0, 0] for s in range(1, 7)]
    run = {"status": "ok", "command": "mixed …", "rate": 500, "duration_s": 6, "victim": "127.0.0.3",
           "kill_at_s": 2.0, "restart_at_s": 4.0, "up_at_s": 4.5, "seconds": seconds, "throughput": 480.0,
           "p99_ms": 1.0, "errors": 0}
    run.update(timeline.outage(run))
    return {"schema": 1, "date": "2026-01-01", "git": {"short": "abc"}, "mode": "smoke", "repetitions": 1,
            "command": "bench/run --cluster 3 --smoke",
            "machine": {"cores": 2, "memory_bytes": 1, "kernel": "x"},
            "servers": {s: {"label": s, "address": "a", "setup": "s"} for s in sessions},
            "workloads": [{"id": i, "title": i, "command": i} for i in ids], "results": results, "ratios": rat,
            "targets": report.targets(results, rat, 3), "cluster": 3,
            "timeline": {"helenus": run, "cassandra": dict(run)}}


def test_cluster_report_has_the_single_node_ratio_keys_and_a_timeline(tmp_path):
    doc = cluster_doc()
    report.validate(json.loads(json.dumps(doc)))
    assert doc["ratios"]["write"]["throughput"] == 3.0 and set(doc["ratios"]["write"]) == set(report.RATIO_KEYS)
    names = [t["name"] for t in doc["targets"]]
    assert "throughput ycsb_a (H/C)" in names and not any("RSS" in n or "start-up" in n for n in names)
    text = report.markdown(doc, [])
    assert "3-node clusters" in text and "## Targets (issue 13)" in text
    assert "## Timeline: one node killed and restarted" in text and "| 3 | 0 | 1.00 | 0 |" in text
    specs = charts.timeline_specs(doc, "x")
    assert [s["file"] for s in specs] == ["x-timeline-throughput.png", "x-timeline-p99.png"]
    assert {m["label"] for m in specs[0]["markers"]} >= {"helenus kill", "cassandra up"}
    assert png.chart(specs[0])[:8] == b"\x89PNG\r\n\x1a\n"
    del doc["timeline"]
    with pytest.raises(report.ShapeError):
        report.validate(doc)


@pytest.mark.skipif(not os.environ.get("HELENUS_BENCH_CLUSTER"), reason="set HELENUS_BENCH_CLUSTER=1 (~2 min)")
def test_bench_cluster_smoke(tmp_path):
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"no helenus binary at {BIN}")
    out = tmp_path / "results"
    cmd = [sys.executable, os.path.join(REPO, "bench", "run"), "--cluster", "3", "--smoke", "--servers", "helenus",
           "--no-build", "--helenus-bin", os.path.abspath(BIN), "--charts", "builtin", "--out", str(out),
           "--helenus-addr", os.environ.get("HELENUS_BENCH_CLUSTER_ADDR", "127.0.0.60"),
           "--workdir", str(tmp_path / "work")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"bench/run --cluster 3 --smoke failed ({r.returncode}):\n{r.stdout}\n{r.stderr[-4000:]}"
    [json_path] = glob.glob(str(out / "*-cluster3.json"))
    doc = json.load(open(json_path))
    report.validate(doc)
    assert doc["cluster"] == 3 and list(doc["results"]) == ["helenus"]
    for wid in ("write", "read", "mixed", "fixed_25", "fixed_50", "fixed_75", "ycsb_a", "ycsb_f"):
        w = doc["results"]["helenus"]["workloads"][wid]
        assert w["status"] == "ok" and w["cpu_s_per_1k_ops"] > 0, (wid, w)
    t = doc["timeline"]["helenus"]
    assert t["status"] == "ok" and t["kill_at_s"] < t["restart_at_s"] <= t["up_at_s"], t
    assert any(name.endswith("-timeline-throughput.png") for name in doc["charts"]["files"])


def test_bench_smoke(tmp_path):
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"no helenus binary at {BIN}")
    out = tmp_path / "results"
    cmd = [sys.executable, os.path.join(REPO, "bench", "run"), "--smoke", "--servers", "helenus", "--no-build",
           "--helenus-bin", os.path.abspath(BIN), "--charts", "builtin", "--out", str(out),
           "--helenus-addr", "127.0.0.1", "--port", str(free_port()), "--workdir", str(tmp_path / "work")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"bench/run --smoke failed ({r.returncode}):\n{r.stdout}\n{r.stderr[-4000:]}"
    [json_path] = glob.glob(str(out / "*.json"))
    [md_path] = glob.glob(str(out / "*.md"))
    doc = json.load(open(json_path))
    report.validate(doc)
    assert doc["mode"] == "smoke" and list(doc["results"]) == ["helenus"]
    assert set(doc["ratios"]) >= {"write", "read", "mixed", "fixed_25", "fixed_50", "fixed_75", "ycsb_a", "ycsb_f"}
    for wid in ("write", "read", "mixed", "fixed_25", "fixed_50", "fixed_75", "ycsb_load", "ycsb_a", "ycsb_f"):
        w = doc["results"]["helenus"]["workloads"][wid]
        assert w["status"] == "ok", (wid, w)
        assert w["throughput"] > 0 and w["cpu_s_per_1k_ops"] is not None and w["rss_bytes"] > 0
        # The client's own CPU and the machine's busy cores, to tell a client-bound run.
        assert w["client_cpu_s_per_1k_ops"] > 0 and 0 < w["busy_cores"] <= doc["machine"]["cores"] + 0.5, w
    assert doc["results"]["helenus"]["startup_s"] > 0
    disk = doc["results"]["helenus"]["disk"]["keyspace1"]
    # Counted after a major compaction, over the rows the client counted, by component.
    assert disk["bytes_per_row"] > 0 and disk["rows"] == 2000 and "nodetool compact" in disk["method"], disk
    assert disk["components"]["Data"] > 0 and disk["components"]["Index"] > 0, disk
    assert sum(disk["components"].values()) == disk["bytes"], disk
    assert doc["charts"]["files"]
    for name in doc["charts"]["files"]:
        with open(out / name, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    for wid in ("fixed_25", "fixed_50", "fixed_75"):
        w = doc["results"]["helenus"]["workloads"][wid]
        assert w["p999_ms"] is not None and w["pacing_p99_ms"] is not None, (wid, w)
    [warm] = doc["results"]["helenus"]["warmup"]
    assert warm["status"] == "ok" and 2 <= warm["count"] <= warm["max_windows"], warm
    assert all(x["cpu_s_per_1k_ops"] > 0 for x in warm["windows"]), warm
    text = open(md_path).read()
    assert "## Figures" in text and "write" in text
    assert "## Warm-up" in text and "## Fixed-rate write latency (issue 11.10)" in text


def test_paged_read_bench_smoke(tmp_path):
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"no helenus binary at {BIN}")
    out = tmp_path / "results"
    cmd = [sys.executable, os.path.join(REPO, "bench", "paged"), "--smoke", "--no-build",
           "--helenus-bin", os.path.abspath(BIN), "--helenus-addr", "127.0.0.1", "--port", str(free_port()),
           "--rows", "500", "--page-sizes", "7,100,0", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"bench/paged --smoke failed ({r.returncode}):\n{r.stdout}\n{r.stderr[-4000:]}"
    [json_path] = glob.glob(str(out / "*-paged.json"))
    doc = json.load(open(json_path))
    assert doc["rows"] == 500 and list(doc["results"]) == ["helenus"]
    reads = doc["results"]["helenus"]
    measured = {(r["phase"], r["order"], r["page_size"]) for r in reads}
    assert measured == {(p, o, s) for p in ("memtable", "sstable") for o in ("asc", "desc") for s in (7, 100, None)}
    assert all(r["reps"] == 1 and r["wall_s"] > 0 for r in reads)
    assert "| sstable | desc | 7 |" in open(json_path.replace(".json", ".md")).read()


def test_every_client_runs_the_compared_workloads_on_the_same_data():
    steps = plan.steps("quick", lambda level: 100 * level, "p.yaml", ("helenus", "java"))
    ids = [s.id for s in steps]
    assert ids[ids.index("write"):ids.index("java_fixed_75") + 1] == [
        "write", "java_write", "flush:keyspace1", "read", "java_read", "mixed", "java_mixed",
        "fixed_25", "java_fixed_25", "fixed_50", "java_fixed_50", "fixed_75", "java_fixed_75"]
    java = {s.id: s for s in steps if s.client == "java"}
    assert set(java) == {f"java_{w}" for w in plan.CLIENT_WORKLOADS}
    assert java["java_fixed_50"].base_id == "fixed_50" and java["java_fixed_50"].group == "fixed"
    assert java["java_fixed_50"].args() == steps[ids.index("fixed_50")].args()  # the same words and rate
    assert all(s.client == "helenus" for s in steps if s.group in ("sweep", "ycsb", "insanity", "cold"))
    only_java = plan.steps("quick", lambda level: 100, "p.yaml", ("java",))
    assert "write" not in [s.id for s in only_java]
    assert next(s for s in only_java if s.id == "flush:keyspace1").rows_from == "java_write"
    quorum = plan.cluster_steps("smoke", lambda level: 100, 3, ("helenus", "java"))
    assert next(s for s in quorum if s.id == "java_read").args[:2] == ["read", "cl=QUORUM"]


def test_cpu_by_client_gives_microseconds_per_op_and_the_issue_32_targets():
    steps = plan.steps("smoke", lambda level: 100, "p.yaml", ("helenus", "java"))
    wsteps = [s for s in steps if s.is_workload]
    ids = [s.id for s in wsteps]

    def server(cpu):
        return {"startup_s": 1.0, "workloads": {i: {"cpu_s_per_1k_ops": cpu(i)} for i in ids}}
    # Helenus: 10 µs/op with helenus stress, 15 with Java, 25 at the fixed rates; Cassandra 100 throughout.
    results = {"helenus": server(lambda i: 0.025 if "fixed" in i else 0.015 if i.startswith("java_") else 0.010),
               "cassandra": server(lambda i: 0.1)}
    by_client = report.cpu_by_client(results, wsteps)
    assert by_client["java"]["read"]["helenus"] == pytest.approx(15.0)
    assert by_client["helenus"]["write"]["ratio"] == pytest.approx(0.1)
    targets = {t["name"]: t for t in report.client_targets(results, report.ratios(results, ids))}
    assert targets["server CPU per op write, java client (H/C)"]["met"] is True
    assert targets["server CPU per op at 25% of Cassandra's write rate, java client (H/C)"]["met"] is False
    twice = targets["Helenus CPU per op at 50% ÷ at saturation (write), helenus client"]
    assert twice["measured"] == pytest.approx(2.5) and twice["met"] is False and twice["issue"] == 32


def test_threads_are_grouped_by_what_they_pay_for():
    groups = {name: threads.group_of(name) for name in (
        "helenus-worker", "tokio-rt-worker", "helenus-blocking", "commitlog", "flush", "compactor", "Native-Transpor",
        "MutationStage-1", "ReadStage-2", "Messaging-EventL", "COMMIT-LOG-WRIT", "CompactionExec", "GC Thread#0",
        "ScheduledTasks:", "something-else")}
    assert groups == {
        "helenus-worker": "requests", "tokio-rt-worker": "requests", "helenus-blocking": "background", "commitlog": "commit log",
        "flush": "background", "compactor": "background", "Native-Transpor": "coordinator",
        "MutationStage-1": "replica", "ReadStage-2": "replica", "Messaging-EventL": "internode",
        "COMMIT-LOG-WRIT": "commit log", "CompactionExec": "background", "GC Thread#0": "jvm",
        "ScheduledTasks:": "idle/timers", "something-else": "other"}
    # This very process: its main thread's CPU shows between two snapshots.
    me = os.getpid()
    before = threads.snapshot([me])
    sum(i * i for i in range(300_000))
    after = threads.snapshot([me])
    assert sum(v[0] + v[1] for v in threads.delta(before, after).values()) >= 0
    assert {tid[0] for tid in after} == {me}


def test_javaload_writes_the_rows_helenus_stress_reads(tmp_path):
    """bench/javaload on the Java driver writes cassandra-stress's keys and values: `helenus stress read`
    validates every row it wrote, and it reads back the rows `helenus stress` wrote."""
    if javaload.missing_tools() or not os.access(BIN, os.X_OK):
        pytest.skip("needs java, javac, mvn and a helenus binary")
    try:
        java = javaload.command(lambda msg: None)
    except javaload.JavaLoadError as e:
        pytest.skip(f"the Java driver could not be resolved: {e}")
    node = Node().start()
    try:
        where = ["-node", node.addr, "-port", f"native={node.port}"]

        def run(argv):
            r = subprocess.run(argv + where, capture_output=True, text=True, timeout=240)
            assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
            return dict(parse.parse_stress(r.stdout), stdout=r.stdout)
        wrote = run(java + ["write", "n=300", "no-warmup", "-rate", "threads=4", "inflight=2"])
        assert (wrote["ops"], wrote["errors"], wrote["rows"]) == (300, 0, 300)
        checked = run([BIN, "stress", "read", "n=300", "no-warmup", "-rate", "threads=4"])
        assert checked["errors"] == 0 and checked["rows"] == 300
        run([BIN, "stress", "write", "n=300", "no-warmup", "-rate", "threads=4", "-schema", "keyspace=other"])
        read = run(java + ["read", "n=300", "no-warmup", "-rate", "threads=4", "-schema", "keyspace=other"])
        assert read["errors"] == 0 and read["rows"] == 300
        paced = run(java + ["write", "duration=3s", "no-warmup", "-rate", "threads=2", "fixed=50/s"])
        # 150 operations due in 3 s; latency from their due times, and how late the threads woke for them.
        assert 50 <= paced["ops"] <= 160 and paced["errors"] == 0, paced["stdout"][-2000:]
        assert "Latency measured from     : intended start" in paced["stdout"]
        assert "Pacing lateness           : median " in paced["stdout"]
    finally:
        node.stop()
        node.cleanup()
