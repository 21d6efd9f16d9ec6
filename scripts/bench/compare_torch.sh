#!/usr/bin/env bash
# mavg against PyTorch on the same networks: one SGD training step (forward, summed
# cross-entropy, backward, update) on random data, at the same thread count, on the same named
# OpenBLAS kernels (OPENBLAS_CORETYPE set for both to the family mavg chooses on this CPU; each
# side reports what it ran), the two measured alternately in one run: ROUNDS rounds of REPEATS
# steps each, after WARMUP. Prints both medians and the frames/s ratio mavg / PyTorch per network.
#   scripts/bench/compare_torch.sh [--threads N] [--rounds R] [--repeats K] [NETWORK...]
# Networks: digits  440-4x512-63 sigmoid, minibatch 256, plain SGD (configs/digits.yaml)
#           fmnist  784-2x512-10 relu, minibatch 128, momentum 0.9 (scripts/bench/fmnist_vs_torch.sh)
#           paper   440-6x2048-8806 sigmoid, minibatch 1024 (configs/paper-net.yaml)
# Default: digits fmnist, 1 thread, 5 rounds of 20 steps. Needs python3-torch
# (scripts/setup.sh --bench).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
threads=1 rounds=5 repeats=20 warmup=3
nets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --repeats) repeats="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    digits|fmnist|paper) nets+=("$1"); shift ;;
    *) echo "compare_torch.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#nets[@]} -gt 0 ] || nets=(digits fmnist)
mavg=build/bin/mavg
[ -x "$mavg" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || {
  echo "python3-torch is missing: scripts/setup.sh --bench" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The kernels mavg chooses on this CPU (unless the caller set OPENBLAS_CORETYPE), for both.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  "$mavg" devices --json "$out/devices.json" >/dev/null
  OPENBLAS_CORETYPE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu"]["blas_kernels"])' "$out/devices.json")
fi
export OPENBLAS_CORETYPE

for net in "${nets[@]}"; do
  case "$net" in
    digits)
      m=(--config configs/digits.yaml --set model.num_outputs=63 --raw-dim 40)
      t=(--input-dim 440 --hidden-layers 4 --hidden-dim 512 --outputs 63 --minibatch 256) ;;
    fmnist)
      m=(--config configs/fmnist.yaml --set model.hidden_layers=2 --set model.hidden_dim=512
         --set model.activation=relu --set optimizer.minibatch=128 --set optimizer.momentum=0.9
         --set model.num_outputs=10 --raw-dim 784)
      t=(--input-dim 784 --hidden-layers 2 --hidden-dim 512 --outputs 10 --minibatch 128
         --activation relu --momentum 0.9) ;;
    paper)
      m=(--config configs/paper-net.yaml)
      t=() ;;
  esac
  for r in $(seq "$rounds"); do
    "$mavg" -q bench train "${m[@]}" --set device_options.threads="$threads" --set optimizer.type=sgd \
      --repeats "$repeats" --warmup "$warmup" --json "$out/$net.mavg.$r.json" > /dev/null
    /usr/bin/python3 scripts/bench/torch_peer.py "${t[@]}" --threads "$threads" --repeats "$repeats" \
      --warmup "$warmup" > "$out/$net.torch.$r.json"
    echo "[compare] $net: round $r/$rounds done" >&2
  done
done
/usr/bin/python3 - "$out" "$rounds" "${nets[@]}" <<'PY'
import json, statistics, sys
out, rounds, nets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for net in nets:
    m = [json.load(open(f"{out}/{net}.mavg.{r}.json")) for r in range(1, rounds + 1)]
    t = [json.load(open(f"{out}/{net}.torch.{r}.json")) for r in range(1, rounds + 1)]
    mf = statistics.median(x["frames_per_s"] for x in m)
    tf = statistics.median(x["frames_per_s"] for x in t)
    ratios = [a["frames_per_s"] / b["frames_per_s"] for a, b in zip(m, t)]
    a = m[0]
    shape = f"{a['input_dim']}-{len(a['hidden'])}x{a['hidden'][0]}-{a['output_dim']}"
    print(f"{net}: network {shape}, minibatch {a['minibatch']}, {t[0]['threads']} thread(s), "
          f"{rounds} alternated rounds of {a['repeats']} steps")
    print(f"  mavg    {mf:9.1f} frames/s  ({a['blas_kernels']}; step at "
          f"{100 * statistics.median(x['fraction_of_sgemm'] for x in m):.1f}% of the same GEMMs' "
          f"SGEMM rate, {statistics.median(x['sgemm_gflops_per_s'] for x in m):.1f} GFLOP/s)")
    print(f"  pytorch {tf:9.1f} frames/s  ({t[0]['blas_kernels']}; {t[0]['framework']})")
    if {x["blas_kernels"] for x in m} != {x["blas_kernels"] for x in t}:
        print("  WARNING: the two ran different kernels: the ratio measures nothing")
    print(f"  ratio mavg / pytorch frames/s: {mf / tf:.3f} (rounds: "
          + ", ".join(f"{x:.3f}" for x in ratios) + ")")
PY
