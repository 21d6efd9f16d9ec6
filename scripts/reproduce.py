#!/usr/bin/env python3
"""scripts/reproduce.sh's helper: its time estimates and its archive of the finished runs.

  reproduce.py estimate DB PLANS JOBS DATA CORPORA SPEC...
                                                     the runs still to do, the corpora to build
                                                     (CORPORA: names, comma-separated, under
                                                     DATA) and their expected CPU-hours (PLANS
                                                     holds `mavg sweep plan`'s output per spec)
  reproduce.py corpus-args NAME                      `mavg data digits`'s arguments for a corpus
                                                     of the scaled family: xK, or xKt (xK with
                                                     dev and test sets of 4,000 utterances)
  reproduce.py next DB DRY_RUN SPEC                  the run `sweep run SPEC --max-runs 1`
                                                     starts (DRY_RUN: its --dry-run's output) and
                                                     its expected seconds, or nothing
  reproduce.py save RESULTS ARCHIVE                  the database as SQL and the finished runs'
                                                     light files, into ARCHIVE
  reproduce.py restore RESULTS ARCHIVE               the other way, when RESULTS has no database
  reproduce.py corpora ARCHIVE                       whether the corpora here are the ones the
                                                     archived runs were made on
  reproduce.py code-version MAVG                     the code version MAVG's runs record
  reproduce.py same-build ARCHIVE MAVG               fails when the pin's build (type and
                                                     compiler) is not MAVG's
  reproduce.py pin ARCHIVE MAVG [--write]           the round's build and GEMM kernels
                                                     (ARCHIVE/pin.json): "COMMIT CODE_VERSION
                                                     CORETYPE", written first from MAVG
                                                     (--write) when the round has none

The reproduction (round 2: about 50 CPU-hours) is made in parts, on whichever machine
a part runs on; the archive is what carries the finished runs from one part to the next (commit
it). It holds the database as SQL text (`PRAGMA user_version` first: a dump omits it), and for
every run that ended (completed, failed, diverged, collapsed) its run directory less the model
and checkpoints (config, state, metrics, result, log and decodes: what the page reads), and the
RBM stacks those runs started from (results/cache/rbm-KEY/), so a later part's runs start from
the same stack as this part's when its corpus comes out the same. Runs that had not ended are
not archived beyond their database rows: restored without a directory they count as dead, and
`sweep run` starts them again from the beginning.
"""
import functools
import hashlib
import heapq
import json
import os
import shutil
import signal
import sqlite3
import sys
import tempfile

import yaml

# Costs before any run of this round has completed: measured on round 1's archived runs
# (archive/paper-round1: mavg.sql's results and epochs, and the runs' log.txt), 1 thread each, on
# the CPUs those runs had (64 of the 72 minibatch-256 runs of the x4 corpus on an AMD Turin-like
# virtual CPU, 8 on Xeons; this 2.8 GHz Xeon trains about 1.26x slower than the Turin-like one).
PRIOR_TRAIN_S_PER_FRAME = {64: 74.7e-6, 256: 50.9e-6, 1024: 47.5e-6}  # train_s / trained frames
PRIOR_CV_S_PER_FRAME = 15.1e-6    # the CV pass after each epoch: cv_s per dev frame
PRIOR_STACK_S_PER_FRAME = 154e-6  # an RBM stack: pretrain_s per training frame (11 stacks)
# After training (the runs' log.txt): the test loss (a forward pass), the dev set decoded at 77
# acoustic scales x penalties to choose them, the test set decoded once; start-up. Round 1's
# runs (400 dev, 1,000 test utterances): 1.7 + 2.8 + 2.0 + 1.5 s, and wall_s less the epochs'
# and the run's own pretraining came to 8.8 s (median of 109).
PRIOR_EVAL_S = {"fixed": 1.5, "test_frame": 14.3e-6, "dev_utt": 7.0e-3, "test_utt": 2.0e-3}
# `mavg data digits`: CPU-seconds per synthesised utterance (user + system, its processes'
# together): round 2's x4t, 20,400 utterances in 885 CPU-seconds on this 2.8 GHz Xeon (1,182 s
# of wall time, the 2 cores shared with other work). Synthesis is nearly all of a build.
CORPUS_CORE_S_PER_UTT = 885 / 20400
X1_FRAMES = 356167               # `mavg data digits --size x1` train frames, measured here
TRAIN_UTTS = 3000                # training utterances per x1 of the scaled family
FIXED_SETS = {"dev": 400, "test": 1000, "test_seen": 400}  # the family's presets
ROUND_SETS = 4000                # round 2's dev and test sets (the xKt corpora)
FRAMES_PER_UTT = {"dev": 49645 / 400, "test": 115941 / 1000}  # the family's, measured
BUDGET_CPU_H = 50                # issue 54: at most about 50 CPU-hours
TERMINAL = ("completed", "failed", "diverged", "collapsed")
LEFT_OUT = ("model.bin", "checkpoint")  # large and not read by the page: not archived
TO_DO = ("new", "interrupted", "running")
ENDED_STATES = ("done", "stale", "failed", "diverged", "collapsed")  # `sweep plan`'s, made


