#!/usr/bin/python3
"""Figures of a sweep: speedup, metric, breakdown, curves.

  analysis/plot.py results/mavg.db --sweep quickstart --kind speedup --out results/figures/
  analysis/plot.py results/mavg.db --sweep quickstart --kind all --out results/figures/

mavg computes, this script lays out: every number drawn is one that `mavg report ... --format
json` prints, run here on the database (read-only): the speedup figure is `report speedup`'s
speedups (measured, the baseline's seconds per training frame over the row's, for lines of real
processes; projected within each run, N x the mean worker's measured compute and data seconds
over the run's projected epoch, for lines of simulated workers), the metric figure and the time
breakdown are `report table`'s cells (mean ± std over replicates), the CV loss curves are
`report epochs`' rows. The binary is --mavg, else $MAVG, else build/bin/mavg of this source
tree. `mavg report html` draws its page's figures with the same code, from the same reports in
its report.json.

Every figure is written as PNG and PDF. Needs Debian's python3-matplotlib and python3-yaml.
"""
import argparse
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

KINDS = ["speedup", "metric", "breakdown", "curves"]
LABELS = {
    "test_error": "test error (%)", "cv_error": "CV error (%)", "test_acc": "test accuracy",
    "cv_acc": "CV frame accuracy", "wer": "WER (%)", "epoch_s": "epoch time (s)",
    "parallel.workers": "workers", "parallel.average_every": "averaging interval (minibatches)",
    "optimizer.minibatch": "minibatch (frames)",
}
# The time breakdown's parts: per-run means over epochs of the slowest worker's seconds.
PARTS = {"compute_s": "compute", "comm_s": "averaging (comm)", "io_s": "data (io)",
         "wait_s": "waiting for others"}


class PlotError(Exception):
    """A figure that cannot be drawn from these runs; the message says why. Raised, not exited
    on, so that a caller drawing several figures (analysis/report_html.py) can go on."""


def fail(msg):
    raise PlotError(msg)


def mavg_binary(given=None):
    """The mavg binary: `given` (--mavg), else $MAVG, else build/bin/mavg of this tree."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    default = os.path.join(root, "build", "bin", "mavg")
    for path, origin in ((given, "--mavg"), (os.environ.get("MAVG"), "MAVG")):
        if path:
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                fail(f"{path} ({origin}): not an executable mavg binary")
            return path
    if not (os.path.isfile(default) and os.access(default, os.X_OK)):
        fail(f"no mavg binary: {default} is not built; give --mavg PATH or set MAVG")
    return default


class Reports:
    """`mavg report ... --format json` on one sweep of one database (db None: the reports that
    read none, such as compare and model), each asked once."""

    def __init__(self, mavg, db, sweep=None):
        self.mavg, self.db, self.sweep, self.cache = mavg, db, sweep, {}

    def text(self, args):
        """What `mavg report ARGS --db DB` prints; on failure a PlotError with mavg's error
        message (and `line`, the last line it wrote to standard error, as written)."""
        cmd = [self.mavg, "report", *args] + (["--db", self.db] if self.db else [])
        try:
            p = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            fail(f"{self.mavg}: {e.strerror}")
        if p.returncode != 0:
            lines = [l for l in p.stderr.splitlines() if l.strip()]
            errors = [l[len("mavg: error: "):] for l in lines if l.startswith("mavg: error: ")]
            e = PlotError(errors[-1] if errors else lines[-1] if lines else
                          f"mavg report {args[0]} failed (exit {p.returncode})")
            e.line = lines[-1] if lines else None
            raise e
        return p.stdout

    def get(self, args):
        """`mavg report ARGS --format json`, parsed."""
        key = tuple(args)
        if key not in self.cache:
            text = self.text([*args, "--format", "json"])
            try:
                self.cache[key] = json.loads(text)
            except json.JSONDecodeError as e:
                fail(f"mavg report {args[0]} printed no JSON ({e})")
        return self.cache[key]

    def epochs(self):
        return self.get(["epochs", self.sweep])


def where_args(where):
    return [arg for k, v in where.items() for arg in ("--where", f"{k}={v}")]


def epochs_table(data):
    """(axes, rows as dicts) of `report epochs`: its JSON rows, whose axes are the keys between
    status and epoch, or report.json's {columns, axes, rows}."""
    if isinstance(data, dict):
        return data["axes"], [dict(zip(data["columns"], row)) for row in data["rows"]]
    keys = list(data[0]) if data else []
    axes = keys[keys.index("status") + 1:keys.index("epoch")] if keys else []
    return axes, data


