"""Parsers for the client's output: the cassandra-stress `Results:` block and YCSB's report lines.

Both return a dict with the same keys, latencies in milliseconds:
  throughput, mean_ms, p50_ms, p95_ms, p99_ms, p999_ms, max_ms, ops, errors, warmup_ops, rows (the stress
  client's `Total rows`, else row rate × elapsed; YCSB: its operations)
and, for `-rate fixed=`/`throttle=` runs of `helenus stress`, pacing_p50_ms, pacing_p99_ms, pacing_max_ms
(how late the client started operations after their due time: its own error).
A figure the output does not carry (YCSB prints no median or 99.9th percentile) is None.
"""
import re

_NUM = r"([-\d,\.]+|NaN)"

_RESULTS = {
    "throughput": rf"^Op rate\s*:\s*{_NUM} op/s",
    "row_rate": rf"^Row rate\s*:\s*{_NUM} row/s",
    "mean_ms": rf"^Latency mean\s*:\s*{_NUM} ms",
    "p50_ms": rf"^Latency median\s*:\s*{_NUM} ms",
    "p95_ms": rf"^Latency 95th percentile\s*:\s*{_NUM} ms",
    "p99_ms": rf"^Latency 99th percentile\s*:\s*{_NUM} ms",
    "p999_ms": rf"^Latency 99\.9th percentile\s*:\s*{_NUM} ms",
    "max_ms": rf"^Latency max\s*:\s*{_NUM} ms",
    "partitions": rf"^Total partitions\s*:\s*{_NUM}",
    "total_rows": rf"^Total rows\s*:\s*{_NUM}",
    "errors": rf"^Total errors\s*:\s*{_NUM}",
}


class ParseError(ValueError):
    pass


def _num(text):
    if text is None or text == "NaN":
        return None
    text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def parse_stress(text):
    """Figures of one `helenus stress write|read|mixed|user` run from its standard output."""
    if "\nResults:" not in "\n" + text:
        raise ParseError("no 'Results:' block in the stress output")
    block = text[text.index("Results:"):]
    out = {}
    for key, pattern in _RESULTS.items():
        m = re.search(pattern, block, re.M)
        out[key] = _num(m.group(1)) if m else None
    if out["throughput"] is None:
        raise ParseError("no 'Op rate' line in the Results block")
    # The last interval row before Results: `total, <ops>, op/s, pk/s, row/s, mean, …, <time s>, …`
    ops = elapsed = None
    for line in text[: text.index("Results:")].splitlines():
        if line.startswith("total,"):
            cols = [c.strip() for c in line.split(",")]
            if len(cols) > 11:
                ops, elapsed = _num(cols[1]), _num(cols[11])
    out["ops"] = int(ops) if ops is not None else None
    out["elapsed_s"] = elapsed
    out["errors"] = int(out["errors"] or 0)
    m = re.search(rf"^Pacing lateness\s*:\s*median {_NUM} ms, \.99 {_NUM} ms, max {_NUM} ms", block, re.M)
    out["pacing_p50_ms"], out["pacing_p99_ms"], out["pacing_max_ms"] = \
        (_num(m.group(1)), _num(m.group(2)), _num(m.group(3))) if m else (None, None, None)
    out["warmup_ops"] = sum(int(n) for n in re.findall(r"^Warming up \S+ with (\d+) iterations", text, re.M))
    # The rows the run wrote or read: `helenus stress` counts them (Total rows); else estimated.
    total_rows = out.pop("total_rows")
    if total_rows is not None:
        out["rows"] = int(total_rows)
    elif out["row_rate"] is not None and elapsed:
        out["rows"] = int(round(out["row_rate"] * elapsed))
    else:
        out["rows"] = out["ops"]
    return out


def parse_ycsb(text):
    """Figures of one `helenus stress ycsb load|run` from YCSB's `[SECTION], metric, value` lines.

    Over all operation types: throughput from [OVERALL]; mean weighted by operation counts;
    p95, p99 and max are the worst of the types (YCSB reports no combined histogram)."""
    sections = {}
    for line in text.splitlines():
        m = re.match(r"^\[([^\]]+)\],\s*([^,]+),\s*(.+)$", line.strip())
        if m:
            sections.setdefault(m.group(1), {})[m.group(2).strip()] = _num(m.group(3).strip())
    overall = sections.pop("OVERALL", None)
    if not overall or overall.get("Throughput(ops/sec)") is None:
        raise ParseError("no '[OVERALL], Throughput(ops/sec)' line in the YCSB output")
    ops_by_type = {k: v for k, v in sections.items() if v.get("Operations")}
    total_ops = sum(v["Operations"] for v in ops_by_type.values())
    errors = sum(v.get("Return=ERROR") or 0 for v in ops_by_type.values())

    def worst(key):
        vals = [v[key] / 1000.0 for v in ops_by_type.values() if v.get(key) is not None]
        return max(vals) if vals else None

    mean = None
    if total_ops:
        mean = sum(v["Operations"] * (v.get("AverageLatency(us)") or 0) for v in ops_by_type.values()) / total_ops / 1000.0
    runtime_ms = overall.get("RunTime(ms)")
    return {
        "throughput": overall["Throughput(ops/sec)"],
        "mean_ms": mean,
        "p50_ms": None,
        "p95_ms": worst("95thPercentileLatency(us)"),
        "p99_ms": worst("99thPercentileLatency(us)"),
        "p999_ms": None,
        "max_ms": worst("MaxLatency(us)"),
        "ops": int(total_ops),
        "errors": int(errors),
        "warmup_ops": 0,
        "pacing_p50_ms": None, "pacing_p99_ms": None, "pacing_max_ms": None,
        "rows": int(total_ops),
        "elapsed_s": runtime_ms / 1000.0 if runtime_ms is not None else None,
        "per_type": {k: {"ops": int(v["Operations"]), "mean_ms": (v.get("AverageLatency(us)") or 0) / 1000.0,
                         "p99_ms": (v.get("99thPercentileLatency(us)") or 0) / 1000.0}
                     for k, v in ops_by_type.items()},
    }
