#!/usr/bin/python3
"""docs/local-sgd.md from the local-SGD sweep's results (read-only): one table after DiLoCo's
(Douillard et al. 2023) at our scale, one row per arm of sweeps/local-sgd/local-sgd.yaml: what
it is, its combines and the bytes every worker put into them per epoch, its test WER with a
95 % t interval over the seeds, its paired difference to data parallel (`mavg report
compare`, the statistics of the reproduction's page), the final CV loss, and the steps each
worker took until the CV loss first reached data parallel's final one (the same seed).

  analysis/local_sgd.py results/local-sgd/mavg.db --mavg build/bin/mavg \
      --spec sweeps/local-sgd/local-sgd.yaml --out docs/local-sgd.md

Run by scripts/local_sgd.sh. The numbers are `mavg report runs`, `report epochs` and `report
compare`; this script only lays them out.
"""
import argparse
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402
from plot import number  # noqa: E402
from reproduction import Mavg, ci_text, fmt, table  # noqa: E402

SWEEP = "local-sgd"

# (name, what it is, its source, the axis values that select its runs)
ARMS = [
    ("1 worker", "one worker, AdamW", "the baseline", {"parallel.workers": "1"}),
    ("data parallel", "8 workers averaging after every step", "synchronous SGD",
     {"parallel.workers": "8", "parallel.average_every": "1"}),
    ("local SGD", "8 workers averaging every H = 46 steps", "Su & Chen 2015; Stich 2019",
     {"parallel.workers": "8", "parallel.average_every": "46",
      "parallel.combine.policy": "constant", "parallel.outer.type": "average"}),
    ("post-local SGD", "every step for the first epoch, then every H = 46",
     "Lin et al. 2020 (PyTorch's PostLocalSGDOptimizer)",
     {"parallel.combine.policy": "post_local"}),
    ("DiLoCo", "every H = 46, an outer Nesterov step (lr 0.7, momentum 0.9)",
     "Douillard et al. 2023",
     {"parallel.outer.type": "nesterov", "parallel.compress.format": "fp32",
      "parallel.stream.fragments": "1"}),
    ("QSR", "H = max(10, ⌊(0.002 / lr)²⌋): 10 steps until the lr falls below 0.00063, then "
     "growing, to 44 in the last epoch",
     "Gu et al. 2024 (ICLR)", {"parallel.combine.policy": "qsr"}),
    ("DiLoCo, fp8 deltas", "DiLoCo sending E4M3 outer deltas (a scale per 128 values)",
     "OCP FP8; torchft", {"parallel.compress.format": "fp8", "parallel.stream.fragments": "1"}),
    ("DiLoCo, int4 deltas", "DiLoCo sending 4-bit outer deltas (a scale per 128 values)",
     "Streaming DiLoCo (Douillard et al. 2025) sends 4-bit deltas",
     {"parallel.compress.format": "int4", "parallel.compress.error_feedback": "false",
      "parallel.stream.fragments": "1"}),
    ("DiLoCo, int4 + error feedback", "as int4, each worker adding its last rounding error "
     "to its next delta", "Seide et al. 2014; Karimireddy et al. 2019",
     {"parallel.compress.format": "int4", "parallel.compress.error_feedback": "true"}),
    ("streaming DiLoCo", "DiLoCo in 3 fragments (a layer each), each combined once per H at "
     "its own step, overlapped with τ = 5 steps and merged with α = 0.5",
     "Douillard et al. 2025", {"parallel.stream.fragments": "3", "parallel.compress.format": "fp32"}),
    ("streaming DiLoCo, fp8 deltas", "streaming DiLoCo sending E4M3 outer deltas",
     "Douillard et al. 2025; OCP FP8",
     {"parallel.stream.fragments": "3", "parallel.compress.format": "fp8"}),
    ("streaming DiLoCo, int4 deltas", "streaming DiLoCo sending 4-bit outer deltas",
     "Douillard et al. 2025 (4-bit outer gradients)",
     {"parallel.stream.fragments": "3", "parallel.compress.format": "int4"}),
]
BASE = "data parallel"


