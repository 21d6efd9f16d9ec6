#!/usr/bin/env bash
# NG-SGD against plain SGD: time per training step (forward, backward, update) on the same
# network and minibatch, side by side in the same rounds of one process (`mavg bench train
# --optimizers sgd,ngsgd`: an SGD step, an NG-SGD step, the same GEMMs alone, in turn), so both
# see the same machine load; ROUNDS such processes. Each times STEPS steps after WARMUP (past
# NG-SGD's first updates, which come every minibatch), and the means are compared (the mean, not
# the median: one step in update_period also updates the Fisher model; keep STEPS a multiple of
# it). Default: the digits network 440-4x512-63, minibatch 256, 1 thread (goal: overhead <= 25%,
# frames/s ratio >= 0.8); the paper's network is configs/paper-net.yaml.
#   scripts/bench/ngsgd_overhead.sh [CONFIG] [ROUNDS] [STEPS] [--set key=value ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
config="${1:-configs/digits.yaml}"
rounds="${2:-5}"
steps="${3:-40}"
shift $(($# < 3 ? $# : 3))
sets=(--set device_options.threads=1)
# The digits config takes its output count from the data; the benchmark's random data needs it.
[ "$config" != configs/digits.yaml ] || sets+=(--set model.num_outputs=63)
for s in "$@"; do sets+=(--set "$s"); done
mavg=build/bin/mavg
[ -x "$mavg" ] || { echo "ngsgd_overhead.sh: build first (scripts/setup.sh)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  "$mavg" -q bench train --config "$config" "${sets[@]}" --set optimizer.momentum=0 \
    --optimizers sgd,ngsgd --warmup 12 --repeats "$steps" --json "$out/$r.json" >/dev/null
  echo "[bench] round $r/$rounds done" >&2
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
res = [json.load(open(f"{out}/{r}.json")) for r in range(1, rounds + 1)]
a = res[0]
print(f"network {a['input_dim']}-{len(a['hidden'])}x{a['hidden'][0]}-{a['output_dim']}, "
      f"minibatch {a['minibatch']}, kernels {a['blas_kernels']}; {rounds} processes x "
      f"{a['repeats']} steps of each, interleaved")
for i, name in enumerate(("sgd", "ngsgd")):
    means = [x["arms"][i]["step_s_mean"] for x in res]
    frac = [x["arms"][i]["fraction_of_sgemm_mean"] for x in res]
    print(f"{name:6}: mean step {1000 * statistics.median(means):.2f} ms (rounds: "
          + ", ".join(f"{1000 * m:.2f}" for m in means)
          + f"); {statistics.median(frac):.3f} of the SGEMM rate of the same GEMMs")
ratios = [x["arms"][1]["frames_per_s_mean_vs_first"] for x in res]
print("frames/s ngsgd / sgd per round: " + ", ".join(f"{r:.3f}" for r in ratios))
print(f"median {statistics.median(ratios):.3f}: NG-SGD costs "
      f"{100 * (1 / statistics.median(ratios) - 1):+.1f}% over SGD")
PY
