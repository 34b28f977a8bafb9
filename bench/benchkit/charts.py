"""PNG charts: matplotlib from a venv this harness creates (bench/.venv), else the stdlib rasteriser."""
import json
import os
import subprocess
import sys
import tempfile

from . import png

_MPL_SCRIPT = r"""
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
specs = json.load(open(sys.argv[1]))
for spec in specs:
    cats, series = spec["categories"], spec["series"]
    fig, ax = plt.subplots(figsize=(max(6.4, 0.9 * len(cats) + 2), 4.2), dpi=110)
    names = list(series)
    if spec["type"] == "timeline":
        colors = {}
        for name in names:
            pts = [p for p in series[name] if p[1] is not None]
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], label=name)
            colors[name] = line.get_color()
        for m in spec.get("markers", []):
            color = colors.get(m.get("series"), "black")
            side = "right" if names.index(m["series"]) % 2 == 0 else "left"  # two servers' labels apart
            ax.axvline(m["x"], linestyle="--", linewidth=1, color=color)
            ax.annotate(m["label"], (m["x"], 1), xycoords=("data", "axes fraction"), rotation=90,
                        va="top", ha=side, fontsize=7, color=color)
        ax.set_ylim(bottom=0)
    elif spec["type"] == "lines":
        for name in names:
            pts = [(c, v) for c, v in zip(cats, series[name]) if v is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_xticks(cats)
        ax.set_xticklabels([str(c) for c in cats])
    else:
        w = 0.8 / max(1, len(names))
        for i, name in enumerate(names):
            xs = [j + i * w - 0.4 + w / 2 for j in range(len(cats))]
            ax.bar(xs, [v if v is not None else 0 for v in series[name]], width=w, label=name)
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats, rotation=30, ha="right")
    ax.set_title(spec["title"])
    ax.set_ylabel(spec.get("ylabel", ""))
    ax.set_xlabel(spec.get("xlabel", ""))
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(spec["path"])
    plt.close(fig)
"""


def specs(doc, prefix):
    servers = list(doc["results"])
    main = [w["id"] for w in doc["workloads"] if w.get("group") != "sweep"
            and any(doc["results"][s]["workloads"][w["id"]]["status"] == "ok" for s in servers)]
    sweep = [w for w in doc["workloads"] if w.get("group") == "sweep"]

    def col(ids, key):
        return {s: [doc["results"][s]["workloads"][i].get(key) for i in ids] for s in servers}

    out = [
        {"file": f"{prefix}-throughput.png", "title": "Throughput per workload (op/s, higher is better)",
         "ylabel": "op/s", "xlabel": "", "type": "bars", "categories": main, "series": col(main, "throughput")},
        {"file": f"{prefix}-p99.png", "title": "p99 latency per workload (ms, lower is better)",
         "ylabel": "ms", "xlabel": "", "type": "bars", "categories": main, "series": col(main, "p99_ms")},
    ]
    if sweep:
        ids = [w["id"] for w in sweep]
        cats = [w["threads"] for w in sweep]
        out += [
            {"file": f"{prefix}-sweep-throughput.png", "title": "Write throughput vs client threads",
             "ylabel": "op/s", "xlabel": "threads", "type": "lines", "categories": cats,
             "series": col(ids, "throughput")},
            {"file": f"{prefix}-sweep-p99.png", "title": "Write p99 latency vs client threads",
             "ylabel": "ms", "xlabel": "threads", "type": "lines", "categories": cats, "series": col(ids, "p99_ms")},
        ]
    return out + timeline_specs(doc, prefix)


def timeline_specs(doc, prefix):
    """Op/s and p99 per second of the kill-and-restart runs, both servers on each chart."""
    runs = {s: t for s, t in (doc.get("timeline") or {}).items() if t.get("seconds")}
    if not runs:
        return []
    markers = []
    for s, t in runs.items():
        for key, what in (("kill_at_s", "kill"), ("restart_at_s", "restart"), ("up_at_s", "up")):
            if t.get(key) is not None:
                markers.append({"x": round(t[key], 1), "label": f"{s} {what}", "series": s})
    return [
        {"file": f"{prefix}-timeline-throughput.png", "type": "timeline", "categories": [], "markers": markers,
         "title": "Op/s per second, one node killed and restarted", "ylabel": "op/s",
         "xlabel": "seconds", "series": {s: [[p[0], p[1]] for p in t["seconds"]] for s, t in runs.items()}},
        {"file": f"{prefix}-timeline-p99.png", "type": "timeline", "categories": [], "markers": markers,
         "title": "p99 per second (ms), one node killed and restarted", "ylabel": "ms",
         "xlabel": "seconds", "series": {s: [[p[0], p[2]] for p in t["seconds"]] for s, t in runs.items()}},
    ]


def venv_python(bench_dir, log, install=True, timeout=600):
    """bench/.venv's python with matplotlib, creating it on first use; None if that is not possible."""
    venv = os.path.join(bench_dir, ".venv")
    py = os.path.join(venv, "bin", "python")
    check = [py, "-c", "import matplotlib"]
    if os.path.exists(py) and subprocess.run(check, capture_output=True).returncode == 0:
        return py
    if not install:
        return None
    log("charts: creating bench/.venv with matplotlib from PyPI")
    try:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True, timeout=timeout)
        subprocess.run([py, "-m", "pip", "install", "-q", "matplotlib"], check=True, capture_output=True,
                       timeout=timeout)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
        err = getattr(e, "stderr", b"") or b""
        log(f"charts: matplotlib unavailable ({e}; {err.decode(errors='replace')[-300:]}); using the built-in renderer")
        return None
    return py if subprocess.run(check, capture_output=True).returncode == 0 else None


def render(doc, outdir, prefix, how, bench_dir, log):
    """Writes the charts; returns [{'file', 'title'}] and the renderer used."""
    return render_specs(specs(doc, prefix), outdir, how, bench_dir, log)


def render_specs(chart_specs, outdir, how, bench_dir, log):
    """Writes the charts `chart_specs` describe; returns [{'file', 'title'}] and the renderer used."""
    for s in chart_specs:
        s["path"] = os.path.join(outdir, s["file"])
    py = None
    if how in ("auto", "matplotlib"):
        py = venv_python(bench_dir, log, install=True)
        if py is None and how == "matplotlib":
            raise RuntimeError("--charts matplotlib: matplotlib could not be installed in bench/.venv")
    renderer = "builtin"
    if py:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(chart_specs, f)
        try:
            r = subprocess.run([py, "-c", _MPL_SCRIPT, f.name], capture_output=True, text=True, timeout=300)
            if r.returncode == 0:
                renderer = "matplotlib"
            else:
                log(f"charts: matplotlib failed ({r.stderr.strip()[-300:]}); using the built-in renderer")
        finally:
            os.unlink(f.name)
    if renderer == "builtin":
        for s in chart_specs:
            with open(s["path"], "wb") as out:
                out.write(png.chart(s))
    return [{"file": s["file"], "title": s["title"]} for s in chart_specs], renderer
