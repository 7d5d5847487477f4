#!/usr/bin/env python3
"""One self-contained report.html for a contrast or a study folder (scalebench report DIR).

Reads what the drivers wrote — contrast.json, or summary.json and runs.jsonl — and the run
records they name, and writes DIR/report.html: what ran and where (machine, versions, git hash,
every command line), the table, and the figures as inline SVG (no network, no script):

  contrast: speed-up over single-core with the ideal (the cores), parallel efficiency, where the
            time goes (compute / communication / host<->device, stacked), rate per row
  study:    speed-up and efficiency with the ideal line (against the named baseline: the ratio
            against size, break-even line, crossover marked), where the time goes, rate against
            size (crossover marked)
  both:     predicted against measured, when the records carry a "prediction"

  scalebench report DIR [--out FILE]      (tools/report DIR runs this script the same way)
  report.py --check                        (exit 0 if matplotlib loads, else 3)

Needs python3-matplotlib. Exit codes: 0 written, 2 not a contrast or study folder (or nothing
finished in it), 3 matplotlib missing or the page cannot be written.
"""
import argparse
import datetime
import html
import io
import json
import math
import os
import re
import sys

PHASES = (("compute", "compute", "#4c72b0"), ("communication", "communication", "#dd8452"),
          ("transfer", "host<->device", "#55a868"))


def fail(code, message):
    print(f"scalebench report: error: {message}", file=sys.stderr)
    sys.exit(code)


def esc(v):
    return html.escape(str(v), quote=True)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt_rate(v, unit):
    if not v:
        return "-"
    if unit == "samples/s":
        for div, p in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if v >= div:
                return f"{v / div:.3g} {p}samples/s"
        return f"{v:.3g} samples/s"
    return f"{v:.4g} GFLOP/s"


def fmt_num(v, digits=4):
    return "-" if v is None else f"{v:.{digits}g}"


# ---------------------------------------------------------------------------------------------
# What the folder holds.


def record_of(folder, path):
    """A run record: the path as written, else the same name inside the folder (moved folders)."""
    if not path:
        return None
    for p in (path, os.path.join(folder, os.path.basename(path)), os.path.join(folder, "runs", os.path.basename(path))):
        r = read_json(p)
        if isinstance(r, dict):
            return r
    return None


def prediction_of(record):
    """(predicted, measured) end-to-end seconds, from a record's "prediction" section, else None."""
    p = (record or {}).get("prediction")
    if not isinstance(p, dict) or not p.get("available", True):
        return None
    e = p.get("end_to_end")
    if isinstance(e, dict) and e.get("predicted_s") and e.get("measured_s"):
        return float(e["predicted_s"]), float(e["measured_s"])
    return None


def load_contrast(folder):
    c = read_json(os.path.join(folder, "contrast.json"))
    if not isinstance(c, dict):
        return None
    rows = []
    for r in c.get("runs", []):
        rec = record_of(folder, r.get("record"))
        ok = r.get("status") == "ok"
        share = r.get("share", {})
        time = r.get("time_s") if ok else None
        rows.append({
            "label": f"{r.get('mode')}",
            "workload": r.get("workload"),
            "mode": r.get("mode"),
            "size": r.get("size", ""),
            "ranks": r.get("ranks"),
            "threads": r.get("threads_per_rank"),
            "gpus": r.get("gpus", 0),
            "nodes": r.get("nodes"),
            "time": time,
            "rate": r.get("rate") if ok else None,
            "unit": r.get("rate_unit", ""),
            "speedup": r.get("speedup_vs_single_core"),
            "efficiency": r.get("parallel_efficiency"),
            "phases": {k: share.get(k, 0.0) * time for k, _, _ in PHASES} if ok and time else None,
            "status": r.get("status", ""),
            "reason": r.get("reason", ""),
            "command": r.get("command", ""),
            "record": rec,
            "prediction": prediction_of(rec),
        })
    return {"kind": "contrast", "title": f"contrast on {c.get('host', '?')}", "doc": c, "rows": rows}