# --- Corpora ---------------------------------------------------------------------------------

def corpus_args(name):
    """`mavg data digits` arguments of a corpus of the scaled family by its name: xK (the preset)
    or xKt (the preset with dev and test sets of 4,000 utterances: round 2's)."""
    k = name.rstrip("t")
    if not (k.startswith("x") and k[1:].isdigit()):
        sys.exit(f"reproduce.py: '{name}' is not a corpus of the scaled family (xK or xKt)")
    args = ["--size", k]
    if name.endswith("t"):
        args += ["--dev-utts", str(ROUND_SETS), "--test-utts", str(ROUND_SETS)]
    return args


def corpus_utts(name):
    """Utterances `mavg data digits` synthesises for a corpus (every set)."""
    sets = dict(FIXED_SETS)
    if name.endswith("t"):
        sets.update(dev=ROUND_SETS, test=ROUND_SETS)
    return TRAIN_UTTS * int(name.rstrip("t")[1:]) + sum(sets.values())


@functools.lru_cache(maxsize=None)
def corpus_set(path):
    """(utterances, frames) of a data dir: its corpus's corpus.json, or the family's sizes by the
    corpus's name when it is not built yet."""
    path = str(path).rstrip("/")
    which = os.path.basename(path)
    corpus = os.path.dirname(path)
    meta = os.path.join(corpus, "corpus.json")
    if os.path.exists(meta):
        st = json.load(open(meta))["sets"][which]
        return st["utterances"], st["frames"]
    name = os.path.basename(corpus).split("-")[-1]
    k = int("".join(c for c in name if c.isdigit()) or 1)
    if which == "train":
        return TRAIN_UTTS * k, X1_FRAMES * k
    utts = ROUND_SETS if name.endswith("t") and which in ("dev", "test") else FIXED_SETS[which]
    return utts, round(utts * FRAMES_PER_UTT.get(which, FRAMES_PER_UTT["dev"]))


def train_frames(path):
    return corpus_set(path)[1]


# --- Estimates -------------------------------------------------------------------------------

class Specs:
    """Config values of a spec's runs: a plan row's axis, else the spec's set, else its base's."""

    def __init__(self):
        self.loaded = {}  # spec path -> (the spec, its base config), each read once

    def load(self, spec_path):
        if spec_path not in self.loaded:
            spec = yaml.safe_load(open(spec_path))
            base = os.path.join(os.path.dirname(spec_path), spec["base"])
            if not os.path.exists(base):
                base = spec["base"]
            self.loaded[spec_path] = (spec, yaml.safe_load(open(base)))
        return self.loaded[spec_path]

    def value(self, spec_path, key, row):
        if key in row:
            return row[key]
        spec, node = self.load(spec_path)
        fixed = spec.get("set") or {}
        if key in fixed:
            return fixed[key]
        for part in key.split("."):
            node = (node or {}).get(part) if isinstance(node, dict) else None
        return node

    def stack(self, spec_path, row):
        """What a run's RBM stack depends on, from its spec and plan row (None: it pretrains
        none): its training data, network and pretrain.* settings, and its replicate when the
        spec gives each replicate its own stack (replicate_pretraining)."""
        if self.value(spec_path, "model.init", row) != "rbm":
            return None
        spec, base = self.load(spec_path)
        pretrain = json.loads(json.dumps(base.get("pretrain") or {}))
        for key, v in list((spec.get("set") or {}).items()) + list(row.items()):
            if key.startswith("pretrain."):
                node = pretrain
                *path, leaf = key.split(".")[1:]
                for part in path:
                    node = node.setdefault(part, {})
                node[leaf] = yaml.safe_load(str(v))  # a plan row's text as the spec's value
        # (a key set to its default where another run leaves it out reads as another stack; the
        # paper specs' runs that do so are table1.yaml's own, counted there)
        replicate = row.get("replicate") if spec.get("replicate_pretraining") else None
        return json.dumps([str(self.value(spec_path, k, row)) for k in (
            "data.train", "data.context", "data.cmvn", "model.hidden_layers",
            "model.hidden_dim")] + [pretrain, replicate], sort_keys=True)


