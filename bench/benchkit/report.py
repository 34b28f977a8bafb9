"""Medians over repetitions, Helenus/Cassandra ratios, the targets of issue 5, JSON validation and
the Markdown report."""
import statistics

METRICS = ("throughput", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "ops", "errors",
           "cpu_s_per_1k_ops", "rss_bytes", "disk_bytes_per_row", "other_cores")
RATIO_KEYS = ("throughput", "cpu_per_op", "p99", "rss", "disk_per_row", "startup")
RATIO_SOURCE = {"throughput": "throughput", "cpu_per_op": "cpu_s_per_1k_ops", "p99": "p99_ms",
                "rss": "rss_bytes", "disk_per_row": "disk_bytes_per_row", "startup": "startup_s"}


def median(values):
    vals = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def aggregate(sessions, workload_ids):
    """Per server: medians over its sessions of every figure of every workload."""
    out = {}
    for server, runs in sessions.items():
        wl = {}
        for wid in workload_ids:
            entries = [r["workloads"].get(wid) for r in runs]
            entries = [e for e in entries if e]
            ok = [e for e in entries if e.get("status") == "ok"]
            row = {"status": "ok" if ok else (entries[0]["status"] if entries else "not run"),
                   "reps": len(ok)}
            if not ok:
                notes = sorted({e.get("error", "") for e in entries if e.get("error")})
                if notes:
                    row["note"] = "; ".join(notes)[:500]
            for key in METRICS:
                row[key] = median(e.get(key) for e in ok)
            for key in ("command", "keyspace"):
                if ok and key in ok[0]:
                    row[key] = ok[0][key]
            wl[wid] = row
        out[server] = {
            "startup_s": median(r.get("startup_s") for r in runs),
            "peak_rss_bytes": median(r.get("peak_rss_bytes") for r in runs),
            "version": next((r.get("version") for r in runs if r.get("version")), None),
            "disk": _disk_medians(runs),
            "workloads": wl,
        }
    return out


def _disk_medians(runs):
    keyspaces = sorted({ks for r in runs for ks in r.get("disk", {})})
    out = {}
    for ks in keyspaces:
        entries = [r["disk"][ks] for r in runs if ks in r.get("disk", {})]
        out[ks] = {"bytes_per_row": median(e.get("bytes_per_row") for e in entries),
                   "bytes": median(e.get("bytes") for e in entries),
                   "rows": median(e.get("rows") for e in entries),
                   "method": entries[0].get("method") if entries else None}
    return out


def _ratio(a, b):
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or b == 0:
        return None
    return a / b


def ratios(results, workload_ids, num="helenus", den="cassandra"):
    """{workload: {throughput, cpu_per_op, p99, rss, disk_per_row, startup}}, each num ÷ den (None if unknown)."""
    out = {}
    h, c = results.get(num), results.get(den)
    for wid in workload_ids:
        r = {}
        for key in RATIO_KEYS:
            src = RATIO_SOURCE[key]
            if h is None or c is None:
                r[key] = None
            elif key == "startup":
                r[key] = _ratio(h.get("startup_s"), c.get("startup_s"))
            else:
                r[key] = _ratio(h["workloads"].get(wid, {}).get(src), c["workloads"].get(wid, {}).get(src))
        out[wid] = r
    return out


CLUSTER_TARGET_WORKLOADS = ("write", "read", "mixed", "ycsb_a", "ycsb_f")