def axis_text(value):
    """An axis value as the spec writes it (JSON booleans as true/false); a run made before
    parallel.compress existed has none: fp32, no error feedback."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


DEFAULTS = {"parallel.compress.format": "fp32", "parallel.compress.error_feedback": "false",
            "parallel.stream.fragments": "1"}


def selects(axes, row):
    def value(k):
        v = row.get(k)
        return DEFAULTS.get(k) if v is None or v == "" else axis_text(v)
    return all(value(k) == v for k, v in axes.items())


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def mean_interval(m, vals):
    if not vals:
        return "–"
    res = m.mean_ci(vals) if len(vals) > 1 else None
    if not res:
        return fmt(mean(vals))
    d = res.get("difference", {})
    lo, hi = d.get("ci_low"), d.get("ci_high")
    if lo is None or hi is None:
        return fmt(mean(vals))
    return f"{fmt(mean(vals))} [{fmt(lo)}, {fmt(hi)}]"


def wer_vs_bytes(points, single, out_dir):
    """The figure: each arm's test WER (mean, 95 % interval) against the megabytes every worker
    sent per epoch, on a log axis; the 1-worker arm (no bytes) as a line."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for i, (name, mb, wer, lo, hi) in enumerate(points):
        err = None if lo is None else [[wer - lo], [hi - wer]]
        ax.errorbar([mb], [wer], yerr=err, fmt="o", capsize=3, color=plot.COLORS[i % 9],
                    label=name)
    if single is not None:
        ax.axhline(single, color="gray", linestyle="--", linewidth=1, label="1 worker (no bytes)")
    ax.set_xscale("log")
    ax.set_xlabel("MB each worker put into its combines per epoch: payload (log scale)")
    ax.set_ylabel("test WER %")
    ax.set_title("8 simulated workers, digits (small), 3 paired seeds")
    ax.legend(fontsize=7, loc="best")
    plot.save(fig, out_dir, "wer-vs-bytes")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    ap.add_argument("--mavg", default="build/bin/mavg")
    ap.add_argument("--spec", default="sweeps/local-sgd/local-sgd.yaml")
    ap.add_argument("--out", default="docs/local-sgd.md")
    ap.add_argument("--sweep", default=SWEEP, help="the sweep's name in the store")
    a = ap.parse_args(argv)
    reports = plot.Reports(a.mavg, a.db, a.sweep)
    runs = reports.get(["runs", a.sweep])
    epochs = reports.get(["epochs", a.sweep])
    m = Mavg(a.mavg)

    by_arm = {}
    for name, _, _, axes in ARMS:
        by_arm[name] = {r["replicate"]: r for r in runs if selects(axes, r)}
    # every run in exactly one arm
    for r in runs:
        owners = [n for n, _, _, axes in ARMS if selects(axes, r)]
        if len(owners) != 1:
            plot.fail(f"run {r['run_id']}: in {len(owners)} arms ({owners}): the arms and "
                      f"{a.spec} disagree")
    curves = {}
    for e in epochs:
        curves.setdefault(e["run_id"], []).append(e)
    for c in curves.values():
        c.sort(key=lambda e: e["epoch"])

    def completed(arm):
        return {k: r for k, r in by_arm[arm].items() if r.get("status") == "completed"}

    base = completed(BASE)

    def steps_to(run, target):
        """Minibatches per worker until the CV loss first reached `target`, or None."""
        steps = 0
        for e in curves.get(run["run_id"], []):
            steps += int(e.get("minibatches") or 0)
            if e.get("cv_loss") is not None and e["cv_loss"] <= target:
                return steps
        return None

    # The performance model's epoch at two links, and its efficiency (compute utilisation),
    # per arm: `mavg report speedup --interconnect LINK` (docs/performance-model.md).
    LINKS = [("eth-1g", "1 GbE"), ("ib-fdr", "IB FDR")]
    model = {}
    for link, _ in LINKS:
        try:
            t = reports.get(["speedup", a.sweep, "--interconnect", link])
        except plot.PlotError as e:
            plot.fail(f"mavg report speedup --interconnect {link}: {e}")
        head = t["header"]
        for row in t["rows"]:
            cells = dict(zip(head, row))
            for name, _, _, axes in ARMS:
                if selects(axes, cells):
                    model[(name, link)] = (number(cells.get(f"model epoch s ({link})")),
                                           number(cells.get("model efficiency")))

    def model_text(name, link):
        epoch, eff = model.get((name, link), (None, None))
        if epoch is None:
            return "–"
        return f"{fmt(epoch, 2)} ({fmt(100 * eff, 0)} %)" if eff is not None else fmt(epoch, 2)

    rows = []
    points = []  # (arm, MB per worker per epoch, WER mean, interval low, high) for the figure
    single_wer = None
    shows = []  # one computed sentence per arm with a paired interval against data parallel
    contended = 0
    total_epochs = 0
    for name, what, source, _ in ARMS:
        done = completed(name)
        n_all = len(by_arm[name])
        wers = {k: number(r.get("wer")) for k, r in done.items()}
        diff = None
        if name != BASE:
            pairs = sorted(set(wers) & set(base))
            if len(pairs) >= 2:
                diff = m.compare({k: number(base[k].get("wer")) for k in pairs},
                                 {k: wers[k] for k in pairs})
        reach = []
        for k, r in done.items():
            if k in base and base[k].get("final_cv_loss") is not None:
                reach.append(steps_to(r, float(base[k]["final_cv_loss"])))
        reached = [s for s in reach if s is not None]
        reach_text = "–" if not reach else (
            f"{mean(reached):.0f}" + ("" if len(reached) == len(reach) else
                                      f" ({len(reach) - len(reached)} of {len(reach)} never)")
            if reached else f"never ({len(reach)} of {len(reach)})")
        for r in done.values():
            for e in curves.get(r["run_id"], []):
                total_epochs += 1
                contended += 1 if e.get("contended") else 0
        # A compressed arm against its fp32 arm on the same seeds (what the rounding cost), and
        # streaming DiLoCo against DiLoCo (what syncing a fragment at a time cost).
        against = (name.split(", ")[0] if ", " in name else
                   "DiLoCo" if name == "streaming DiLoCo" else None)
        if against:
            full = completed(against)
            pairs = sorted(set(wers) & set(full))
            if len(pairs) >= 2:
                vs = m.compare({k: number(full[k].get("wer")) for k in pairs},
                               {k: wers[k] for k in pairs})
                shows.append(f"- **{name}** against {against} in fp32 (the same seeds): Δ WER "
                             f"{ci_text(vs)}.")
        if diff and name != BASE and "difference" in diff:
            d = diff["difference"]
            lo, hi = d.get("ci_low"), d.get("ci_high")
            bytes_arm = mean(number(r.get("comm_bytes")) for r in done.values())
            bytes_base = mean(number(r.get("comm_bytes")) for r in base.values())
            ratio = (f", with {bytes_base / bytes_arm:.0f} times less payload"
                     if bytes_arm and bytes_base and bytes_arm < bytes_base else
                     ", with no bytes" if bytes_arm == 0 else "")
            if lo is not None and hi is not None:
                where = ("a lower WER than data parallel on these seeds (the interval lies below 0)"
                         if hi < 0 else
                         "a higher WER than data parallel (the interval lies above 0)" if lo > 0
                         else "not told apart from data parallel (the interval holds 0)")
                shows.append(f"- **{name}**: {where}{ratio}.")
        wer_list = [w for w in wers.values() if w is not None]
        mb = mean(number(r.get("comm_bytes_per_epoch")) for r in done.values()) if done else None
        if wer_list and name == ARMS[0][0]:
            single_wer = mean(wer_list)
        elif wer_list and mb:
            ci = m.mean_ci(wer_list).get("difference", {}) if len(wer_list) > 1 else {}
            points.append((name, mb / 1e6, mean(wer_list), ci.get("ci_low"), ci.get("ci_high")))
        rows.append([
            f"**{name}**", what, source, f"{len(done)}/{n_all}",
            fmt(mean(number(r.get("averagings")) for r in done.values()), 1),
            fmt(mean(number(r.get("frames_per_epoch")) for r in done.values()) / 1e3
                if done else None, 1),
            fmt(mean(number(r.get("comm_bytes_per_epoch")) for r in done.values()) / 1e6
                if done else None, 2),
            mean_interval(m, [w for w in wers.values() if w is not None]),
            "–" if name == BASE else ci_text(diff),
            fmt(mean(number(r.get("final_cv_loss")) for r in done.values()), 3),
            reach_text,
            *[model_text(name, link) for link, _ in LINKS],
        ])

        today = datetime.date.today().isoformat()
    out = []
    out.append("# Local SGD as it is run now, at our scale\n")
    out.append(
        "*Written by `scripts/local_sgd.sh` (analysis/local_sgd.py) from the runs of "
        f"`{a.spec}`; {today}. Simulated workers; "
        "bytes are counted by the algorithm (`comm_bytes`, docs/algorithms.md §1f), "
        "not measured on a link (docs/link.md measures them on one).*\n")
    out.append(
        f"{len(ARMS) - 1} ways to combine 8 workers, beside one worker, on the digits task's "
        "small corpus (142,709 training "
        "frames, 1,617 test words), after the table of DiLoCo (Douillard et al. 2023): the "
        "same 2 x 256 sigmoid network, AdamW inside every worker (lr 0.003, exponential decay "
        "to 0.0003 over 8 epochs, minibatch 128: about 139 steps per worker per epoch at 8 "
        "workers), no lr scaling, and the same seeds in every arm (replicate k of one arm is "
        "paired with replicate k of another).\n")
    out.append(table(
        ["arm", "what", "source", "runs", "combines / epoch", "k frames trained / epoch",
         "MB per worker / epoch",
         "test WER % [95 % CI]", "Δ WER vs data parallel [95 % CI] (pairs)", "final CV loss",
         "steps per worker to data parallel's CV loss",
         *[f"model epoch s at {label} (compute utilisation)" for _, label in LINKS]], rows))
    out.append(
        "\nHow to read it. *combines / epoch*: the combine points a worker took part in; *frames "
        "trained*: an epoch ends at its last combine point and the frames beyond it are left "
        "out (docs/algorithms.md §1a), so an arm whose period does not divide the epoch trains "
        "fewer; "
        "*MB per worker / epoch*: what each worker put into them (the 194,879 parameters as "
        "4-byte floats per combine; a ring all-reduce moves about 2(N−1)/N = 1.75 times that "
        "over each worker's link; the compressed arms put in their packed deltas, which every "
        "other worker receives: an all-gather moves (N−1) = 7 payloads in and out of each "
        "worker, so on the link the saving over DiLoCo in fp32 is smaller than the payloads' "
        "ratio; the model columns price it, docs/performance-model.md). *Δ WER*: the arm's WER minus data parallel's on the same "
        "seed, with the paired t interval of `mavg report compare`; an interval that holds 0 "
        "does not tell the arms apart with these seeds. *Steps to data parallel's CV loss*: "
        "the minibatches each worker trained until the epoch whose CV loss first reached data "
        "parallel's final CV loss on the same seed, counted at epoch ends (\"never\": not within "
        "the 8 epochs); the 1-worker run's steps are all one worker's. *Model epoch at 1 GbE / "
        "IB FDR*: `mavg report speedup --interconnect eth-1g / ib-fdr`, the performance model "
        "(docs/performance-model.md) pricing each arm's recorded bytes per combine on that "
        "link (an all-reduce, or the compressed arms' all-gather) on top of the runs' "
        "projected compute, and the share of the epoch that is compute (Streaming DiLoCo's "
        "compute utilisation); the compute was measured on shared cores, so it is inflated "
        "and the utilisations lean high.\n")
    if points:
        fig_dir = os.path.join(os.path.dirname(a.out) or ".", "local-sgd")
        wer_vs_bytes(points, single_wer, fig_dir)
        out.append("![Test WER against the bytes each worker sent per epoch, one point per arm "
                   "with its 95 % interval](local-sgd/wer-vs-bytes.png)\n")
    if shows:
        out.append("What it shows, arm by arm against data parallel (computed from the table's "
                   "intervals):\n")
        out.append("\n".join(shows) + "\n")
    wall = [number(r.get("wall_s")) for r in runs if number(r.get("wall_s")) is not None]
    if wall:
        out.append(f"The table's {len(runs)} runs took {sum(wall) / 3600:.2f} core-hours in all "
                   "(one thread per run, on shared cores: an upper bound).\n")
    if total_epochs:
        out.append(
            f"Wall times are left out: {contended} of {total_epochs} epochs ran on cores "
            "shared with other work (`contended` in metrics.jsonl), so their times measure "
            "the sharing, not the methods. The table compares what the methods compute: the "
            "steps, the combines and the bytes.\n")
    out.append("## What the papers measured, and what this table can say\n")
    out.append(
        "- **DiLoCo** (Douillard et al. 2023): 8 workers, inner AdamW, an outer Nesterov step "
        "with lr 0.7 and momentum 0.9 every H = 500 inner steps, on C4 language models; it "
        "matched synchronous data parallel's perplexity with 500 times less communication. "
        "Here H = 46 (an epoch is 139 steps per worker; H divides 138 of them), so DiLoCo "
        "communicates about 46 times less than data parallel.\n"
        "- **Post-local SGD** (Lin et al. 2020): synchronous for a warm-up, then local steps; "
        "PyTorch ships it as `PostLocalSGDOptimizer`. Here the warm-up is the first epoch.\n"
        "- **QSR** (Gu et al., ICLR 2024): the period grows as the learning rate decays, "
        "H ∝ 1/η²; here H = max(10, ⌊(0.002/η)²⌋) with the schedule's η, from 10 to 44 "
        "steps; its periods divide the epoch less well, so it trains the fewest frames.\n"
        "- **Local SGD every H** is Su & Chen's (2015) periodic averaging, at a longer period.\n"
        "- **Compressed outer deltas**: Streaming DiLoCo (Douillard et al. 2025) sends 4-bit "
        "outer deltas at 1B parameters with no loss it could measure; OpenDiLoCo found fp16 "
        "lossless. Here the deltas are packed E4M3 or 4-bit integers with a scale per 128 "
        "values (docs/algorithms.md §1i), 1 byte and half a byte per value plus 4 bytes per "
        "scale, against DiLoCo's 4 (the table's MB column).\n"
        "- **Streaming DiLoCo** (Douillard et al. 2025) synchronises a fragment of the model at "
        "a time (fragments of transformer blocks in a strided pattern), overlaps each exchange "
        "with τ inner steps and mixes the result in with α, and sends 4-bit outer gradients: "
        "at 1B parameters on Dolma it exchanged 1.10 TB where data parallel exchanged 441 TB, "
        "at the same loss (2.67 against 2.66 after 25B tokens), and its simulations put its "
        "compute utilisation at 95 % on 1–5 Gbit/s links where data parallel needs 100–300. "
        "Here the 3 layers are the 3 fragments, τ = 5, α = 0.5 (docs/algorithms.md §1j); its "
        "combines / epoch count each fragment's exchange (3 per period, and all 3 again at the "
        "epoch's end), so it sends a little more than DiLoCo, in smaller pieces.\n"
        "\nAt this scale (a 0.2 M-parameter network, 3 seeds, a 1,617-word test set) most "
        "intervals are wide, and one task and one network say little about others: the table "
        "shows the methods side by side under one set of statistics, with their communication "
        "counted. The local-SGD and DiLoCo arms combine at the same points and send the same "
        "bytes; they differ only in the outer Nesterov step. "
        f"Its runs: `mavg report runs {a.sweep} --results results/local-sgd`, and "
        "[local-sgd/runs.csv](local-sgd/runs.csv).\n")
    versions = sorted({str(r.get("build.code_version")) for r in runs
                       if r.get("build.code_version")})
    cpus = sorted({str(r.get("build.cpu")) for r in runs if r.get("build.cpu")})
    kernels = sorted({str(r.get("blas_kernels")) for r in runs if r.get("blas_kernels")})
    out.append(
        f"\nBuild{'s' if len(versions) > 1 else ''}: code version "
        f"{', '.join(versions) or '–'}, CPU {', '.join(cpus) or '–'}, kernels "
        f"{', '.join(kernels) or '–'}"
        + (" (arms added later ran on a later build, so `mavg sweep plan` shows the earlier "
           "runs as stale; `mavg train` of an earlier run's config.yaml with the later build "
           "and `mavg model diff` say whether its model is the same)" if len(versions) > 1
           else "") + ".\n")
    text = "\n".join(out)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.out)
    print(f"wrote {a.out} (sweep {a.sweep})")


if __name__ == "__main__":
    main(sys.argv[1:])