def stack_inputs(config):
    """What a run's RBM stack depends on, as a config says it (None: the run pretrains none)."""
    model = config.get("model") or {}
    if model.get("init") != "rbm":
        return None
    data = config.get("data") or {}
    return json.dumps([data.get("train"), data.get("context"), data.get("cmvn"),
                       model.get("hidden_layers"), model.get("hidden_dim"),
                       config.get("pretrain")], sort_keys=True)


def mean(values):
    return sum(values) / len(values) if values else None


class Rates:
    """Measured on the completed runs of the results database: CPU-seconds of training per
    trained frame by minibatch size (train_s: the epochs less their CV passes, and less any RBM
    pretraining), of the CV pass per dev frame, after training (test loss, decoding; by the
    dev and test sets a run reads), and of a stack per training frame; round 1's (the PRIOR_
    values) where none has completed. A run's epochs count at the CPU they had (wall time x
    the epoch's cpu_util; each run has one thread): a run that shared its core with other work
    took longer but no more CPU, and the budget and the next runs (on free cores) are in CPU
    time. The time after training and a stack's have no CPU measure and count at wall time."""

    def __init__(self, db_path):
        self.train, self.cv, self.eval, self.stacks = {}, [], {}, []
        self.stacked, self.configs = set(), {}
        if not os.path.exists(db_path):
            return
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)

        def result(run_id, key):
            row = db.execute("SELECT value FROM results WHERE run_id = ? AND key = ?",
                             (run_id, key)).fetchone()
            return None if row is None or row[0] is None else float(row[0])

        for run_id, config_json, status in db.execute(
                "SELECT run_id, config_json, status FROM runs"):
            config = json.loads(config_json)
            self.configs[run_id] = config
            wall, train_s = result(run_id, "wall_s"), result(run_id, "train_s")
            if status != "completed" or wall is None:
                continue
            self.stacked.add(stack_inputs(config))
            frames, epochs, epochs_s, cv_s, train_share, cv_share = db.execute(
                "SELECT SUM(frames), COUNT(*), SUM(wall_s), SUM(cv_s),"
                " SUM((wall_s - cv_s) * COALESCE(cpu_util, 1)) / SUM(wall_s - cv_s),"
                " SUM(cv_s * COALESCE(cpu_util, 1)) / SUM(cv_s) FROM epochs WHERE run_id = ?",
                (run_id,)).fetchone()
            cached = result(run_id, "pretrain_cached")
            own = 0.0 if cached is None or cached else (result(run_id, "pretrain_s") or 0.0)
            data = config.get("data") or {}
            if own and data.get("train"):
                self.stacks.append(own / train_frames(data["train"]))
            if frames and train_s is not None:
                mb = int((config.get("optimizer") or {}).get("minibatch") or 256)
                self.train.setdefault(mb, []).append(train_s * (train_share or 1.0) / frames)
            if cv_s and epochs and data.get("dev") and os.path.exists(
                    os.path.join(os.path.dirname(data["dev"].rstrip("/")), "corpus.json")):
                self.cv.append(cv_s * (cv_share or 1.0) / epochs / corpus_set(data["dev"])[1])
            if epochs_s is not None:
                self.eval.setdefault((data.get("dev"), data.get("test")), []).append(
                    wall - epochs_s - own)

    def measured(self):
        return bool(self.train)

    def per_frame(self, mb):
        if mb in self.train:
            return mean(self.train[mb])
        if self.train:
            return mean([v for vs in self.train.values() for v in vs])
        return PRIOR_TRAIN_S_PER_FRAME.get(mb, PRIOR_TRAIN_S_PER_FRAME[256])

    def cv_per_frame(self):
        return mean(self.cv) or PRIOR_CV_S_PER_FRAME

    def eval_s(self, dev, test):
        measured = self.eval.get((dev, test))
        if measured:
            return mean(measured)
        p = PRIOR_EVAL_S
        return (p["fixed"] + corpus_set(dev)[0] * p["dev_utt"] + corpus_set(test)[0] *
                p["test_utt"] + corpus_set(test)[1] * p["test_frame"])

    def stack_s(self, train):
        return train_frames(train) * (mean(self.stacks) or PRIOR_STACK_S_PER_FRAME)