def axis_values(epochs, where):
    """{axis: its values in plan order} over the runs (with epochs) that match `where`."""
    axes, rows = epochs_table(epochs)
    out = {a: [] for a in axes}
    for r in rows:
        if all(str(r.get(k)) == v for k, v in where.items() if k in out):
            for a in axes:
                if r[a] not in out[a]:
                    out[a].append(r[a])
    return out


def prepare(reports, a):
    """The command line's defaults, from the sweep's axes: no series when the series axis is
    not one of them; the breakdown (one bar per x) holds a series axis that varies at its first
    value, as the page of `mavg report html` does, instead of pooling its values."""
    values = axis_values(reports.epochs(), a.where)
    if a.series and a.series not in values:
        a.series = None
    a.held = {k: v[0] for k, v in values.items() if len(v) == 1}
    a.breakdown_where = dict(a.where)
    if a.series and a.series not in a.where and len(values[a.series]) > 1:
        a.breakdown_where[a.series] = values[a.series][0]
        a.breakdown_note = f" ({a.series} = {values[a.series][0]})"


def fetch(kind, reports, a):
    """The reports figure `kind` is drawn from, as report.json's figures.data holds them."""
    s = a.sweep
    if kind == "metric":
        cols = ["--cols", a.series] if a.series else []
        return reports.get(["table", s, "--rows", a.x, *cols, "--value", a.metric,
                            *where_args(a.where)])
    if kind == "speedup":
        return reports.get(["speedup", s, "--baseline", f"{a.x}={getattr(a, 'baseline', '1')}",
                            *where_args(a.where)])
    if kind == "breakdown":
        where = getattr(a, "breakdown_where", a.where)
        present = set(epochs_table(reports.epochs())[1][0]) if reports.epochs() else set()
        return {p: reports.get(["table", s, "--rows", a.x, "--value", p, *where_args(where)])
                for p in PARTS if p in present}
    return reports.epochs()


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def order(v):
    """Sort key: numbers in numeric order before text."""
    n = num(v)
    return (isinstance(n, str), n)


def number(cell):
    """A table cell's number, or None for '–', 'simulated' and other text."""
    n = num(cell)
    return None if isinstance(n, str) else n


