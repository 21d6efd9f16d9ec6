#!/usr/bin/env bash
# Su & Chen 2015's six tables and the scale study on the digits task, and docs/reproduction.md
# from them. Long (about a day of this 2-core machine): it runs in parts and resumes.
#   scripts/reproduce.sh [PART...]          build the corpora the parts need, run what is
#                                           missing (finished runs are kept), then write the page
#   scripts/reproduce.sh --plan [PART...]   only print what would run and how long it should take
#   scripts/reproduce.sh --report           only rewrite the page from the results there are
# PARTS (default: tables scale): tables (sweeps/paper/table*.yaml, on the x4 corpus), scale (the
# scale study on x1, x2 and x4), x8 (its x8 point: first to cut when time is short).
# Environment: RESULTS (default results/paper), JOBS (runs at once, each of one thread; default
# 1), OUT (the page, default docs/reproduction.md), SWEEPS (default sweeps/paper), DATA (the dir
# holding the digits-xK corpora, default data), MAVG (the binary, default build/bin/mavg: a copy
# keeps a long reproduction on one build while the tree is rebuilt).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=run
parts=()
for a in "$@"; do
  case "$a" in
    --plan | --report) mode="$a" ;;
    tables | scale | x8) parts+=("$a") ;;
    *) echo "usage: $0 [--plan|--report] [tables|scale|x8 ...]" >&2; exit 2 ;;
  esac
done
[ "${#parts[@]}" -gt 0 ] || parts=(tables scale)
results="${RESULTS:-results/paper}"
jobs="${JOBS:-1}"
out="${OUT:-docs/reproduction.md}"
sweeps="${SWEEPS:-sweeps/paper}"
data="${DATA:-data}"
mavg="${MAVG:-build/bin/mavg}"
[ -x "$mavg" ] || { echo "$mavg: not built (scripts/setup.sh)" >&2; exit 1; }
case "$jobs" in '' | *[!0-9]* | 0) echo "JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac

# The specs of each part, in the order they run, and the corpora they read.
specs=() corpora=()
for p in "${parts[@]}"; do
  case "$p" in
    tables)
      for s in "$sweeps"/table*.yaml; do specs+=("$s"); done
      corpora+=(x4) ;;
    scale) specs+=("$sweeps/scale.yaml"); corpora+=(x1 x2 x4) ;;
    x8) specs+=("$sweeps/scale-x8.yaml"); corpora+=(x8) ;;
  esac
done
for s in "${specs[@]}"; do [ -f "$s" ] || { echo "reproduce.sh: $s: no such spec" >&2; exit 1; }; done

if [ "$mode" != --report ]; then
  # Expected time: the runs still to do (new, interrupted, or running but dead; a run shared by
  # two specs counts once), each at its own training frames (its corpus's train frames x the
  # epochs) times the seconds per trained frame of the completed runs of the same minibatch
  # size (any size when none), or a default measured here when nothing has completed. Runs
  # that `sweep run` keeps are not to do: done, failed, diverged, collapsed, and stale ones
  # (done by another build; counted apart).
  plans=$(mktemp -d)
  trap 'rm -rf "$plans"' EXIT
  for s in "${specs[@]}"; do
    "$mavg" sweep plan "$s" --results "$results" > "$plans/$(basename "$s" .yaml).plan" ||
      { echo "reproduce.sh: mavg sweep plan $s failed" >&2; exit 1; }
  done
  /usr/bin/python3 - "$results/mavg.db" "$plans" "$jobs" "$data" "${specs[@]}" <<'PY'
import functools, json, os, signal, sqlite3, sys
import yaml

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `--plan | head` ends quietly, as other CLIs do

db_path, plans, jobs, data, specs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
DEFAULT_S_PER_FRAME = 1 / 11000  # NG-SGD on the digits network, 1 thread, measured here (README)
X1_FRAMES = 356167               # `mavg data digits --size x1` train frames, measured here

loaded = {}  # spec path -> (its set, its base config), each read once
def config_value(spec_path, key, row):
    """A key's value for a plan row: the row's axis, else the spec's set, else its base's."""
    if key in row:
        return row[key]
    if spec_path not in loaded:
        spec = yaml.safe_load(open(spec_path))
        base = os.path.join(os.path.dirname(spec_path), spec["base"])
        if not os.path.exists(base):
            base = spec["base"]
        loaded[spec_path] = (spec.get("set") or {}, yaml.safe_load(open(base)))
    fixed, node = loaded[spec_path]
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