def plan_rows(text):
    """(run id, row) of a `mavg sweep plan` output, in its order."""
    lines = text.splitlines()
    header = next((l.split() for l in lines if l.startswith("run_id")), [])
    for l in lines:
        f = l.split()
        if f and len(f[0]) == 16 and all(c in "0123456789abcdef" for c in f[0]):
            yield f[0], dict(zip(header, f))


def run_parts(specs, rates, spec, row):
    """A run's expected seconds, in parts: training (its corpus's training frames x epochs at
    the measured rate of its minibatch size), the CV pass after each epoch (its dev frames),
    and the test loss and decoding after training (its dev and test sets). Newbob's epochs are
    counted at their maximum."""
    mb = int(specs.value(spec, "optimizer.minibatch", row) or 256)
    epochs = int(specs.value(spec, "schedule.epochs", row) or 15)
    dev, test = specs.value(spec, "data.dev", row), specs.value(spec, "data.test", row)
    train = train_frames(specs.value(spec, "data.train", row)) * epochs * rates.per_frame(mb)
    cv = epochs * corpus_set(dev)[1] * rates.cv_per_frame()
    return train, cv, rates.eval_s(dev, test)


def run_seconds(specs, rates, spec, run_id, row):
    """A run's expected seconds; plus a stack's when it pretrains one no completed run made."""
    seconds = sum(run_parts(specs, rates, spec, row))
    config = rates.configs.get(run_id)  # registered by a `sweep run` of its spec
    if config is not None and stack_inputs(config) not in rates.stacked | {None}:
        seconds += rates.stack_s(config["data"]["train"])
    return seconds


def estimate(db_path, plans, jobs, data, corpora, specs_paths):
    rates, specs = Rates(db_path), Specs()
    todo, stale, parts = {}, set(), []
    stack_of, made, stacks_todo = {}, set(), {}
    for spec in specs_paths:
        for run_id, row in plan_rows(open(os.path.join(plans, _plan_name(spec))).read()):
            if row.get("state") in ENDED_STATES:
                made.add(specs.stack(spec, row))
    totals = [0.0, 0.0, 0.0]
    for spec in specs_paths:
        name = os.path.basename(spec)[:-5]
        seconds = n = 0
        for run_id, row in plan_rows(open(os.path.join(plans, _plan_name(spec))).read()):
            if row.get("state") == "stale":
                stale.add(run_id)
            if row.get("state") not in TO_DO or run_id in todo:
                continue
            t = run_parts(specs, rates, spec, row)
            totals = [a + b for a, b in zip(totals, t)]
            todo[run_id] = sum(t)
            stack = specs.stack(spec, row)
            if stack is not None and stack not in made and stack not in stacks_todo:
                # pretrained by the first run that needs it, before it trains
                stacks_todo[stack] = rates.stack_s(specs.value(spec, "data.train", row))
                todo[run_id] += stacks_todo[stack]
            seconds += todo[run_id]
            n += 1
        parts.append((name, n, seconds))
    # The expected time: JOBS queues (reproduce.sh) take the runs to do from one list, in the
    # specs' order, each queue one run at a time; so each run goes to whichever queue is free
    # first.
    free = [0.0] * jobs
    for seconds in todo.values():
        heapq.heapreplace(free, free[0] + seconds)
    runs_s = sum(todo.values())
    for name, n, s in parts:
        print(f"[reproduce] {name}: {n} runs to do, about {s / 3600:.1f} h of one core")
    source = ("the completed runs" if rates.measured() else
              "round 1's runs (archive/paper-round1), no run of this round having completed")
    print(f"[reproduce] {len(todo)} runs to do, about {runs_s / 3600:.1f} CPU-hours, "
          f"{max(free) / 3600:.1f} hours with {jobs} at a time, each on one thread of a free "
          f"core (from {source}: training CPU-seconds per trained frame by minibatch size x "
          "each run's corpus frames x epochs, the CV pass per dev frame x epochs, the test loss "
          "and decoding by its dev and test sets; a run two specs share counted once)")
    if todo:
        print(f"[reproduce]   of which training {totals[0] / 3600:.1f} h, the CV passes "
              f"{totals[1] / 3600:.1f} h, test loss and decoding {totals[2] / 3600:.1f} h, "
              f"{len(stacks_todo)} RBM stacks {sum(stacks_todo.values()) / 3600:.1f} h (one per "
              "replicate, corpus and pretrain settings that no ended run made)")
    build = [(c, corpus_utts(c)) for c in corpora
             if not os.path.exists(os.path.join(data, f"digits-{c}", "train", "feats.scp"))]
    rate = CORPUS_CORE_S_PER_UTT
    build_s = sum(u for _, u in build) * rate
    if build:
        print(f"[reproduce] corpora to build: {', '.join(f'{data}/digits-{c} ({u} utterances)' for c, u in build)}: "
              f"about {build_s / 3600:.1f} CPU-hours ({rate:.3f} CPU-seconds an utterance)")
    total_h = (runs_s + build_s) / 3600
    print(f"[reproduce] in all about {total_h:.1f} CPU-hours")
    if total_h > 1.1 * BUDGET_CPU_H:
        print(f"[reproduce] more than the about {BUDGET_CPU_H} CPU-hours budgeted: cut in this "
              "order: the scale study's replicates beyond 3, Tables 5 and 6's beyond 3, the "
              "rbm.lr arm (part rbm-lr)")
    if stale:
        print(f"[reproduce] {len(stale)} runs were done by another build (stale): kept; the page "
              "says which builds made it (rerun them: mavg sweep run SPEC --rerun-stale)")


