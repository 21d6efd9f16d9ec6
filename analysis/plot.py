#!/usr/bin/python3
"""Figures from the results database (read-only): speedup, metric, breakdown, curves.

  analysis/plot.py results/mavg.db --sweep quickstart --kind speedup --out results/figures/
  analysis/plot.py results/mavg.db --sweep quickstart --kind all --out results/figures/

Every figure is written as PNG and PDF. Needs Debian's python3-matplotlib and python3-yaml.
"""
import argparse
import json
import math
import os
import sqlite3
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KINDS = ["speedup", "metric", "breakdown", "curves"]
LABELS = {
    "test_error": "test error (%)", "cv_error": "CV error (%)", "test_acc": "test accuracy",
    "cv_acc": "CV frame accuracy", "wer": "WER (%)", "epoch_s": "epoch time (s)",
    "parallel.workers": "workers", "parallel.average_every": "averaging interval (minibatches)",
    "optimizer.minibatch": "minibatch (frames)",
}


class PlotError(Exception):
    """A figure that cannot be drawn from these runs; the message says why. Raised, not exited
    on, so that a caller drawing several figures (analysis/report_html.py) can go on."""


def fail(msg):
    raise PlotError(msg)


def connect(path):
    if not os.path.exists(path):
        fail(f"{path}: no results database")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        db.execute("SELECT 1 FROM sweep_results LIMIT 1")
    except sqlite3.DatabaseError as e:
        fail(f"{path}: not a mavg results database ({e})")
    return db


def load_runs(db, sweep):
    rows = db.execute(
        "SELECT run_id, status, axes_json, replicate FROM sweep_results WHERE sweep = ? "
        "ORDER BY position", (sweep,)).fetchall()
    if not rows:
        fail(f"no runs for sweep '{sweep}' (sweeps: "
             f"{', '.join(r[0] for r in db.execute('SELECT name FROM sweeps'))})")
    runs = []
    for run_id, status, axes_json, replicate in rows:
        r = {"run_id": run_id, "status": status, "replicate": replicate,
             "axes": dict(json.loads(axes_json)), "values": {}, "texts": {}}
        for key, value in db.execute("SELECT key, value FROM results WHERE run_id = ?", (run_id,)):
            (r["texts"] if isinstance(value, str) else r["values"])[key] = value
        ep = db.execute(
            "SELECT AVG(wall_s - COALESCE(cv_s, 0)), AVG(projected_wall_s), AVG(compute_s), "
            "AVG(comm_s), AVG(io_s), AVG(wait_s), AVG(frames) FROM epochs WHERE run_id = ?",
            (run_id,)).fetchone()
        for k, v in zip(["epoch_s", "projected_epoch_s", "compute_s", "comm_s", "io_s", "wait_s",
                         "frames_per_epoch"], ep):
            if v is not None:
                r["values"][k] = v
        if "test_acc" in r["values"]:
            r["values"]["test_error"] = 100 * (1 - r["values"]["test_acc"])
        if "cv_acc" in r["values"]:
            r["values"]["cv_error"] = 100 * (1 - r["values"]["cv_acc"])
        r["curve"] = db.execute(
            "SELECT epoch, cv_loss FROM epochs WHERE run_id = ? ORDER BY epoch", (run_id,)).fetchall()
        runs.append(r)
    return runs


def num(v):
    try:
        return float(v)
    except ValueError:
        return v


def groups(runs, x, series, where):
    """{series value: {x value: [runs]}} over completed runs matching `where`."""
    out = {}
    for r in runs:
        if r["status"] != "completed" or x not in r["axes"]:
            continue
        if any(r["axes"].get(k) != v for k, v in where.items()):
            continue
        s = r["axes"].get(series, "") if series else ""
        out.setdefault(s, {}).setdefault(num(r["axes"][x]), []).append(r)
    if not out:
        fail(f"no completed runs with axis '{x}'")
    return out


def is_simulated(r):
    return r["texts"].get("mode") == "simulated"


def epoch_time(r):
    return r["values"].get("projected_epoch_s" if is_simulated(r) else "epoch_s")


def time_per_frame(r):
    """Epoch seconds per training frame: speedups compare equal work, so a run that drops
    frames (a shard's last partial averaging interval) does not look faster for doing less."""
    frames = r["values"].get("frames_per_epoch")
    t = epoch_time(r)
    if not frames or t is None:
        fail(f"run {r['run_id']} recorded no training frames: no speedup per frame")
    return t / frames


