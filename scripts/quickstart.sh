#!/usr/bin/env bash
# One command from a fresh machine to a trained model: dependencies, build, the built-in
# Fashion-MNIST data (from Debian's dataset-fashion-mnist), training configs/fmnist.yaml, and
# the result. Running it again reuses the data and a completed run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
mavg=build/bin/mavg

if [ ! -f data/fmnist/test/feats.scp ]; then
  "$mavg" data fmnist --out data/fmnist --force
fi

run=results/runs/quickstart/fmnist
if grep -qs '"status": "completed"' "$run/result.json"; then
  echo "[quickstart] $run already completed; delete it to train again"
else
  "$mavg" train configs/fmnist.yaml --out "$run" --force
fi

echo
echo "[quickstart] per-epoch metrics ($run/metrics.jsonl):"
python3 - "$run" <<'PY'
import json, sys
run = sys.argv[1]
print(f"{'epoch':>5} {'lr':>9} {'train_acc':>9} {'cv_loss':>8} {'cv_acc':>7} {'wall_s':>7}")
for line in open(f"{run}/metrics.jsonl"):
    m = json.loads(line)
    print(f"{m['epoch']:>5} {m['lr']:>9.5f} {100*m['train_acc']:>8.2f}% {m['cv_loss']:>8.4f} "
          f"{100*m['cv_acc']:>6.2f}% {m['wall_s']:>7.1f}")
r = json.load(open(f"{run}/result.json"))
print(f"\nstatus {r['status']}: test accuracy {100*r['test_acc']:.2f}% "
      f"(CV {100*r['cv_acc']:.2f}%), {r['epochs']} epochs, {r['wall_s']:.0f} s, "
      f"{r['frames_per_s']:.0f} frames/s on {r['build']['device']}")
PY
