#!/usr/bin/python3
"""docs/reproduction.md from the paper sweeps' results (read-only). It opens with the verdicts,
one row per effect of the criteria file: the paper's claim, its SWB and CallHome numbers, the
paper's effect scaled to our baseline, our paired difference with its 95 % interval, the verdict
and why; then what is pending, the multiplicity, the criteria in words, the runs, what the
decoder fix changed on Table 1 (from round 1's archive), and the details: per table its cells,
effects and a figure; the scale study; the test set's share of the noise; the regime; speedups.

  analysis/reproduction.py results/paper/mavg.db --out docs/reproduction.md \
      --figures docs/reproduction --mavg build/bin/mavg [--criteria FILE] [--verdicts-json FILE] \
      [--round1 archive/paper-round1] [--readme README.md]

Run by scripts/reproduce.sh; needs Debian's python3-matplotlib and python3-yaml. The README's
reproduction summary is the page's verdicts block, copied between its reproduction-summary
markers whenever the page is written (tests/e2e/readme_reference.sh checks they agree).

mavg computes, this script lays out: the verdicts, intervals, rules and multiplicity are `mavg
report verdicts CRITERIA --results DIR --format json` (or that JSON from --verdicts-json; a mavg
without the report gives one line instead); the rest is `report runs`, `report epochs`, `report
compare` (a cell's t interval; a rank test where an effect has the 6 pairs it needs to decide),
`report bootstrap`, `report speedup` and `report model`. The criteria file is read for its
effects' arms only (which runs a figure, bootstrap or scale-study trail uses). SQL, for layout
no report gives: a sweep's axes per run (the cells), the runs' builds, CPUs and CPU-hours, and
Table 2's dead units. Round 1's Table 1 is recomputed from its archive's files.
"""
import argparse
import datetime
import json
import os
import re
import sqlite3
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402  (the figure helpers, shared)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

PENDING = ("new", "running", "interrupted", "preempted")
OUTCOMES = ("collapsed", "diverged")  # ended without a usable model
RANK_PAIRS = 6  # the fewest pairs on which a signed-rank test can go below 5 % (2 / 2^6)
PROJECTED = "projected from simulated workers, no network"
# The paper's regime (sweeps/paper/reference.yaml's header): 300 h ~ 97.2M training frames an
# epoch, minibatch 1024, averaging every K = 10 minibatches, 16 GPUs for Tables 3-6.
PAPER_FRAMES, PAPER_MB, PAPER_K, PAPER_GPUS = 97.2e6, 1024, 10, 16
# Okabe & Ito's colourblind-safe palette (no yellow: too pale on white).
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
W, MB, AVG, INIT = "parallel.workers", "optimizer.minibatch", "parallel.average_every", "model.init"
SCHED, OPT, SMC, LR, TRAIN = ("schedule.type", "optimizer.type", "optimizer.sgd_max_change",
                              "schedule.lr", "data.train")
# An axis a run's config does not name has its default (runs of a build without the key).
DEFAULTS = {SMC: False}
# A cell's label: each axis as it reads (workers last).
LABELS = {W: "{} w", MB: "mb {}", AVG: "every {}", INIT: "{}", SCHED: "{}", OPT: "{}",
          LR: "lr {}", "schedule.epochs": "{} epochs", "pretrain.rbm.lr": "rbm lr {}",
          "optimizer.max_change_per_sample": "max-change {}/sample"}
VERDICTS_BEGIN, VERDICTS_END = "<!-- verdicts:begin -->", "<!-- verdicts:end -->"
TABLES = {
    "1": ("WER against the number of workers",
          "NG-SGD and RBM pretraining as the fork ran them (`configs/paper-fork.yaml`), averaging "
          "every 10 minibatches, the exponential schedule over 15 epochs to 0.01 x, lr × workers. "
          "The paper: 1, 8, 16 and 32 GPUs."),
    "2": ("RBM pretraining against random initialisation",
          "Each replicate pretrains its own stack (`replicate_pretraining`); the RBM momentum ramp "
          "is scaled to the corpus. The paper: 1 → 32 GPUs."),
    "3": ("averaging interval", "The paper: 16 GPUs, every 10 or 20 minibatches."),
    "4": ("minibatch size",
          "By the preset's calibration minibatch 256 on 512-wide layers is the analogue of the "
          "paper's 1024 on 2048-wide ones, so the paper's 256 against 1024 is 64 against 256 "
          "here; the same lr per frame for every size. The paper: 1 → 16 GPUs."),
    "5": ("learning-rate schedule",
          "Both on the paper's 15 epochs at most (exponential: to 0.01 x; newbob with the fork's "
          "end_halving_impr 1e-4). The paper: 1 → 16 GPUs."),
    "6": ("NG-SGD against plain SGD",
          "The paper does not give its SGD lr. sgd: nnet1's default for minibatch 256, 0.008 (× "
          "workers), no max-change; sgd + max-change: under NG-SGD's own limit "
          "(`optimizer.sgd_max_change`), at NG-SGD's lr 0.32 it differs from ngsgd only in the "
          "preconditioning. The paper: 1 → 16 GPUs."),
    "design": ("design checks",
               "Not in the paper (`sweeps/paper/design-*.yaml`): is the many-worker loss "
               "under-training or averaging, and does the max-change's step size drive it?"),
}


