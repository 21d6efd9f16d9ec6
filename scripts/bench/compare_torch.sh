#!/usr/bin/env bash
# mavg vs PyTorch on the paper's network (440-6x2048-8806, minibatch 1024), same thread count,
# measured alternately in one run (ROUNDS rounds of REPEATS steps each) so machine noise hits
# both alike. Prints both medians and the frames/s ratio mavg/PyTorch.
#   scripts/bench/compare_torch.sh [THREADS] [ROUNDS] [REPEATS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
threads="${1:-$(nproc)}"
rounds="${2:-3}"
repeats="${3:-3}"
mavg=build/bin/mavg
[ -x "$mavg" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || {
  echo "python3-torch is missing: scripts/setup.sh --bench" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  "$mavg" -q bench train --config configs/paper-net.yaml --set device_options.threads="$threads" \
    --repeats "$repeats" --warmup 1 --json "$out/mavg.$r.json" > /dev/null
  /usr/bin/python3 scripts/bench/torch_peer.py --threads "$threads" --repeats "$repeats" \
    --warmup 1 > "$out/torch.$r.json"
  echo "[compare] round $r/$rounds done" >&2
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
m = [json.load(open(f"{out}/mavg.{r}.json")) for r in range(1, rounds + 1)]
t = [json.load(open(f"{out}/torch.{r}.json")) for r in range(1, rounds + 1)]
mf = statistics.median(x["frames_per_s"] for x in m)
tf = statistics.median(x["frames_per_s"] for x in t)
sg = statistics.median(x["sgemm_gflops_per_s"] for x in m)
fr = statistics.median(x["fraction_of_sgemm"] for x in m)
print(f"network 440-6x2048-8806, minibatch 1024, {t[0]['threads']} threads, {rounds} rounds")
print(f"mavg    {mf:8.1f} frames/s  ({m[0]['device']})")
print(f"         step at {100*fr:.1f}% of the same GEMMs' SGEMM rate ({sg:.1f} GFLOP/s)")
print(f"pytorch {tf:8.1f} frames/s  ({t[0]['framework']})")
print(f"ratio mavg/pytorch frames/s: {mf/tf:.3f}")
PY
