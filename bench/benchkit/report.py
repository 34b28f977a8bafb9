"""Medians over repetitions (and their spread), Helenus/Cassandra ratios, the targets of issues 5, 11.10
and 13, JSON validation and the Markdown report."""
import statistics

from . import plan, threads

METRICS = ("throughput", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "ops", "errors",
           "cpu_s_per_1k_ops", "client_cpu_s_per_1k_ops", "busy_cores", "rss_bytes", "disk_bytes_per_row", "other_cores",
           "pacing_p50_ms", "pacing_p99_ms", "pacing_max_ms")
# The figures whose spread over repetitions (min, max) the report gives beside the median.
SPREAD = ("throughput", "p50_ms", "p99_ms", "p999_ms", "cpu_s_per_1k_ops")
RATIO_KEYS = ("throughput", "cpu_per_op", "p99", "p999", "rss", "disk_per_row", "startup")
RATIO_SOURCE = {"throughput": "throughput", "cpu_per_op": "cpu_s_per_1k_ops", "p99": "p99_ms", "p999": "p999_ms",
                "rss": "rss_bytes", "disk_per_row": "disk_bytes_per_row", "startup": "startup_s"}
# Workload groups outside the summary ratios: the cold load before the warm-up.
COLD_GROUPS = ("cold",)
FIXED_GROUP = "fixed"


def median(values):
    vals = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def spread(values):
    """[min, max] of the numbers among `values`, or None."""
    vals = [v for v in values if isinstance(v, (int, float))]
    return [min(vals), max(vals)] if vals else None


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
            row["spread"] = {key: spread(e.get(key) for e in ok) for key in SPREAD}
            groups = sorted({g for e in ok for g in e.get("cpu_split_us_per_op") or {}})
            row["cpu_split_us_per_op"] = {g: median((e.get("cpu_split_us_per_op") or {}).get(g) for e in ok)
                                          for g in groups}
            for key in ("command", "keyspace"):
                if ok and key in ok[0]:
                    row[key] = ok[0][key]
            wl[wid] = row
        out[server] = {
            "startup_s": median(r.get("startup_s") for r in runs),
            "peak_rss_bytes": median(r.get("peak_rss_bytes") for r in runs),
            "version": next((r.get("version") for r in runs if r.get("version")), None),
            "disk": _disk_medians(runs),
            "warmup": [dict(r["warmup"], rep=r.get("rep")) for r in runs if r.get("warmup")],
            "workloads": wl,
        }
    return out


