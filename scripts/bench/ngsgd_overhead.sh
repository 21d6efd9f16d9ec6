#!/usr/bin/env bash
# NG-SGD against plain SGD: time per training step (forward, backward, update) on the same
# network and minibatch, alternated ROUNDS times in one run so both see the same machine load.
# Every process times STEPS steps after WARMUP, and the mean over them is compared (the mean,
# not the median: one step in update_period also updates the Fisher model). Default: the
# paper's network 440-6x2048-8806 with minibatch 1024 (target overhead <= 20%).
#   scripts/bench/ngsgd_overhead.sh [CONFIG] [ROUNDS] [STEPS] [--set key=value ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
config="${1:-configs/paper-net.yaml}"
rounds="${2:-3}"
steps="${3:-8}"
shift $(($# < 3 ? $# : 3))
sets=()
for s in "$@"; do sets+=(--set "$s"); done
mavg=build/bin/mavg
[ -x "$mavg" ] || { echo "ngsgd_overhead.sh: build first (scripts/test.sh or cmake --build build)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  for opt in sgd ngsgd; do
    "$mavg" -q bench train --config "$config" "${sets[@]}" --set optimizer.type="$opt" \
      --set optimizer.momentum=0 --warmup 2 --repeats "$steps" --json "$out/$opt-$r.json" >/dev/null
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
res = {o: [json.load(open(f"{out}/{o}-{r}.json")) for r in range(1, rounds + 1)] for o in ("sgd", "ngsgd")}
a = res["sgd"][0]
print(f"network {a['input_dim']}-{len(a['hidden'])}x{a['hidden'][0]}-{a['output_dim']}, "
      f"minibatch {a['minibatch']}, {a['device']}")
for o in ("sgd", "ngsgd"):
    means = [x["step_s_mean"] for x in res[o]]
    print(f"{o:6}: mean step {statistics.median(means):.3f} s (rounds: "
          + ", ".join(f"{m:.3f}" for m in means) + f"), median step "
          f"{statistics.median(x['step_s_median'] for x in res[o]):.3f} s")
ratios = [n["step_s_mean"] / s["step_s_mean"] for s, n in zip(res["sgd"], res["ngsgd"])]
print("ngsgd / sgd per round: " + ", ".join(f"{r:.3f}" for r in ratios))
print(f"overhead of NG-SGD: {100 * (statistics.median(ratios) - 1):+.1f}% (median over rounds)")
PY