def targets(results, rat, cluster=0):
    """The targets, each with the measured value and whether it is met: issue 5's on one node;
    with `cluster`, issue 13's (throughput and CPU per op of every compared workload, fixed-rate p99)."""
    out = []

    def add(name, measured, target, better):
        met = None if measured is None else (measured >= target if better == "higher" else measured <= target)
        gap = None
        if measured not in (None, 0) and met is False:
            gap = target / measured if better == "higher" else measured / target
        out.append({"name": name, "measured": measured, "target": target, "better": better, "met": met,
                    "factor_short": gap})

    compared = CLUSTER_TARGET_WORKLOADS if cluster else ("write", "read", "mixed")
    for w in compared:
        add(f"throughput {w} (H/C)", rat.get(w, {}).get("throughput"), 3.0, "higher")
    for w in compared:
        add(f"server CPU per op {w} (H/C)", rat.get(w, {}).get("cpu_per_op"), 1 / 3, "lower")
    add("p99 at the same fixed rate (H/C)", rat.get("fixed", {}).get("p99"), 1 / 3, "lower")
    if cluster:
        return out
    h, c = results.get("helenus"), results.get("cassandra")
    add("peak RSS over the session (H/C)", _ratio(h and h.get("peak_rss_bytes"), c and c.get("peak_rss_bytes")),
        0.25, "lower")
    add("Helenus start-up to first CQL query (s)", h and h.get("startup_s"), 1.0, "lower")
    return out


class ShapeError(ValueError):
    pass


def validate(doc):
    """Checks the report's JSON shape (what other tools may rely on); raises ShapeError."""
    def need(cond, what):
        if not cond:
            raise ShapeError(what)
    need(isinstance(doc, dict), "report is not an object")
    for key in ("schema", "date", "git", "mode", "repetitions", "machine", "servers", "workloads", "results",
                "ratios", "targets"):
        need(key in doc, f"missing top-level key {key!r}")
    need(isinstance(doc["ratios"], dict) and doc["ratios"], "ratios must be a non-empty object")
    ids = [w["id"] for w in doc["workloads"]]
    need(set(doc["ratios"]) == set(ids), "ratios must have one entry per workload")
    for wid, r in doc["ratios"].items():
        need(isinstance(r, dict) and set(r) == set(RATIO_KEYS), f"ratios[{wid!r}] must have keys {RATIO_KEYS}")
        for k, v in r.items():
            need(v is None or (isinstance(v, (int, float)) and v >= 0), f"ratios[{wid!r}][{k!r}] = {v!r}")
    for key in ("cores", "memory_bytes", "kernel"):
        need(key in doc["machine"], f"machine.{key} missing")
    if "cluster" in doc:
        need(isinstance(doc["cluster"], int) and doc["cluster"] >= 2, "cluster must be a node count (>= 2)")
        _validate_timeline(doc, need)
    for server, res in doc["results"].items():
        need(server in doc["servers"], f"results for unknown server {server!r}")
        need(set(res["workloads"]) == set(ids), f"results[{server!r}] must cover every workload")
        for wid, w in res["workloads"].items():
            need(w["status"] in ("ok", "failed", "skipped", "not run"), f"results[{server}][{wid}].status")
            for m in METRICS:
                need(m in w, f"results[{server}][{wid}] missing {m}")
    return True


TIMELINE_KEYS = ("status", "command", "rate", "duration_s", "victim", "kill_at_s", "restart_at_s", "up_at_s",
                 "seconds")


def _validate_timeline(doc, need):
    need(isinstance(doc.get("timeline"), dict), "a cluster report needs a timeline object")
    for server, t in doc["timeline"].items():
        need(server in doc["servers"], f"timeline for unknown server {server!r}")
        for key in TIMELINE_KEYS:
            need(key in t, f"timeline[{server!r}] missing {key}")
        need(t["status"] in ("ok", "failed"), f"timeline[{server!r}].status")
        for row in t["seconds"]:
            need(isinstance(row, list) and len(row) == 4, f"timeline[{server!r}].seconds rows are "
                                                          "[second, op/s, p99 ms, errors]")


# --- Markdown -----------------------------------------------------------------------------------

def fmt(v, digits=2):
    if v is None:
        return "–"
    if isinstance(v, float) and abs(v) >= 1000:
        return f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:.{digits}f}"


def fmt_ratio(v):
    return "–" if v is None else f"{v:.3g}"


def mib(v):
    return "–" if v is None else f"{v / 2**20:,.0f} MiB"


def _not_ok_row(cells, status, why, columns):
    """A table row of a run that did not succeed: its first cells, then the status and why, then blanks."""
    head = "".join(f"| {c} " for c in cells)
    return f"{head}| {status}: {(why or '')[:200]} |" + " |" * (columns - len(cells) - 1)