def load_study(folder):
    s = read_json(os.path.join(folder, "summary.json"))
    if not isinstance(s, dict):
        return None
    lines = {}
    try:
        with open(os.path.join(folder, "runs.jsonl")) as f:
            for text in f:
                try:
                    line = json.loads(text)
                except ValueError:
                    continue
                lines[line.get("record_path")] = line
    except OSError:
        pass
    rows = []
    for r in s.get("runs", []):
        line = lines.get(r.get("record_path")) or {}
        rec = line.get("record") if isinstance(line.get("record"), dict) else record_of(folder, r.get("record_path"))
        ok = r.get("status") == "ok"
        ph = r.get("phases_s", {})
        coords = dict(r.get("options", {}))
        coords["ranks"] = str(r.get("ranks"))
        rows.append({
            "index": r.get("index"),
            "options": coords,
            "ranks": r.get("ranks"),
            "nodes": r.get("nodes"),
            "resources": r.get("resources"),
            "gpu": r.get("gpu", False),
            "time": r.get("time_s") if ok else None,
            "rate": r.get("rate") if ok else None,
            "unit": r.get("rate_unit", ""),
            "speedup": r.get("speedup"),
            "efficiency": r.get("efficiency"),
            "phases": {k: ph.get(k, 0.0) for k, _, _ in PHASES} if ok else None,
            "status": r.get("status", ""),
            "reason": r.get("reason", ""),
            "command": line.get("command", ""),
            "record": rec,
            "prediction": prediction_of(rec),
        })
    return {"kind": "study", "title": f"study {s.get('study', '?')}", "doc": s, "rows": rows}


# ---------------------------------------------------------------------------------------------
# Figures: matplotlib drawn to SVG, inlined.


def plt_module():
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
                                "svg.hashsalt": "scalebench"})
    import matplotlib.pyplot as plt

    return plt


class Figures:
    def __init__(self, plt):
        self.plt = plt
        self.items = []  # (id, caption, svg)
        self.count = 0

    def add(self, fig_id, caption, fig):
        buf = io.StringIO()
        fig.tight_layout()
        fig.savefig(buf, format="svg")
        self.plt.close(fig)
        svg = buf.getvalue()
        svg = svg[svg.index("<svg"):]
        # Sized by the page (CSS), not by matplotlib: drop the fixed width and height.
        svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1', svg, count=1)
        # Ids unique across the page (several SVGs share matplotlib's names).
        self.count += 1
        prefix = f"f{self.count}-"
        svg = re.sub(r'id="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
        svg = re.sub(r'url\(#([^)]+)\)', lambda m: f"url(#{prefix}{m.group(1)})", svg)
        svg = re.sub(r'xlink:href="#([^"]+)"', lambda m: f'xlink:href="#{prefix}{m.group(1)}"', svg)
        svg = svg.replace("<svg", f'<svg role="img" aria-label="{esc(caption)}"', 1)
        self.items.append((fig_id, caption, svg))


def bar_phases(plt, labels, phases, title, ylabel):
    fig, ax = plt.subplots(figsize=(max(5.5, 0.55 * len(labels) + 2), 4))
    x = list(range(len(labels)))
    bottom = [0.0] * len(labels)
    for key, name, color in PHASES:
        vals = [p.get(key, 0.0) if p else 0.0 for p in phases]
        ax.bar(x, vals, bottom=bottom, label=name, color=color)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=40, ha="right", fontsize="small")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    return fig