def _plan_name(spec):
    return os.path.basename(spec)[:-5] + ".plan"


def next_run(db_path, dry_run_path, spec):
    """The run `sweep run SPEC --max-runs 1` starts, as its --dry-run says (the plan, then the
    command with the run's dir: --out for a new run, --resume for an interrupted one), and its
    expected seconds; nothing when it would start none."""
    text = open(dry_run_path).read()
    commands = [l.split() for l in text.splitlines() if {"--out", "--resume"} & set(l.split())]
    if not commands:
        return
    words = commands[0]
    flag = "--resume" if "--resume" in words else "--out"
    run_id = os.path.basename(words[words.index(flag) + 1].rstrip("/"))
    row = dict(plan_rows(text)).get(run_id, {})
    print(run_id, round(run_seconds(Specs(), Rates(db_path), spec, run_id, row)))


# --- Archive ---------------------------------------------------------------------------------

def copy_tree(src, dst, skip=()):
    """Copies the files of src under dst that dst lacks or holds at another size or mtime."""
    copied = 0
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        rel = os.path.relpath(root, src)
        for f in files:
            if f in skip or f.endswith((".tmp", ".lock")):
                continue
            s, d = os.path.join(root, f), os.path.normpath(os.path.join(dst, rel, f))
            st = os.stat(s)
            if os.path.exists(d):
                dt = os.stat(d)
                if dt.st_size == st.st_size and int(dt.st_mtime) == int(st.st_mtime):
                    continue
            os.makedirs(os.path.dirname(d), exist_ok=True)
            tmp = d + ".tmp"
            shutil.copy2(s, tmp)
            os.replace(tmp, d)
            copied += 1
    return copied


def write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)  # mkstemp's 0600 would keep the archive from other readers
    os.replace(tmp, path)