def axis_text(v):
    """An axis value as the store writes it (from the run's config or a criteria file):
    16, rbm, true, 0.32."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def fmt(x, digits=2, none="–"):
    return none if x is None else f"{x:.{digits}f}"


def sgn(x, digits=2, none="–"):
    return none if x is None else f"{x:+.{digits}f}"


def cell_text(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def table(header, rows):
    out = "| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n"
    return out + "".join("| " + " | ".join(cell_text(c) for c in row) + " |\n" for row in rows)


class Mavg:
    """The reports that take no sweep (verdicts, compare, bootstrap, model), each asked once."""

    def __init__(self, mavg):
        self.reports = plot.Reports(mavg, None)

    def run(self, args, as_json=True):
        """`mavg report ARGS` (parsed JSON, or the text); None when it fails or prints no
        JSON: the page says "–" where a statistic could not be had."""
        try:
            return self.reports.get(args) if as_json else self.reports.text(args)
        except plot.PlotError:
            return None

    def verdicts(self, criteria, results):
        """(`report verdicts`' JSON, None), or (None, the one line the page says instead)."""
        if not os.path.exists(criteria):
            return None, f"verdicts: no criteria file {criteria}."
        try:
            return self.reports.get(["verdicts", criteria, "--results", results]), None
        except plot.PlotError as e:
            if "unknown command 'mavg report verdicts'" in str(e):
                return None, ("verdicts: this mavg has no `report verdicts` (a build from before "
                              "it): the page has no verdicts, only the cells.")
            return None, f"verdicts: `mavg report verdicts` failed: {e}."

    @staticmethod
    def values(vals):
        return ",".join("x" if v == "x" else repr(float(v)) for v in vals)

    def compare(self, a, b):
        """b - a, paired by replicate: a, b are {replicate: value or 'x'}; None without a pair."""
        reps = sorted(set(a) & set(b))
        if not reps:
            return None
        return self.run(["compare", "--a", self.values(a[r] for r in reps),
                         "--b", self.values(b[r] for r in reps), "--paired"])

    def interaction(self, a1, b1, a2, b2):
        """(b2 - a2) - (b1 - a1), paired by replicate over the replicates all four share."""
        reps = sorted(set(a1) & set(b1) & set(a2) & set(b2))
        if not reps:
            return None
        args = ["compare", "--paired"]
        for name, arm in (("--a1", a1), ("--b1", b1), ("--a2", a2), ("--b2", b2)):
            args += [name, self.values(arm[r] for r in reps)]
        return self.run(args)

    def mean_ci(self, vals):
        """A cell's t interval: its values paired against zeros (`report compare`'s paired
        difference of b - 0 is the one-sample t interval of b's mean)."""
        if len(vals) < 2:
            return None
        return self.compare({i: 0.0 for i in range(len(vals))}, dict(enumerate(vals)))

    def bootstrap(self, a_dir, b_dir):
        return self.run(["bootstrap", "--a", a_dir, "--b", b_dir])


class Runs:
    """One sweep's runs (`report runs`, each with its axes in the spec's order from the store)
    and epochs (`report epochs`); empty before it ran."""

    def __init__(self, mavg, db_path, db, sweep):
        self.sweep, self.reports = sweep, plot.Reports(mavg, db_path, sweep)
        try:
            self.runs = self.reports.get(["runs", sweep])
        except plot.PlotError:
            self.runs = []
        try:
            self.epochs = self.reports.epochs()
        except plot.PlotError:
            self.epochs = []
        axes = dict(db.execute("SELECT run_id, axes_json FROM sweep_runs WHERE sweep = ?",
                               (sweep,)).fetchall())
        for r in self.runs:
            r["axes"] = [(k, v) for k, v in json.loads(axes.get(r["run_id"], "[]"))]
        self.keys = {k for r in self.runs for k in r}

    def value(self, r, key):
        """A run's value of a config key as text: its axis, else `report runs`' column, else
        the key's default; None where neither the run nor the sweep names it."""
        for k, v in r["axes"]:
            if k == key:
                return v
        if key in r:
            return axis_text(r[key])
        return axis_text(DEFAULTS[key]) if key in DEFAULTS else None

    def cell(self, axes):
        """The runs matching `axes` ({key: value}); a key no run of the sweep names is one the
        sweep does not vary, and matches."""
        named = self.keys | {k for r in self.runs for k, _ in r["axes"]} | set(DEFAULTS)
        return [r for r in self.runs
                if all(k not in named or self.value(r, k) == axis_text(v) for k, v in axes.items())]

    def cells(self):
        """[(axes as [(key, value)], runs)] in the order the store lists them."""
        out = {}
        for r in sorted(self.runs, key=lambda r: tuple(plot.order(v) for _, v in r["axes"])):
            out.setdefault(tuple(r["axes"]), []).append(r)
        return list(out.items())

    def values(self, axis, default):
        """The values an axis takes in these runs in numeric order, or `default` before the
        sweep has run."""
        found = {v for r in self.runs for v in [self.value(r, axis)] if v is not None}
        return sorted(found, key=plot.order) if found else [str(v) for v in default]

    def complete(self):
        return bool(self.runs) and not any(r["status"] in PENDING for r in self.runs)

    def run_epochs(self, runs):
        ids = {r["run_id"] for r in runs}
        out = {}
        for e in self.epochs:
            if e["run_id"] in ids:
                out.setdefault(e["run_id"], []).append(e)
        return out


class Sweeps(dict):
    """Runs per sweep name, read when first asked for; `names` are the sweeps in the store."""

    def __init__(self, mavg, db_path, db):
        super().__init__()
        self.args = (mavg, db_path, db)
        self.names = [n for (n,) in db.execute("SELECT name FROM sweeps ORDER BY name")]

    def __missing__(self, name):
        self[name] = Runs(*self.args, name)
        return self[name]


def label(axes, sweep=None, own=None):
    """A cell's label from its axes (workers last); a sweep other than the section's own is
    named first."""
    parts = []
    for k, v in sorted(axes, key=lambda kv: kv[0] == W):
        if k == SMC:
            parts.append("+ max-change" if v == "true" else "")
        elif k == TRAIN:
            parts.append(corpus_of(v))
        else:
            parts.append(LABELS.get(k, k + " {}").format(v))
    text = ", ".join(p for p in parts if p).replace(", + max-change", " + max-change")
    return f"{sweep}: {text}" if sweep and sweep != own else text or "all"


def corpus_of(train):
    """A training set's corpus as the family names it: data/digits-x4t/train -> x4t."""
    m = re.search(r"digits-(x\d+t?)\b", train or "")
    return m.group(1) if m else (train or "?")


def dev_key(r):
    return "wer_dev" if "wer_dev" in r else "dev_wer" if "dev_wer" in r else None


def outcomes(runs):
    """{replicate: WER, or 'x' for a collapsed or diverged run}; other runs left out."""
    out = {}
    for r in runs:
        if r["status"] == "completed" and r.get("wer") is not None:
            out[r["replicate"]] = r["wer"]
        elif r["status"] in OUTCOMES:
            out[r["replicate"]] = "x"
    return out


def epoch_mean(tab, runs, field, per=None):
    """A per-epoch field's mean over the epochs of each run, then over the runs (per: divide
    each epoch's value by this field first); None where no epoch has it."""
    per_run = []
    for eps in tab.run_epochs(runs).values():
        v = [e[field] / (e.get(per) or 1) if per else e[field]
             for e in eps if e.get(field) is not None]
        if v:
            per_run.append(statistics.mean(v))
    return statistics.mean(per_run) if per_run else None


class Page:
    """What every section reads: the arguments, mavg, the database, the sweeps' runs, the
    verdicts (None, with the line the page says instead) and the criteria's arms by effect."""

    def __init__(self, a, mavg, db):
        self.a, self.m, self.db = a, Mavg(mavg), db
        self.t = Sweeps(mavg, a.db, db)
        self.md_dir = os.path.dirname(os.path.abspath(a.out)) or "."
        self.figures_made = []
        self.ref = plot.load_reference(a.reference) or {}
        self.verdicts, self.verdicts_note = self.load_verdicts()
        self.effects = (self.verdicts or {}).get("effects") or []
        self.spec = self.load_arms()
        self.test_size = None  # from the first bootstrap
        self.avg_cache = {}

    def load_verdicts(self):
        a = self.a
        if a.verdicts_json:
            with open(a.verdicts_json) as f:
                return json.load(f), None
        return self.m.verdicts(a.criteria, os.path.dirname(os.path.abspath(a.db)))

    def load_arms(self):
        """{effect id: {arm: (sweep, axes)}}: the JSON's own a, b, where where it has them (a
        fixture's), else the criteria file's."""
        path = (self.verdicts or {}).get("criteria")
        path = path if path and os.path.exists(path) else self.a.criteria
        crit = {}
        if os.path.exists(path):
            import yaml
            crit = {e["id"]: e for e in (yaml.safe_load(open(path)) or {}).get("effects") or []}
        out = {}
        for e in self.effects:
            src = e if "a" in e else crit.get(e["id"], e)
            where, arms = src.get("where") or {}, {}
            for k in ("a", "b", "a2", "b2"):
                if src.get(k) is not None:
                    sweep = src.get("sweep_b") if k.startswith("b") and src.get("sweep_b") else src.get("sweep")
                    arms[k] = (sweep, {**where, **src[k]})
            out[e["id"]] = arms
        return out

    def arm_runs(self, e, arm):
        sweep, axes = self.spec.get(e["id"], {}).get(arm, (None, None))
        if not sweep or sweep not in self.t.names:
            return []
        return self.t[sweep].cell(axes)

    def averagings(self, e):
        """The averagings per epoch of an effect's arm b (the many-worker one), from its epochs."""
        if e["id"] not in self.avg_cache:
            sweep = self.spec.get(e["id"], {}).get("b", (None,))[0]
            runs = self.arm_runs(e, "b")
            self.avg_cache[e["id"]] = epoch_mean(self.t[sweep], runs, "averagings") if runs else None
        return self.avg_cache[e["id"]]

    def corpus(self, e):
        """The corpus an effect's runs trained on: its criteria's data.train, else the config
        of one of its runs."""
        axes = self.spec.get(e["id"], {}).get("b", (None, {}))[1]
        if TRAIN in axes:
            return corpus_of(axes[TRAIN])
        for r in self.arm_runs(e, "b"):
            try:
                import yaml
                c = yaml.safe_load(open(os.path.join(r["run_dir"], "config.yaml")))
                return corpus_of(c["data"]["train"])
            except (OSError, KeyError, TypeError):
                continue
        return "the tables'"

    # ---- figures
    def curves(self, groups, title, name):
        """CV loss, CV frame accuracy and lr per epoch: per cell the mean over its runs with a
        min-max band; newbob's rejected epochs marked on the lr panel, and on the CV panels the
        model kept (the last accepted epoch's). groups: [(Runs, [(label, runs)])]."""
        series = []
        for tab, cells in groups:
            for lab, runs in cells:
                eps = tab.run_epochs([r for r in runs if r["status"] not in PENDING])
                if eps:
                    series.append((lab, eps))
        if not series:
            return
        fig, axs = plt.subplots(1, 3, figsize=(14, 4.2))
        for i, (lab, eps) in enumerate(series):
            color = COLORS[i % len(COLORS)]
            style = "-" if i < len(COLORS) else "--"
            for ax, field in zip(axs, ("cv_loss", "cv_acc", "lr")):
                by_epoch = {}
                for run in eps.values():
                    kept = None
                    for e in sorted(run, key=lambda e: e["epoch"]):
                        v = e.get(field)
                        if field != "lr" and e.get("accepted") is False and kept is not None:
                            v = kept  # rejected: training goes on from the kept model
                        elif field != "lr":
                            kept = v
                        if v is not None:
                            by_epoch.setdefault(e["epoch"], []).append(v)
                xs = sorted(by_epoch)
                if not xs:
                    continue
                ax.plot(xs, [statistics.mean(by_epoch[x]) for x in xs], style, color=color,
                        marker="o", ms=3, label=f"{lab} (n={len(eps)})" if field == "cv_loss" else None)
                ax.fill_between(xs, [min(by_epoch[x]) for x in xs], [max(by_epoch[x]) for x in xs],
                                color=color, alpha=0.18, lw=0)
                if field == "lr":
                    rej = [(e["epoch"], e["lr"]) for run in eps.values() for e in run
                           if e.get("accepted") is False and e.get("lr") is not None]
                    if rej:
                        ax.plot([x for x, _ in rej], [y for _, y in rej], "x", color=color, ms=8, mew=2)
        for ax, ylabel in zip(axs, ("CV cross-entropy (per frame)", "CV frame accuracy",
                                    "learning rate")):
            ax.set_xlabel("epoch")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
        axs[2].set_yscale("log")
        axs[0].plot([], [], "x", color="0.3", ms=8, mew=2, ls="none",
                    label="lr: a rejected epoch (newbob)")
        handles, labels = axs[0].get_legend_handles_labels()
        rows = (len(labels) - 1) // 4
        fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=min(4, len(labels)),
                   bbox_to_anchor=(0.5, -0.02 - 0.05 * rows))
        fig.suptitle(f"{title}: mean per epoch over the replicates that reached it, band min–max; "
                     "CV of the model kept (a rejected epoch's is its predecessor's)")
        fig.tight_layout(rect=(0, 0.08 + 0.05 * rows, 1, 1))
        self.save(fig, name)

    def save(self, fig, name):
        os.makedirs(self.a.figures, exist_ok=True)
        path = os.path.join(self.a.figures, name + ".png")
        fig.savefig(path, dpi=120, bbox_inches="tight")
        plt.close(fig)
        self.figures_made.append(name)
        return f"![{name}]({os.path.relpath(path, self.md_dir)})"

    def figure_md(self, name):
        if name not in self.figures_made:
            return ["(figure: no runs yet)", ""]
        rel = os.path.relpath(os.path.join(self.a.figures, name + ".png"), self.md_dir)
        return [f"![{name}]({rel})", ""]


