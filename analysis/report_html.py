#!/usr/bin/python3
"""The page of `mavg report html`, which runs this script; by hand:

  analysis/report_html.py --data DIR/report.json --out DIR [--reference Y]

mavg computes, this script lays out. report.json holds what the C++ report code computed (the
metric and speedup tables exactly as `mavg report table|speedup --format json` print them, the
runs as `mavg report runs` writes them, the spec, the status counts, which figures to draw and
the reports each is drawn from); the figures are drawn by analysis/plot.py's drawing code from
those reports, as `plot.py --kind ...` draws them from the same reports run by mavg. Nothing
here computes a number and nothing reads the database: the page cannot disagree with the
terminal reports.

Writes into DIR: index.html (Jinja2 template templates/report.html.j2), figures/ (PNG + PDF),
assets/ (jQuery and DataTables from Debian's libjs-jquery and libjs-jquery-datatables: the page
needs no network), runs/<run-id>/ (each run's config and log, so the directory can be shared
whole). Needs Debian's python3-jinja2 and python3-matplotlib.
"""
import argparse
import contextlib
import io
import json
import math
import re
import os
import shutil
import sys

import jinja2
import markupsafe

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402  (the figure code, shared with plot.py's command line)

# Debian's copies of the page's scripts (no CDN: the page works offline).
JS = "/usr/share/javascript"
ASSETS = {
    f"{JS}/jquery/jquery.min.js": "jquery.min.js",
    f"{JS}/jquery-datatables/jquery.dataTables.min.js": "jquery.dataTables.min.js",
    f"{JS}/jquery-datatables/css/jquery.dataTables.min.css": "css/jquery.dataTables.min.css",
    f"{JS}/jquery-datatables/images": "images",  # the css's sort arrows (../images/)
}
# The run list shows these metrics when the runs have them (every metric is in runs.csv).
RUN_LIST_METRICS = ["wer", "test_error", "cv_error", "final_cv_loss", "epochs", "epoch_s",
                    "projected_epoch_s", "wall_s", "attempts", "mode"]
METRIC_HELP = {
    "wer": "word error rate on the test set (%)",
    "test_error": "100 x (1 - test frame accuracy)",
    "cv_error": "100 x (1 - CV frame accuracy)",
    "final_cv_loss": "CV cross-entropy of the last accepted epoch",
    "epoch_s": "measured training seconds per epoch, CV excluded; simulated workers: the time "
               "of simulating all N in one process (on the CPU at once, one per thread; on a "
               "GPU one after another), not a time on N devices (projected_epoch_s is)",
    "projected_epoch_s": "simulated workers: the epoch projected onto N devices (slowest worker "
                         "per averaging interval + measured averaging); a projection",
    "wall_s": "measured wall time of the whole run, summed over its attempts",
    "attempts": "the processes that ran it: 1 + resumes from a checkpoint",
    "mode": "simulated: N workers in one process (timings projected); mpi: one process each",
}
LOG_LIMIT = 1 << 20  # bytes of a run's log copied beside the page (its end)


def fail(msg):
    print(f"report_html.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def num(x, integral=False):
    """A metric: 4 significant digits, as the C++ reports print numbers (report/render.cpp Num);
    a column of whole numbers (epochs, frames) without decimals."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return "" if x is None else str(x)
    if not math.isfinite(x) or x == 0:
        return f"{x:g}"
    if integral:
        return str(int(x))
    digits = min(max(3 - math.floor(math.log10(abs(x))), 0), 6)
    return f"{x:.{digits}f}"


def value(x):
    """A config value as the plan prints it: 0.004, 50 (not 50.0), sgd, true."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float):
        return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)
    return str(x)


def copy_assets(out):
    for src, dst in ASSETS.items():
        if not os.path.exists(src):
            fail(f"{src} is missing: install Debian's libjs-jquery and libjs-jquery-datatables "
                 "(scripts/setup.sh does)")
        target = os.path.join(out, "assets", dst)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.isdir(src):
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            shutil.copyfile(src, target)


def inside(path, directory):
    """Whether `path`, links resolved, lies inside `directory` (links resolved too)."""
    real, base = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([real, base]) == base


def copy_run_files(row, out):
    """The run's config and log beside the page: {name: relative path} of those it has. A file
    reached through a link that leaves the run directory is not copied into a page made to be
    shared (a planted link to someone's private file)."""
    run_dir, run_id = row["run_dir"], row["run_id"]
    links = {}
    for name, candidates in (("config", ["config.yaml", "sweep-config.yaml"]),
                             ("log", ["log.txt", "launcher.log"])):
        for c in candidates:
            src = os.path.join(run_dir, c)
            if not os.path.isfile(src):
                continue
            if not inside(src, run_dir):
                print(f"mavg report html: {src} leads outside its run directory: not copied",
                      file=sys.stderr)
                continue
            rel = os.path.join("runs", run_id, c)
            os.makedirs(os.path.join(out, "runs", run_id), exist_ok=True)
            with open(src, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(0, size - LOG_LIMIT))
                data = f.read()
            with open(os.path.join(out, rel), "wb") as f:
                if size > LOG_LIMIT:
                    f.write(f"[mavg report html: the last {LOG_LIMIT} of {size} bytes of "
                            f"{src}]\n".encode())
                f.write(data)
            links[name] = rel
            break
    return links


def figures(doc, out, reference):
    """Draws the figures report.json asks for with plot.py, each from the reports report.json
    holds for it (figures.data); returns what the page shows."""
    spec = doc["figures"]
    data = spec["data"]
    made = []
    figdir = os.path.join(out, "figures")
    x, series, metric = spec["x"], spec["series"] or None, spec["metric"]
    label = plot.LABELS.get
    wanted = []
    held = spec.get("where", {})  # other varying axes, held at one value (never pooled)
    if x and metric:
        wanted.append(("metric", f"{label(metric, metric)} by {label(x, x)}",
                       f"{doc['sweep']}-{metric}", {"metric": metric, "where": held},
                       "Mean over replicates; error bars: standard deviation."
                       + (f" One line per {series}." if series else "")))
    if spec["speedup"]:
        wanted.append(("speedup", "Speedup", f"{doc['sweep']}-speedup",
                       {"where": held},
                       "The speedup table's numbers, on the devices the legend names. Lines of "
                       "real processes only (MPI ranks, one worker): the measured speedup, the "
                       "baseline's measured seconds per training frame over the row's. Lines "
                       "with simulated workers: the projected speedup, within each run, N × the "
                       "mean worker's measured compute and data seconds over the run's projected "
                       "epoch (1 worker: 1), no baseline time entering it. Dotted: ideal "
                       "(linear); gray squares, dashed: Su & Chen 2015's speedups measured on K20 "
                       "GPUs, drawn only up to these runs' largest worker count (the legend names "
                       "the points left out). Open markers: efficiencies within the baseline "
                       "replicates' noise; a flagged number's note is in the table's notes "
                       "column."))
    wanted.append(("curves", "CV loss per epoch", f"{doc['sweep']}-curves",
                   {"where": spec["curves_where"]}, "Every run's CV cross-entropy per epoch."))
    if x:
        wanted.append(("breakdown", "Where an epoch's time goes", f"{doc['sweep']}-breakdown",
                       {"where": spec["breakdown_where"]},
                       "Slowest worker's seconds per epoch: compute, averaging, data, waiting. "
                       "Hatched bars, marked projected: simulated workers, each part measured "
                       "per worker in one process, the stacked total a projection onto N "
                       "devices, not a measured epoch."))
    for kind, title, name, extra, caption in wanted:
        where = extra["where"]
        a = argparse.Namespace(x=x, series=series, metric=extra.get("metric", metric),
                               where=where, out=figdir, sweep=doc["sweep"], reference=reference,
                               baseline=spec.get("baseline", "1"))
        fig = {"kind": kind, "title": title, "caption": caption,
               "where": ", ".join(f"{k} = {v}" for k, v in where.items())}
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # plot.save lists the files
                plot.draw(kind, data["epochs" if kind == "curves" else kind], a)
            fig["png"] = f"figures/{name}.png"
            fig["pdf"] = f"figures/{name}.pdf"
        except Exception as e:  # noqa: BLE001 -- one figure that fails must not cost the page
            fig["error"] = str(e) if isinstance(e, plot.PlotError) else f"{type(e).__name__}: {e}"
            print(f"report_html.py: figure '{title}' not drawn: {fig['error']}")
        made.append(fig)
    return made


# A verb after the names of several metrics (a shared note's "Their test_error and cv_error
# come from ...") takes the plural.
PLURAL = {"comes": "come", "is": "are", "was": "were", "has": "have", "differs": "differ",
          "depends": "depend"}


def metric_pattern(metric):
    """The metric's name as a word of a note (not part of a longer name)."""
    return re.compile(r"(?<![\w.])" + re.escape(metric) + r"(?![\w.])")


def split_notes(tables):
    """The metric tables' notes, each shown once: (the notes every table has, shown once above
    the tables; per table, the notes only it has). `report table` writes the same frames
    notes under every table of a page (the same runs in the same cells), naming its own metric
    in them ("Their test_error comes from unequal amounts of training"): a note is the same
    in two tables when it is with each table's metric in the other's place, and the shared
    note names them all. A metric without a table (an error) has no notes and does not count; a
    page of one table keeps its notes under it."""
    shown = [i for i, t in enumerate(tables) if "error" not in t]
    own = [list(t.get("notes") or []) for t in tables]
    if len(shown) < 2:
        return [], own
    marker = "\0metric\0"

    def key(note, metric):
        return metric_pattern(metric).sub(lambda _: marker, note)

    keys = {i: [key(n, tables[i]["metric"]) for n in own[i]] for i in shown}
    first = shown[0]
    common = [k for k in dict.fromkeys(keys[first]) if all(k in keys[i] for i in shown)]
    if not common:
        return [], own
    names = [tables[i]["metric"] for i in shown]
    listed = ", ".join(names[:-1]) + " and " + names[-1]
    shared = []
    for k in common:
        text = re.sub(re.escape(marker) + r"( (\w+))?",
                      lambda m: listed + (" " + PLURAL.get(m.group(2), m.group(2))
                                          if m.group(2) else ""), k)
        shared.append(text)
    for i in shown:
        own[i] = [n for n, k in zip(own[i], keys[i]) if k not in common]
    return shared, own


def speedup_groups(header):
    """The speedup table's column groups as (label, span), and its columns' names within their
    group: the page labels measured, projected and modelled times as such above the columns."""
    target = {"target CV loss": "target CV loss", "time to baseline CV loss s": "seconds",
              "reached target": "reached"}
    groups, names = [], []
    for h in header:
        if h.startswith("measured "):
            label, name = "Measured: real processes", h[len("measured "):]
        elif h.startswith("projected "):
            label, name = ("Projected: simulated workers (a projection, not a measurement)",
                           h[len("projected "):])
        elif h.startswith("model epoch s ("):
            label, name = f"Modelled: alpha-beta all-reduce on {h[len('model epoch s ('):-1]}", \
                "epoch s"
        elif h.startswith("model ") and groups:
            label, name = groups[-1][0], h[len("model "):]
        elif h in target:
            label, name = "Time to the baseline's CV loss", target[h]
        else:
            label, name = "", h
        if groups and groups[-1][0] == label:
            groups[-1][1] += 1
        else:
            groups.append([label, 1])
        names.append(name)
    return groups, names


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="report.json written by mavg report html")
    p.add_argument("--out", required=True, help="the page's directory")
    p.add_argument("--reference", default="", help="the paper's numbers (speedup figure)")
    a = p.parse_args()
    with open(a.data, encoding="utf-8") as f:
        doc = json.load(f)

    copy_assets(a.out)
    runs = doc["runs"]
    columns = runs["columns"]
    records = [dict(zip(columns, row)) for row in runs["rows"]]
    for r in records:
        r["_links"] = copy_run_files(r, a.out)
    shown = [m for m in RUN_LIST_METRICS if m in runs["metrics"]]
    shown += [t["metric"] for t in doc["tables"]
              if t["metric"] in runs["metrics"] and t["metric"] not in shown]
    integral = {m for m in shown if all(
        r[m] is None or (isinstance(r[m], (int, float)) and not isinstance(r[m], bool)
                         and math.isfinite(r[m]) and float(r[m]).is_integer()) for r in records)}
    replicates = len({r["replicate"] for r in records}) > 1
    shared_notes, table_notes = split_notes(doc["tables"])
    speedup = doc["speedup"]
    if "header" in speedup:
        speedup["groups"], speedup["names"] = speedup_groups(speedup["header"])

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "templates")),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = num
    env.filters["value"] = value
    # Long names (parallel.average_every, projected_epoch_s) may break after a dot, or an
    # underscore, in narrow columns.
    env.filters["wbr"] = lambda text: markupsafe.Markup(
        re.sub(r"([.])" if len(text) <= 12 else r"([._])", r"\1<wbr>",
               str(markupsafe.escape(text))))
    page = env.get_template("report.html.j2").render(
        doc=doc, records=records, axes=runs["axes"], config_keys=runs["config_keys"],
        metrics=shown, integral=integral, metric_help=METRIC_HELP, replicates=replicates,
        shared_notes=shared_notes, table_notes=table_notes, speedup=speedup,
        figures=figures(doc, a.out, a.reference), total_columns=len(columns))
    tmp = os.path.join(a.out, "index.html.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(tmp, os.path.join(a.out, "index.html"))


if __name__ == "__main__":
    main()