def save(fig, out, name):
    os.makedirs(out, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        p = os.path.join(out, f"{name}.{ext}")
        fig.savefig(p, dpi=150, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    print("\n".join(paths))


def plot_speedup(runs, a):
    g = groups(runs, a.x, a.series, a.where)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    xmax = 1
    any_projected = False
    b = num(str(getattr(a, "baseline", 1)))  # the speedup table's --baseline value
    for s, pts in sorted(g.items(), key=lambda kv: num(kv[0]) if kv[0] != "" else 0):
        if b not in pts:
            continue
        base = statistics.mean(time_per_frame(r) for r in pts[b])
        xs = sorted(pts)
        ys = [base / statistics.mean(time_per_frame(r) for r in pts[x]) for x in xs]
        any_projected |= any(is_simulated(r) for x in xs for r in pts[x])
        label = f"{LABELS.get(a.series, a.series)} = {s}" if a.series else "mavg"
        ax.plot(xs, ys, "o-", label=label)
        xmax = max(xmax, max(xs))
    ref = load_reference(a.reference)
    if ref:
        t = ref["timing"]
        ax.plot(t["gpus"], t["speedup"], "s--", color="gray", label="Su & Chen 2015 (K20 GPUs)")
        xmax = max(xmax, max(t["gpus"]))
    ax.plot([1, xmax], [1, xmax], ":", color="black", label="ideal (linear)")
    ax.set_xlabel(LABELS.get(a.x, a.x))
    ax.set_ylabel("speedup per training frame" + (" (projected)" if any_projected else ""))
    ax.set_title(f"Speedup, sweep {a.sweep}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, a.out, f"{a.sweep}-speedup")


def plot_metric(runs, a):
    g = groups(runs, a.x, a.series, a.where)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for s, pts in sorted(g.items(), key=lambda kv: num(kv[0]) if kv[0] != "" else 0):
        xs = sorted(pts, key=lambda x: (isinstance(x, str), x))
        vals = [[r["values"][a.metric] for r in pts[x] if a.metric in r["values"]] for x in xs]
        keep = [(x, v) for x, v in zip(xs, vals) if v]
        if not keep:
            continue
        means = [statistics.mean(v) for _, v in keep]
        errs = [statistics.stdev(v) if len(v) > 1 else 0 for _, v in keep]
        label = f"{LABELS.get(a.series, a.series)} = {s}" if a.series else a.metric
        ax.errorbar([x for x, _ in keep], means, yerr=errs, fmt="o-", capsize=3, label=label)
    ticks = sorted({x for pts in g.values() for x in pts}, key=str)
    if all(isinstance(t, float) for t in ticks):  # numbers (workers, intervals): log2 axis
        ticks = sorted(ticks)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel(LABELS.get(a.x, a.x))
    ax.set_ylabel(LABELS.get(a.metric, a.metric))
    ax.set_title(f"{LABELS.get(a.metric, a.metric)} by {LABELS.get(a.x, a.x)}, sweep {a.sweep}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, a.out, f"{a.sweep}-{a.metric}")


def plot_breakdown(runs, a):
    g = groups(runs, a.x, None, a.where)[""]
    xs = sorted(g)
    parts = ["compute_s", "comm_s", "io_s", "wait_s"]
    names = {"compute_s": "compute", "comm_s": "averaging (comm)", "io_s": "data (io)",
             "wait_s": "waiting for others"}
    fig, ax = plt.subplots(figsize=(6, 4.5))
    bottom = [0.0] * len(xs)
    for p in parts:
        h = [statistics.mean(r["values"].get(p, 0.0) for r in g[x]) for x in xs]
        ax.bar([str(int(x)) if isinstance(x, float) and x.is_integer() else str(x) for x in xs],
               h, bottom=bottom, label=names[p])
        bottom = [b + v for b, v in zip(bottom, h)]
    ax.set_xlabel(LABELS.get(a.x, a.x))
    ax.set_ylabel("seconds per epoch (slowest worker)")
    ax.set_title(f"Where an epoch's time goes, sweep {a.sweep}")
    ax.legend(fontsize=8)
    save(fig, a.out, f"{a.sweep}-breakdown")


def plot_curves(runs, a):
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for r in runs:
        if any(r["axes"].get(k) != v for k, v in a.where.items()) or not r["curve"]:
            continue
        label = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in r["axes"].items())
        ax.plot([e for e, _ in r["curve"]], [l for _, l in r["curve"]], "o-", ms=3, label=label)
    ax.set_xlabel("epoch")
    ax.set_ylabel("CV cross-entropy (per frame)")
    ax.set_title(f"CV loss per epoch, sweep {a.sweep}")
    ax.legend(fontsize=6, ncol=2)
    ax.grid(alpha=0.3)
    save(fig, a.out, f"{a.sweep}-curves")


def load_reference(path):
    if not path or not os.path.exists(path):
        return None
    import yaml
    return yaml.safe_load(open(path))


FIGURES = {"speedup": plot_speedup, "metric": plot_metric, "breakdown": plot_breakdown,
           "curves": plot_curves}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("db")
    p.add_argument("--sweep", required=True)
    p.add_argument("--kind", choices=KINDS + ["all"], required=True)
    p.add_argument("--out", default="results/figures")
    p.add_argument("--x", default="parallel.workers", help="axis on the x axis")
    p.add_argument("--series", default="parallel.average_every", help="one line per value of this axis")
    p.add_argument("--metric", default="test_error")
    p.add_argument("--where", action="append", default=[], help="AXIS=VALUE (repeatable)")
    p.add_argument("--reference", default="sweeps/paper/reference.yaml", help="the paper's numbers")
    a = p.parse_args()
    a.where = dict(w.split("=", 1) for w in a.where)
    try:
        runs = load_runs(connect(a.db), a.sweep)
        if a.series and not any(a.series in r["axes"] for r in runs):
            a.series = None
        for kind in KINDS if a.kind == "all" else [a.kind]:
            FIGURES[kind](runs, a)
    except PlotError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