# ---- the verdicts, as `report verdicts` gives them

def paper_text(e):
    p = e.get("paper") or {}
    if p.get("swb") is None and p.get("ch") is None:
        return "–"
    return f"{sgn(p.get('swb'), 1)} / {sgn(p.get('ch'), 1)}"


def scaled_text(e):
    """The paper's effect scaled to our baseline, and the scaled margin where the kind has one."""
    if e["kind"] == "collapses":
        return f"b collapses {(e.get('paper') or {}).get('direction', 'more')}"
    eff, margin = e.get("scaled_effect"), e.get("scaled_margin")
    out = sgn(eff)
    if margin is not None and e["kind"] in ("small", "equivalent"):
        out += f" / {'±' if e['kind'] == 'equivalent' else '+'}{margin:.2f}"
    return out


def counts(e, arm):
    """(collapsed, ended) of one arm."""
    k = (e.get("collapsed") or {}).get(arm, 0) or 0
    runs = (e.get("runs") or {}).get(arm)
    if runs and runs.get("ended") is not None:
        return k, runs["ended"]
    return k, ((e.get("arms") or {}).get(arm) or {}).get("n", 0) + k


def delta_text(e):
    """b - a with its interval and pairs; a collapses effect's counts; collapsed pairs as
    counts beside, never inside an interval."""
    if e["kind"] == "collapses":
        (kb, nb), (ka, na) = counts(e, "b"), counts(e, "a")
        return f"b {kb} of {nb}, a {ka} of {na} collapsed" if nb or na else "–"
    d = e.get("diff") or {}
    if d.get("estimate") is None:
        out = "–"
    else:
        out = sgn(d["estimate"])
        if d.get("ci"):
            out += f" [{sgn(d['ci'][0])}, {sgn(d['ci'][1])}]"
        out += f" ({e.get('pairs', 0)})"
    lost = [f"{arm}: {k} of {n} collapsed" for arm in ("a", "b") for k, n in [counts(e, arm)] if k]
    return out + (f"; {', '.join(lost)}" if lost else "")


def verdict_text(e):
    v = e.get("verdict", "–")
    out = f"**{v}**" if v in ("agrees", "contradicted") else v
    if e.get("pending") and v not in ("pending", "no runs"):
        out += f" (pending {e.get('pairs', 0)}/{e.get('planned')})"
    return out


def verdict_rows(effects):
    """Confirmatory first, then exploratory, each in the criteria's order."""
    rows = []
    for conf in (True, False):
        for e in effects:
            if bool(e.get("confirmatory")) == conf:
                rows.append([e["table"] + ("" if conf else " (expl.)"), e["claim"], paper_text(e),
                             scaled_text(e), delta_text(e), verdict_text(e), e.get("why", "")])
    return rows


def verdicts_section(pg):
    """The page's opening: the one table, what is pending, the multiplicity (the README's
    summary is this block)."""
    V = pg.verdicts
    if not V:
        return [VERDICTS_BEGIN, pg.verdicts_note, VERDICTS_END, ""]
    level = V.get("level", 0.95)
    md = [VERDICTS_BEGIN,
          table(["table", "the paper's claim", "paper Δ SWB / CH", "ours scaled: effect / margin",
                 f"Δ = b − a [{100 * level:.0f} % CI] (pairs)", "verdict", "why"],
                verdict_rows(pg.effects))]
    waiting = [e for e in pg.effects if e.get("pending")]
    not_run = [e["id"] for e in pg.effects if not e.get("planned")]
    planned = [e for e in pg.effects if e.get("planned")]
    done, want = sum(min(e.get("pairs", 0), e["planned"]) for e in planned), sum(e["planned"] for e in planned)
    if waiting:
        md.append(f"**Pending {done}/{want}** (pairs ended of planned, over the effects): " +
                  ", ".join(f"{e['id']} {e.get('pairs', 0)}/{e['planned']}" for e in waiting) +
                  "; their verdicts may change as the runs end.")
    else:
        md.append(f"**Complete**: every effect has its planned pairs ({done}/{want}).")
    if not_run:
        md[-1] += f" Not run (planned 0): {', '.join(not_run)}."
    md += ["", multiplicity_text(V), VERDICTS_END, ""]
    return md


def multiplicity_text(V):
    m = V.get("multiplicity") or {}
    alpha = m.get("alpha_one_sided", (1 - V.get("level", 0.95)) / 2)
    conf = [e for e in V.get("effects", []) if e.get("confirmatory")]
    agrees = m.get("agrees", sum(e.get("verdict") == "agrees" for e in conf))
    out = (f"Multiplicity: {m.get('confirmatory', len(conf))} confirmatory and "
           f"{m.get('exploratory', len(V.get('effects', [])) - len(conf))} exploratory effects "
           "tested" + (f" ({m['untested']} more not yet)" if m.get("untested") else "") +
           f", each at {100 * alpha:g} % one-sided without correction; {agrees} confirmatory agree")
    if m.get("holm_agrees") is not None:
        out += f", {m['holm_agrees']} after Holm's correction over the confirmatory"
    return out + "."