def save(fig, out, name):
    os.makedirs(out, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        p = os.path.join(out, f"{name}.{ext}")
        fig.savefig(p, dpi=150, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    print("\n".join(paths))


# Our lines' colours: matplotlib's cycle without its gray, which the paper's curve wears.
COLORS = ["C0", "C1", "C2", "C3", "C4", "C5", "C6", "C8", "C9"]
PAPER = "Su & Chen 2015, measured, K20 GPUs"


def integer_ticks(ax, xs):
    """Ticks at these whole numbers (worker counts), the axis no wider than they are."""
    xs = sorted(set(xs))
    ax.set_xticks(xs, [f"{x:g}" for x in xs])
    pad = max(0.5, 0.05 * (xs[-1] - xs[0]))
    ax.set_xlim(xs[0] - pad, xs[-1] + pad)


def plot_speedup(data, a):
    """`report speedup`'s speedups, one line per value of the series axis (per combination of
    the axes the table splits its rows by, when more vary). A line of real processes only (MPI
    ranks, one worker) draws the measured speedups (the baseline's measured seconds per training
    frame over the row's); a line with simulated workers the projected ones (within each run: N
    x the mean worker's measured compute and data seconds over the run's projected epoch; 1
    worker: 1). The legend says which, and on what (the table's devices), apart from the paper's
    measured GPU curve, which is drawn only as far as our runs go. Open markers: rows whose
    drawn efficiency the table notes as within the baseline's noise."""
    header, rows, text = data["header"], data["rows"], data["text_cols"]
    group, xi = header[:text - 1], text - 1
    col = {h: i for i, h in enumerate(header)}
    measured_speedup, projected_speedup, measured = (
        col["measured speedup"], col["projected speedup"], col["measured epoch s"])
    noise = data.get("noise") or [[] for _ in rows]
    devices = " and ".join(data.get("devices") or [])
    key_axes = [a.series] if a.series in group else []
    keys = [tuple(r[group.index(k)] for k in key_axes) + (r[xi],) for r in rows]
    if len(set(keys)) < len(keys):  # another axis varies too: a line per combination
        key_axes = group
    rows_of = {}
    for r, noisy in zip(rows, noise):
        rows_of.setdefault(tuple(r[group.index(k)] for k in key_axes), []).append((r, noisy))
    lines = {}
    for key, members in rows_of.items():
        # Simulated runs' times are projected (their measured column says "simulated"); a line
        # with any draws the projected speedups, a line of real processes the measured ones.
        simulated = any(r[measured] == "simulated" for r, _ in members)
        kind, c = ("projected", projected_speedup) if simulated else ("measured", measured_speedup)
        pts = [(r[xi], number(r[c]), simulated, kind in noisy) for r, noisy in members]
        pts = [p for p in pts if p[1] is not None]
        if pts:
            lines[key] = pts
    if not lines:
        fail(f"no speedup in sweep {a.sweep}: its runs recorded no training frames (or no "
             "workers' compute times)")
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ours = []
    held = {**getattr(a, "held", {}), **a.where}
    any_projected = any_noisy = False
    for i, key in enumerate(sorted(lines, key=lambda k: tuple(order(v) for v in k))):
        pts = sorted(lines[key], key=lambda p: order(p[0]))
        if key_axes == [a.series]:
            series = f"{LABELS.get(a.series, a.series)} = {key[0]}"
        elif key_axes:
            series = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(key_axes, key))
        elif a.series and a.series in held:
            series = f"{LABELS.get(a.series, a.series)} = {held[a.series]}"
        else:
            series = ""
        line_projected = any(p[2] for p in pts)
        any_projected |= line_projected
        how = "projected from simulated workers" if line_projected else "measured"
        label = ", ".join(x for x in ("mavg", how, devices) if x) + (f": {series}" if series else "")
        xs = [num(x) for x, _, _, _ in pts]
        color = COLORS[i % len(COLORS)]
        ax.plot(xs, [y for _, y, _, _ in pts], "o-", color=color, label=label)
        noisy = [(x, y) for (_, y, _, n), x in zip(pts, xs) if n]
        if noisy:
            any_noisy = True
            ax.plot([x for x, _ in noisy], [y for _, y in noisy], "o", color=color, mfc="white",
                    zorder=3)
        ours += [x for x in xs if not isinstance(x, str)]
    xmax = max(ours + [1])
    ref = load_reference(a.reference)
    if ref:
        # Only as far as our runs go: the axis is ours; the points beyond are named, not drawn.
        t = ref["timing"]
        shown = [(g, s) for g, s in zip(t["gpus"], t["speedup"]) if g <= xmax]
        left = [g for g in t["gpus"] if g > xmax]
        label = PAPER + (f" ({', '.join(map(str, left))} GPUs not shown: beyond these runs)"
                         if left else "")
        if shown:
            ax.plot([g for g, _ in shown], [s for _, s in shown], "s--", color="0.35",
                    mfc="white", label=label)
    ax.plot([1, xmax], [1, xmax], ":", color="black", lw=1, label="ideal (linear)")
    if any_noisy:
        ax.plot([], [], "o", color="black", mfc="white",
                label="open: efficiency within the baseline's noise (table notes)")
    if ours:
        integer_ticks(ax, ours + [1])
    ax.set_xlabel(LABELS.get(a.x, a.x))
    any_measured = any(not any(p[2] for p in pts) for pts in lines.values())
    ax.set_ylabel("speedup" + (" (projected within each run)" if not any_measured else
                               " per training frame (measured)" if not any_projected else
                               " (measured or projected: legend)"))
    ax.set_title(f"Speedup, sweep {a.sweep}")
    # Under the axes: the labels say how each curve was timed, too long to sit over the lines.
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    ax.grid(alpha=0.3)
    save(fig, a.out, f"{a.sweep}-speedup")


def plot_metric(data, a):
    """`report table`'s cells: mean with the standard deviation as error bars, one line per
    column (the series axis)."""
    lines = {}
    for c in data["cells"]:
        if c["n"]:
            lines.setdefault(c.get("col", ""), []).append((num(c["row"][0]), c["mean"], c["std"]))
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for s in sorted(lines, key=order):
        pts = sorted(lines[s], key=lambda p: order(p[0]))
        label = f"{LABELS.get(a.series, a.series)} = {s}" if a.series else a.metric
        ax.errorbar([x for x, _, _ in pts], [m for _, m, _ in pts], yerr=[e for _, _, e in pts],
                    fmt="o-", capsize=3, label=label)
    ticks = sorted({x for pts in lines.values() for x, _, _ in pts}, key=str)
    if ticks and all(isinstance(t, float) for t in ticks):  # numbers (workers): log2 axis
        ticks = sorted(ticks)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel(LABELS.get(a.x, a.x))
    ax.set_ylabel(LABELS.get(a.metric, a.metric))
    ax.set_title(f"{LABELS.get(a.metric, a.metric)} by {LABELS.get(a.x, a.x)}, sweep {a.sweep}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, a.out, f"{a.sweep}-{a.metric}")


def plot_breakdown(data, a):
    """`report table`'s means of compute, comm, io and wait seconds, stacked per x. Bars of
    simulated workers (the cells' modes) are hatched: each part is measured per worker in this
    one process, their total a projection onto N devices, and the figure says so."""
    if not data:
        fail(f"no epoch of sweep {a.sweep} recorded its compute, averaging, data or waiting time")
    means = {p: {c["row"][0]: c["mean"] for c in t["cells"] if c["n"]} for p, t in data.items()}
    simulated = {c["row"][0] for t in data.values() for c in t["cells"]
                 if "simulated" in c.get("modes", [])}
    xs = sorted({x for m in means.values() for x in m}, key=order)
    names = [str(int(num(x))) if isinstance(num(x), float) and num(x).is_integer() else str(x)
             for x in xs]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    bottom = [0.0] * len(xs)
    for p in PARTS:
        h = [means.get(p, {}).get(x, 0.0) for x in xs]
        bars = ax.bar(names, h, bottom=bottom, label=PARTS[p])
        for bar, x in zip(bars, xs):
            if x in simulated:
                bar.set_hatch("//")
                bar.set_edgecolor("0.25")
                bar.set_linewidth(0.5)
        bottom = [b + v for b, v in zip(bottom, h)]
    for i, x in enumerate(xs):
        if x in simulated:
            ax.annotate("projected", (i, bottom[i]), ha="center", va="bottom", fontsize=7)
    if simulated:
        from matplotlib.patches import Patch
        ax.legend(handles=ax.get_legend_handles_labels()[0] + [Patch(
            facecolor="white", edgecolor="0.25", hatch="//",
            label="simulated workers: parts measured per worker,\ntotal projected onto N devices")],
                  fontsize=8)
    else:
        ax.legend(fontsize=8)
    ax.set_xlabel(LABELS.get(a.x, a.x))
    ax.set_ylabel("seconds per epoch (slowest worker)")
    ax.set_title(f"Where an epoch's time goes, sweep {a.sweep}{getattr(a, 'breakdown_note', '')}")
    save(fig, a.out, f"{a.sweep}-breakdown")


# The CV loss curves: a colour per configuration (tab10, tab20 past 10; a marker of its own for
# each further 20), a line style per replicate.
CURVE_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
REPLICATE_STYLES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3))]