# Measured: seconds of wall time per trained frame of completed runs, by minibatch size, less
# the RBM pretraining a run did itself (a stack is pretrained once and then shared: counted apart).
rate, measured, stacks = {}, False, []
if os.path.exists(db_path):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT json_extract(r.config_json, '$.optimizer.minibatch'), w.value, "
        "(SELECT SUM(frames) FROM epochs e WHERE e.run_id = r.run_id), "
        "(SELECT value FROM results p WHERE p.run_id = r.run_id AND p.key = 'pretrain_s'), "
        "(SELECT value FROM results c WHERE c.run_id = r.run_id AND c.key = 'pretrain_cached') "
        "FROM runs r JOIN results w ON w.run_id = r.run_id AND w.key = 'wall_s' "
        "WHERE r.status = 'completed'").fetchall()
    for mb, wall, frames, pretrain_s, cached in rows:
        own = 0.0 if cached is None or float(cached) else float(pretrain_s or 0)
        if own:
            stacks.append(own)
        if frames:
            rate.setdefault(int(mb or 256), []).append((wall - own) / frames)
    measured = bool(rate)
def per_frame(mb):
    if mb in rate:
        return sum(rate[mb]) / len(rate[mb])
    pooled = [v for vs in rate.values() for v in vs]
    return sum(pooled) / len(pooled) if pooled else DEFAULT_S_PER_FRAME

todo, stale, parts = {}, set(), []
for spec in specs:
    name = os.path.basename(spec)[:-5]
    lines = open(os.path.join(plans, name + ".plan")).read().splitlines()
    header = next((l.split() for l in lines if l.startswith("run_id")), [])
    seconds = n = 0
    for l in lines:
        f = l.split()
        if not f or len(f[0]) != 16 or not all(c in "0123456789abcdef" for c in f[0]):
            continue
        row = dict(zip(header, f))
        if row.get("state") == "stale":
            stale.add(f[0])
        if row.get("state") not in ("new", "interrupted", "running") or f[0] in todo:
            continue
        mb = int(config_value(spec, "optimizer.minibatch", row) or 256)
        epochs = int(config_value(spec, "schedule.epochs", row) or 15)
        frames = train_frames(config_value(spec, "data.train", row)) * epochs
        todo[f[0]] = frames * per_frame(mb)
        seconds += todo[f[0]]
        n += 1
    parts.append((spec, name, n, seconds))
# JOBS queues of whole specs, each run one run at a time: the longest spec first onto the least
# loaded queue, so no core waits for the end of another queue's spec. Each queue keeps the specs'
# order.
queues = [[0.0, []] for _ in range(jobs)]
for spec, _, _, seconds in sorted(parts, key=lambda p: -p[3]):
    q = min(queues, key=lambda q: q[0])
    q[0] += seconds
    q[1].append(spec)
for i, (_, members) in enumerate(queues):
    with open(os.path.join(plans, f"queue{i}"), "w") as f:
        f.writelines(s + "\n" for s in specs if s in members)
total = max(q[0] for q in queues)  # the longest queue
for _, name, n, s in parts:
    print(f"[reproduce] {name}: {n} runs to do, about {s / 3600:.1f} h of one core")
print(f"[reproduce] {len(todo)} runs to do, about {total / 3600:.1f} hours with {jobs} at a time "
      f"(from {'the completed runs' if measured else 'a default measured here'}: seconds per "
      "trained frame by minibatch size, times each run's corpus frames x epochs; a run two specs "
      "share counted once)")
if stacks:
    print(f"[reproduce] plus each RBM stack not pretrained yet: {sum(stacks) / len(stacks) / 60:.0f} "
          f"minutes (the mean of {len(stacks)} measured)")
if total > 12 * 3600:
    print("[reproduce] more than 12 hours: cut in this order if needed: the x8 point (part x8), "
          "replicates beyond 3 outside Tables 1 and 3 (--replicates), the minibatch-64 arm at 1 "
          "worker (an exclude in sweeps/paper/table4.yaml)")
if stale:
    print(f"[reproduce] {len(stale)} runs were done by another build (stale): kept; the page "
          "says which builds made it (rerun them: mavg sweep run SPEC --rerun-stale)")
PY
  [ "$mode" = --plan ] && exit 0
  # The corpora first (measured on 2 cores: x1 5 minutes, x2 9, x4 15).
  for k in $(printf '%s\n' "${corpora[@]}" | sort -u); do
    if [ ! -s "$data/digits-$k/train/feats.scp" ]; then
      echo "[reproduce] building $data/digits-$k" >&2
      "$mavg" -q data digits --size "$k" --out "$data/digits-$k" --force
    fi
  done
  # JOBS queues side by side (the sweeps share the database; a run two specs share is made once),
  # each run of one thread: the same per-frame compute for every run whatever JOBS is.
  run_queue() {
    while IFS= read -r s; do
      echo "[reproduce] $s" >&2
      # A failed, diverged or collapsed run is a result, not an error of this script.
      "$mavg" -q sweep run "$s" --results "$results" --jobs 1 --threads 1 || true
    done < "$plans/queue$1"
  }
  for ((q = 0; q < jobs; q++)); do run_queue "$q" & done
  wait
fi
/usr/bin/python3 analysis/reproduction.py "$results/mavg.db" --out "$out" \
  --figures "$(dirname "$out")/reproduction" --mavg "$mavg"