def criteria_section(pg):
    V = pg.verdicts
    md = ["## The criteria", ""]
    if not V:
        return md + [pg.verdicts_note, ""]
    b = V.get("baseline") or {}
    level = V.get("level", 0.95)
    alpha = 100 * (1 - level) / 2
    where = f"`{V.get('criteria', pg.a.criteria)}`"
    md += [f"Fixed {V.get('fixed', '?')} (round {V.get('round', '?')}), before the round's first "
           f"run: {where}; computed by `mavg report verdicts`.", "",
           f"- Every effect is b − a as its claim names it ({V.get('metric', 'wer')}, lower is "
           f"better), paired by replicate; an interaction is (b2 − a2) − (b − a). Δ is the mean "
           f"difference with its {100 * level:.0f} % t interval; each end is a one-sided test at "
           f"{alpha:g} %. A pair with a collapsed or diverged run leaves the interval and is "
           "counted beside it.",
           f"- Scale: the paper's effects and margins (its WER points at its baseline, "
           f"{b.get('paper', 14.7)} %) times our baseline / its: "
           + (f"{b['value']:.2f} % (mean of {b.get('n')} runs), a factor {b.get('scale'):.3f}."
              if b.get("value") is not None else "no baseline run yet."),
           "- *direction*: **agrees** when the interval excludes 0 on the paper's side; "
           "**contradicted** when it excludes the paper's scaled effect on the far side; else "
           "*inconclusive*.",
           "- *small* (loses little): **agrees** when the upper end is below the margin; "
           "**contradicted** when the lower end is above both the margin and the paper's loss.",
           "- *equivalent*: **agrees** when the interval lies within ± the margin; "
           "**contradicted** when it lies wholly outside; *inconclusive* otherwise (\"margin out "
           "of reach\" when the smallest margin these pairs could show is not below it).",
           f"- *collapses*: collapsed or diverged runs against ended ones per arm, Fisher's exact "
           f"test one-sided at {alpha:g} % (the pairing not used).",
           "- Fewer than 2 complete pairs: *pending* while runs are to come, else *no runs*.", ""]
    return md


# ---- the runs

def connect(path):
    """The database, read-only, for the queries no report answers (see the top)."""
    if not os.path.exists(path):
        plot.fail(f"{path}: no results database")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.execute("SELECT 1 FROM runs LIMIT 1")
    except sqlite3.DatabaseError as e:
        plot.fail(f"{path}: not a mavg results database ({e})")
    return db


def stamp(text):
    """An attempt's UTC time (2026-12-03T15:29:25Z) in seconds."""
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def cpu_hours(db, run_ids):
    """(CPU-hours, wall hours, most runs at once, thread counts) of these runs' attempts:
    each attempt's ended - started times the CPU threads its build.device names."""
    marks = ",".join("?" * len(run_ids))
    spans = db.execute(
        f"SELECT run_id, started, ended FROM attempts WHERE run_id IN ({marks}) "
        "AND started IS NOT NULL AND ended IS NOT NULL", run_ids).fetchall()
    threads = {}
    for run_id, v in db.execute(f"SELECT run_id, value FROM env WHERE key = 'build.device' AND "
                                f"run_id IN ({marks})", run_ids):
        m = re.search(r"(\d+) threads", v or "")
        if m:
            threads[run_id] = int(m.group(1))
    cpu = wall = 0.0
    events = []
    for run_id, t0, t1 in spans:
        t0, t1 = stamp(t0), stamp(t1)
        wall += max(0.0, t1 - t0)
        cpu += max(0.0, t1 - t0) * threads.get(run_id, 1)
        events += [(t0, 1), (t1, -1)]
    at_once = most = 0
    for _, step in sorted(events):
        at_once += step
        most = max(most, at_once)
    return cpu / 3600, wall / 3600, most, sorted(set(threads.values()))


def by_count(pairs):
    return ", ".join(f"`{v or 'unknown'}` {n}" for v, n in pairs)


def runs_section(pg, every):
    """The runs in a few lines: what has ended, builds, kernels, CPUs, seeds, CPU-hours, the
    test set."""
    db, ran = pg.db, {n: pg.t[n] for n in pg.t.names if pg.t[n].runs}
    finished = sorted(r for r in every if every[r]["status"] not in PENDING)
    states = {}
    for r in every.values():
        states[r["status"]] = states.get(r["status"], 0) + 1
    done = [n for n, tab in ran.items() if tab.complete()]
    cut = [n for n in pg.t.names if not pg.t[n].runs]
    md = ["## The runs", "",
          (f"- **Complete**: every run of the {len(ran)} sweeps run has ended"
           if len(done) == len(ran) else
           f"- **Not finished**: {len(done)} of {len(ran)} sweeps have every run ended "
           f"({', '.join(done) or 'none'}); `scripts/reproduce.sh` resumes") +
          f" ({', '.join(f'{n} {s}' for s, n in sorted(states.items()))})" +
          (f"; not run: {', '.join(cut)}." if cut else ".")]
    if not finished:
        return md + [""]
    marks = ",".join("?" * len(finished))
    builds = db.execute(f"SELECT code_version, COUNT(*) FROM runs WHERE run_id IN ({marks}) "
                        "GROUP BY code_version ORDER BY 2 DESC", finished).fetchall()
    md.append(f"- Builds (`build.code_version`): {by_count(builds)}" +
              (" — **more than one build**." if len(builds) > 1 else "."))
    kernels = {}
    for r in finished:
        k = every[r].get("blas_kernels")
        if k:
            kernels[k] = kernels.get(k, 0) + 1
    if kernels:
        md.append(f"- GEMM kernels: {by_count(sorted(kernels.items(), key=lambda x: -x[1]))}" +
                  (" — **more than one kernel family: timings not comparable**."
                   if len(kernels) > 1 else "."))
    cpus = db.execute(f"SELECT value, COUNT(*) FROM env WHERE key = 'build.cpu' AND run_id IN "
                      f"({marks}) GROUP BY value ORDER BY 2 DESC, 1", finished).fetchall()
    if cpus:
        md.append(f"- CPUs (`build.cpu`): {by_count(cpus)}" +
                  (" — **more than one CPU: times across them are not on equal hardware**."
                   if len(cpus) > 1 else "."))
    seeds = sorted({r["seed"] for r in every.values() if r.get("seed") is not None})
    if seeds:
        md.append(f"- Seeds (per replicate, shared by every arm): {', '.join(map(str, seeds))}.")
    ch = cpu_hours(db, finished)
    # (the epochs' wall time against the CPU it had: the share lost to other work on the cores)
    took, used = db.execute(
        f"SELECT SUM(wall_s), SUM(wall_s * cpu_util) FROM epochs WHERE run_id IN ({marks}) "
        "AND cpu_util IS NOT NULL", finished).fetchone()
    md.append(f"- CPU-hours: {ch[0]:.2f} (the attempts' times × their threads: "
              f"{', '.join(map(str, ch[3])) or '1'}); up to {ch[2]} runs at once" +
              (f"; the epochs took {took / 3600:.2f} hours and had the CPU for "
               f"{used / 3600:.2f} of them (the rest went to other work on the cores: "
               "`scripts/reproduce.sh --plan` counts that CPU time)." if took else "."))
    if pg.test_size:
        md.append(f"- Test set: {pg.test_size['utterances']} utterances, "
                  f"{pg.test_size['ref_words']} words (`report bootstrap`).")
    return md + [""]


# ---- what the decoder fix changed, from round 1's archive

def round1_table1(arch):
    """{(workers, seed): (status, recorded WER, decode_no_path, {utterance: (C, S, D, I)})} of
    round 1's Table 1 runs, from the archive's files."""
    import yaml
    out, root = {}, os.path.join(arch, "runs", "table1")
    for rid in sorted(os.listdir(root)):
        d = os.path.join(root, rid)
        try:
            c = yaml.safe_load(open(os.path.join(d, "config.yaml")))
            res = json.load(open(os.path.join(d, "result.json")))
            text = open(os.path.join(d, "decode_test.txt")).read()
        except (OSError, ValueError):
            continue
        utts = {}
        for block in text.split("id: ")[1:]:
            m = re.search(r"\(#C #S #D #I\) (\d+) (\d+) (\d+) (\d+)", block)
            if m:
                utts[block.split("\n", 1)[0].strip()] = tuple(map(int, m.groups()))
        out[(c["parallel"]["workers"], c["seed"])] = (res.get("status"), res.get("wer"),
                                                      res.get("decode_no_path"), utts)
    return out


def wer_without(utts, drop):
    errors = words = 0
    for u, (c, s, d, i) in utts.items():
        if u not in drop:
            errors, words = errors + s + d + i, words + c + s + d
    return 100 * errors / words if words else None


def all_deleted(utts):
    return {u for u, (c, s, d, i) in utts.items() if c == 0 and s == 0 and i == 0}


def ci_text(res, key="difference"):
    d = (res or {}).get(key) or {}
    if d.get("estimate") is None:
        return "–"
    ci = f" [{sgn(d['ci_low'])}, {sgn(d['ci_high'])}]" if d.get("ci_low") is not None else ""
    return f"{sgn(d['estimate'])}{ci} ({d.get('n')})"


