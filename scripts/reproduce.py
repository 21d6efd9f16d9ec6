#!/usr/bin/env python3
"""scripts/reproduce.sh's helper: its time estimates and its archive of the finished runs.

  reproduce.py estimate DB PLANS JOBS SPEC...        the runs still to do and their expected time
                                                     (PLANS holds `mavg sweep plan`'s output per
                                                     spec)
  reproduce.py next DB DRY_RUN SPEC                  the run `sweep run SPEC --max-runs 1`
                                                     starts (DRY_RUN: its --dry-run's output) and
                                                     its expected seconds, or nothing
  reproduce.py save RESULTS ARCHIVE                  the database as SQL and the finished runs'
                                                     light files, into ARCHIVE
  reproduce.py restore RESULTS ARCHIVE               the other way, when RESULTS has no database
  reproduce.py corpora ARCHIVE                       whether the corpora here are the ones the
                                                     archived runs were made on

The reproduction takes about a day of a 2-core machine and is made in parts, on whichever machine
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

DEFAULT_S_PER_FRAME = 1 / 11000  # NG-SGD on the digits network, 1 thread, measured here (README)
DEFAULT_STACK_S = 600            # an RBM stack of the x4 corpus before one is measured (a guess)
X1_FRAMES = 356167               # `mavg data digits --size x1` train frames, measured here
TERMINAL = ("completed", "failed", "diverged", "collapsed")
LEFT_OUT = ("model.bin", "checkpoint")  # large and not read by the page: not archived
TO_DO = ("new", "interrupted", "running")


# --- Estimates -------------------------------------------------------------------------------

class Specs:
    """Config values of a spec's runs: a plan row's axis, else the spec's set, else its base's."""

    def __init__(self):
        self.loaded = {}  # spec path -> (its set, its base config), each read once

    def value(self, spec_path, key, row):
        if key in row:
            return row[key]
        if spec_path not in self.loaded:
            spec = yaml.safe_load(open(spec_path))
            base = os.path.join(os.path.dirname(spec_path), spec["base"])
            if not os.path.exists(base):
                base = spec["base"]
            self.loaded[spec_path] = (spec.get("set") or {}, yaml.safe_load(open(base)))
        fixed, node = self.loaded[spec_path]
        if key in fixed:
            return fixed[key]
        for part in key.split("."):
            node = (node or {}).get(part) if isinstance(node, dict) else None
        return node


@functools.lru_cache(maxsize=None)
def train_frames(path):
    """Training frames of a corpus: its corpus.json, or the preset's size when not built yet."""
    meta = os.path.join(os.path.dirname(str(path).rstrip("/")), "corpus.json")
    if os.path.exists(meta):
        return json.load(open(meta))["sets"]["train"]["frames"]
    k = "".join(c for c in os.path.basename(os.path.dirname(str(path).rstrip("/"))) if c.isdigit())
    return X1_FRAMES * int(k or 1)


def stack_inputs(config):
    """What a run's RBM stack depends on, as a config says it (None: the run pretrains none)."""
    model = config.get("model") or {}
    if model.get("init") != "rbm":
        return None
    data = config.get("data") or {}
    return json.dumps([data.get("train"), data.get("context"), data.get("cmvn"),
                       model.get("hidden_layers"), model.get("hidden_dim"),
                       config.get("pretrain")], sort_keys=True)


class Rates:
    """Measured: seconds of wall time per trained frame of completed runs, by minibatch size, less
    the RBM pretraining a run did itself (a stack is pretrained once and then shared: counted
    apart), and the stacks the runs have made."""

    def __init__(self, db_path):
        self.rate, self.stacks, self.stacked, self.configs = {}, [], set(), {}
        if not os.path.exists(db_path):
            return
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        rows = db.execute(
            "SELECT r.run_id, r.config_json, r.status, w.value, "
            "(SELECT SUM(frames) FROM epochs e WHERE e.run_id = r.run_id), "
            "(SELECT value FROM results p WHERE p.run_id = r.run_id AND p.key = 'pretrain_s'), "
            "(SELECT value FROM results c WHERE c.run_id = r.run_id AND c.key = 'pretrain_cached') "
            "FROM runs r LEFT JOIN results w ON w.run_id = r.run_id AND w.key = 'wall_s'"
        ).fetchall()
        for run_id, config_json, status, wall, frames, pretrain_s, cached in rows:
            config = json.loads(config_json)
            self.configs[run_id] = config
            if status != "completed" or wall is None:
                continue
            self.stacked.add(stack_inputs(config))
            own = 0.0 if cached is None or float(cached) else float(pretrain_s or 0)
            if own:
                self.stacks.append(own)
            if frames:
                mb = int((config.get("optimizer") or {}).get("minibatch") or 256)
                self.rate.setdefault(mb, []).append((wall - own) / frames)

    def measured(self):
        return bool(self.rate)

    def per_frame(self, mb):
        if mb in self.rate:
            return sum(self.rate[mb]) / len(self.rate[mb])
        pooled = [v for vs in self.rate.values() for v in vs]
        return sum(pooled) / len(pooled) if pooled else DEFAULT_S_PER_FRAME

    def stack_s(self):
        return sum(self.stacks) / len(self.stacks) if self.stacks else DEFAULT_STACK_S


