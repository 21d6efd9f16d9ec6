#!/usr/bin/env bash
# An epoch whose threads wait for a core (other work shares the cores; here two busy loops per
# core) is flagged contended in the log, in metrics.jsonl and the store, and in the tables that
# show its times; its CPU use and wait are recorded either way.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 4000 300
small_base base.yaml 128 2
busy=()
stop_busy() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_busy EXIT
for _ in $(seq $((2 * $(nproc)))); do
  bash -c 'while :; do :; done' &
  busy+=($!)
done
"$MAVG" train base.yaml --set device_options.threads=1 --out shared --no-progress 2> shared.log
grep -q "warn.*epoch 1: contended: its threads waited for a core [0-9]*% of the time" shared.log ||
  grep -q "warn.*epoch 1: contended: the process used" shared.log ||
  fail "no contention warning: $(cat shared.log)"
grep -q "CPU use [0-9.]* of 1 thread" shared.log || fail "the epoch line lacks the CPU use"
python3 - <<'PY'
import json
rows = [json.loads(l) for l in open("shared/metrics.jsonl")]
assert all(r["contended"] is True for r in rows), rows
assert all(0 < r["cpu_util"] <= 1.05 for r in rows), rows
assert all(r.get("cpu_wait", 1.0) > 0.1 for r in rows), rows
PY
# A sweep of such runs: the store keeps the flag, and a table of their times says so.
"$MAVG" -q sweep run --base base.yaml --grid seed=1,2 --name busy --results res --jobs 1 > /dev/null
stop_busy
n=$(python3 -c 'import sqlite3; print(sqlite3.connect("res/mavg.db").execute("SELECT COUNT(*) FROM epochs WHERE contended = 1").fetchone()[0])')
[ "$n" = 4 ] || fail "contended epochs in the store: $n, expected 4"
"$MAVG" report table busy --results res --rows seed --value epoch_s > table.md
grep -q "Warning: every run of seed=1 had contended epochs" table.md || fail "no flag: $(cat table.md)"
"$MAVG" report runs busy --results res --format csv > runs.csv
head -1 runs.csv | grep -q contended_fraction || fail "report runs lacks contended_fraction"
echo PASS