def decoder_fix_section(pg):
    """Round 1's Table 1 as recorded, and with the utterances scored as all deletions (the
    decoder's no-path ones among them) left out of both arms of each pair; round 2's beside."""
    arch = pg.a.round1
    md = ["## What the decoder fix changed on Table 1", ""]
    if not arch or not os.path.isdir(os.path.join(arch, "runs", "table1")):
        return md + [f"(round 1's archive is not here: {arch or 'archive/paper-round1'})", ""]
    runs = round1_table1(arch)
    seeds = sorted({s for _, s in runs})
    base = {s: runs[(1, s)] for s in seeds if (1, s) in runs and runs[(1, s)][0] == "completed"}
    round2 = {}
    for e in pg.effects:
        arms = pg.spec.get(e["id"], {})
        if e["kind"] != "collapses" and set(arms) == {"a", "b"} and all(
                sw == "table1" and set(ax) == {W} for sw, ax in arms.values()) and \
                axis_text(arms["a"][1][W]) == "1":
            round2[axis_text(arms["b"][1][W])] = delta_text(e)
    rows = []
    for w in sorted({w for w, _ in runs if w != 1}):
        pairs = [s for s in base if runs.get((w, s), ("",))[0] == "completed"]
        if not pairs:
            continue
        rec_a, rec_b, cut_a, cut_b, lost = {}, {}, {}, {}, []
        for s in pairs:
            a, b = base[s], runs[(w, s)]
            drop = all_deleted(a[3]) | all_deleted(b[3])
            rec_a[s], rec_b[s] = a[1], b[1]
            cut_a[s], cut_b[s] = wer_without(a[3], drop), wer_without(b[3], drop)
            lost.append((len(all_deleted(a[3])), len(all_deleted(b[3])), a[2] or 0, b[2] or 0))
        mean = [statistics.mean(x[i] for x in lost) for i in range(4)]
        rows.append([f"1 → {w}", f"{mean[0]:.1f} / {mean[1]:.1f} ({mean[2]:.1f} / {mean[3]:.1f})",
                     ci_text(pg.m.compare(rec_a, rec_b)), ci_text(pg.m.compare(cut_a, cut_b)),
                     round2.get(str(w), "not in this round")])
    md += [f"Recomputed from the files of round 1's archive (`{arch}`: each run's result.json and "
           "decode_test.txt), not from this round's runs. Round 1 scored an utterance whose "
           "decoding kept no path as the deletion of all its words; here those utterances (every "
           "one scored as all deletions, in either run of a pair) are left out of both arms. "
           "This round's Δ is on its own test set and baseline.", "",
           table(["workers", "all-deletion utterances per run, 1 / N (of them no path)",
                  "round 1 Δ as recorded [95 % CI] (pairs)",
                  "round 1 Δ, those left out of both [95 % CI] (pairs)",
                  "this round's Δ [95 % CI] (pairs)"], rows) if rows else "(no pair in the archive)\n"]
    return md


# ---- the details per table

def paper_cell(ref, tab, axes):
    """The paper's SWB / CH for one of our cells (the reference's own table), or '–'."""
    ax = dict(axes)
    w = ax.get(W)
    i = 0 if w == "1" else 1
    try:
        if tab == "1":
            r = ref["table1_wer_vs_gpus"]
            j = [str(g) for g in r["gpus"]].index(w)
            return f"{r['h500_swb'][j]} / {r['h500_ch'][j]}"
        if tab == "2":
            r = ref["table2_init"][ax[INIT]]
        elif tab == "3":
            if w == "1":
                return "14.7 / 26.8"
            r = ref["table3_average_interval"][f"every_{ax[AVG]}_minibatches"]
            return f"{r['swb']} / {r['ch']}"
        elif tab == "4":
            key = {"64": "mb256", "256": "mb1024"}[ax[MB]]
            r = ref["table4_minibatch"][key]
            return f"{r['swb'][i]} / {r['ch'][i]} (its {key[2:]})"
        elif tab == "5":
            r = ref["table5_schedule"][ax[SCHED]]
        elif tab == "6":
            if ax.get(SMC, "false") == "true" or (ax[OPT] == "sgd" and ax.get(LR, "0.008") != "0.008"):
                return "–"
            r = ref["table6_optimizer"][ax[OPT]]
        else:
            return "–"
        return f"{r['swb'][i]} / {r['ch'][i]}"
    except (KeyError, ValueError, IndexError, TypeError):
        return "–"


def cell_rows(pg, tab_no, sweeps):
    """The table's cells, one row each: n (collapsed runs as counts), test WER mean ± sd and
    its t interval over the completed runs, dev WER, averagings and local steps per worker per
    epoch, the max-change scale factor, the paper's."""
    rows, groups = [], []
    for name in sweeps:
        tab, cells = pg.t[name], []
        for axes, runs in tab.cells():
            lab = label(axes, name, sweeps[0])
            cells.append((lab, runs))
            vals = [r["wer"] for r in runs if r["status"] == "completed" and r.get("wer") is not None]
            lost = sum(r["status"] in OUTCOMES for r in runs)
            ended = sum(r["status"] not in PENDING for r in runs)
            other = {}
            for r in runs:
                if r["status"] in PENDING:
                    other[r["status"]] = other.get(r["status"], 0) + 1
            n = str(len(vals)) + (f" ({lost} of {ended} collapsed)" if lost else "") + "".join(
                f" + {k} {s}" for s, k in sorted(other.items()))
            wer, ci = "–", "–"
            if vals:
                wer = f"{statistics.mean(vals):.2f}" + (f" ± {statistics.stdev(vals):.2f}" if len(vals) > 1 else "")
                d = (pg.m.mean_ci(vals) or {}).get("difference") or {}
                if d.get("ci_low") is not None:  # below 0: too spread for a t interval
                    ci = (f"[{d['ci_low']:.2f}, {d['ci_high']:.2f}]" if d["ci_low"] >= 0 else
                          f"range {min(vals):.2f}–{max(vals):.2f}")
            dev = [r[dev_key(r)] for r in runs if r["status"] == "completed" and dev_key(r)
                   and r.get(dev_key(r)) is not None]
            p50 = epoch_mean(tab, runs, "max_change_scale_p50")
            p10 = epoch_mean(tab, runs, "max_change_scale_p10")
            rows.append([lab, n, wer, ci, fmt(statistics.mean(dev)) if dev else "–",
                         fmt(epoch_mean(tab, runs, "averagings"), 0),
                         fmt(epoch_mean(tab, runs, "minibatches"), 0),
                         f"{fmt(p50, 3)} / {fmt(p10, 3)}" if p50 is not None else "–",
                         paper_cell(pg.ref, tab_no, axes) if name == f"table{tab_no}" else "–"])
        groups.append((tab, cells))
    return table(["cell", "n", "test WER % (mean ± sd)", "95 % t-CI", "dev WER %",
                  "averagings / epoch", "local steps / worker / epoch",
                  "max-change scale p50 / p10", "paper: SWB / CH"], rows), groups


def rank_p(pg, e):
    """`report compare`'s rank test p on an effect's pairs (a collapsed run ranked worst), where
    it has RANK_PAIRS pairs or more; None otherwise."""
    if e["kind"] == "collapses" or e.get("pairs", 0) + e.get("left_out", 0) < RANK_PAIRS:
        return None
    arms = {k: outcomes(pg.arm_runs(e, k)) for k in pg.spec.get(e["id"], {})}
    if set(arms) == {"a", "b", "a2", "b2"}:
        res = pg.m.interaction(arms["a"], arms["b"], arms["a2"], arms["b2"])
    elif {"a", "b"} <= set(arms):
        res = pg.m.compare(arms["a"], arms["b"])
    else:
        return None
    rank = (res or {}).get("rank_test") or {}
    return rank.get("p") if rank.get("n", 0) >= RANK_PAIRS else None


def arm_text(e, arm):
    s = (e.get("arms") or {}).get(arm) or {}
    k, _ = counts(e, arm)
    if not s.get("n") and not k:
        return "–"
    out = f"{fmt(s.get('mean'))}" + (f" ± {fmt(s.get('sd'))}" if s.get("sd") is not None else "")
    return out + f" ({s.get('n', 0)})" + (f", {k} collapsed" if k else "")


def trail_text(pg, e):
    """The scale study's run of this effect across corpora, where the scale study ran it."""
    pts = scale_points(pg, e)
    if len(pts) < 2:
        return None
    return " → ".join(f"{c} {sgn(d)}" + (f" ({avg:.0f}/epoch)" if avg else "") for c, avg, d, _, _, _ in pts)


