#!/usr/bin/env bash
# N simulated workers against one worker on the same data, one epoch each, alternated ROUNDS
# times in one run: compares the epoch's training time (compute + io + averaging, CV excluded)
# summed over workers, i.e. what simulation costs beyond the work itself (target <= 1.1x).
#   scripts/bench/simulated_overhead.sh [CONFIG] [WORKERS] [ROUNDS] [AVERAGE_EVERY]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
config="${1:-configs/fmnist.yaml}"
workers="${2:-16}"
rounds="${3:-3}"
average_every="${4:-10}"
mavg=build/bin/mavg
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  for n in 1 "$workers"; do
    "$mavg" -q train "$config" --set schedule.epochs=1 --set parallel.workers="$n" \
      --set parallel.average_every="$average_every" --out "$out/w$n-$r" --no-progress >/dev/null
  done
done
python3 - "$out" "$workers" "$rounds" <<'PY'
import json, statistics, sys
out, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def epoch(d):
    m = json.loads(open(f"{d}/metrics.jsonl").readline())
    # Work done by all workers in this process: every worker's compute and io, plus averaging.
    k = m["world_size"]
    return m, k * (m["compute_s_mean"] + m["io_s_mean"]) + m["comm_s"], m["wall_s"] - m["cv_s"]
one = [epoch(f"{out}/w1-{r}") for r in range(1, rounds + 1)]
many = [epoch(f"{out}/w{n}-{r}") for r in range(1, rounds + 1)]
t1 = statistics.median(x[2] for x in one)
tn = statistics.median(x[2] for x in many)
print(f"one worker:  {t1:.2f} s per epoch (training, CV excluded), {one[0][0]['frames']} frames")
print(f"{n} workers: {tn:.2f} s per epoch, {many[0][0]['frames']} frames, "
      f"{many[0][0]['averagings']} averagings, averaging {statistics.median(x[0]['comm_s'] for x in many):.2f} s")
print(f"ratio {n} simulated workers / 1 worker: {tn / t1:.3f} "
      f"(per frame: {(tn / many[0][0]['frames']) / (t1 / one[0][0]['frames']):.3f})")
print(f"projected wall on {n} devices: {statistics.median(x[0]['projected_wall_s'] for x in many):.2f} s (projection)")
PY
