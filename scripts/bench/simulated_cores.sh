#!/usr/bin/env bash
# Simulated workers on every core: N simulated workers with every core (they step at once, each
# on one thread) against one worker on one thread, on the same data, one epoch each, alternated
# ROUNDS times in one run. Compares training frames per second of wall clock (frames trained
# over the epoch's measured training time, CV excluded): the goal on a machine of C cores is
# close to C x. Also runs the N workers one after another, on one thread (the same float
# operations: the model must be the same bit for bit) and with every thread for their GEMMs
# (device_options.concurrent_workers=1, as mavg did before workers stepped at once).
#   scripts/bench/simulated_cores.sh [CONFIG] [WORKERS] [ROUNDS] [AVERAGE_EVERY]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
config="${1:-configs/digits.yaml}"
workers="${2:-16}"
rounds="${3:-5}"
average_every="${4:-10}"
cores=$(nproc)
mavg=build/bin/mavg
[ -x "$mavg" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Timing only: the schedule's lr for every worker count (linear scaling can throw 16 workers'
# first epoch off, and a collapsed run exits non-zero).
common=(--set schedule.epochs=1 --set parallel.average_every="$average_every"
        --set parallel.lr_scaling=none --set decode.tune=false --no-progress)
for r in $(seq "$rounds"); do
  "$mavg" -q train "$config" "${common[@]}" --set parallel.workers=1 \
    --set device_options.threads=1 --out "$out/one-$r" >/dev/null
  "$mavg" -q train "$config" "${common[@]}" --set parallel.workers="$workers" \
    --set device_options.threads="$cores" --out "$out/at-once-$r" >/dev/null
  "$mavg" -q train "$config" "${common[@]}" --set parallel.workers="$workers" \
    --set device_options.threads=1 --out "$out/one-thread-$r" >/dev/null
  "$mavg" -q train "$config" "${common[@]}" --set parallel.workers="$workers" \
    --set device_options.threads="$cores" --set device_options.concurrent_workers=1 \
    --out "$out/in-turn-$r" >/dev/null
  echo "[bench] round $r/$rounds done" >&2
done
cmp -s "$out/at-once-1/model.bin" "$out/one-thread-1/model.bin" && same=yes || same=no
python3 - "$out" "$rounds" "$workers" "$cores" "$same" <<'PY'
import json, statistics, sys
out, rounds, n, cores, same = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def fps(name):
    rates = []
    for r in range(1, rounds + 1):
        m = json.loads(open(f"{out}/{name}-{r}/metrics.jsonl").readline())
        rates.append(m["frames"] / (m["wall_s"] - m["cv_s"]))
    return statistics.median(rates), rates
kernels = json.load(open(f"{out}/one-1/result.json"))["blas_kernels"]
one, a = fps("one")
at_once, b = fps("at-once")
one_thread, d = fps("one-thread")
in_turn, c = fps("in-turn")
print(f"kernels: {kernels}; {cores} cores; medians of {rounds} alternated rounds, "
      "training frames per second of wall clock (CV excluded)")
print(f"1 worker, 1 thread:                      {one:9.0f}  {[round(x) for x in a]}")
print(f"{n} workers, {cores} threads, at once:  {at_once:9.0f}  {[round(x) for x in b]}")
print(f"{n} workers, 1 thread, in turn:       {one_thread:9.0f}  {[round(x) for x in d]}")
print(f"{n} workers, {cores} threads, in turn:  {in_turn:9.0f}  {[round(x) for x in c]}  (GEMMs on {cores} threads)")
print(f"ratio at once / 1 worker on 1 thread: {at_once / one:.2f}")
print(f"ratio in turn on {cores} threads / 1 worker on 1 thread: {in_turn / one:.2f}")
print(f"same model at once and in turn on 1 thread, bit for bit: {same}")
PY
