#!/usr/bin/env bash
# scripts/local_sgd.sh end to end on a toy corpus: the local-SGD spec's 18 runs (6 arms x 3
# seeds) and the page, whose table has every arm with its 3 runs (the page's arms and the spec
# agree: a run in no arm or in two stops the page), the bytes each worker sent as the runs
# recorded them, and the paired intervals; --report rewrites the page from the runs there are.
source "$(dirname "$0")/lib.bash"
"$MAVG" -q data digits --size small --out data/digits-small --train-utts 64 --dev-utts 6 \
  --test-utts 8 --test-seen-utts 2 --threads 2 > /dev/null
cd "$MAVG_SOURCE_DIR"
run() {
  # (minibatch 16: 8 workers' shards of the toy corpus hold a period of 46 minibatches)
  RESULTS="$WORK/results" DATA="$WORK/data" OUT="$WORK/local-sgd.md" MAVG="$MAVG" JOBS=2 \
    SET="optimizer.minibatch=16" scripts/local_sgd.sh "$@"
}
run > "$WORK/run.log" 2>&1 || fail "local_sgd.sh failed: $(tail -5 "$WORK/run.log")"
cd "$WORK"
/usr/bin/python3 - <<'PY' || fail "the local-SGD page is not what the runs say"
import re
page = open("local-sgd.md").read()
rows = [l for l in page.splitlines() if l.startswith("| **")]
names = [re.match(r"\| \*\*(.+?)\*\*", l).group(1) for l in rows]
assert names == ["1 worker", "data parallel", "local SGD", "post-local SGD", "DiLoCo", "QSR"], names
for l in rows:
    cells = [c.strip() for c in l.strip("|").split("|")]
    assert cells[3] == "3/3", l  # every arm's three seeds completed
PY
name=$(sed -n 's/^wrote .* (sweep \(.*\))$/\1/p' run.log)
[ -n "$name" ] || fail "the page names no sweep: $(tail -3 run.log)"
"$MAVG" report runs "$name" --results results --format json > runs.json
/usr/bin/python3 - <<'PY' || fail "comm_bytes is not each worker's combines x the parameters x 4"
import json
runs = json.load(open("runs.json"))
assert len(runs) == 18, len(runs)
for r in runs:
    workers = int(r["parallel.workers"])
    per = r["averagings"] * r["num_params"] * 4 if workers > 1 else 0
    assert abs(r["comm_bytes_per_epoch"] - per) < 1e-6 * max(1, per), r
dp = [r for r in runs if r["parallel.workers"] == 8 and r["parallel.average_every"] == 1]
local = [r for r in runs if r["parallel.average_every"] == 46 and r["parallel.outer.type"] == "average"
         and r["parallel.combine.policy"] == "constant"]
assert dp and local and all(d["comm_bytes"] > l["comm_bytes"] for d in dp for l in local)
PY
rm local-sgd.md
RESULTS="$WORK/results" DATA="$WORK/data" OUT="$WORK/local-sgd.md" MAVG="$MAVG" \
  SET="optimizer.minibatch=16" "$MAVG_SOURCE_DIR/scripts/local_sgd.sh" --report > /dev/null ||
  fail "local_sgd.sh --report failed"
[ -s local-sgd.md ] || fail "--report wrote no page"
echo "ok: local_sgd.sh"
