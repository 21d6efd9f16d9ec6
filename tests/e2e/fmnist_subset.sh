#!/usr/bin/env bash
# One epoch on a 5,000-image Fashion-MNIST subset reaches >= 75% test accuracy, and the run
# directory holds every file of the contract (README.md "Run directory").
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 5000 2000
cat > small.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test, context: 0}
model: {hidden_layers: 2, hidden_dim: 256, activation: sigmoid}
optimizer: {minibatch: 32}
schedule: {type: constant, lr: 0.008, epochs: 1}
device_options: {threads: 1}
YAML
"$MAVG" train small.yaml --out run --no-progress
for f in config.yaml state.json metrics.jsonl result.json model.bin log.txt; do
  [ -s "run/$f" ] || fail "run/$f missing"
done
[ "$(json_get run/state.json status)" = completed ] || fail "state not completed"
[ "$(wc -l < run/metrics.jsonl)" -eq 1 ] || fail "expected one metrics line"
python3 - <<'PY'
import json
m = json.loads(open("run/metrics.jsonl").readline())
for k in ["epoch", "lr", "accepted", "train_loss", "train_acc", "cv_loss", "cv_acc", "frames",
          "wall_s", "compute_s", "io_s"]:
    assert k in m, k
r = json.load(open("run/result.json"))
print(f"test accuracy {r['test_acc']:.4f}, cv accuracy {r['cv_acc']:.4f}")
assert r["status"] == "completed"
assert r["test_acc"] >= 0.75, r["test_acc"]
assert len(r["run_id"]) == 16
PY
# The resolved config reproduces the run id.
"$MAVG" config check run/config.yaml | contains "$(json_get run/result.json run_id)" \
  || fail "config.yaml does not give the same run id"
# A completed run is not overwritten without --force.
expect_error "already holds a completed run" "$MAVG" train small.yaml --out run --no-progress
# Kaldi nnet1 export.
"$MAVG" export kaldi-nnet1 run/model.bin --out final.nnet --feature-transform final.feature_transform
grep -q '^<AffineTransform> 256 784$' final.nnet || fail "no input affine in final.nnet"
grep -q '^<Softmax> 10 10$' final.nnet || fail "no softmax"
grep -q '^<Splice> 784 784$' final.feature_transform || fail "no splice"
echo PASS