def plot_curves(data, a):
    """`report epochs`' CV loss per epoch, one line per run that matches --where: a colour (and
    marker) per configuration, the values of the axes that vary among the runs, and a line
    style per replicate, so that runs are told apart up to 160 configurations of 6 replicates.
    The legend sits under the axes, in as many columns as fit, over no curve."""
    axes, rows = epochs_table(data)
    runs = {}
    for r in rows:
        values = {k: r[k] for k in axes}
        if any(str(values.get(k)) != v for k, v in a.where.items()):
            continue
        runs.setdefault(r["run_id"], (values, r.get("replicate"), []))[2].append(
            (r["epoch"], r.get("cv_loss")))
    # Axes that take one value among these runs (--where's, or a sweep's constants) are the
    # same for every line: the labels name only those that vary, or, with none, them all.
    varying = [k for k in axes if len({str(v[k]) for v, _, _ in runs.values()}) > 1]
    named = varying or axes
    configs = list(dict.fromkeys(tuple(str(v[k]) for k in named) for v, _, _ in runs.values()))
    replicates = sorted({rep for _, rep, _ in runs.values()}, key=order)
    palette = plt.get_cmap("tab10" if len(configs) <= 10 else "tab20").colors
    style = {}
    for i, c in enumerate(configs):
        style[c] = {"color": palette[i % len(palette)],
                    "marker": CURVE_MARKERS[(i // len(palette)) % len(CURVE_MARKERS)]}
    dashes = {rep: REPLICATE_STYLES[j % len(REPLICATE_STYLES)] for j, rep in enumerate(replicates)}
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for values, rep, curve in runs.values():
        c = tuple(str(values[k]) for k in named)
        ax.plot([e for e, _ in curve], [l for _, l in curve], ls=dashes[rep], ms=3, lw=1.2,
                **style[c])
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], ms=4, lw=1.2, **style[c],
                      label=", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(named, c))
                      or "every run") for c in configs]
    if len(replicates) > 1:
        handles += [Line2D([], [], color="0.3", ls=dashes[rep], lw=1.2, label=f"replicate {rep}")
                    for rep in replicates]
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole
    ax.set_ylabel("CV cross-entropy (per frame)")
    ax.set_title(f"CV loss per epoch, sweep {a.sweep}")
    if handles:
        # Under the axes, as many columns as the labels' length lets fit in the figure's width.
        longest = max(len(h.get_label()) for h in handles)
        ncol = max(1, min(len(handles), int(6.5 * 72 // (7 * 0.55 * longest + 40))))
        ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14),
                  ncol=ncol, title=("colour: configuration; line style: replicate"
                                    if len(replicates) > 1 else None), title_fontsize=7)
    ax.grid(alpha=0.3)
    save(fig, a.out, f"{a.sweep}-curves")


def load_reference(path):
    if not path or not os.path.exists(path):
        return None
    import yaml
    return yaml.safe_load(open(path))


FIGURES = {"speedup": plot_speedup, "metric": plot_metric, "breakdown": plot_breakdown,
           "curves": plot_curves}


def draw(kind, data, a):
    """Figure `kind` from its reports (fetch's, or report.json's figures.data[kind])."""
    if isinstance(data, dict) and "error" in data:
        fail(data["error"])
    FIGURES[kind](data, a)


def figure(kind, reports, a):
    """Figure `kind` as the command line draws it: the reports from mavg, then the drawing."""
    prepare(reports, a)
    draw(kind, fetch(kind, reports, a), a)


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
    p.add_argument("--mavg", help="the mavg binary (default: $MAVG, else build/bin/mavg here)")
    a = p.parse_args()
    a.where = dict(w.split("=", 1) for w in a.where)
    try:
        reports = Reports(mavg_binary(a.mavg), a.db, a.sweep)
        for kind in KINDS if a.kind == "all" else [a.kind]:
            figure(kind, reports, a)
    except PlotError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