def effect_rows(pg, effects):
    """An effect per row: the arms, Δ, the one-sided p and the smallest margin the pairs could
    show, the verdict; a rank test only where some effect can be decided by one, the scale
    study's trail only beside the effects it ran."""
    ranks = {e["id"]: rank_p(pg, e) for e in effects}
    trails = {e["id"]: trail_text(pg, e) for e in effects}
    show_rank = any(p is not None for p in ranks.values())
    show_trail = any(trails.values())
    rows = []
    for e in effects:
        d = e.get("diff") or {}
        p = e.get("p_one_sided", d.get("p_one_sided"))
        if e["kind"] == "collapses":
            f = e.get("fisher") or {}
            p = f.get("p_more" if (e.get("paper") or {}).get("direction", "more") == "more" else "p_less", p)
        inter = "a2" in pg.spec.get(e["id"], {})
        row = [f"{e['id']}: {e['claim']}", e["kind"] + (", interaction" if inter else ""),
               "(4 arms)" if inter else arm_text(e, "a"), "(4 arms)" if inter else arm_text(e, "b"),
               delta_text(e), fmt(p, 3), fmt(d.get("smallest_margin"))]
        if show_rank:
            row.append(fmt(ranks[e["id"]], 3))
        row.append(verdict_text(e))
        if show_trail:
            row.append(trails[e["id"]] or "–")
        rows.append(row)
    header = ["effect", "kind", "a: mean ± sd (n)", "b: mean ± sd (n)", "Δ = b − a [95 % CI] (pairs)",
              "p, one-sided", "smallest margin showable"]
    header += ["rank test p (≥ 6 pairs)"] if show_rank else []
    header += ["verdict"] + (["scale study: Δ by corpus (averagings / epoch)"] if show_trail else [])
    return table(header, rows)


def dead_units(db, run_ids):
    """{stack: the mean over its layers of the dead-unit fraction after each layer's last
    epoch} of the pretrained stacks these runs used (pretrain.jsonl's dead_fraction)."""
    if not run_ids:
        return {}
    marks = ",".join("?" * len(run_ids))
    rows = db.execute(
        "SELECT stack, layer, epoch, json_extract(record_json, '$.dead_fraction') FROM pretrain "
        f"WHERE stack IN (SELECT stack FROM pretrain WHERE run_id IN ({marks})) "
        "AND json_extract(record_json, '$.dead_fraction') IS NOT NULL", run_ids).fetchall()
    last = {}
    for stack, layer, epoch, dead in rows:
        if epoch >= last.get((stack, layer), (0, None))[0]:
            last[(stack, layer)] = (epoch, dead)
    by_stack = {}
    for (stack, _), (_, dead) in last.items():
        by_stack.setdefault(stack, []).append(dead)
    return {k: statistics.mean(v) for k, v in by_stack.items()}


def table_sweeps(pg, tab_no):
    """The sweeps in the store that belong to a table: tableN and tableN-*, design-*."""
    prefix = "design-" if tab_no == "design" else f"table{tab_no}"
    own = [n for n in pg.t.names if n == prefix or n.startswith(prefix + ("" if tab_no == "design" else "-"))]
    return sorted(own, key=lambda n: (n != prefix, n))


def table_section(pg, tab_no):
    title, intro = TABLES[tab_no]
    heading = f"## Table {tab_no}: {title}" if tab_no.isdigit() else f"## The {title}"
    sweeps = table_sweeps(pg, tab_no)
    effects = [e for e in pg.effects if e["table"] == tab_no]
    if not sweeps and not effects:
        return []
    md = [heading, "", intro, ""]
    groups = []
    if any(pg.t[n].runs for n in sweeps):
        rows, groups = cell_rows(pg, tab_no, sweeps)
        md += [rows]
    else:
        md += ["(no runs yet)", ""]
    if tab_no == "2":
        dead = []
        for tab, cells in groups:
            for lab, runs in cells:
                v = list(dead_units(pg.db, [r["run_id"] for r in runs]).values())
                if v:
                    dead.append([lab, f"{statistics.mean(v):.3f}", len(v)])
        if dead:
            md += ["Dead units of the pretrained stacks (the fraction of hidden units whose "
                   "activation's sd is below 0.02 on the first 20,000 frames, after each layer's "
                   "last epoch; mean over layers, then stacks):", "",
                   table(["cell", "dead fraction", "stacks"], dead)]
    if effects:
        md += [effect_rows(pg, effects)]
    name = f"table{tab_no}-curves" if tab_no.isdigit() else f"{tab_no}-curves"
    pg.curves(groups, heading[3:], name)
    return md + pg.figure_md(name)


# ---- the scale study

def contrast(arms):
    """{key: (a's value, b's value)} of the keys an effect's arms differ in, and the settings
    they share ({key: value}, the corpus left out)."""
    a, b = arms["a"][1], arms["b"][1]
    diff = {k: (axis_text(a.get(k)), axis_text(b.get(k))) for k in set(a) | set(b)
            if axis_text(a.get(k)) != axis_text(b.get(k))}
    return diff, {k: axis_text(v) for k, v in a.items() if k not in diff and k != TRAIN}


def scale_family(pg, e):
    """The scale study's effects that are this table effect on other corpora: the same kind and
    contrast, within the table's settings (the scale study may fix more); [] for the others."""
    spec = pg.spec.get(e["id"], {})
    if e["table"] == "scale" or set(spec) != {"a", "b"}:
        return []
    diff, settings = contrast(spec)
    out = []
    for s in pg.effects:
        ss = pg.spec.get(s["id"], {})
        if s["table"] == "scale" and s["kind"] == e["kind"] and set(ss) == {"a", "b"}:
            d, st = contrast(ss)
            if d == diff and all(st.get(k) == v for k, v in settings.items()):
                out.append(s)
    return out


def scale_points(pg, e):
    """[(corpus, averagings / epoch, Δ, ci low, ci high, effect)] of an effect and the scale
    study's runs of it, by averagings per epoch; [] where the scale study did not run it."""
    fam = scale_family(pg, e)
    if not fam:
        return []
    pts = []
    for s in fam + [e]:
        d = s.get("diff") or {}
        if d.get("estimate") is None:
            continue
        ci = d.get("ci") or [None, None]
        pts.append((pg.corpus(s), pg.averagings(s), d["estimate"], ci[0], ci[1], s))
    return sorted(pts, key=lambda p: [plot.order(x) for x in re.findall(r"\d+", p[0])] or [(True, p[0])])



def scale_section(pg):
    """The scale study's effects (the criteria's table "scale"), beside the tables' effects they
    repeat on the other corpora, against averagings per epoch."""
    scale = [e for e in pg.effects if e["table"] == "scale"]
    md = ["## The scale study", "",
          "Tables 1, 3 and 4's effects at 16 workers on the smaller members of the digits family "
          "(`sweeps/paper/scale.yaml`: the same dev and test sets, each training set holding the "
          "smaller ones'), b − a as each is named, against the averagings per epoch of its "
          "many-worker arm; the largest corpus's point is the table's own effect.", ""]
    if not scale:
        return md + ["(no scale-study effects in the criteria)", ""]
    rows, points, shown = [], {}, set()
    for e in pg.effects:
        pts = scale_points(pg, e) if e["table"] != "scale" else []
        for c, avg, d, lo, hi, s in pts:
            shown.add(s["id"])
            rows.append([c, f"{s['id']}: {s['claim']}", fmt(avg, 0), delta_text(s), verdict_text(s)])
            if avg:
                points.setdefault(f"Table {e['table']}: {e['id']}", []).append((avg, d, lo, hi))
    for s in scale:
        if s["id"] not in shown:
            rows.append([pg.corpus(s), f"{s['id']}: {s['claim']}", fmt(pg.averagings(s), 0),
                         delta_text(s), verdict_text(s)])
    md += [table(["corpus", "effect (b − a)", "averagings / epoch (b)", "Δ [95 % CI] (pairs)",
                  "verdict"], rows)]
    if points:
        md += [scale_figure(pg, points), ""]
    return md


