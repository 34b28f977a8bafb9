"""The benchmark harness (bench/run): its output parsers, and the --smoke variant end to end
against Helenus alone (the full comparison with Cassandra is not part of the test suite)."""
import glob
import json
import os
import subprocess
import sys

import pytest

from helenus_node import BIN, free_port

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchkit import parse, report  # noqa: E402

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
    assert r == {"throughput": 3.0, "cpu_per_op": 0.25, "p99": None, "rss": 0.25, "disk_per_row": 2.0,
                 "startup": 0.01}


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
    assert set(doc["ratios"]) >= {"write", "read", "mixed", "fixed", "ycsb_a", "ycsb_f"}
    for wid in ("write", "read", "mixed", "fixed", "ycsb_load", "ycsb_a", "ycsb_f"):
        w = doc["results"]["helenus"]["workloads"][wid]
        assert w["status"] == "ok", (wid, w)
        assert w["throughput"] > 0 and w["cpu_s_per_1k_ops"] is not None and w["rss_bytes"] > 0
    assert doc["results"]["helenus"]["startup_s"] > 0
    assert doc["results"]["helenus"]["disk"]["keyspace1"]["bytes_per_row"] > 0
    assert doc["charts"]["files"]
    for name in doc["charts"]["files"]:
        with open(out / name, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    text = open(md_path).read()
    assert "## Figures" in text and "write" in text


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