def markdown(doc, charts):
    m, g = doc["machine"], doc["git"]
    servers = list(doc["results"])
    what = "Helenus vs Apache Cassandra" + (f", {doc['cluster']}-node clusters" if doc.get("cluster") else "")
    lines = [f"# {what} — {doc['date']} ({g['short']}{', dirty tree' if g.get('dirty') else ''})",
             "",
             f"Mode **{doc['mode']}**, {doc['repetitions']} repetition(s) per server (figures are medians). "
             f"Command: `{doc['command']}`",
             "",
             f"Machine: {m.get('cores')} cores ({m.get('cpu_model', '?')}), "
             f"{(m.get('memory_bytes') or 0) / 2**30:.1f} GiB memory, Linux {m.get('kernel')} "
             f"({m.get('os', '?')}); load average {m.get('loadavg_start', 0):.2f} at the start, "
             f"{m.get('loadavg_end', 0):.2f} at the end. Client and server share the machine.",
             ""]
    for s in servers:
        info = doc["servers"][s]
        lines.append(f"- **{info['label']}** {info.get('version') or ''} on {info['address']}: {info['setup']}")
    for s in servers:
        loads = ", ".join(f"{r.get('loadavg_before', 0):.2f}→{r.get('loadavg_after', 0):.2f}"
                          for r in doc.get("runs", {}).get(s, []))
        lines.append(f"- load average before→after each {s} session: {loads}")
    lines += ["", f"Fixed-rate run: {doc.get('fixed_rate')} op/s ({doc.get('fixed_rate_basis')}).", ""]
    if g.get("dirty"):
        lines += [f"Note: the working tree had uncommitted changes ({g.get('dirty_files', '?')} files) on top of "
                  f"{g['short']} when this ran; a Helenus binary built from it includes them.", ""]

    if len(servers) == 2:
        lines += ["## Helenus ÷ Cassandra", "",
                  "| workload | throughput | CPU/op | p99 | RSS | disk/row | start-up |", "|---|---|---|---|---|---|---|"]
        for wid, r in doc["ratios"].items():
            lines.append(f"| {wid} | " + " | ".join(fmt_ratio(r[k]) for k in RATIO_KEYS) + " |")
        lines += ["", f"## Targets (issue {13 if doc.get('cluster') else 5})", "", "| target | measured | goal | met |", "|---|---|---|---|"]
        for t in doc["targets"]:
            goal = ("≥ " if t["better"] == "higher" else "≤ ") + fmt(t["target"])
            met = {True: "yes", False: f"**no** ({fmt(t['factor_short'])}× short)", None: "n/a"}[t["met"]]
            lines.append(f"| {t['name']} | {fmt_ratio(t['measured'])} | {goal} | {met} |")
        lines.append("")

    lines += ["## Figures", "",
              "Latencies in ms (client side, from the stress Results block or YCSB lines); CPU is the server "
              "process's user+sys seconds per 1,000 operations (warm-up operations included); RSS is the "
              "server's VmHWM after the workload.", ""]
    head = ("| workload | server | op/s | mean | p50 | p95 | p99 | p99.9 | max | CPU s/1k ops | RSS | disk B/row "
            "| errors | others |")
    lines += [head, "|" + "---|" * 14]
    for w in doc["workloads"]:
        for s in servers:
            r = doc["results"][s]["workloads"][w["id"]]
            if r["status"] != "ok":
                lines.append(_not_ok_row([w["id"], s], r["status"], r.get("note"), 14))
                continue
            lines.append(f"| {w['id']} | {s} | {fmt(r['throughput'], 0)} | {fmt(r['mean_ms'])} | {fmt(r['p50_ms'])} | "
                         f"{fmt(r['p95_ms'])} | {fmt(r['p99_ms'])} | {fmt(r['p999_ms'])} | {fmt(r['max_ms'])} | "
                         f"{fmt(r['cpu_s_per_1k_ops'], 3)} | {mib(r['rss_bytes'])} | "
                         f"{fmt(r['disk_bytes_per_row'], 1)} | {fmt(r['errors'], 0)} | {fmt(r['other_cores'])} |")
    lines += ["", "| server | start-up to first CQL query | peak RSS |", "|---|---|---|"]
    for s in servers:
        r = doc["results"][s]
        lines.append(f"| {s} | {fmt(r['startup_s'], 3)} s | {mib(r['peak_rss_bytes'])} |")
    lines += ["", "On-disk bytes per row after flush and compaction settle:", "",
              "| server | keyspace | bytes | rows | bytes/row | how |", "|---|---|---|---|---|---|"]
    for s in servers:
        for ks, d in doc["results"][s]["disk"].items():
            lines.append(f"| {s} | {ks} | {fmt(d['bytes'], 0)} | {fmt(d['rows'], 0)} | {fmt(d['bytes_per_row'], 1)} | "
                         f"{d.get('method') or ''} |")
    sweep = [w for w in doc["workloads"] if w.get("group") == "sweep"]
    if sweep:
        lines += ["", "## Write thread sweep", "", "| threads | " + " | ".join(f"{s} op/s | {s} p99" for s in servers) + " |",
                  "|---|" + "---|---|" * len(servers)]
        for w in sweep:
            cells = []
            for s in servers:
                r = doc["results"][s]["workloads"][w["id"]]
                cells += [fmt(r["throughput"], 0), fmt(r["p99_ms"])]
            lines.append(f"| {w['threads']} | " + " | ".join(cells) + " |")
    lines += timeline_markdown(doc)
    if charts:
        lines += ["", "## Charts", ""] + [f"![{c['title']}]({c['file']})" for c in charts]
    lines += ["", "## Workloads", "", "| id | what | client command (after `helenus stress`) |", "|---|---|---|"]
    for w in doc["workloads"]:
        lines.append(f"| {w['id']} | {w['title']} | `{w['command']}` |")
    lines += ["", "## Method notes", ""] + [f"- {n}" for n in doc.get("notes", [])]
    return "\n".join(lines) + "\n"


