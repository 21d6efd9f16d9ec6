#!/usr/bin/env bash
# mavg vs PyTorch on one recipe: Fashion-MNIST, 784-2x512 relu, minibatch 128, momentum 0.9,
# lr 0.05 on the mean loss (= 0.05/128 on mavg's summed gradient), decaying 100x over 10
# epochs, global mean/variance normalisation, same thread count, same train/test split (mavg's
# data dirs). mavg runs with model.init_scheme auto (He for relu) and, for comparison, with
# nnet1 (Kaldi's sigmoid-made scale); PyTorch with its own default initialisation. The runs
# alternate (ROUNDS rounds, one seed each), so machine noise hits all alike. Prints test
# accuracy (mean over rounds) and training time (median) per variant, and the differences.
#   scripts/bench/fmnist_vs_torch.sh [THREADS] [ROUNDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
threads="${1:-$(nproc)}"
rounds="${2:-1}"
mavg=build/bin/mavg
[ -x "$mavg" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || {
  echo "python3-torch is missing: scripts/setup.sh --bench" >&2; exit 1; }
[ -s data/fmnist/train/feats.ark ] || "$mavg" -q data fmnist --out data/fmnist
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "[fmnist-vs-torch] expect about 3 x ${rounds} runs of a few minutes each on 2 cores" >&2
recipe=(--set model.hidden_layers=2 --set model.hidden_dim=512 --set model.activation=relu
        --set optimizer.minibatch=128 --set optimizer.momentum=0.9 --set schedule.lr=0.000390625
        --set schedule.final_ratio=0.01 --set schedule.epochs=10 --set data.cmvn=global
        --set device_options.threads="$threads")
for r in $(seq "$rounds"); do
  seed=$((776 + r))
  for scheme in auto nnet1; do
    "$mavg" -q train configs/fmnist.yaml "${recipe[@]}" --set model.init_scheme="$scheme" \
      --set seed="$seed" --out "$out/mavg-$scheme-$r" --no-progress
  done
  /usr/bin/python3 scripts/bench/torch_fmnist.py --threads "$threads" --seed "$r" \
    > "$out/torch-$r.json"
  echo "[fmnist-vs-torch] round $r/$rounds done" >&2
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rows = {}
for r in range(1, rounds + 1):
    for scheme in ("auto", "nnet1"):
        res = json.load(open(f"{out}/mavg-{scheme}-{r}/result.json"))
        rows.setdefault(f"mavg init_scheme {scheme}", []).append((res["test_acc"], res["compute_s"]))
    t = json.load(open(f"{out}/torch-{r}.json"))
    rows.setdefault(t["framework"], []).append((t["test_acc"], t["train_s"]))
print(f"Fashion-MNIST 784-2x512 relu, minibatch 128, momentum 0.9, lr 0.05 (mean loss) -> x0.01, "
      f"10 epochs; {rounds} round(s)")
print(f"{'variant':28} {'test acc %':>10} {'train s':>9}")
acc = {}
for name, v in rows.items():
    acc[name] = 100 * statistics.mean(a for a, _ in v)
    print(f"{name:28} {acc[name]:10.2f} {statistics.median(s for _, s in v):9.1f}")
torch_name = [n for n in rows if n.startswith("pytorch")][0]
for name in rows:
    if name != torch_name:
        print(f"{name} - {torch_name}: {acc[name] - acc[torch_name]:+.2f} points")
PY
