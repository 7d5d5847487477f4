#!/usr/bin/env python3
"""Plots of a study's results (scalebench study): reads results/<study>/summary.json (the
figures the study derived from runs.jsonl, the newest finished line of each run) and draws

  speedup.png   speed-up against cores (or GPUs) per series, with the ideal line
  phases.png    where the time goes: compute / communication / transfer per run, stacked
  rate.png      rate against n per series, when the study sweeps n (CPU/GPU crossover)

  tools/report results/<study> [--out DIR]     (default: the study's folder)
  tools/report --check                          (exit 0 if matplotlib loads, else 3)

Needs python3-matplotlib (tools/setup installs it). Exit codes: 0 done, 2 usage (no such
folder, no runs.jsonl, no finished run), 3 matplotlib missing.
"""
import argparse
import json
import os
import sys


def fail(code, message):
    print(f"tools/report: error: {message}", file=sys.stderr)
    sys.exit(code)


def figures(row):
    """One plotted run from a summary.json row (scalebench study computes the figures)."""
    opts = row.get("options", {})
    ph = row.get("phases_s", {})
    threads = opts.get("threads")
    return {
        "resources": row["resources"],
        "gpu": row.get("gpu", False),
        "time": row["time_s"],
        "rate": row["rate"],
        "unit": row["rate_unit"],
        "compute": ph.get("compute", 0.0),
        "comm": ph.get("communication", 0.0),
        "transfer": ph.get("transfer", 0.0),
        "n": int(float(opts["n"])) if "n" in opts else None,
        "series": " ".join(f"{k}={v}" for k, v in sorted(opts.items()) if k not in ("threads", "n")),
        "label": f"#{row['index']} {row['ranks']}x{threads or '-'}" + (" GPU" if row.get("gpu") else ""),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study_dir", nargs="?")
    ap.add_argument("--out", help="folder for the PNG files (default: the study's folder)")
    ap.add_argument("--check", action="store_true", help="only check that matplotlib can be loaded (exit 0 or 3)")
    a = ap.parse_args()
    if a.check:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            fail(3, "matplotlib is missing: install python3-matplotlib (tools/setup does)")
        return
    if not a.study_dir:
        fail(2, "give the folder of a study, e.g. tools/report results/smoke")
    jsonl = os.path.join(a.study_dir, "runs.jsonl")
    if not os.path.isfile(jsonl):
        fail(2, f"{jsonl} not found: give the folder of a study (scalebench study writes results/<study>/runs.jsonl)")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail(3, "matplotlib is missing: install python3-matplotlib (tools/setup does)")
    summary = os.path.join(a.study_dir, "summary.json")
    if not os.path.isfile(summary):
        fail(2, f"{summary} not found: run the study (scalebench study) to write it")
    with open(summary) as f:
        rows = [figures(r) for r in json.load(f).get("runs", []) if r.get("status") == "ok"]
    if not rows:
        fail(2, f"no finished run in {summary} yet")
    out = a.out or a.study_dir
    os.makedirs(out, exist_ok=True)
    name = os.path.basename(os.path.normpath(a.study_dir))
    written = []

    def save(fig, ax, title, png):
        ax.set_title(f"{name}: {title}")
        ax.legend(fontsize="small")
        fig.tight_layout()
        p = os.path.join(out, png)
        fig.savefig(p, dpi=110)
        written.append(p)
        plt.close(fig)

    # Speed-up per series (same options but ranks/threads; n kept apart), against the fewest cores.
    series = {}
    for f in rows:
        series.setdefault((f["series"], f["n"]), []).append(f)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    most = 1
    for (s, n), fs in series.items():
        fs = sorted(fs, key=lambda f: f["resources"])
        base = fs[0]
        if base["time"] <= 0:
            continue
        x = [f["resources"] for f in fs]
        y = [base["time"] / f["time"] * 1.0 for f in fs if f["time"] > 0]
        most = max(most, max(x))
        label = (s + (f" n={n}" if n else "")).strip() or "runs"
        ax.plot(x[: len(y)], y, marker="o", label=label)
    ax.plot([1, most], [1, most], linestyle="--", color="grey", label="ideal")
    ax.set_xlabel("cores (CPU runs) or GPUs")
    ax.set_ylabel("speed-up (end to end)")
    ax.grid(True, alpha=0.3)
    save(fig, ax, "speed-up", "speedup.png")

    # Where the time goes.
    fig, ax = plt.subplots(figsize=(max(6.4, 0.6 * len(rows)), 4.8))
    x = range(len(rows))
    c = [f["compute"] for f in rows]
    m = [f["comm"] for f in rows]
    t = [f["transfer"] for f in rows]
    ax.bar(x, c, label="compute")
    ax.bar(x, m, bottom=c, label="communication")
    ax.bar(x, t, bottom=[a + b for a, b in zip(c, m)], label="host<->device")
    ax.set_xticks(list(x))
    ax.set_xticklabels([f["label"] for f in rows], rotation=45, ha="right", fontsize="small")
    ax.set_ylabel("seconds (median of the slowest rank)")
    save(fig, ax, "where the time goes", "phases.png")

    # Rate against n, when n varies.
    if len({f["n"] for f in rows if f["n"]}) > 1:
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        by = {}
        for f in rows:
            by.setdefault(f["series"], []).append(f)
        for s, fs in by.items():
            fs = sorted(fs, key=lambda f: f["n"] or 0)
            ax.plot([f["n"] for f in fs], [f["rate"] for f in fs], marker="o", label=s or "runs")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel(f"rate, end to end ({rows[0]['unit']})")
        ax.grid(True, alpha=0.3, which="both")
        save(fig, ax, "rate against size", "rate.png")

    for p in written:
        print(p)


if __name__ == "__main__":
    main()