def scale_figure(pg, points):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    # The y range covers the effects of a few points (and their intervals); an effect of tens
    # of points (a collapsing arm) is drawn at the edge as an arrow with its value.
    ylo, yhi = scale_ylim([p for pts in points.values() for p in pts])
    clipped = False
    for i, (lab, pts) in enumerate(points.items()):
        dodge = 1 + 0.04 * (i - (len(points) - 1) / 2)  # effects at the same x apart
        pts = sorted((x * dodge, y, l, h) for x, y, l, h in pts)
        color = COLORS[i % len(COLORS)]
        ax.plot([p[0] for p in pts], [min(max(p[1], ylo), yhi) for p in pts], "-", color=color,
                label=lab)
        for x, y, l, h in pts:
            if ylo <= y <= yhi:
                ax.plot([x], [y], "o", color=color)
            else:
                clipped = True
                edge = yhi if y > yhi else ylo
                ax.plot([x], [edge], "^" if y > yhi else "v", color=color, ms=9)
                ax.annotate(f"{y:+.1f}", (x, edge), textcoords="offset points",
                            xytext=(6, -12 if y > yhi else 4), fontsize=8, color=color)
            if l is not None:
                ax.plot([x, x], [max(l, ylo), min(h, yhi)], color=color, lw=1.5, alpha=0.7)
    ax.set_ylim(ylo, yhi)
    if clipped:
        ax.text(0.01, 0.01, "▲▼ off the scale: the value beside it", transform=ax.transAxes,
                fontsize=8, color="0.3")
    paper_avg = PAPER_FRAMES / PAPER_GPUS / (PAPER_MB * PAPER_K)
    ax.axvline(paper_avg, color="0.35", ls="--", label=f"the paper: ~{paper_avg:.0f} averagings / epoch")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("averagings per epoch (log)")
    ax.set_ylabel("Δ WER, b − a (points), 95 % t interval")
    ax.set_title("Scale study: each effect against averagings per epoch")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return pg.save(fig, "scale-effects")


def scale_ylim(pts, within=5.0):
    """The scale figure's y range: the estimates and intervals of the effects within `within`
    points of 0, and 0, with a margin (at least ±1 point)."""
    ys = [0.0]
    for _, y, l, h in pts:
        if abs(y) <= within:
            ys += [y] + [v for v in (l, h) if v is not None and abs(v) <= 4 * within]
    lo, hi = min(ys), max(ys)
    pad = max(0.15 * (hi - lo), 0.2)
    return min(lo - pad, -1.0), max(hi + pad, 1.0)


# ---- the test set's share of the noise

def bootstrap_section(pg):
    """Per confirmatory effect, each pair's b − a bootstrapped over the test utterances: how
    much of a pair's difference the test set alone could make, against the spread of Δ over
    the pairs."""
    rows = []
    for e in pg.effects:
        if not e.get("confirmatory") or e["kind"] == "collapses" or set(pg.spec.get(e["id"], {})) != {"a", "b"}:
            continue
        by = [{r["replicate"]: r for r in pg.arm_runs(e, k) if r["status"] == "completed"
               and r.get("run_dir")} for k in ("a", "b")]
        res = [pg.m.bootstrap(by[0][rep]["run_dir"], by[1][rep]["run_dir"])
               for rep in sorted(set(by[0]) & set(by[1]))]
        res = [b for b in res if b]
        if not res:
            continue
        pg.test_size = pg.test_size or res[0]
        sd = statistics.median((b["ci_high"] - b["ci_low"]) / (2 * 1.96) for b in res)
        up = sum(b["ci_low"] > 0 for b in res)
        down = sum(b["ci_high"] < 0 for b in res)
        rows.append([f"{e['id']}: {e['claim']}", len(res), f"{sd:.2f}",
                     fmt((e.get("diff") or {}).get("sd")), f"{up} / {down}"])
    return ["## The test set's share of the noise", "",
            "Each pair of a confirmatory effect (the same seed in both arms), b − a bootstrapped "
            "over the test utterances (`mavg report bootstrap`, 95 % percentile interval of "
            "10,000 resamples): the spread the test set alone gives one pair's difference, "
            "beside the spread of the differences over the pairs.", "",
            table(["effect", "pairs", "test-set sd of a pair's Δ (median)", "sd of Δ over pairs",
                   "pairs whose interval is above / below 0"], rows) if rows else
            "(no pair with both runs decoded yet)\n"]


# ---- the regime against the paper's

def why_section():
    """The regime each averaging sees here (the cells' averagings and local steps per worker per
    epoch) against the paper's."""
    shard = PAPER_FRAMES / PAPER_GPUS
    return ["## Why ours may differ", "",
            f"The paper's regime: 300 h ≈ {PAPER_FRAMES / 1e6:.1f}M training frames an epoch over "
            f"{PAPER_GPUS} GPUs is {shard / 1e6:.2f}M frames a shard, {shard / PAPER_MB:,.0f} local "
            f"steps of {PAPER_MB} frames and {shard / PAPER_MB / PAPER_K:,.0f} averagings (K = "
            f"{PAPER_K}) per epoch; ours are in the cells' columns. Effects that come from how far "
            "workers drift between averagings (Tables 1, 3, 4, 6) can differ here for that reason "
            "alone; the scale study follows them as the averagings per epoch grow. 63 pdfs and a "
            "4 x 512 network leave pretraining (Table 2) and a better optimizer (Table 6) less "
            "room to help. Simulated workers give real workers' WER (tested); only the times are "
            f"{PROJECTED}.", ""]


# ---- the speedups
def reached_time(row, h):
    """A `report speedup` row's time to the baseline's CV loss; "not reached" when the row has
    runs and none reached it (the report leaves the cell empty), "–" when it has none."""
    c, n = "time to baseline CV loss s", "reached target"
    if c not in h or str(row[h[c]]).strip():
        return row[h[c]] if c in h else "–"
    return "not reached" if n in h and re.match(r"0 of [1-9]", str(row[h[n]])) else "–"


def speedup_rows(h, rows, cols):
    return [[reached_time(r, h)] + [r[h[c]] if c in h else "–" for c in cols] for r in rows]