def prediction_figure(figs, rows, title):
    pts = [(r["prediction"], r) for r in rows if r["prediction"]]
    if not pts:
        return
    plt = figs.plt
    fig, ax = plt.subplots(figsize=(5.5, 4.4))
    pred = [p[0] for p, _ in pts]
    meas = [p[1] for p, _ in pts]
    lo, hi = min(pred + meas) / 1.5, max(pred + meas) * 1.5
    ax.fill_between([lo, hi], [lo * 0.85, hi * 0.85], [lo * 1.15, hi * 1.15], color="grey", alpha=0.15, label="±15%")
    ax.plot([lo, hi], [lo, hi], "--", color="grey", label="predicted = measured")
    ax.scatter(pred, meas, color="#c44e52", zorder=3, label="runs")
    for (p, r) in pts:
        ax.annotate(str(r.get("label") or f"#{r.get('index')}"), (p[0], p[1]), fontsize="x-small",
                    xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted end to end, s")
    ax.set_ylabel("measured end to end, s")
    ax.set_title(title)
    ax.legend(fontsize="small")
    figs.add("fig-prediction", "Predicted against measured end-to-end time per run (the model's ±15% band).", fig)


def contrast_figures(figs, data):
    plt = figs.plt
    rows = data["rows"]
    for w in dict.fromkeys(r["workload"] for r in rows):
        ok = [r for r in rows if r["workload"] == w and r["status"] == "ok"]
        if not ok:
            continue
        labels = [r["mode"] for r in ok]
        x = list(range(len(ok)))
        # Speed-up over single-core, with the ideal (its cores) for the CPU rows.
        fig, ax = plt.subplots(figsize=(max(5.5, 0.6 * len(ok) + 2), 4))
        sp = [r["speedup"] or 0 for r in ok]
        ax.bar(x, sp, color=["#8172b3" if r["gpus"] else "#4c72b0" for r in ok], label="measured")
        ideal = [(i, (r["ranks"] or 0) * (r["threads"] or 0)) for i, r in enumerate(ok)
                 if not r["gpus"] and r["mode"] != "naive" and r["ranks"]]
        if ideal:
            ax.scatter([i for i, _ in ideal], [c for _, c in ideal], marker="_", s=900, color="black", zorder=3,
                       label="ideal (cores)")
        ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=40, ha="right", fontsize="small")
        if max(sp) > 50:
            ax.set_yscale("log")
        ax.set_ylabel("speed-up over single-core (rate ratio)")
        ax.set_title(f"{w}: speed-up")
        ax.legend(fontsize="small")
        figs.add(f"fig-speedup-{w}", f"{w}: speed-up over one core (rates: the naive rows run a smaller problem); "
                 "the bars' ideal is the cores they use.", fig)
        # Efficiency of the CPU rows.
        eff = [(r["mode"], r["efficiency"]) for r in ok if r["efficiency"]]
        if eff:
            fig, ax = plt.subplots(figsize=(5.5, 3.6))
            ax.bar(range(len(eff)), [100 * e for _, e in eff], color="#4c72b0")
            ax.axhline(100, color="grey", linestyle="--", label="ideal")
            ax.set_xticks(range(len(eff)))
            ax.set_xticklabels([m for m, _ in eff], rotation=40, ha="right", fontsize="small")
            ax.set_ylabel("parallel efficiency, %")
            ax.set_title(f"{w}: efficiency per core")
            ax.legend(fontsize="small")
            figs.add(f"fig-efficiency-{w}", f"{w}: parallel efficiency = speed-up / cores.", fig)
        fig = bar_phases(plt, labels, [r["phases"] for r in ok], f"{w}: where the time goes",
                         "seconds per repeat (median)")
        figs.add(f"fig-phases-{w}", f"{w}: compute, communication and host<->device time per row.", fig)
        fig, ax = plt.subplots(figsize=(max(5.5, 0.6 * len(ok) + 2), 4))
        ax.bar(x, [r["rate"] for r in ok], color=["#8172b3" if r["gpus"] else "#4c72b0" for r in ok])
        ax.set_yscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([f"{r['mode']}\n{r['size']}" for r in ok], rotation=40, ha="right", fontsize="small")
        ax.set_ylabel(f"rate, end to end ({ok[0]['unit']})")
        ax.set_title(f"{w}: rate")
        figs.add(f"fig-rate-{w}", f"{w}: rate end to end per row (log scale).", fig)
    prediction_figure(figs, [dict(r, label=f"{r['workload']} {r['mode']}") for r in rows], "predicted against measured")