def corpus_hash(corpus):
    """SHA-256 over a corpus's files (train, dev, test: features, text, lists), corpus.json aside."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(corpus):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(root, f)
            if root == corpus and f == "corpus.json":
                continue
            h.update(os.path.relpath(path, corpus).encode() + b"\0")
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
    return h.hexdigest()


def corpus_of(config):
    train = ((config.get("data") or {}).get("train") or "").rstrip("/")
    return os.path.dirname(train) if train else None


def save(results, archive):
    db_path = os.path.join(results, "mavg.db")
    if not os.path.exists(db_path):
        sys.exit(f"reproduce.py save: {db_path}: no database to archive")
    os.makedirs(archive, exist_ok=True)
    # One consistent snapshot, whatever runs are writing the database meanwhile.
    snap = sqlite3.connect(":memory:")
    src = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    src.backup(snap)
    src.close()
    version = snap.execute("PRAGMA user_version").fetchone()[0]
    sql = "\n".join(snap.iterdump())
    runs = snap.execute("SELECT run_id, run_dir, status, config_json FROM runs").fetchall()
    # The corpora the ended runs were made on, hashed when first archived: a later part's
    # corpus, rebuilt on another machine, may differ (see `corpora`).
    meta_path = os.path.join(archive, "archive.json")
    # Notes (by hand: what a reader of the archive must know about its runs) are kept as written.
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    corpora, notes = meta.get("corpora", {}), meta.get("notes", [])
    files = stacks = 0
    keys = set()
    for run_id, run_dir, status, config_json in runs:
        if status not in TERMINAL:
            continue
        corpus = corpus_of(json.loads(config_json))
        if corpus and corpus not in corpora and os.path.isdir(corpus):
            corpora[corpus] = corpus_hash(corpus)
        if not run_dir or not os.path.isdir(run_dir):
            continue
        rel = os.path.relpath(run_dir, results)
        if rel.startswith(".."):
            sys.exit(f"reproduce.py save: run {run_id}'s directory {run_dir} is outside {results}")
        files += copy_tree(run_dir, os.path.join(archive, rel), skip=LEFT_OUT)
        key = snap.execute("SELECT value FROM results WHERE run_id = ? AND key = 'pretrain_key'",
                           (run_id,)).fetchone()
        if key:
            keys.add(key[0])
    for key in sorted(keys):
        stack = os.path.join(results, "cache", f"rbm-{key}")
        if os.path.exists(os.path.join(stack, "dbn.bin")):
            stacks += copy_tree(stack, os.path.join(archive, "cache", f"rbm-{key}"))
    # The database last: an archive's SQL names only runs whose files are already there.
    write_atomic(os.path.join(archive, "mavg.sql"),
                 f"PRAGMA user_version={version};\n{sql}\n")
    write_atomic(meta_path, json.dumps(
        {"results": os.path.normpath(results), "corpora": corpora,
         **({"notes": notes} if notes else {}),
         "runs": {s: sum(1 for r in runs if r[2] == s) for s in sorted({r[2] for r in runs})}},
        indent=1, sort_keys=True) + "\n")
    ended = sum(1 for r in runs if r[2] in TERMINAL)
    print(f"[reproduce] archived {ended} ended runs of {len(runs)} to {archive} ({files} files "
          f"and {stacks} stack files copied)")


def restore(results, archive):
    db_path = os.path.join(results, "mavg.db")
    sql_path = os.path.join(archive, "mavg.sql")
    if os.path.exists(db_path) or not os.path.exists(sql_path):
        return
    meta = json.load(open(os.path.join(archive, "archive.json")))
    old = meta["results"].rstrip("/") + "/"
    new = os.path.normpath(results) + "/"
    os.makedirs(results, exist_ok=True)
    files = 0
    for entry in sorted(os.listdir(archive)):
        if os.path.isdir(os.path.join(archive, entry)):
            files += copy_tree(os.path.join(archive, entry), os.path.join(results, entry))
    tmp = db_path + ".restoring"
    if os.path.exists(tmp):
        os.remove(tmp)
    db = sqlite3.connect(tmp)
    db.executescript(open(sql_path).read())
    if old != new:  # the run directories' paths, from where the archive's runs were made
        db.execute("UPDATE runs SET run_dir = ? || substr(run_dir, ?) WHERE substr(run_dir, 1, ?) "
                   "= ?", (new, len(old) + 1, len(old), old))
    db.commit()
    n = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    ended = db.execute("SELECT COUNT(*) FROM runs WHERE status IN (%s)" %
                       ",".join("?" * len(TERMINAL)), TERMINAL).fetchone()[0]
    db.close()
    os.replace(tmp, db_path)
    print(f"[reproduce] restored {db_path} from {archive}: {ended} ended runs of {n} "
          f"({files} files)", file=sys.stderr)


def build_of(mavg):
    """`mavg --version`'s fields (mavg, code_version, ...), or exit naming the binary."""
    import subprocess
    try:
        out = subprocess.run([mavg, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"reproduce.py: {mavg} --version failed ({e}): a build from before --version "
                 "cannot be pinned")
    fields = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    if "code_version" not in fields:
        sys.exit(f"reproduce.py: {mavg} --version names no code_version: {out.strip()!r}")
    return fields


def default_coretype():
    """The kernel family every part of a round runs, whatever CPU it lands on: OpenBLAS's
    Haswell kernels (AVX2 and FMA) run on every x86-64 CPU since 2013, where the family
    OpenBLAS would choose differs between CPUs (Zen, SkylakeX, Cooperlake: other bits). Empty
    (OpenBLAS's choice) elsewhere."""
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return ""
    return "Haswell" if "avx2" in flags and "fma" in flags else ""


def pin(archive, mavg, write):
    """One build and one kernel family for a whole round, whichever machine a part runs on: the
    commit and code version of the build that made the round's first run, and the
    OPENBLAS_CORETYPE every part sets. Written by the first part (--write), read by the rest."""
    path = os.path.join(archive, "pin.json")
    if os.path.exists(path):
        p = json.load(open(path))
    elif write:
        b = build_of(mavg)
        p = {"commit": b["mavg"].strip(), "code_version": b["code_version"].strip(),
             "build": b.get("build", "").strip(),
             "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE") or default_coretype()}
        if p["commit"].endswith("-dirty") or p["commit"] == "unknown":
            print(f"[reproduce] warning: {mavg} was built from a tree with uncommitted changes "
                  f"({p['commit']}): a later part elsewhere cannot rebuild it", file=sys.stderr)
        os.makedirs(archive, exist_ok=True)
        write_atomic(path, json.dumps(p, indent=1, sort_keys=True) + "\n")
        print(f"[reproduce] this round's build: {p['commit']} (code version "
              f"{p['code_version']}), GEMM kernels: "
              f"{p['openblas_coretype'] or 'OpenBLAS chooses'} ({path})", file=sys.stderr)
    else:
        return
    print(p["commit"], p["code_version"], p["openblas_coretype"] or "-")


