#!/usr/bin/env bash
# scripts/local_sgd.sh end to end on a toy corpus: the local-SGD spec's 36 runs (12 arms x 3
# seeds) and the page with its figure, whose table has every arm with its 3 runs (the page's arms and the spec
# agree: a run in no arm or in two stops the page), the bytes each worker sent as the runs
# recorded them, and the paired intervals; --report rewrites the page from the runs there are.
source "$(dirname "$0")/lib.bash"
"$MAVG" -q data digits --size small --out data/digits-small --train-utts 64 --dev-utts 6 \
  --test-utts 8 --test-seen-utts 2 --threads 2 > /dev/null
cd "$MAVG_SOURCE_DIR"
run() {
  # (minibatch 16: 8 workers' shards of the toy corpus hold a period of 46 minibatches; 2
  # epochs of the spec's 8: 36 runs, under the sanitizers too)
  RESULTS="$WORK/results" DATA="$WORK/data" OUT="$WORK/local-sgd.md" MAVG="$MAVG" JOBS=2 \
    SET="optimizer.minibatch=16 schedule.epochs=2" scripts/local_sgd.sh "$@"
}
run > "$WORK/run.log" 2>&1 || fail "local_sgd.sh failed: $(tail -5 "$WORK/run.log")"
cd "$WORK"
/usr/bin/python3 - <<'PY' || fail "the local-SGD page is not what the runs say"
import re
page = open("local-sgd.md").read()
rows = [l for l in page.splitlines() if l.startswith("| **")]
names = [re.match(r"\| \*\*(.+?)\*\*", l).group(1) for l in rows]
assert names == ["1 worker", "data parallel", "local SGD", "post-local SGD", "DiLoCo", "QSR",
                 "DiLoCo, fp8 deltas", "DiLoCo, int4 deltas", "DiLoCo, int4 + error feedback",
                 "streaming DiLoCo", "streaming DiLoCo, fp8 deltas",
                 "streaming DiLoCo, int4 deltas"], names
assert "(local-sgd/wer-vs-bytes.png)" in page
for l in rows:
    cells = [c.strip() for c in l.strip("|").split("|")]
    assert cells[3] == "3/3", l  # every arm's three seeds completed
PY
name=$(sed -n 's/^wrote .* (sweep \(.*\))$/\1/p' run.log)
[ -n "$name" ] || fail "the page names no sweep: $(tail -3 run.log)"
"$MAVG" report runs "$name" --results results --format json > runs.json
[ -s local-sgd/wer-vs-bytes.png ] || fail "no figure of WER against bytes"
/usr/bin/python3 - <<'PY' || fail "comm_bytes is not each worker's combines x its packed bytes"
import json
runs = json.load(open("runs.json"))
assert len(runs) == 36, len(runs)
for r in runs:
    workers = int(r["parallel.workers"])
    p = r["num_params"]
    fmt = r.get("parallel.compress.format") or "fp32"
    if workers == 1:
        assert r["comm_bytes_per_epoch"] == 0, r
        continue
    # fp32: 4 bytes a parameter; fp8: 1, int4: 1/2, each with a 4-byte scale per 128 values
    # of a tensor (6 tensors here: at most 6 partial blocks)
    low, high = {"fp32": (4 * p, 4 * p), "fp8": (p + 4 * p / 128, p + 4 * (p / 128 + 6)),
                 "int4": (p / 2 + 4 * p / 128, (p + 1) / 2 + 4 * (p / 128 + 6))}[fmt]
    if int(r.get("parallel.stream.fragments") or 1) == 3:
        # Three fragments, each once a period, all three again at the epoch's end: 3 P + 2
        # exchanges, between P and P + 1 models' bytes.
        periods = (r["averagings"] - 2) / 3
        low, high = low * periods, high * (periods + 1)
        sent = r["comm_bytes_per_epoch"]
    else:
        sent = r["comm_bytes_per_epoch"] / r["averagings"]
    assert low - 1e-6 <= sent <= high + 1e-6, (fmt, sent, low, high)
    # Received: the means (as many bytes), or the other 7 workers' packed deltas.
    others = 1 if fmt == "fp32" else workers - 1
    assert r["comm_bytes_received_per_epoch"] == others * r["comm_bytes_per_epoch"], r
dp = [r for r in runs if r["parallel.workers"] == 8 and r["parallel.average_every"] == 1]
local = [r for r in runs if r["parallel.average_every"] == 46 and r["parallel.outer.type"] == "average"
         and r["parallel.combine.policy"] == "constant"]
assert dp and local and all(d["comm_bytes"] > l["comm_bytes"] for d in dp for l in local)
PY
rm local-sgd.md
RESULTS="$WORK/results" DATA="$WORK/data" OUT="$WORK/local-sgd.md" MAVG="$MAVG" \
  SET="optimizer.minibatch=16 schedule.epochs=2" "$MAVG_SOURCE_DIR/scripts/local_sgd.sh" --report > /dev/null ||
  fail "local_sgd.sh --report failed"
[ -s local-sgd.md ] || fail "--report wrote no page"
echo "ok: local_sgd.sh"