def study_size_key(doc):
    base = doc.get("baseline")
    if isinstance(base, dict) and base.get("size_key"):
        return base["size_key"]
    return "samples" if doc.get("workload") == "montecarlo" else "n"


def num(v):
    try:
        return float(str(v).replace("_", ""))
    except ValueError:
        return None


def mark_crossovers(ax, groups, size_key):
    for g in groups:
        c = g.get("crossover") or {}
        if c.get("kind") == "at":
            ax.axvline(c["size"], color="#c44e52", linestyle=":", linewidth=1.5)
            ax.annotate(f"{g['group']}: {size_key} ≈ {c['size']:.0f}", (c["size"], 0.03), xycoords=("data", "axes fraction"),
                        fontsize="small", color="#c44e52", ha="center", va="bottom",
                        bbox={"boxstyle": "round", "fc": "white", "ec": "#c44e52", "alpha": 0.9})


def study_figures(figs, data):
    plt = figs.plt
    doc = data["doc"]
    ok = [r for r in data["rows"] if r["status"] == "ok"]
    if not ok:
        return
    size_key = study_size_key(doc)
    sizes = {num(r["options"].get(size_key)) for r in ok if size_key in r["options"]}
    base = doc.get("baseline") if isinstance(doc.get("baseline"), dict) else None
    name = doc.get("study", "study")
    if base:
        groups = base.get("groups", [])
        named = " ".join(f"{k}={v}" for k, v in base.get("options", {}).items())
        fig, ax = plt.subplots(figsize=(6.2, 4.4))
        for g in groups:
            pts = [(p["size"], p["ratio"]) for p in g["points"]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=g["group"])
        ax.axhline(1.0, color="grey", linestyle="--", label=f"break-even with {named}")
        if len(sizes) > 1:
            ax.set_xscale("log", base=2)
            mark_crossovers(ax, groups, size_key)
        ax.set_yscale("log")
        ax.set_xlabel(size_key)
        ax.set_ylabel(f"speed-up over {named}")
        ax.set_title(f"{name}: speed-up over the baseline")
        ax.legend(fontsize="small")
        texts = "; ".join(f"{g['group']}: crossover {g['crossover']['text']}" for g in groups if g.get("crossover"))
        figs.add("fig-speedup", f"Speed-up over the baseline ({named}) per group against {size_key}"
                 + (f"; {texts}" if texts else "") + ".", fig)
    else:
        series = {}
        for r in ok:
            key = " ".join(f"{k}={v}" for k, v in sorted(r["options"].items()) if k not in ("threads", "ranks"))
            series.setdefault(key, []).append(r)
        multi = {k: v for k, v in series.items() if len(v) > 1}
        if multi:
            for fig_id, what in (("fig-speedup", "speedup"), ("fig-efficiency", "efficiency")):
                fig, ax = plt.subplots(figsize=(6.2, 4.4))
                most = 1
                for key, rs in multi.items():
                    rs = sorted(rs, key=lambda r: r["resources"] or 0)
                    xs = [r["resources"] for r in rs if r[what]]
                    ys = [r[what] * (100 if what == "efficiency" else 1) for r in rs if r[what]]
                    most = max([most] + xs)
                    ax.plot(xs, ys, marker="o", label=key or "runs")
                ideal = [1, most] if what == "speedup" else [100, 100]
                ax.plot([1, most], ideal, "--", color="grey", label="ideal")
                ax.set_xlabel("cores (CPU runs) or GPUs")
                ax.set_ylabel("speed-up (end to end)" if what == "speedup" else "efficiency, %")
                ax.set_title(f"{name}: {'speed-up' if what == 'speedup' else 'efficiency'}")
                ax.legend(fontsize="x-small")
                figs.add(fig_id, ("Speed-up" if what == "speedup" else "Parallel efficiency")
                         + " per series against cores or GPUs, with the ideal line.", fig)
    labels = [f"#{r['index']} " + " ".join(f"{v}" for k, v in r["options"].items()
                                            if any(k == s for s, _ in doc_sweep(doc))) for r in ok]
    fig = bar_phases(plt, labels, [r["phases"] for r in ok], f"{name}: where the time goes",
                     "seconds (median, slowest rank)")
    figs.add("fig-phases", "Compute, communication and host<->device seconds per run.", fig)
    if len(sizes) > 1:
        fig, ax = plt.subplots(figsize=(6.2, 4.4))
        series = {}
        swept = {k for k, _ in doc_sweep(doc)}
        for r in ok:
            key = " ".join(f"{k}={v}" for k, v in sorted(r["options"].items()) if k in swept and k not in ("threads", size_key))
            series.setdefault(key, []).append(r)
        for key, rs in series.items():
            rs = sorted(rs, key=lambda r: num(r["options"].get(size_key)) or 0)
            ax.plot([num(r["options"].get(size_key)) for r in rs], [r["rate"] for r in rs], marker="o",
                    label=key or "runs")
        if base:
            mark_crossovers(ax, base.get("groups", []), size_key)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(size_key)
        ax.set_ylabel(f"rate, end to end ({ok[0]['unit']})")
        ax.set_title(f"{name}: rate against size")
        ax.legend(fontsize="x-small")
        figs.add("fig-rate", f"Rate against {size_key} per series (log-log)"
                 + (", the crossover marked." if base else "."), fig)
    prediction_figure(figs, ok, f"{name}: predicted against measured")