def same_build(archive, mavg):
    """Exits naming both when the pin records a build (type, compiler) other than MAVG's."""
    path = os.path.join(archive, "pin.json")
    want = json.load(open(path)).get("build") if os.path.exists(path) else None
    have = build_of(mavg).get("build", "").strip()
    if want and have != want:
        sys.exit(f"reproduce.py: {mavg} is a '{have}' build, this round's is '{want}' ({path}): "
                 "another compiler gives other bits")


def check_corpora(archive):
    meta_path = os.path.join(archive, "archive.json")
    if not os.path.exists(meta_path):
        return
    for corpus, digest in sorted(json.load(open(meta_path)).get("corpora", {}).items()):
        if os.path.isdir(corpus) and corpus_hash(corpus) != digest:
            print(f"[reproduce] {corpus} is not the corpus the archived runs were made on (built "
                  "on another machine, its features differ in their last bits): the runs made "
                  "now on it pretrain their own RBM stacks, and the page flags the pairs that "
                  "started from different stacks", file=sys.stderr)


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `--plan | head` ends quietly, as other CLIs do
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "estimate" and len(args) >= 6:
        estimate(args[0], args[1], int(args[2]), args[3], [c for c in args[4].split(",") if c],
                 args[5:])
    elif cmd == "next" and len(args) == 3:
        next_run(*args)
    elif cmd == "corpus-args" and len(args) == 1:
        print(" ".join(corpus_args(args[0])))
    elif cmd == "save" and len(args) == 2:
        save(*args)
    elif cmd == "restore" and len(args) == 2:
        restore(*args)
    elif cmd == "corpora" and len(args) == 1:
        check_corpora(*args)
    elif cmd == "pin" and len(args) in (2, 3) and args[2:] in ([], ["--write"]):
        pin(args[0], args[1], args[2:] == ["--write"])
    elif cmd == "same-build" and len(args) == 2:
        same_build(*args)
    elif cmd == "code-version" and len(args) == 1:
        print(build_of(args[0])["code_version"].strip())
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