def _disk_medians(runs):
    keyspaces = sorted({ks for r in runs for ks in r.get("disk", {})})
    out = {}
    for ks in keyspaces:
        entries = [r["disk"][ks] for r in runs if ks in r.get("disk", {})]
        names = sorted({c for e in entries for c in e.get("components") or {}})
        out[ks] = {"bytes_per_row": median(e.get("bytes_per_row") for e in entries),
                   "bytes": median(e.get("bytes") for e in entries),
                   "rows": median(e.get("rows") for e in entries),
                   "components": {c: median((e.get("components") or {}).get(c) for e in entries) for c in names},
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
    """The targets, each with the measured value, whether it is met and the issue it comes from: on one
    node issue 5's and issue 11.10's (p99 and p99.9 below Cassandra's at each fixed rate); with
    `cluster`, issue 13's (throughput and CPU per op of every compared workload, fixed-rate p99)."""
    out = []

    def add(name, measured, target, better, issue):
        out.append(_target(name, measured, target, better, issue))

    issue = 13 if cluster else 5
    compared = CLUSTER_TARGET_WORKLOADS if cluster else ("write", "read", "mixed")
    for w in compared:
        add(f"throughput {w} (H/C)", rat.get(w, {}).get("throughput"), 3.0, "higher", issue)
    for w in compared:
        add(f"server CPU per op {w} (H/C)", rat.get(w, {}).get("cpu_per_op"), 1 / 3, "lower", issue)
    add("p99 at the same fixed rate (H/C, 50% level)", rat.get("fixed_50", {}).get("p99"), 1 / 3, "lower", issue)
    if cluster:
        return out + client_targets(results, rat, cluster)
    h, c = results.get("helenus"), results.get("cassandra")
    add("peak RSS over the session (H/C)", _ratio(h and h.get("peak_rss_bytes"), c and c.get("peak_rss_bytes")),
        0.25, "lower", 5)
    add("Helenus start-up to first CQL query (s)", h and h.get("startup_s"), 1.0, "lower", 5)
    for wid in sorted((w for w in rat if w.startswith("fixed_")), key=lambda w: int(w.split("_")[1])):
        for key, label in (("p99", "p99"), ("p999", "p99.9")):
            add(f"{label} at {wid.split('_')[1]}% of Cassandra's write throughput (H/C)", rat[wid].get(key), 1.0,
                "below", 11)
    return out + steady_state_targets(rat) + client_targets(results, rat)


def cpu_by_client(results, wsteps):
    """Issue 32: server CPU per operation in µs of each client's write, read, mixed and fixed-rate runs on
    each server, with Helenus ÷ Cassandra: {client: {workload: {helenus, cassandra, ratio}}}."""
    out = {}
    for step in wsteps:
        if step.base_id not in plan.CLIENT_WORKLOADS:
            continue
        row = {}
        for server, r in results.items():
            per_1k = r["workloads"].get(step.id, {}).get("cpu_s_per_1k_ops")
            row[server] = per_1k * 1000.0 if per_1k is not None else None
        row["ratio"] = _ratio(row.get("helenus"), row.get("cassandra"))
        out.setdefault(step.client, {})[step.base_id] = row
    return out


def client_targets(results, rat, cluster=0):
    """Issue 32's targets for every client that ran: CPU per op at saturation ≤ 0.15 of Cassandra's; on one
    node, at each fixed rate ≤ 0.2 of Cassandra's and at most twice Helenus's own write cost at saturation."""
    out = []
    h = (results.get("helenus") or {}).get("workloads", {})
    for client in plan.CLIENTS:
        ids = {w: plan.client_id(client, w) for w in plan.CLIENT_WORKLOADS}
        if ids["write"] not in rat:
            continue
        for w in ("write", "read", "mixed"):
            out.append(_target(f"server CPU per op {w}, {client} client (H/C)", rat.get(ids[w], {}).get("cpu_per_op"),
                               0.15, "lower", 32))
        if cluster:
            continue
        saturated = h.get(ids["write"], {}).get("cpu_s_per_1k_ops")
        for level in plan.FIXED_LEVELS:
            wid = ids[plan.fixed_id(level)]
            out.append(_target(f"server CPU per op at {level}% of Cassandra's write rate, {client} client (H/C)",
                               rat.get(wid, {}).get("cpu_per_op"), 0.2, "lower", 32))
            out.append(_target(f"Helenus CPU per op at {level}% ÷ at saturation (write), {client} client",
                               _ratio(h.get(wid, {}).get("cpu_s_per_1k_ops"), saturated), 2.0, "lower", 32))
    return out


def steady_state_targets(rat):
    """Issue 15's targets against the warm Cassandra: CPU per op of the compared workloads and of every
    sweep step, throughput at 64 client threads (whether the client or the machine was the limit is in
    the Figures table: client CPU and busy cores), p99 at each fixed rate."""
    out = []

    def add(name, wid, key, target, better):
        out.append(_target(name, rat.get(wid, {}).get(key), target, better, 15))

    for w in ("write", "read", "mixed"):
        add(f"server CPU per op {w} (H/C)", w, "cpu_per_op", 0.25, "lower")
    sweep = sorted((w for w in rat if w.startswith("sweep_t")), key=lambda w: int(w[len("sweep_t"):]))
    for w in sweep:
        add(f"server CPU per op {w} (H/C)", w, "cpu_per_op", 0.35, "lower")
    add("throughput at 64 client threads, sweep_t64 (H/C)", "sweep_t64", "throughput", 3.0, "higher")
    for w in sorted((w for w in rat if w.startswith("fixed_")), key=lambda w: int(w.split("_")[1])):
        add(f"p99 at {w.split('_')[1]}% of Cassandra's write throughput (H/C)", w, "p99", 1 / 3, "lower")
    return out


def _target(name, measured, target, better, issue):
    """One target: `better` is "higher" (at least), "below" (strictly) or "lower" (at most)."""
    if measured is None:
        met = None
    elif better == "higher":
        met = measured >= target
    elif better == "below":
        met = measured < target
    else:
        met = measured <= target
    gap = None
    if measured not in (None, 0) and met is False:
        gap = target / measured if better == "higher" else measured / target
    return {"name": name, "measured": measured, "target": target, "better": better, "met": met,
            "factor_short": gap, "issue": issue}


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

def components_text(disk):
    """`Data 200.1, Index 14.2, …` bytes per row, largest first."""
    rows, parts = disk.get("rows"), disk.get("components") or {}
    if not rows:
        return ""
    return ", ".join(f"{name} {size / rows:.1f}" for name, size in
                     sorted(parts.items(), key=lambda kv: -(kv[1] or 0)) if size is not None)


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
    rates = doc.get("fixed_rates") or {}
    if rates:
        lines += ["", "Fixed-rate runs: " + ", ".join(f"{wid} {fmt(r, 0)} op/s" for wid, r in rates.items())
                  + f" ({doc.get('fixed_rate_basis')}).", ""]
    else:
        lines += ["", f"Fixed-rate run: {doc.get('fixed_rate')} op/s ({doc.get('fixed_rate_basis')}).", ""]
    if g.get("dirty"):
        lines += [f"Note: the working tree had uncommitted changes ({g.get('dirty_files', '?')} files) on top of "
                  f"{g['short']} when this ran; a Helenus binary built from it includes them.", ""]

    groups = {w["id"]: w.get("group") for w in doc["workloads"]}
    if len(servers) == 2:
        warm = [wid for wid in doc["ratios"] if groups.get(wid) not in COLD_GROUPS]
        cold = [wid for wid in doc["ratios"] if groups.get(wid) in COLD_GROUPS]
        head = "| workload | throughput | CPU/op | p99 | p99.9 | RSS | disk/row | start-up |"
        lines += ["## Helenus ÷ Cassandra, warm", "",
                  "After each server's warm-up (below); these are the summary ratios.", "",
                  head, "|" + "---|" * (len(RATIO_KEYS) + 1)]
        for wid in warm:
            lines.append(f"| {wid} | " + " | ".join(fmt_ratio(doc["ratios"][wid][k]) for k in RATIO_KEYS) + " |")
        if cold:
            lines += ["", "Cold, for reference (the first load after start-up, before the warm-up; not a target):",
                      "", head, "|" + "---|" * (len(RATIO_KEYS) + 1)]
            for wid in cold:
                lines.append(f"| {wid} | " + " | ".join(fmt_ratio(doc["ratios"][wid][k]) for k in RATIO_KEYS)
                             + " |")
        by_issue = {}
        for t in doc["targets"]:
            by_issue.setdefault(t.get("issue", 13 if doc.get("cluster") else 5), []).append(t)
        for issue, ts in by_issue.items():
            what = " — p99 and p99.9 below Cassandra's at each fixed rate" if issue == 11 else ""
            lines += ["", f"## Targets (issue {issue}{'.10' if issue == 11 else ''}{what})", "",
                      "| target | measured | goal | met |", "|---|---|---|---|"]
            for t in ts:
                goal = {"higher": "≥ ", "below": "< "}.get(t["better"], "≤ ") + fmt(t["target"])
                met = {True: "yes", False: f"**no** ({fmt(t['factor_short'])}× short)", None: "n/a"}[t["met"]]
                lines.append(f"| {t['name']} | {fmt_ratio(t['measured'])} | {goal} | {met} |")
        lines.append("")
    lines += warmup_markdown(doc)
    lines += client_markdown(doc)
    lines += split_markdown(doc)
    lines += fixed_markdown(doc)

    lines += ["## Figures", "",
              "Latencies in ms (client side, from the stress Results block or YCSB lines); CPU is the server "
              "process's user+sys seconds per 1,000 operations (warm-up operations included); RSS is the "
              "server's VmHWM after the workload; client CPU is the client's own (`helenus stress`, or the JVM of "
              "bench/javaload for java_ workloads), per 1,000 operations; "
              f"busy is the cores in use on the whole machine ({doc['machine'].get('cores', '?')} in all) over the "
              "client's run, start-up included; others are the cores used by neither.", ""]
    head = ("| workload | server | op/s | mean | p50 | p95 | p99 | p99.9 | max | CPU s/1k ops | client CPU s/1k ops "
            "| busy | RSS | disk B/row | errors | others |")
    lines += [head, "|" + "---|" * 16]
    for w in doc["workloads"]:
        for s in servers:
            r = doc["results"][s]["workloads"][w["id"]]
            if r["status"] != "ok":
                lines.append(_not_ok_row([w["id"], s], r["status"], r.get("note"), 16))
                continue
            lines.append(f"| {w['id']} | {s} | {fmt(r['throughput'], 0)} | {fmt(r['mean_ms'])} | {fmt(r['p50_ms'])} | "
                         f"{fmt(r['p95_ms'])} | {fmt(r['p99_ms'])} | {fmt(r['p999_ms'])} | {fmt(r['max_ms'])} | "
                         f"{fmt(r['cpu_s_per_1k_ops'], 3)} | {fmt(r.get('client_cpu_s_per_1k_ops'), 3)} | "
                         f"{fmt(r.get('busy_cores'))} | {mib(r['rss_bytes'])} | "
                         f"{fmt(r['disk_bytes_per_row'], 1)} | {fmt(r['errors'], 0)} | {fmt(r['other_cores'])} |")
    lines += spread_markdown(doc)
    lines += ["", "| server | start-up to first CQL query | peak RSS |", "|---|---|---|"]
    for s in servers:
        r = doc["results"][s]
        lines.append(f"| {s} | {fmt(r['startup_s'], 3)} s | {mib(r['peak_rss_bytes'])} |")
    lines += ["", "On-disk bytes per row after a flush, a major compaction and compactions settled "
              "(bytes per row of each SSTable component in the last column):", "",
              "| server | keyspace | bytes | rows | bytes/row | how | by component |", "|---|---|---|---|---|---|---|"]
    for s in servers:
        for ks, d in doc["results"][s]["disk"].items():
            lines.append(f"| {s} | {ks} | {fmt(d['bytes'], 0)} | {fmt(d['rows'], 0)} | {fmt(d['bytes_per_row'], 1)} | "
                         f"{d.get('method') or ''} | {components_text(d)} |")
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
    lines += ["", "## Workloads", "", "| id | what | client | command (after `helenus stress` or `JavaLoad`) |",
              "|---|---|---|---|"]
    for w in doc["workloads"]:
        lines.append(f"| {w['id']} | {w['title']} | {w.get('client', 'helenus')} | `{w['command']}` |")
    lines += ["", "## Method notes", ""] + [f"- {n}" for n in doc.get("notes", [])]
    return "\n".join(lines) + "\n"


def warmup_markdown(doc):
    """Each session's warm-up: how many windows it took and every window's server CPU per operation."""
    rows = [(s, w) for s, r in doc["results"].items() for w in r.get("warmup") or []]
    if not rows:
        return []
    w0 = rows[0][1]
    lines = ["## Warm-up", "",
             "Before the compared workloads (after cold_write), each server ran windows of "
             + " then ".join(f"`{c}`" for c in w0.get("commands", [])) + " until two consecutive windows' server "
             f"CPU per operation differed by less than {w0.get('tolerance', 0):.0%}, at most "
             f"{w0.get('max_windows')} windows.", "",
             "| server | rep | windows | settled | CPU s/1k ops per window (change from the window before) | "
             "op/s of the last window | time |", "|---|---|---|---|---|---|---|"]
    for s, w in rows:
        per = ", ".join(fmt(x.get("cpu_s_per_1k_ops"), 3) + (f" ({x['change']:+.0%})" if x.get("change") is not None
                                                              else "") for x in w.get("windows", []))
        last = (w.get("windows") or [{}])[-1].get("throughput", {})
        settled = "yes" if w.get("converged") else f"no ({w.get('error')})" if w.get("status") != "ok" else "no"
        lines.append(f"| {s} | {w.get('rep')} | {w.get('count')} | {settled} | {per} | "
                     + ", ".join(f"{k} {fmt(v, 0)}" for k, v in last.items()) + f" | {fmt(w.get('wall_s'), 0)} s |")
    return lines + [""]


CLIENT_LABELS = {"helenus": "helenus stress", "java": "javaload"}


def client_markdown(doc):
    """Issue 32: server CPU per operation by client, at saturation and at each fixed rate."""
    by_client = doc.get("cpu_by_client") or {}
    if not by_client:
        return []
    servers = list(doc["results"])
    what = "summed over the nodes, " if doc.get("cluster") else ""
    lines = ["## Server CPU per operation by client (issue 32)", "",
             f"Server CPU ({what}user+sys) in µs per operation: `helenus stress` (Rust driver) and bench/javaload "
             "(Java driver 4.x: prepared statements, token-aware, asynchronous) on the same server and data; "
             "write, read and mixed at saturation (50 threads), fixed_N writes at N% of Cassandra's write rate.", "",
             "| workload | " + " | ".join(" | ".join(f"{CLIENT_LABELS.get(c, c)} on {s}" for s in servers)
                                          + (" | H/C" if len(servers) == 2 else "") for c in by_client) + " |",
             "|---|" + ("---|" * (len(servers) + (len(servers) == 2))) * len(by_client)]
    workloads = list(dict.fromkeys(w for rows in by_client.values() for w in rows))
    for w in workloads:
        cells = []
        for rows in by_client.values():
            row = rows.get(w, {})
            cells += [fmt(row.get(s), 1) for s in servers]
            if len(servers) == 2:
                cells.append(fmt_ratio(row.get("ratio")))
        lines.append(f"| {w} | " + " | ".join(cells) + " |")
    return lines + [""]


def split_markdown(doc):
    """Issue 32: server CPU per operation by thread group (bench/benchkit/threads.py), summed over a
    cluster's nodes, for the workloads every client runs."""
    ids = [w["id"] for w in doc["workloads"] if w.get("base", w["id"]) in plan.CLIENT_WORKLOADS]
    rows = [(wid, s, doc["results"][s]["workloads"][wid].get("cpu_split_us_per_op") or {})
            for wid in ids for s in doc["results"]]
    groups = [g for g in threads.GROUPS if any(g in split for _, _, split in rows)]
    if not groups:
        return []
    where = "summed over the nodes" if doc.get("cluster") else "of the server"
    lines = ["## Server CPU per operation by thread group (issue 32)", "",
             f"µs per operation {where}, by what each thread does (bench/benchkit/threads.py). Helenus's one "
             "tokio runtime serves the CQL transport, the coordinator, the replica verbs and internode messaging: "
             "its workers' CPU is \"requests\", which thread names cannot split; Cassandra names a thread per "
             "stage. Threads that ended during a run are missing from it.", "",
             "| workload | server | " + " | ".join(groups) + " |", "|---|---|" + "---|" * len(groups)]
    for wid, s, split in rows:
        lines.append(f"| {wid} | {s} | " + " | ".join(fmt(split.get(g), 1) for g in groups) + " |")
    return lines + [""]


def fixed_markdown(doc):
    """The fixed-rate write runs (issue 11.10): latency percentiles per level and server, their ratios, and
    how late the client itself started operations (its pacing lateness)."""
    fixed = [w for w in doc["workloads"] if w.get("group") == FIXED_GROUP]
    if not fixed:
        return []
    servers = list(doc["results"])
    lines = ["## Fixed-rate write latency (issue 11.10)", "",
             "Latency in ms from each operation's intended start. Pacing lateness is how late `helenus stress` "
             "started operations after their due time while a worker was waiting for them: the client's own error, "
             "which should stay far below the server's latencies.", "",
             "| level | rate | server | op/s | p50 | p99 | p99.9 | max | pacing median | pacing .99 | pacing max |",
             "|" + "---|" * 11]
    rates = doc.get("fixed_rates") or {}
    for w in fixed:
        for s in servers:
            r = doc["results"][s]["workloads"][w["id"]]
            level = w["id"]
            if r["status"] != "ok":
                lines.append(_not_ok_row([level, fmt(rates.get(w["id"]), 0), s], r["status"], r.get("note"), 11))
                continue
            lines.append(f"| {level} | {fmt(rates.get(w['id']), 0)} | {s} | {fmt(r['throughput'], 0)} | "
                         f"{fmt(r['p50_ms'])} | {fmt(r['p99_ms'])} | {fmt(r['p999_ms'])} | {fmt(r['max_ms'])} | "
                         f"{fmt(r.get('pacing_p50_ms'), 3)} | {fmt(r.get('pacing_p99_ms'), 3)} | "
                         f"{fmt(r.get('pacing_max_ms'), 3)} |")
    if len(servers) == 2:
        lines += ["", "| level | p50 H/C | p99 H/C | p99.9 H/C |", "|---|---|---|---|"]
        for w in fixed:
            h, c = (doc["results"][s]["workloads"][w["id"]] for s in ("helenus", "cassandra"))
            lines.append(f"| {w['id']} | {fmt_ratio(_ratio(h['p50_ms'], c['p50_ms']))} | "
                         f"{fmt_ratio(_ratio(h['p99_ms'], c['p99_ms']))} | "
                         f"{fmt_ratio(_ratio(h['p999_ms'], c['p999_ms']))} |")
    return lines + [""]


def spread_markdown(doc):
    """The spread (min–max over repetitions) of the figures whose medians the report gives."""
    if (doc.get("repetitions") or 1) < 2:
        return ["", "One repetition per server: the figures are single runs, with no spread to report."]
    lines = ["", f"Spread over the {doc['repetitions']} repetitions (min–max of each figure whose median is above):",
             "", "| workload | server | op/s | p50 | p99 | p99.9 | CPU s/1k ops |", "|" + "---|" * 7]

    def rng(v, digits):
        return "–" if not v else f"{fmt(v[0], digits)}–{fmt(v[1], digits)}"
    for w in doc["workloads"]:
        for s in doc["results"]:
            sp = doc["results"][s]["workloads"][w["id"]].get("spread") or {}
            lines.append(f"| {w['id']} | {s} | {rng(sp.get('throughput'), 0)} | {rng(sp.get('p50_ms'), 2)} | "
                         f"{rng(sp.get('p99_ms'), 2)} | {rng(sp.get('p999_ms'), 2)} | "
                         f"{rng(sp.get('cpu_s_per_1k_ops'), 3)} |")
    return lines


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