def doc_sweep(doc):
    """The swept keys, as the summary's runs show them (options that differ between runs)."""
    values = {}
    for r in doc.get("runs", []):
        for k, v in dict(r.get("options", {}), ranks=str(r.get("ranks"))).items():
            values.setdefault(k, set()).add(v)
    return [(k, vs) for k, vs in values.items() if len(vs) > 1]


# ---------------------------------------------------------------------------------------------
# The page.

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1200px;
       padding: 1rem; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.5rem; margin: .2rem 0 .6rem; } h2 { font-size: 1.15rem; margin-top: 1.8rem; border-bottom: 1px solid #ddd; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; font-size: .86rem; min-width: 100%; }
th, td { padding: .3rem .5rem; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th:first-child, td:first-child, td.l, th.l { text-align: left; }
th { background: #f5f5f7; position: sticky; top: 0; }
tr.failed td, tr.timeout td { background: #fdecea; } tr.skipped td { color: #777; }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 460px), 1fr)); gap: 1rem; }
figure { margin: 0; border: 1px solid #eee; border-radius: 6px; padding: .4rem; background: #fff; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { font-size: .82rem; color: #444; padding: .3rem .2rem 0; }
dl.context { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; font-size: .9rem; }
dl.context dt { font-weight: 600; } dl.context dd { margin: 0; overflow-wrap: anywhere; }
code, pre { font: .8rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f5f5f7; padding: .5rem; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.note { color: #555; font-size: .9rem; } .crossover { font-weight: 600; color: #a33; }
@media (max-width: 600px) { body { font-size: 14px; padding: .6rem; } dl.context { grid-template-columns: 1fr; } }
"""


def context_items(data):
    doc = data["doc"]
    recs = [r["record"] for r in data["rows"] if isinstance(r.get("record"), dict)]
    items = []
    if data["kind"] == "contrast":
        items += [("host", doc.get("host")), ("launcher", doc.get("launcher")), ("nodes", doc.get("nodes")),
                  ("results", doc.get("out_dir"))]
    else:
        items += [("study", doc.get("study")), ("description", doc.get("description")), ("file", doc.get("file")),
                  ("launcher", doc.get("launcher")), ("runs file", doc.get("runs_file"))]
    items += [("driver command", " ".join(doc.get("command_line", [])) if isinstance(doc.get("command_line"), list)
               else doc.get("command_line")), ("finished", doc.get("finished_at"))]

    def distinct(fn):
        seen = []
        for r in recs:
            try:
                v = fn(r)
            except (KeyError, TypeError, AttributeError):
                v = None
            if v not in (None, "", [], {}) and v not in seen:
                seen.append(v)
        return ", ".join(str(v) for v in seen) or None

    items += [
        ("hosts", distinct(lambda r: ", ".join(r["hosts"]) if isinstance(r.get("hosts"), list) else r.get("hosts"))),
        ("CPU", distinct(lambda r: r.get("cpu_model"))),
        ("GPUs", distinct(lambda r: ", ".join(sorted({g.get("name", "") for g in r["gpu"]["devices"]}))
                          if isinstance(r.get("gpu"), dict) and r["gpu"].get("devices") else None)),
        ("scalebench", distinct(lambda r: r["versions"].get("scalebench"))),
        ("git", distinct(lambda r: r["versions"].get("git"))),
        ("MPI", distinct(lambda r: r["versions"].get("mpi_library"))),
        ("OpenBLAS", distinct(lambda r: r["versions"].get("openblas", {}).get("config")
                              if isinstance(r["versions"].get("openblas"), dict) else r["versions"].get("openblas"))),
        ("CUDA", distinct(lambda r: json.dumps(r["versions"]["cuda"]) if isinstance(r["versions"].get("cuda"), dict)
                          else r["versions"].get("cuda"))),
    ]
    return [(k, v) for k, v in items if v not in (None, "")]


def table_html(data):
    rows = data["rows"]
    has_pred = any(r["prediction"] for r in rows)
    if data["kind"] == "contrast":
        head = ["workload", "mode", "nodes", "size", "ranks × thr", "time s", "rate", "speed-up", "eff.",
                "compute / comm / transfer", "status"]
    else:
        sweep = [k for k, _ in doc_sweep(data["doc"])]
        head = ["#", "nodes"] + sweep + ["cores or GPUs", "time s", "rate", "speed-up", "eff.",
                                                  "compute / comm / transfer s", "status"]
    if has_pred:
        head.insert(head.index("rate"), "predicted s")
    out = ['<div class="scroll"><table id="results"><thead><tr>']
    out += [f'<th{" class=l" if h in ("workload", "mode", "status") else ""}>{esc(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for r in rows:
        ok = r["status"] == "ok"
        ph = r["phases"] or {}
        if data["kind"] == "contrast":
            tot = sum(ph.values()) or 1
            cells = [r["workload"], r["mode"], r["nodes"] or "-", r["size"],
                     f"{r['ranks']}×{r['threads']}" + (f" {r['gpus']} GPU" if r["gpus"] else "") if r["ranks"] else "-"]
            where = " / ".join(f"{100 * ph.get(k, 0) / tot:.0f}%" for k, _, _ in PHASES) if ok else "-"
        else:
            cells = [r["index"], r["nodes"] or "-"] + [r["options"].get(k, "-") for k in sweep]
            cells.append(f"{r['resources']}{' GPU' if r['gpu'] else ''}" if ok else "-")
            where = " / ".join(f"{ph.get(k, 0):.3g}" for k, _, _ in PHASES) if ok else "-"
        cells.append(fmt_num(r["time"]) if ok else "-")
        if has_pred:
            cells.append(fmt_num(r["prediction"][0]) if r["prediction"] else "-")
        cells += [fmt_rate(r["rate"], r["unit"]) if ok else "-",
                  f"{r['speedup']:.2f}×" if ok and r["speedup"] else "-",
                  f"{100 * r['efficiency']:.0f}%" if ok and r["efficiency"] else "-", where,
                  r["status"] + (f": {r['reason']}" if r["reason"] and not ok else "")]
        tds = "".join(f'<td{" class=l" if i in (0, 1) or i == len(cells) - 1 else ""}>{esc(c)}</td>'
                      for i, c in enumerate(cells))
        out.append(f'<tr class="{esc(r["status"])}">{tds}</tr>')
    out.append("</tbody></table></div>")
    return "".join(out)


def crossover_html(doc):
    base = doc.get("baseline") if isinstance(doc.get("baseline"), dict) else None
    if not base:
        return ""
    named = " ".join(f"{k}={v}" for k, v in base.get("options", {}).items())
    items = []
    for g in base.get("groups", []):
        ratios = ", ".join(f"{p['ratio']:.2f}× at {base.get('size_key', 'n')}={p['size']:g}" if p.get("size")
                           else f"{p['ratio']:.2f}×" for p in g.get("points", []))
        cross = g.get("crossover", {}).get("text")
        items.append(f"<li>{esc(g['group'])}: {esc(ratios)}"
                     + (f'; crossover <span class="crossover">{esc(cross)}</span>' if cross else "") + "</li>")
    return (f'<section id="baseline"><h2>Against the baseline ({esc(named)})</h2>'
            f'<p class="note">speed-up = baseline time / time, the baseline being the run with {esc(named)} and the '
            f'same other values.</p><ul>{"".join(items)}</ul></section>')


def page(data, figs):
    doc = data["doc"]
    ctx = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in context_items(data))
    cmds = "\n".join(f"{r.get('workload', '') + ' ' + r['mode'] if data['kind'] == 'contrast' else '#' + str(r['index'])}: "
                     f"{r['command']}" for r in data["rows"] if r["command"])
    fig_html = "".join(f'<figure id="{esc(i)}">{svg}<figcaption>{esc(c)}</figcaption></figure>'
                       for i, c, svg in figs.items)
    ids = " ".join(i for i, _, _ in figs.items)
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scalebench {esc(data['title'])}</title>
<style>{CSS}</style></head>
<body data-kind="{esc(data['kind'])}" data-figures="{esc(ids)}">
<h1>scalebench {esc(data['title'])}</h1>
<p class="note">{esc((doc.get('description') or '').rstrip('.') + '.' if doc.get('description') else '')} Report written {generated}; every figure is drawn from the
records in this folder.</p>
<section id="context"><h2>What ran, and where</h2><dl class="context">{ctx}</dl>
<details><summary>Every command line ({sum(1 for r in data['rows'] if r['command'])})</summary><pre id="commands">{esc(cmds)}</pre></details>
</section>
<section id="table"><h2>Results</h2>{table_html(data)}</section>
{crossover_html(doc) if data['kind'] == 'study' else ''}
<section id="figures"><h2>Figures</h2><div class="figures">{fig_html}</div></section>
</body></html>
"""


def main():
    ap = argparse.ArgumentParser(prog="scalebench report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?", help="a contrast's or a study's results folder")
    ap.add_argument("--out", help="the page to write [FOLDER/report.html]")
    ap.add_argument("--check", action="store_true", help="only check that matplotlib can be loaded (exit 0 or 3)")
    a = ap.parse_args()
    try:
        plt = plt_module()
    except ImportError:
        fail(3, "matplotlib is missing: install python3-matplotlib (tools/setup does)")
    if a.check:
        return
    if not a.folder:
        fail(2, "give the folder of a contrast or a study, e.g. scalebench report results/smoke")
    if not os.path.isdir(a.folder):
        fail(2, f"{a.folder} is not a folder: give the results folder of a contrast or a study")
    data = load_contrast(a.folder) or load_study(a.folder)
    if data is None:
        fail(2, f"{a.folder} holds neither contrast.json nor summary.json: give the results folder of a contrast "
                "(scalebench contrast) or of a study (scalebench study)")
    if not any(r["status"] == "ok" for r in data["rows"]):
        fail(2, f"no finished run in {a.folder}: nothing to draw")
    figs = Figures(plt)
    (contrast_figures if data["kind"] == "contrast" else study_figures)(figs, data)
    out = a.out or os.path.join(a.folder, "report.html")
    tmp = f"{out}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(page(data, figs))
        os.replace(tmp, out)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        fail(3, f"cannot write {out}: {e.strerror}")
    print(out)


if __name__ == "__main__":
    main()
