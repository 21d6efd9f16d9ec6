#!/usr/bin/env bash
# mpirun -np N (one BLAS thread per rank) against one worker with one thread, same config, one
# epoch each, alternated ROUNDS times: measured epoch speedup and the communication share.
#   scripts/bench/mpi_speedup.sh [CONFIG] [RANKS] [ROUNDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
config="${1:-configs/fmnist.yaml}"
ranks="${2:-2}"
rounds="${3:-3}"
mavg=build/bin/mavg
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
common=(--set schedule.epochs=1 --set device_options.threads=1 --no-progress)
for r in $(seq "$rounds"); do
  "$mavg" -q train "$config" "${common[@]}" --out "$out/one-$r" >/dev/null
  mpirun -np "$ranks" --bind-to core "$mavg" -q train "$config" "${common[@]}" \
    --set parallel.workers="$ranks" --set parallel.mode=mpi --out "$out/mpi-$r" >/dev/null
done
python3 - "$out" "$ranks" "$rounds" <<'PY'
import json, statistics, sys
out, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def m(d): return json.loads(open(f"{d}/metrics.jsonl").readline())
one = [m(f"{out}/one-{r}") for r in range(1, rounds + 1)]
par = [m(f"{out}/mpi-{r}") for r in range(1, rounds + 1)]
train = lambda x: x["wall_s"] - x["cv_s"]
t1 = statistics.median(train(x) for x in one)
tn = statistics.median(train(x) for x in par)
f1, fn = one[0]["frames"], par[0]["frames"]
comm = statistics.median(x["comm_s"] for x in par)
wait = statistics.median(x["wait_s"] for x in par)
print(f"1 worker, 1 thread : {t1:.2f} s per epoch ({f1} frames)")
print(f"{n} MPI ranks x 1 thread: {tn:.2f} s per epoch ({fn} frames; {par[0]['averagings']} averagings)")
print(f"epoch speedup {t1 / tn:.2f}x; per-frame throughput speedup {(fn / tn) / (f1 / t1):.2f}x")
print(f"communication {comm:.3f} s ({100 * comm / tn:.1f}% of the epoch), waiting {wait:.3f} s")
PY