def plan_rows(text):
    """(run id, row) of a `mavg sweep plan` output, in its order."""
    lines = text.splitlines()
    header = next((l.split() for l in lines if l.startswith("run_id")), [])
    for l in lines:
        f = l.split()
        if f and len(f[0]) == 16 and all(c in "0123456789abcdef" for c in f[0]):
            yield f[0], dict(zip(header, f))


def run_seconds(specs, rates, spec, run_id, row):
    """A run's expected seconds: its training frames (corpus frames x epochs) at the measured
    rate of its minibatch size; plus a stack's when it pretrains one no completed run made."""
    mb = int(specs.value(spec, "optimizer.minibatch", row) or 256)
    epochs = int(specs.value(spec, "schedule.epochs", row) or 15)
    seconds = train_frames(specs.value(spec, "data.train", row)) * epochs * rates.per_frame(mb)
    config = rates.configs.get(run_id)  # registered by a `sweep run` of its spec
    if config is not None and stack_inputs(config) not in rates.stacked | {None}:
        seconds += rates.stack_s()
    return seconds


def estimate(db_path, plans, jobs, specs_paths):
    rates, specs = Rates(db_path), Specs()
    todo, stale, parts = {}, set(), []
    for spec in specs_paths:
        name = os.path.basename(spec)[:-5]
        seconds = n = 0
        for run_id, row in plan_rows(open(os.path.join(plans, name + ".plan")).read()):
            if row.get("state") == "stale":
                stale.add(run_id)
            if row.get("state") not in TO_DO or run_id in todo:
                continue
            todo[run_id] = run_seconds(specs, rates, spec, run_id, row)
            seconds += todo[run_id]
            n += 1
        parts.append((name, n, seconds))
    # The expected time: JOBS queues (reproduce.sh) take the runs to do from one list, in the
    # specs' order, each queue one run at a time; so each run goes to whichever queue is free
    # first.
    free = [0.0] * jobs
    for seconds in todo.values():
        heapq.heapreplace(free, free[0] + seconds)
    total = max(free)
    for name, n, s in parts:
        print(f"[reproduce] {name}: {n} runs to do, about {s / 3600:.1f} h of one core")
    print(f"[reproduce] {len(todo)} runs to do, about {total / 3600:.1f} hours with {jobs} at a "
          f"time (from {'the completed runs' if rates.measured() else 'a default measured here'}"
          ": seconds per trained frame by minibatch size, times each run's corpus frames x "
          "epochs; a run two specs share counted once)")
    if rates.stacks:
        print(f"[reproduce] each RBM stack not pretrained yet: {rates.stack_s() / 60:.0f} "
              f"minutes (the mean of {len(rates.stacks)} measured; counted in the hours above "
              "for the runs whose stack no completed run made)")
    if total > 12 * 3600:
        print("[reproduce] more than 12 hours: cut in this order if needed: the x8 point (part "
              "x8), replicates beyond 3 outside Tables 1 and 3 (--replicates), the minibatch-64 "
              "arm at 1 worker (an exclude in sweeps/paper/table4.yaml)")
    if stale:
        print(f"[reproduce] {len(stale)} runs were done by another build (stale): kept; the page "
              "says which builds made it (rerun them: mavg sweep run SPEC --rerun-stale)")


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
    if cmd == "estimate" and len(args) >= 4:
        estimate(args[0], args[1], int(args[2]), args[3:])
    elif cmd == "next" and len(args) == 3:
        next_run(*args)
    elif cmd == "save" and len(args) == 2:
        save(*args)
    elif cmd == "restore" and len(args) == 2:
        restore(*args)
    elif cmd == "corpora" and len(args) == 1:
        check_corpora(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