def timeline_markdown(doc):
    """The kill-and-restart runs: a summary per server, then op/s, p99 and errors per second."""
    runs = doc.get("timeline") or {}
    if not runs:
        return []
    lines = ["", "## Timeline: one node killed and restarted", "",
             "Client times in seconds; `up` is when the restarted node answered CQL again; the outage columns "
             "cover the seconds from the kill to 5 s after `up`.", "",
             "| server | status | node killed | rate | killed at | restarted at | up at | op/s | p99 | errors "
             "| outage min op/s | outage max p99 | outage errors |", "|" + "---|" * 13]
    for s, t in runs.items():
        if t["status"] != "ok":
            lines.append(_not_ok_row([s], t["status"], t.get("error"), 13))
            continue
        lines.append(f"| {s} | ok | {t['victim']} | {t['rate']} | {fmt(t['kill_at_s'], 1)} | "
                     f"{fmt(t['restart_at_s'], 1)} | {fmt(t['up_at_s'], 1)} | {fmt(t['throughput'], 0)} | "
                     f"{fmt(t['p99_ms'])} | {fmt(t['errors'], 0)} | {fmt(t.get('outage_min_ops_s'), 0)} | "
                     f"{fmt(t.get('outage_max_p99_ms'))} | {fmt(t.get('outage_errors'), 0)} |")
        if t.get("restart_error"):
            lines.append(f"\n{s}: the restart failed: {t['restart_error'][:300]}\n")
    servers = list(runs)
    per = {s: {row[0]: row for row in runs[s]["seconds"]} for s in servers}
    seconds = sorted({sec for s in servers for sec in per[s]})
    lines += ["", "| second | " + " | ".join(f"{s} op/s | {s} p99 | {s} errors" for s in servers) + " |",
              "|---|" + "---|---|---|" * len(servers)]
    for sec in seconds:
        cells = []
        for s in servers:
            row = per[s].get(sec)
            cells += [fmt(row[1], 0), fmt(row[2]), fmt(row[3], 0)] if row else ["", "", ""]
        lines.append(f"| {sec} | " + " | ".join(cells) + " |")
    return lines