def model_table(text):
    """`report model`'s Markdown table as {GPUs: {column: number}}, and its time.dat unit (s)."""
    header, out = None, {}
    for line in (text or "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        if header is None:
            header = cells
        elif cells[0].isdigit():
            out[cells[0]] = {k: plot.number(v) for k, v in zip(header, cells)}
    unit = re.search(r"time unit of time.dat taken as ([\d.]+) s", text or "")
    return out, float(unit.group(1)) if unit else None


def speedup_section(pg):
    """Table 1's speedups (ours projected, the paper's measured, the model's of the paper's
    setup) and a figure; Table 3's by averaging interval; the model; comm against compute."""
    tim, t1, t3 = pg.ref["timing"], pg.t["table1"], pg.t["table3"]
    paper = dict(zip(map(str, tim["gpus"]), tim["speedup"]))
    model_md = pg.m.run(["model", "--reference", pg.a.reference], as_json=False)
    model, unit = model_table(model_md)
    md = ["## Speedup", "",
          f"Ours are **{PROJECTED}**: a run's simulated workers train in one process, so each "
          "run's epoch is projected onto N devices (its slowest worker per averaging interval "
          "plus the measured averaging) and the speedup within the run (N × the mean worker's "
          "compute and data seconds over that epoch). Time to target: training seconds to the "
          "1-worker runs' final CV loss. The paper's: measured on K20 GPUs over FDR InfiniBand "
          "(time.dat, in the model's table below).", ""]
    cols = ["reached target", "projected epoch s", "projected speedup", "projected efficiency"]
    try:
        sp = t1.reports.get(["speedup", "table1"])
        h = {name: i for i, name in enumerate(sp["header"])}
        rows = [[r[h[W]] if W in h else r[sp["text_cols"] - 1]] + c for r, c in
                zip(sp["rows"], speedup_rows(h, sp["rows"], cols))]
        rows = [r + [paper.get(r[0], "–"), fmt((model.get(r[0]) or {}).get("model speedup"))]
                for r in rows]
        md += [table(["workers", f"time to target s ({PROJECTED})", "reached",
                      f"epoch s ({PROJECTED})", f"speedup ({PROJECTED})", "efficiency",
                      "paper: measured speedup", "model: the paper's setup"], rows),
               speedup_figure(pg, rows, tim, model), ""]
    except plot.PlotError as e:
        md += [f"(no speedup table: {e})", ""]
    try:  # Table 3's many-worker setting per averaging interval
        sp = t3.reports.get(["speedup", "table3"])
        h = {name: i for i, name in enumerate(sp["header"])}
        ws = t3.values(W, [1, 16])
        # the paper's every 10 and 20 are our intervals in order (a toy's 1 and 2)
        r3 = dict(zip(t3.values(AVG, [10, 20]), pg.ref["table3_average_interval"].values()))
        rows = [r for r in sp["rows"] if W in h and AVG in h and r[h[W]] == ws[-1]]
        md += [f"Table 3's {ws[-1]} workers by averaging interval (the paper: 16 GPUs, measured):",
               "", table(["interval", f"time to target s ({PROJECTED})", "reached",
                          f"speedup ({PROJECTED})", "efficiency", "paper: measured speedup"],
                         [[f"every {r[h[AVG]]}"] + c + [r3.get(r[h[AVG]], {}).get("speedup", "–")]
                          for r, c in zip(rows, speedup_rows(h, rows, cols[:1] + cols[2:]))])]
    except plot.PlotError:
        pass
    md += ["The performance model of the paper's own setup (K20, FDR InfiniBand, host-staged "
           "over PCIe 2.0; `mavg report model`, docs/performance-model.md):", "",
           model_md.strip() if model_md else "(`mavg report model` failed)", ""]
    # Averaging against compute per averaging interval: ours measured, the paper's modelled
    # (one averaging over K minibatches at its 1-GPU rate) and measured (time.dat).
    by_w = {}
    for r in t1.runs:
        eps = t1.run_epochs([r]).get(r["run_id"], []) if r["status"] == "completed" else []
        per = [e["comm_s"] / e["compute_s_mean"] for e in eps
               if e.get("averagings") and e.get("comm_s") is not None and e.get("compute_s_mean")]
        if per:
            by_w.setdefault(t1.value(r, W), []).append(statistics.mean(per))
    text = [f"{w} workers {statistics.mean(v):.3f}" for w, v in sorted(by_w.items(), key=lambda x: plot.order(x[0]))]
    one = (model.get(str(PAPER_GPUS)) or {}).get("one averaging (s)")
    if one and unit:
        compute = tim["train_time"][0] * unit / PAPER_FRAMES * PAPER_K * PAPER_MB
        text.append(f"the paper's {PAPER_GPUS} GPUs by the model {one / compute:.3f}")
    i = tim["gpus"].index(PAPER_GPUS) if PAPER_GPUS in tim["gpus"] else None
    if i is not None and tim["comm_time"][i]:
        c, tt = tim["comm_time"][i], tim["train_time"][i]
        text.append(f"measured (time.dat's comm / (train − comm)) {c / (tt - c):.3f}")
    return md + ["Averaging against compute per averaging interval (ours: measured averaging "
                 f"over a worker's compute, Table 1): {'; '.join(text) or 'no runs yet'}.", ""]


def speedup_figure(pg, rows, tim, model):
    fig, ax = plt.subplots(figsize=(6, 4.5))
    pts = [(plot.num(r[0]), plot.number(r[4])) for r in rows if plot.number(r[4]) is not None]
    if pts:
        ax.plot([x for x, _ in pts], [y for _, y in pts], "o-", color=COLORS[0],
                label=f"mavg, {PROJECTED}")
    xmax = max([x for x, _ in pts] + [1])
    shown = [(g, s) for g, s in zip(tim["gpus"], tim["speedup"]) if g <= xmax]
    ax.plot([g for g, _ in shown], [s for _, s in shown], "s--", color=COLORS[1], mfc="white",
            label="Su & Chen 2015, measured, K20 GPUs")
    mod = sorted((int(g), v["model speedup"]) for g, v in model.items()
                 if int(g) <= xmax and v.get("model speedup") is not None)
    if mod:
        ax.plot([g for g, _ in mod], [v for _, v in mod], "^:", color=COLORS[2],
                label="performance model, the paper's setup (K20, FDR IB, host-staged)")
    ax.plot([1, xmax], [1, xmax], ":", color="black", lw=1, label="ideal (linear)")
    plot.integer_ticks(ax, [x for x, _ in pts] + [g for g, _ in shown])
    ax.set_xlabel("workers")
    ax.set_ylabel("speedup (ours: projected within each run)")
    ax.set_title("Speedup, Table 1")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3)
    return pg.save(fig, "table1-speedup")


# ---- the page

def header(pg):
    return ["# Su & Chen 2015 reproduced on the digits task", "",
            f"Generated by `{pg.a.command}` from `{pg.a.db}`; do not edit by hand. The paper's "
            "numbers are WER (%) on Hub5'00 SWB / CallHome (300 h of Switchboard, a 6 x 2048 "
            "network, up to 32 GPUs); ours are a synthetic connected-digits task (63 pdfs, a "
            "4 x 512 network) on simulated workers, with about 4x lower WER: levels are not "
            "comparable, so the paper's effects are scaled to our baseline and each is judged "
            "by criteria fixed before the runs.", ""]


def write_page(pg):
    every = {r["run_id"]: r for n in pg.t.names for r in pg.t[n].runs}  # a shared run once
    details = []
    for tab in ("1", "2", "3", "4", "5", "6", "design"):
        details += table_section(pg, tab)
    boot = bootstrap_section(pg)  # (also the test set's size, for the runs' lines)
    return (header(pg) + verdicts_section(pg) + criteria_section(pg) + runs_section(pg, every) +
            decoder_fix_section(pg) + details + scale_section(pg) + boot + why_section() +
            speedup_section(pg))


def verdicts_block(md_text):
    """The page's verdicts block (the README's summary), markers left out; None without one."""
    m = re.search(re.escape(VERDICTS_BEGIN) + r"\n(.*?)\n" + re.escape(VERDICTS_END), md_text, re.S)
    return m.group(1).strip("\n") if m else None


def update_readme(readme, page_md, page_rel):
    """Copies the page's verdicts block between the README's reproduction-summary markers (the
    README's summary is the page's, word for word); a README without the markers is left."""
    text = open(readme).read()
    m = re.search(r"^<!-- reproduction-summary:begin[^\n]*-->\n(.*?)^<!-- reproduction-summary:end -->$",
                  text, re.S | re.M)
    block = verdicts_block(page_md)
    if not m or block is None:
        return False
    new = text[:m.start(1)] + block.replace("](reproduction/", f"]({page_rel}/") + "\n" + text[m.end(1):]
    if new != text:
        with open(readme + ".tmp", "w") as f:
            f.write(new)
        os.replace(readme + ".tmp", readme)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("db")
    p.add_argument("--out", default="docs/reproduction.md")
    p.add_argument("--figures", default="docs/reproduction")
    p.add_argument("--mavg", default="build/bin/mavg")
    p.add_argument("--reference", default="sweeps/paper/reference.yaml")
    p.add_argument("--criteria", default=os.path.join(os.environ.get("SWEEPS") or "sweeps/paper",
                                                      "criteria.yaml"),
                   help="the criteria file `report verdicts` reads (default $SWEEPS/criteria.yaml)")
    p.add_argument("--verdicts-json", help="the verdicts from this file (`report verdicts "
                   "--format json`'s shape) instead of from mavg: the layout without the report")
    p.add_argument("--round1", default="archive/paper-round1",
                   help="round 1's archive, for what the decoder fix changed on Table 1")
    p.add_argument("--readme", help="the README whose reproduction summary is the page's "
                   "verdicts block (default: README.md above the page's docs/, if it has the markers)")
    p.add_argument("--command", default="scripts/reproduce.sh", help="how the page was made")
    a = p.parse_args()
    try:
        db = connect(a.db)
        mavg = plot.mavg_binary(a.mavg)
    except plot.PlotError as e:
        print(f"reproduction.py: error: {e}", file=sys.stderr)
        sys.exit(1)
    os.makedirs(a.figures, exist_ok=True)
    for f in os.listdir(a.figures):  # figures no longer drawn do not linger
        if f.endswith(".png"):
            os.remove(os.path.join(a.figures, f))
    pg = Page(a, mavg, db)
    md = "\n".join(write_page(pg)) + "\n"
    with open(a.out + ".tmp", "w") as f:
        f.write(md)
    os.replace(a.out + ".tmp", a.out)
    print(a.out)
    out_dir = os.path.dirname(os.path.abspath(a.out))
    readme = a.readme or (os.path.join(os.path.dirname(out_dir), "README.md")
                          if os.path.basename(out_dir) == "docs" else None)
    if readme and os.path.exists(readme):
        rel = os.path.relpath(out_dir, os.path.dirname(os.path.abspath(readme)))
        if update_readme(readme, md, os.path.join(rel, "reproduction")):
            print(readme)


if __name__ == "__main__":
    main()
